"""Find and read manifest files into documents and resources.

Every problem reading a file is returned as a :class:`LoadProblem` (an ``EML001`` finding later),
never raised: a linter that crashes on one bad file in a thousand is switched off.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from eksmllint.loader import templates
from eksmllint.loader.files import (
    DEFAULT_MAX_BYTES,
    MANIFEST_SUFFIXES,
    MAYBE_SLURM_SUFFIXES,
    SLURM_SUFFIXES,
    STDIN,
    STDIN_NAME,
    FileLoad,
    LoadProblem,
    ParsedText,
    attach,
    decode,
    display_name,
    gc_paused,
    load_file,
    objects_in,
    parse_source,
    parse_text,
    read_bytes,
    read_source,
)
from eksmllint.resource import Resource, SourceFile

if TYPE_CHECKING:
    from eksmllint.cache import ParseCache
    from eksmllint.config import PathFilter

#: ``progress(total)``: a callback ``report(done, total)`` for a load of ``total`` files, or None.
ProgressFactory = Callable[[int], Callable[[int, int], None] | None]

SKIP_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", ".tox"})
#: Budgets of one run (README "Limits"), on top of each file's (max-file-size, and the node and
#: document budgets of :mod:`eksmllint.yamlpos`): ~2 GB of memory at the measured cost of real
#: manifests (bench/README.md), where a larger run would rather end in the OOM killer.
MAX_RUN_DOCUMENTS = 100_000
MAX_RUN_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Skipped:
    """A discovered file that was not linted, and why (``--verbose``, the JSON report)."""

    file: str
    reason: str


@dataclass
class LoadResult:
    files: list[SourceFile] = field(default_factory=list)
    resources: list[Resource] = field(default_factory=list)
    problems: list[LoadProblem] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # paths given that do not exist
    skipped: list[Skipped] = field(default_factory=list)


def discover(
    paths: Iterable[str],
    exclude: Iterable[str] | PathFilter = (),
    *,
    follow_symlinks: bool = False,
    problems: list[LoadProblem] | None = None,
    stdin_name: str | None = None,
    skipped: list[Skipped] | None = None,
) -> tuple[list[str], list[str]]:
    """Expand directories (recursively, sorted) into candidate files; returns (files, missing).
    ``exclude``: the config's :class:`~eksmllint.config.PathFilter`, or gitignore-style patterns
    relative to the working directory.

    Inside a directory only regular files are candidates: a FIFO or device is never opened (it
    would block or never end). A symlink whose target lies outside the directory given is not
    followed unless ``follow_symlinks`` (its content must not reach reports); neither is a
    symlinked directory, then followed once per real directory (no loops). A directory that
    cannot be read is appended to ``problems``. Paths named explicitly are taken as given.
    Stdin named by ``stdin_name`` is excluded as that file would be, and then appended to
    ``skipped`` (not read), so the run says why it linted nothing.
    """
    from eksmllint.config import PathFilter

    excluded = exclude if isinstance(exclude, PathFilter) else PathFilter(tuple(exclude), os.getcwd())
    found: list[str] = []
    missing: list[str] = []
    seen: set[str] = set()

    def add(p: str) -> None:
        if p not in seen:
            seen.add(p)
            found.append(p)

    def unreadable(err: OSError) -> None:
        if problems is not None:
            problems.append(LoadProblem(err.filename or "?", f"cannot read directory: {err.strerror or err}"))

    for raw in paths:
        if raw == STDIN:
            if stdin_name and excluded(stdin_name):
                if skipped is not None:
                    skipped.append(Skipped(stdin_name, f"stdin: {stdin_name} matches the config's exclude"))
            else:
                add(STDIN)
            continue
        if os.path.isdir(raw):
            inside = _Tree(raw, follow_symlinks)
            for root, dirs, files in os.walk(raw, onerror=unreadable, followlinks=follow_symlinks):
                dirs[:] = sorted(
                    d
                    for d in dirs
                    if d not in SKIP_DIRS
                    and not excluded(os.path.join(root, d), True)
                    and inside.enter(os.path.join(root, d))
                )
                for name in sorted(files):
                    full = os.path.join(root, name)
                    if not (
                        name.endswith(MANIFEST_SUFFIXES + SLURM_SUFFIXES + MAYBE_SLURM_SUFFIXES)
                        or templates.is_template_name(name.lower())
                    ) or excluded(full):  # fsdp.yaml-template
                        continue
                    if inside.regular_file(full):
                        add(full)
        elif os.path.exists(raw):
            if not excluded(raw):
                add(raw)
        else:
            missing.append(raw)
    return found, missing


class _Tree:
    """What :func:`discover` may open under one directory argument."""

    def __init__(self, root: str, follow_symlinks: bool) -> None:
        self.root = os.path.realpath(root)
        self.follow = follow_symlinks
        self.visited: set[tuple[int, int]] = set()
        if follow_symlinks:
            self.enter(root)

    def _within(self, path: str) -> bool:
        real = os.path.realpath(path)
        return real == self.root or real.startswith(self.root.rstrip(os.sep) + os.sep)

    def enter(self, directory: str) -> bool:
        """Whether to walk into ``directory`` (only reached through a symlink when following)."""
        if not self.follow:
            return True  # os.walk does not descend into symlinked directories then
        try:
            st = os.stat(directory)
        except OSError:
            return False
        key = (st.st_dev, st.st_ino)
        if key in self.visited:
            return False  # a symlink loop, or the same directory twice
        self.visited.add(key)
        return True

    def regular_file(self, path: str) -> bool:
        try:
            st = os.stat(path)
        except OSError:
            return False  # a dangling symlink, or gone meanwhile: nothing to read
        if not stat.S_ISREG(st.st_mode):
            return False  # FIFO, socket, device: opening or reading it could block forever
        return self.follow or not os.path.islink(path) or self._within(path)


@dataclass(slots=True)
class _RunBudget:
    """What one :func:`load` has taken so far, against :data:`MAX_RUN_DOCUMENTS` and
    :data:`MAX_RUN_BYTES`."""

    documents: int = 0
    chars: int = 0

    def spend(self, src: SourceFile, parsed: ParsedText | None) -> str | None:
        """Add one file; the budget it overdraws (None: within budget). A List's items count
        as documents (the objects are what costs memory)."""
        self.documents += objects_in(parsed) if parsed is not None else 0
        self.chars += len(src.text or "")
        if self.documents > MAX_RUN_DOCUMENTS:
            return f"more than {MAX_RUN_DOCUMENTS:,} documents in this run (run budget)"
        if self.chars > MAX_RUN_BYTES:
            return f"more than {MAX_RUN_BYTES // (1024 * 1024)} MiB of input in this run (run budget)"
        return None


def load(
    paths: Iterable[str],
    *,
    exclude: Iterable[str] | PathFilter = (),
    max_bytes: int = DEFAULT_MAX_BYTES,
    context_only: bool = False,
    jobs: int = 1,
    cache: ParseCache | None = None,
    follow_symlinks: bool = False,
    progress: ProgressFactory | None = None,
    stdin_name: str | None = None,
) -> LoadResult:
    """Discover (:func:`discover`), read and parse everything under ``paths``.

    ``jobs`` > 1 parses in that many worker processes when the input is big enough to pay for
    them (:func:`eksmllint.loader.workers.load_files`); ``cache`` reuses the parse of unchanged
    files. The result is the same either way, in the same order. ``progress``: what reports the
    files read (the CLI passes its terminal progress bar).
    """
    result = LoadResult()
    files, result.missing = discover(
        paths,
        exclude,
        follow_symlinks=follow_symlinks,
        problems=result.problems,
        stdin_name=stdin_name,
        skipped=result.skipped,
    )
    report = progress(len(files)) if progress is not None else None
    with gc_paused():
        if jobs > 1 and len(files) > 1:
            from eksmllint.loader.workers import load_files

            loads: Iterable[FileLoad] = load_files(files, max_bytes, jobs, cache, stdin_name)
        else:
            loads = (load_file(path, max_bytes, cache, stdin_name) for path in files)
        budget = _RunBudget()
        charts: dict[str, int] = {}
        for done, item in enumerate(loads, 1):
            if report is not None:
                report(done, len(files))
            if item.problem:
                result.problems.append(item.problem)
            if item.skipped:
                result.skipped.append(Skipped(item.path, item.skipped))
            if item.chart:
                charts[item.chart] = charts.get(item.chart, 0) + 1
            src = item.src
            if src is None:
                continue
            over = budget.spend(src, item.parsed)
            if over:
                result.problems.append(
                    LoadProblem(src.path, f"{over}; this file and the {len(files) - done} after it are not linted")
                )
                break
            src.context_only = context_only
            result.files.append(src)
            if item.parsed is not None:
                resources, problems = attach(src, item.parsed)
                result.resources.extend(resources)
                result.problems.extend(problems)
    result.problems.extend(  # one "render first" per chart, not one error per template file
        LoadProblem(
            templates.chart_file(chart),
            templates.chart_message(count),
            1,
            1,
            templates.TEMPLATE_CODE,
            detail=f"Render it, then lint the output: helm template {chart} | eksmllint lint -",
        )
        for chart, count in charts.items()
    )
    return result


__all__ = [
    "DEFAULT_MAX_BYTES",
    "MANIFEST_SUFFIXES",
    "MAYBE_SLURM_SUFFIXES",
    "SLURM_SUFFIXES",
    "STDIN",
    "STDIN_NAME",
    "FileLoad",
    "LoadProblem",
    "LoadResult",
    "ParsedText",
    "ProgressFactory",
    "Skipped",
    "attach",
    "decode",
    "discover",
    "display_name",
    "gc_paused",
    "load",
    "load_file",
    "parse_source",
    "parse_text",
    "read_bytes",
    "read_source",
]
