"""``--jobs``: parsing in worker processes, and the rules of a large run in forked processes.

Parsing. Reading and composing YAML with positions is per file and is the part of a run that
grows with the input, so worker processes can do it (:func:`eksmllint.loader.load_file`); they
send back :class:`~eksmllint.loader.FileLoad` items (``YMap``/``YList`` pickle in C, no Python code
runs per node) and the parent attaches them in the original order. Workers are used only when the
input is big enough to pay for the processes (:func:`worth_parallel`); ``jobs=1`` never starts
one. Sending parsed documents back costs about as much CPU as parsing them (pickling ~1 s and
unpickling ~0.35 s for 10,000 documents that take ~1.1 s to parse), so on two cores workers cannot
win and were measured to lose (bench/README.md). The automatic setting (``jobs=0``, the CLI
default) therefore parses with one worker per CPU only from :data:`AUTO_MIN_CPUS` CPUs on; an
explicit ``--jobs N`` is always honoured.

Rules. A rule's result may depend on any file (``LintRun.landing`` places every pod template on
every NodePool of the run), so rules are never split by file: they are split by rule, over the
whole merged run, in forked processes that inherit it (:func:`run_rules_forked`, below).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from eksmllint.loader import STDIN, FileLoad, load_file

if TYPE_CHECKING:
    from eksmllint.cache import ParseCache

#: Below this many bytes of input, worker start-up and transfer cost more than they save.
MIN_PARALLEL_BYTES = 512 * 1024
MIN_PARALLEL_FILES = 8
#: Chunks per worker: enough to balance uneven files, few enough to keep transfers large.
CHUNKS_PER_JOB = 4
#: Fewest CPUs at which the automatic setting starts workers (below, transfer eats the gain).
AUTO_MIN_CPUS = 4


def available_cpus() -> int:
    """CPUs this process may run on (affinity and cgroup-limited containers), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def resolve_jobs(jobs: int | None) -> int:
    """``None`` or 0 (automatic): one worker per available CPU when there are at least
    :data:`AUTO_MIN_CPUS`, else none (1). Anything else is clamped to at least 1."""
    if not jobs:
        cpus = available_cpus()
        return cpus if cpus >= AUTO_MIN_CPUS else 1
    return max(1, int(jobs))


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
    from eksmllint.loader import gc_paused

    paths, max_bytes, cache_dir = args
    cache = None
    if cache_dir:
        from eksmllint.cache import ParseCache

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


def load_files(paths: list[str], max_bytes: int, jobs: int, cache: ParseCache | None = None) -> Iterator[FileLoad]:
    """:func:`~eksmllint.loader.load_file` for every path, in order, using up to ``jobs`` workers.

    Falls back to the serial loop for small inputs, for stdin (workers cannot read it), and when
    worker processes cannot be started (sandboxes without ``fork``/semaphores).
    """
    sizes = _sizes(paths)
    if STDIN in paths or not worth_parallel(paths, jobs, sizes):
        yield from (load_file(p, max_bytes, cache) for p in paths)
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


# --------------------------------------------------------------------------------------------
# Rules in forked processes
# --------------------------------------------------------------------------------------------
# Rules are 60-70 % of a large run and independent of each other: every rule reads the same
# (merged) run; what they cache (in the run, or on its workload views) is derived from it alone.
# So after loading, the run is forked: each child inherits the whole run (copy-on-write, nothing
# is sent to it), runs a group of rules and sends back only its findings; the parent runs the
# first group itself. Every rule still sees every file. Findings are sorted afterwards, so the
# output does not depend on it.

#: Fewest rule targets (pod templates + resources) for which forking pays: a fork and the
#: transfer of findings cost a few tens of milliseconds.
MIN_PARALLEL_RULE_TARGETS = 2000


def rule_jobs(jobs: int | None) -> int:
    """Processes for the rules: ``--jobs N`` as given; automatic (0) is one per available CPU
    (there is no transfer of documents to pay for, unlike parsing)."""
    return max(1, int(jobs)) if jobs else available_cpus()


def can_fork() -> bool:
    # Linux only: fork is the documented default there, and macOS's system libraries are not
    # fork-safe. Never from a process with other threads (the webhook lints in a thread pool).
    import threading

    return sys.platform.startswith("linux") and hasattr(os, "fork") and threading.active_count() == 1


