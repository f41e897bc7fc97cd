"""A progress bar on stderr for long runs, in plain ``\\r`` text (no runtime dependency).

Shown only when it helps and never where it hurts: the stream must be a terminal, ``CI`` must not
be set (CI logs keep every ``\\r`` frame), ``TERM`` must not be ``dumb``, and the run must have at
least :data:`MIN_FILES` files (a bar that flashes for 50 ms is noise). Redraws are throttled so
that drawing never costs more than the linting it reports on.

Use::

    report = progress_for(total_files)        # None when no bar should be shown
    for i, path in enumerate(files, 1):
        ...
        if report:
            report(i, total_files)
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from typing import TextIO

Progress = Callable[[int, int], None]

MIN_FILES = 300
BAR_WIDTH = 30
MIN_INTERVAL = 0.1  # seconds between redraws


def wanted(
    stream: TextIO | None = None, env: Mapping[str, str] | None = None, total: int = 0, min_total: int = MIN_FILES
) -> bool:
    """Whether a bar should be drawn for ``total`` items on ``stream``."""
    stream = sys.stderr if stream is None else stream
    env = os.environ if env is None else env
    if total < min_total:
        return False
    if env.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        return False
    if env.get("TERM") == "dumb" or "NO_PROGRESS" in env:
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # closed or replaced streams
        return False


class ProgressBar:
    """Callable ``bar(done, total)``; draws ``[#####.....]  123/456 files``; clears itself at the end."""

    def __init__(self, stream: TextIO | None = None, label: str = "files", clock: Callable[[], float] = time.monotonic):
        self.stream = sys.stderr if stream is None else stream
        self.label = label
        self.clock = clock
        self._last = float("-inf")
        self._width = 0
        self.closed = False

    def __call__(self, done: int, total: int) -> None:
        if self.closed or total <= 0:
            return
        now = self.clock()
        finished = done >= total
        if not finished and now - self._last < MIN_INTERVAL:
            return
        self._last = now
        try:
            if finished:
                self.stream.write("\r" + " " * self._width + "\r")
                self.closed = True
            else:
                filled = int(BAR_WIDTH * done / total)
                text = f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done}/{total} {self.label}"
                self._width = max(self._width, len(text))
                self.stream.write("\r" + text.ljust(self._width))
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away: stop drawing, keep linting
            self.closed = True


def progress_for(
    total: int, stream: TextIO | None = None, env: Mapping[str, str] | None = None, min_total: int = MIN_FILES
) -> Progress | None:
    """A progress callback for ``total`` items, or None when no bar should be drawn."""
    if not wanted(stream, env, total, min_total):
        return None
    return ProgressBar(stream)


def progress(done: int, total: int) -> None:
    """Module-level callback ``progress(done, total)`` on stderr, with the same conditions.

    Decides at the first call of a run (``done == 0`` or a new ``total``) whether to draw; cheap
    to call on every file.
    """
    global _current, _current_total
    if done == 0 or _current_total != total:  # a new run (done == 0) or a new list of files
        _current_total = total
        _current = progress_for(total)
    if _current is not None:
        _current(done, total)


_current: Progress | None = None
_current_total: int | None = None
