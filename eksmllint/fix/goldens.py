"""Write or check the ``fixed`` examples of the rule fixtures (for rule authors and reviewers).

``python -m eksmllint.fix.goldens [--write] [CODE ...]`` fixes each fixable rule's bad example
with only that rule selected (unsafe fixes included) and prints how the result differs from its
``fixed.yaml`` (or ``fixed/`` folder for cross-file cases). With ``--write`` the result is saved;
review every diff by eye before committing it: the golden file is the fix's specification.
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

from eksmllint.core.registry import default_registry
from eksmllint.fix.engine import FileOutcome, FixSource, fix_sources
from eksmllint.loader.files import file_kind
from eksmllint.paths import rule_fixtures_dir
from eksmllint.testing import RuleCase, discover_cases

#: Files a fix can edit: manifests (document operations) and Slurm scripts (text edits).
FIXABLE_SUFFIXES = (".yaml", ".yml", ".json", ".sbatch", ".slurm", ".sh")


def case_files(path: Path) -> list[Path]:
    return [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())


def golden_path(case: RuleCase, bad_file: Path) -> Path:
    """Where the fixed version of ``bad_file`` lives."""
    if case.bad is None or case.bad.is_file():
        return case.directory / "fixed.yaml"
    return case.directory / "fixed" / bad_file.relative_to(case.bad)


def fixable_cases(root: Path | None = None) -> list[RuleCase]:
    """Cases of fixable rules whose bad example is made of files a fix can edit."""
    registry = default_registry()
    out = []
    for case in discover_cases(root or rule_fixtures_dir()):
        rule = registry.get(case.code)
        if rule is None or rule.spec.fix == "no" or case.bad is None:
            continue
        if all(p.suffix in FIXABLE_SUFFIXES for p in case_files(case.bad)):
            out.append(case)
    return out


def fix_case(case: RuleCase, texts: dict[Path, str] | None = None) -> dict[Path, FileOutcome]:
    """Fix the case's bad example (all of its files together) with only its rule selected."""
    files = case_files(case.bad) if case.bad is not None else []
    texts = texts or {p: p.read_text(encoding="utf-8") for p in files}
    cfg = case.config().model_copy(update={"select": (case.code,)})
    sources = [FixSource(str(p), texts[p], file_kind(str(p), texts[p]) or "yaml") for p in files]
    report = fix_sources(sources, cfg, default_registry(), unsafe=True)
    return {Path(o.path): o for o in report.files}


def main(argv: list[str]) -> int:
    write = "--write" in argv
    codes = {a.upper() for a in argv if not a.startswith("-")}
    status = 0
    for case in fixable_cases():
        if codes and case.code not in codes:
            continue
        for path, out in fix_case(case).items():
            target = golden_path(case, path)
            if out.error or out.failed or out.fixed is None:
                why = out.error or [w for _, w in out.failed] or out.note
                print(f"{case.code} {path}: not fixable cleanly: {why}")
                status = 1
                continue
            old = target.read_text(encoding="utf-8") if target.exists() else None
            if old == out.fixed:
                continue
            status = 1
            print(f"{case.code} {target}: {'differs' if old is not None else 'missing'}")
            sys.stdout.writelines(
                difflib.unified_diff(
                    (old if old is not None else path.read_text(encoding="utf-8")).splitlines(True),
                    out.fixed.splitlines(True),
                    str(target if old is not None else path),
                    "fixed",
                )
            )
            if write:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(out.fixed, encoding="utf-8")
    return 0 if write else status


if __name__ == "__main__":  # pragma: no cover - a maintainer's tool
    sys.exit(main(sys.argv[1:]))
