"""Where CI reports (SARIF, GitHub, GitLab, JUnit, baselines) say a finding is.

CI systems match a report's paths against the repository checkout, so paths are made relative to
the repository root (the git top-level directory above the working directory, else the working
directory itself) whatever the user typed (``./k8s``, an absolute path, ``k8s/../k8s``). A path
outside that root stays absolute: it is not in the checkout, and a relative ``../`` path would
pretend otherwise.

A Helm-rendered stream read from stdin (``helm template … | eksmllint lint -``) has no file: its
findings point at the chart file named by the stream's ``# Source:`` comment, found in the
repository when possible. The line is the template's own line when exactly one template line
rendered the flagged line (equal to it, or equal around its ``{{ }}`` actions), else the finding
is file-level and the message names the rendered line; never a rendered line number pinned on the
template file.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from eksmllint.core.finding import Finding, Location
from eksmllint.loader import SKIP_DIRS, STDIN_NAME
from eksmllint.paths import relative_inside

_CHART_NAME_RE = re.compile(r"^name:\s*['\"]?([^'\"\s#]+)", re.MULTILINE)


def repo_root(cwd: str | None = None) -> str:
    """The git top-level directory containing ``cwd`` (a ``.git`` folder, or file in a worktree),
    else ``cwd``. Read from the file system: no ``git`` binary needed in the CI image."""
    start = os.path.abspath(cwd or os.getcwd())
    here = start
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return start
        here = parent


@dataclass(frozen=True, slots=True)
class Place:
    """A finding's location as a CI report writes it. ``line`` 0 means the whole file."""

    path: str
    line: int
    col: int
    note: str | None = None  # why the line is not the rendered one (Helm stdin), for messages


class ReportPaths:
    """Maps the linter's locations to report locations for one run. Lookups (paths, charts,
    template lines) are cached for the run only: a later run may see the files changed."""

    def __init__(self, files: Iterable = (), root: str | None = None) -> None:
        self.root = root or repo_root()
        self._files = {f.path: f for f in files}
        self._paths: dict[str, str] = {}
        self._charts: dict[str, str | None] = {}
        self._chart_dirs: dict[str, tuple[str, ...]] = {}
        self._template_lines: dict[str, tuple[tuple[str, re.Pattern[str] | None], ...]] = {}

    def path(self, file: str) -> str:
        found = self._paths.get(file)
        if found is None:
            found = self._paths[file] = self._relative(file)
        return found

    def _relative(self, file: str) -> str:
        if file == STDIN_NAME:
            return file
        rel = relative_inside(file, self.root)
        return rel if rel is not None else os.path.normpath(os.path.abspath(file)).replace(os.sep, "/")

    def place(self, loc: Location) -> Place:
        if loc.file == STDIN_NAME and loc.template:
            return self._helm_place(loc, loc.template)
        return Place(self.path(loc.file), loc.line, loc.col)

    def _helm_place(self, loc: Location, template: str) -> Place:
        chart_file = self.chart_file(template)
        rendered = f"helm template output line {loc.line}" if loc.line else None
        if chart_file is None:
            return Place(template, 0, 0, rendered)
        src = self._files.get(loc.file)
        line = 0
        if loc.line and src is not None and 0 < loc.line <= len(src.lines):
            line = self._unique_line(chart_file, src.lines[loc.line - 1])
        path = self.path(chart_file)
        return Place(path, line, 0) if line else Place(path, 0, 0, rendered)

    def chart_file(self, template: str) -> str | None:
        """The file a Helm ``# Source: CHART/templates/x.yaml`` comment names, if the chart is in
        the repository: ``root/CHART/…`` or a folder holding a ``Chart.yaml`` named CHART (its
        folder name or its ``name:``). Only an unambiguous match counts."""
        if template not in self._charts:
            self._charts[template] = self._find_chart_file(template)
        return self._charts[template]

    def _find_chart_file(self, template: str) -> str | None:
        parts = template.replace("\\", "/").split("/")
        if len(parts) < 2 or any(p in ("", ".", "..") for p in parts):
            return None
        direct = os.path.join(self.root, *parts)
        if os.path.isfile(direct):
            return direct
        chart, rest = parts[0], parts[1:]
        if chart not in self._chart_dirs:  # one walk per chart, not per template
            self._chart_dirs[chart] = _chart_dirs(self.root, chart)
        hits = [h for d in self._chart_dirs[chart] if os.path.isfile(h := os.path.join(d, *rest))]
        return hits[0] if len(hits) == 1 else None

    def _unique_line(self, path: str, rendered: str) -> int:
        """The 1-based line of ``path`` that rendered ``rendered`` (ignoring surrounding blanks):
        the one line equal to it, else the one line whose literal text around its template
        actions matches it (``gpu: {{ .Values.gpus }}`` rendered ``gpu: 8``); 0 when no line or
        several do (template logic changed it, or it is ambiguous)."""
        wanted = rendered.strip()
        if not wanted:
            return 0
        if path not in self._template_lines:
            self._template_lines[path] = _template_lines(path)
        lines = self._template_lines[path]
        hits = [no for no, (text, _) in enumerate(lines, 1) if text == wanted]
        if not hits:
            hits = [no for no, (_, pattern) in enumerate(lines, 1) if pattern and pattern.fullmatch(wanted)]
        return hits[0] if len(hits) == 1 else 0


