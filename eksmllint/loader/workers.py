"""Parsing in worker processes (``--jobs``).

Reading and composing YAML with positions is per file and is the part of a run that grows with
the input, so worker processes can do it (:func:`eksmllint.loader.files.load_file`); they send
back :class:`~eksmllint.loader.files.FileLoad` items (``YMap``/``YList`` pickle in C, no Python
code runs per node) and the parent attaches them in the original order. Workers are used only
when the input is big enough to pay for the processes (:func:`worth_parallel`); ``jobs=1`` never
starts one. Sending parsed documents back costs about as much CPU as parsing them (pickling ~1 s
and unpickling ~0.35 s for 10,000 documents that take ~1.1 s to parse), so on two cores workers
cannot win and were measured to lose (bench/README.md). The automatic setting (``jobs=0``, the
CLI default) therefore parses with one worker per CPU only from
:data:`eksmllint.jobs.AUTO_MIN_CPUS` CPUs on; an explicit ``--jobs N`` is always honoured.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from eksmllint.loader.files import STDIN, FileLoad, gc_paused, load_file

if TYPE_CHECKING:
    from eksmllint.cache import ParseCache

#: Below this many bytes of input, worker start-up and transfer cost more than they save.
MIN_PARALLEL_BYTES = 512 * 1024
MIN_PARALLEL_FILES = 8
#: Chunks per worker: enough to balance uneven files, few enough to keep transfers large.
CHUNKS_PER_JOB = 4


def _sizes(paths: list[str]) -> list[int]:
    out = []
    for p in paths:
        try:
            out.append(os.path.getsize(p) if p != STDIN else 0)
        except OSError:
            out.append(0)
    return out


def worth_parallel(paths: list[str], jobs: int, sizes: list[int] | None = None) -> bool:
    """Whether ``jobs`` workers can beat one process on ``paths``."""
    if jobs <= 1 or len(paths) < MIN_PARALLEL_FILES:
        return False
    sizes = _sizes(paths) if sizes is None else sizes
    return sum(sizes) >= MIN_PARALLEL_BYTES


def chunk(paths: list[str], sizes: list[int], parts: int) -> list[list[str]]:
    """Split ``paths`` into at most ``parts`` consecutive runs of about equal bytes (order kept)."""
    total = sum(sizes) or 1
    target = total / max(1, parts)
    chunks: list[list[str]] = [[]]
    acc = 0
    for path, size in zip(paths, sizes):
        if chunks[-1] and acc >= target * len(chunks) and len(chunks) < parts:
            chunks.append([])
        chunks[-1].append(path)
        acc += size
    return [c for c in chunks if c]


def _work(args: tuple[list[str], int, str | None]) -> list[FileLoad]:
    """Worker entry point: read and parse a chunk of files (the cache is reopened per process)."""
    paths, max_bytes, cache_dir = args
    cache = None
    if cache_dir:
        from eksmllint.cache import ParseCache  # the cache is reopened in each worker

        cache = ParseCache(cache_dir)
    with gc_paused():
        return [load_file(p, max_bytes, cache) for p in paths]


def _context() -> Any:
    import multiprocessing

    # fork is cheap (the parent has imported everything already); elsewhere the default
    # (spawn on macOS and Windows) works but re-imports the package in every worker.
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def ProcessPoolExecutor(*args: Any, **kwargs: Any) -> Any:
    """``concurrent.futures.ProcessPoolExecutor``, imported only when a pool is really started
    (it pulls in multiprocessing: ~15 ms of every run's start-up otherwise)."""
    from concurrent.futures import ProcessPoolExecutor as _Pool

    return _Pool(*args, **kwargs)


def load_files(
    paths: list[str], max_bytes: int, jobs: int, cache: ParseCache | None = None, stdin_name: str | None = None
) -> Iterator[FileLoad]:
    """:func:`~eksmllint.loader.load_file` for every path, in order, using up to ``jobs`` workers.

    Falls back to the serial loop for small inputs, for stdin (workers cannot read it), and when
    worker processes cannot be started (sandboxes without ``fork``/semaphores).
    """
    sizes = _sizes(paths)
    if STDIN in paths or not worth_parallel(paths, jobs, sizes):
        yield from (load_file(p, max_bytes, cache, stdin_name) for p in paths)
        return
    cache_dir = str(cache.directory) if cache is not None else None
    parts = chunk(paths, sizes, jobs * CHUNKS_PER_JOB)
    try:
        pool = ProcessPoolExecutor(max_workers=min(jobs, len(parts)), mp_context=_context())
    except (OSError, ValueError, ImportError, NotImplementedError):
        yield from (load_file(p, max_bytes, cache) for p in paths)
        return
    done = 0
    try:
        for items in pool.map(_work, [(c, max_bytes, cache_dir) for c in parts]):
            done += 1
            yield from items
    except (OSError, RuntimeError, EOFError):  # a broken pool (worker killed): finish serially
        for c in parts[done:]:
            yield from (load_file(p, max_bytes, cache) for p in c)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
