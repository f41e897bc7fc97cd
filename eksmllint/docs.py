"""Rule documentation rendered from the registry: `rules`, `explain` and the README table."""

from __future__ import annotations

import json
import textwrap

from eksmllint.core.registry import Registry
from eksmllint.core.rule import Rule
from eksmllint.paths import rule_fixtures_dir


def rule_fixture_dir(rule: Rule):
    return rule_fixtures_dir() / f"{rule.code}-{rule.slug}"


def _example(rule: Rule, name: str) -> str | None:
    base = rule_fixture_dir(rule)
    single = base / f"{name}.yaml"
    if single.is_file():
        return single.read_text(encoding="utf-8")
    folder = base / name
    if folder.is_dir():
        parts = []
        for p in sorted(folder.iterdir()):
            if p.is_file():
                parts.append(f"# --- {p.name}\n{p.read_text(encoding='utf-8')}")
        return "\n".join(parts)
    return None


def rules_text(registry: Registry) -> str:
    lines = [f"{'code':<7} {'slug':<32} {'severity':<8} {'fix':<6} summary"]
    for r in registry:
        lines.append(f"{r.code:<7} {r.slug:<32} {r.spec.severity:<8} {r.spec.fix:<6} {r.spec.summary}")
    return "\n".join(lines) + "\n"


def rules_json(registry: Registry) -> str:
    return json.dumps([
        {"code": r.code, "slug": r.slug, "family": r.family, "severity": r.spec.severity, "fix": r.spec.fix,
         "summary": r.spec.summary, "options": dict(r.options), "help": r.help_uri}
        for r in registry
    ], indent=2) + "\n"


def rules_markdown(registry: Registry) -> str:
    lines = ["| code | slug | severity | fix | summary |", "|---|---|---|---|---|"]
    for r in registry:
        summary = r.spec.summary.replace("|", "\\|")
        lines.append(f"| {r.code} | {r.slug} | {r.spec.severity} | {r.spec.fix} | {summary} |")
    return "\n".join(lines) + "\n"


def explain_text(rule: Rule) -> str:
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
    if s.fix_description:
        out += ["", f"Fix ({s.fix})", textwrap.indent(s.fix_description.strip(), "  ")]
    if s.options:
        out += ["", "Options"] + [f"  {k}: {v!r}" for k, v in s.options.items()]
    for title, name in (("Example (flagged)", "bad"), ("Use instead", "good")):
        text = _example(rule, name)
        if text:
            out += ["", title, textwrap.indent(text.rstrip(), "  ")]
    if s.references:
        out += ["", "References"] + [f"  - {r}" for r in s.references]
    return "\n".join(out) + "\n"
