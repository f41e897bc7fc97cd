"""Rule documentation rendered from the registry: `rules`, `explain` and the README table."""

from __future__ import annotations

import json
import re
import textwrap
from functools import lru_cache

from eksmllint.core.registry import Registry
from eksmllint.core.rule import Rule
from eksmllint.paths import builtin_rules_dir, rule_fixtures_dir
from eksmllint.platform import Platform

#: The fixtures' test markers (``# expect: EML301``): for the test driver, not for readers.
_EXPECT_MARKER = re.compile(r"\s*#\s*expect:\s*[A-Z0-9][A-Z0-9, ]*")


@lru_cache(maxsize=1)
def _rule_files() -> dict[str, str]:
    root = builtin_rules_dir()
    return {p.stem: p.relative_to(root).as_posix() for p in root.rglob("EML*.yaml")}


def rule_doc_path(rule: Rule) -> str | None:
    """The rule's definition file as a repository path (``rules/shm/EML301-shm-missing.yaml``):
    the documentation that exists wherever the code does. None for third-party rules."""
    found = _rule_files().get(f"{rule.code}-{rule.slug}") if rule.source == "builtin" else None
    return f"rules/{found}" if found else None


def _without_markers(text: str) -> str:
    out = []
    for line in text.splitlines():
        cleaned = _EXPECT_MARKER.sub("", line).rstrip()
        if cleaned or not line.strip():
            out.append(cleaned)
    return "\n".join(out) + "\n"


def rule_fixture_dir(rule: Rule):
    return rule_fixtures_dir() / f"{rule.code}-{rule.slug}"


def _example(rule: Rule, name: str) -> str | None:
    base = rule_fixture_dir(rule)
    single = base / f"{name}.yaml"
    if single.is_file():
        return _without_markers(single.read_text(encoding="utf-8"))
    folder = base / name
    if folder.is_dir():
        parts = []
        for p in sorted(folder.iterdir()):
            if p.is_file():
                parts.append(f"# --- {p.name}\n{_without_markers(p.read_text(encoding='utf-8'))}")
        return "\n".join(parts)
    return None


def rules_text(registry: Registry) -> str:
    lines = [f"{'code':<7} {'slug':<32} {'severity':<8} {'fix':<6} summary"]
    for r in registry:
        lines.append(f"{r.code:<7} {r.slug:<32} {r.spec.severity:<8} {r.spec.fix:<6} {r.spec.summary}")
    return "\n".join(lines) + "\n"


def rules_json(registry: Registry) -> str:
    return (
        json.dumps(
            [
                {
                    "code": r.code,
                    "slug": r.slug,
                    "family": r.family,
                    "severity": r.spec.severity,
                    "fix": r.spec.fix,
                    "summary": r.spec.summary,
                    "options": dict(r.options),
                    "help": rule_doc_path(r),
                }
                for r in registry
            ],
            indent=2,
        )
        + "\n"
    )


def rules_markdown(registry: Registry) -> str:
    lines = ["| code | slug | severity | fix | summary |", "|---|---|---|---|---|"]
    for r in registry:
        summary = r.spec.summary.replace("|", "\\|")
        lines.append(f"| {r.code} | {r.slug} | {r.spec.severity} | {r.spec.fix} | {summary} |")
    return "\n".join(lines) + "\n"


def explain_text(rule: Rule, platform: Platform | None = None) -> str:
    s = rule.spec
    out = [
        f"{rule.code} {rule.slug}",
        f"family: {rule.family}   severity: {s.severity}   fix: {s.fix}",
        "",
        s.summary,
        "",
        "What it does",
        textwrap.indent(s.description.strip(), "  "),
        "",
        "Why it matters",
        textwrap.indent(s.rationale.strip(), "  "),
    ]
    if s.workload_classes:
        out += [
            "",
            "Judges workloads classified as",
            "  " + ", ".join(s.workload_classes) + " (eksmllint.analysis.workload_class; each finding's",
            "  JSON `workload_class` says which class was inferred and why)",
        ]
    if s.platform:
        assumed = platform or Platform()
        out += ["", "Assumes (config platform:, or --platform NAME=VERSION)"]
        out += [f"  {assumed.describe(name)}" for name in s.platform]
    if s.fix_description:
        out += ["", f"Fix ({s.fix})", textwrap.indent(s.fix_description.strip(), "  ")]
    if s.options:
        schema = s.option_schema
        out += ["", "Options (config rules.CODE.NAME)"]
        out += [f"  {k}: {v!r}   ({schema[k]})" for k, v in s.options.items()]
    for title, name in (("Example (flagged)", "bad"), ("Use instead", "good")):
        text = _example(rule, name)
        if text:
            out += ["", title, textwrap.indent(text.rstrip(), "  ")]
    if s.references:
        out += ["", "References"] + [f"  - {r}" for r in s.references]
    return "\n".join(out) + "\n"


def rule_markdown(rule: Rule) -> str:
    """The rule's help as Markdown (SARIF ``help.markdown``: GitHub shows it with each alert)."""
    s = rule.spec
    out = [
        f"**{rule.code} {rule.slug}**: {s.summary}",
        "",
        "## Why it matters",
        "",
        s.rationale.strip(),
        "",
        "## What it does",
        "",
        s.description.strip(),
    ]
    if s.fix_description:
        out += ["", f"## Fix ({s.fix})", "", s.fix_description.strip()]
    if s.references:
        out += ["", "## References", ""] + [f"- {r}" for r in s.references]
    out += ["", f"More: `eksmllint explain {rule.code}`."]
    return "\n".join(out) + "\n"
