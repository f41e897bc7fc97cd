"""The rules of a large run in forked processes (``--jobs``; parsing in workers is
:mod:`eksmllint.loader.workers`).

A rule's result may depend on any file (``LintRun.landing`` places every pod template on every
NodePool of the run), so rules are never split by file: they are split by rule, over the whole
merged run, in forked processes that inherit it (:func:`run_rules_forked`, below).
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

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