def rule_groups(rules: list, parts: int, sizes: dict[str, int]) -> list[list]:
    """Split ``rules`` into up to ``parts`` groups of about equal work. A family (``EML4``...) stays
    in one group: its rules share per-run caches (the 4xx precision analysis, the 7xx placement),
    which would otherwise be computed in two processes. Work is estimated as the number of
    targets a rule is called on (``sizes``: target -> count)."""
    families: dict[str, list] = {}
    for rule in rules:
        families.setdefault(rule.code[:4], []).append(rule)
    weight = {f: sum(sizes.get(r.spec.target, 1) for r in rs) for f, rs in families.items()}
    groups: list[list] = [[] for _ in range(max(1, parts))]
    loads = [0] * len(groups)
    for fam in sorted(families, key=lambda f: (-weight[f], f)):
        i = loads.index(min(loads))
        groups[i].extend(families[fam])
        loads[i] += weight[fam]
    order = {id(rule): i for i, rule in enumerate(rules)}
    return [sorted(g, key=lambda r: order[id(r)]) for g in groups if g]  # each in the given order


def run_rules_forked(run: Any, rules: list, jobs: int, run_rules: Any) -> list:
    """``run_rules(run, rules)`` spread over ``jobs`` processes (this one included); the serial
    call when forking cannot pay or is not possible. A child that fails or dies has its group
    re-run here, so the findings are the same in every case."""
    import pickle

    sizes = {
        "templates": len(run.templates),
        "workloads": len(run.workloads),
        "resources": len(run.resources),
        "files": len(run.files),
        "run": len(run.resources),
    }
    if jobs <= 1 or sizes["templates"] + sizes["resources"] < MIN_PARALLEL_RULE_TARGETS or not can_fork():
        return run_rules(run, rules)
    groups = rule_groups(rules, jobs, sizes)
    if len(groups) < 2:
        return run_rules(run, rules)
    _warm_shared_views(run)
    children: list[tuple[int, int, list]] = []  # (pid or -1, read end of its pipe, its rules)
    open_reads: list[int] = []
    reaped: set[int] = set()
    try:
        for group in groups[1:]:
            read_fd, write_fd = os.pipe()
            try:
                pid = os.fork()
            except OSError:
                os.close(read_fd)
                os.close(write_fd)
                children.append((-1, -1, group))  # run here below
                continue
            if pid == 0:  # the child: run the group, send the findings, leave without cleanup
                code = 1
                try:
                    os.close(read_fd)
                    for fd in open_reads:  # earlier children's pipes are not this child's
                        os.close(fd)
                    data = pickle.dumps(run_rules(run, group), protocol=pickle.HIGHEST_PROTOCOL)
                    with os.fdopen(write_fd, "wb") as out:
                        out.write(data)
                    code = 0
                finally:
                    os._exit(code)  # no atexit handlers, no flushing of the parent's buffers
            os.close(write_fd)
            open_reads.append(read_fd)
            children.append((pid, read_fd, group))
        findings = run_rules(run, groups[0])
        for pid, read_fd, group in children:
            result = None
            if pid > 0:
                open_reads.remove(read_fd)
                with os.fdopen(read_fd, "rb") as pipe:
                    data = pipe.read()
                _, status = os.waitpid(pid, 0)
                reaped.add(pid)
                if os.waitstatus_to_exitcode(status) == 0:
                    try:
                        result = pickle.loads(data)
                    except Exception:
                        result = None
            findings.extend(run_rules(run, group) if result is None else result)
        return findings
    finally:  # interrupted (Ctrl-C in this process's own group): leave no child or pipe behind
        for fd in open_reads:
            os.close(fd)
        for pid, _, _ in children:
            if pid > 0 and pid not in reaped:
                try:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                except OSError:
                    pass


def _warm_shared_views(run: Any) -> None:
    """Compute what most rule families read (workloads, NodePools, the placement of every
    template) before forking, so that children share it instead of each computing it."""
    from eksmllint.analysis.placement import placement

    try:
        for template in run.templates:
            placement(run, template)
    except Exception:
        pass