_ACTION = re.compile(r"\{\{-?.*?-?\}\}")


def _template_lines(path: str) -> tuple[tuple[str, re.Pattern[str] | None], ...]:
    """Each line of a template, stripped, with a pattern for what it renders when it holds template
    actions: its literal parts in order, anything between them. None for a line without actions,
    and for one whose literal parts hold no word (``{{ toYaml . | nindent 4 }}``, ``- {{ x }}``),
    which would match nearly any rendered line."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ()
    out = []
    for line in text.splitlines():
        line = line.strip()
        pattern = None
        if "{{" in line:
            literals = _ACTION.split(line)
            if any(any(ch.isalnum() for ch in part) for part in literals):
                pattern = re.compile(".*?".join(re.escape(part) for part in literals))
        out.append((line, pattern))
    return tuple(out)


def _chart_dirs(root: str, chart: str) -> tuple[str, ...]:
    """Folders under ``root`` holding the chart CHART."""
    found = []
    for here, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]  # as the loader does
        if "Chart.yaml" in files:
            if os.path.basename(here) == chart or _chart_name(os.path.join(here, "Chart.yaml")) == chart:
                found.append(here)
    return tuple(found)


def _chart_name(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as fh:
            m = _CHART_NAME_RE.search(fh.read(65536))
    except (OSError, UnicodeDecodeError):
        return None
    return m.group(1) if m else None


# --- Fingerprints ------------------------------------------------------------------------------


def identity(f: Finding, path: str | None) -> str:
    """What makes a result the same one across runs: file, rule, resource identity and document
    path, never the line (so edits elsewhere in the file keep it). Findings without a resource
    (file-level: EML001, Slurm scripts) have only their line to tell them apart.

    ``path`` None gives the identity of baselines written before files were part of it."""
    r = f.resource
    ident = (r.api_version, r.kind, r.namespace or "", r.name or "") if r else (f.location.file,)
    key = (f.code, *ident, "/".join(map(str, f.location.path)), "" if r else str(f.location.line))
    if path is not None:
        key = (path, *key)
    # surrogateescape: a non-UTF-8 file name hashes as its bytes instead of raising
    return hashlib.sha256("|".join(key).encode("utf-8", "surrogateescape")).hexdigest()[:32]


def fingerprints(findings: Iterable[Finding], paths: ReportPaths, *, legacy: bool = False) -> list[str]:
    """One fingerprint per finding, distinct within the run: findings that share an identity (the
    same rule twice on one field) are numbered in report order, which is deterministic. Pass every
    finding of the run, suppressed ones included, so the numbers do not depend on suppressions.
    ``legacy``: baseline version 1 identities (no file, no numbers)."""
    seen: Counter[str] = Counter()
    out = []
    for f in findings:
        base = identity(f, None if legacy else paths.place(f.location).path)
        if legacy:
            out.append(base)
            continue
        n = seen[base]
        seen[base] += 1
        out.append(base if n == 0 else f"{base}:{n}")
    return out
