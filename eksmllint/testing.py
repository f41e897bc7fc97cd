"""Helpers for testing rules, public so third-party rule packs reuse the same driver.

A rule's examples live in ``fixtures/rules/<CODE>-<slug>/``:

- ``bad.<ext>`` or a folder ``bad/`` (cross-file cases): lines that must be reported carry a
  marker comment ``# expect: EML301`` (several codes separated by commas);
- ``good.<ext>`` or ``good/``: must produce no finding at all, from any rule;
- optional ``config.yaml``: configuration for both (e.g. ``kubernetes-version``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from eksmllint.config import Config, load_config_file
from eksmllint.core.engine import LintResult, lint_paths

_EXPECT = re.compile(r"#\s*expect:\s*([A-Z0-9, ]+)")


@dataclass(frozen=True)
class RuleCase:
    code: str
    slug: str
    directory: Path

    def _entry(self, name: str) -> Path | None:
        folder = self.directory / name
        if folder.is_dir():
            return folder
        matches = sorted(p for p in self.directory.glob(f"{name}.*") if p.is_file())
        return matches[0] if matches else None

    @property
    def bad(self) -> Path | None:
        return self._entry("bad")

    @property
    def good(self) -> Path | None:
        return self._entry("good")

    def config(self) -> Config:
        path = self.directory / "config.yaml"
        return load_config_file(path) if path.is_file() else Config()


def expected_lines(path: Path, code: str) -> set[tuple[str, int]]:
    """(file, line) pairs marked ``# expect: CODE`` under ``path`` (a file or a folder)."""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    out = set()
    for f in files:
        for no, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            m = _EXPECT.search(line)
            if m and code in {c.strip() for c in m.group(1).split(",")}:
                out.add((str(f), no))
    return out


def discover_cases(root: Path) -> list[RuleCase]:
    cases = []
    for d in sorted(p for p in root.iterdir() if p.is_dir()):
        code, _, slug = d.name.partition("-")
        cases.append(RuleCase(code, slug, d))
    return cases


def lint_case(path: Path, cfg: Config) -> LintResult:
    return lint_paths([str(path)], cfg)
