"""``--jobs``: how many processes parse (:mod:`eksmllint.loader.workers`) and how many run the
rules (:mod:`eksmllint.parallel`)."""

from __future__ import annotations

import os

#: Fewest CPUs at which the automatic setting starts parse workers (below, transfer eats the gain).
AUTO_MIN_CPUS = 4
#: Share of one CPU this process must have had while it parsed for the automatic setting to fork
#: the rules: less means other work holds the CPUs now, whatever the load average (a 1-minute mean)
#: still says.
MIN_CPU_SHARE = 0.8
#: Parsing shorter than this measures too little (process CPU time ticks in 10 ms on Linux).
MIN_MEASURED_WALL = 0.2


def available_cpus() -> int:
    """CPUs this process may run on (affinity and cgroup-limited containers), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def idle_cpus() -> int:
    """Available CPUs that other processes leave idle, by the 1-minute load average, rounded (at
    least 1). A process forked onto a busy CPU does not run beside this one, it competes with it:
    on a 2-CPU machine shared with other work, forking made the default 1.2x slower than
    ``--jobs 1`` (issue 23)."""
    cpus = available_cpus()
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average on this platform
        return cpus
    return max(1, min(cpus, round(cpus - load)))


def resolve_jobs(jobs: int | None) -> int:
    """Parse workers. ``None`` or 0 (automatic): one per idle CPU when there are at least
    :data:`AUTO_MIN_CPUS`, else none (1). Anything else is clamped to at least 1."""
    if not jobs:
        cpus = idle_cpus()
        return cpus if cpus >= AUTO_MIN_CPUS else 1
    return max(1, int(jobs))


def rule_jobs(jobs: int | None) -> int:
    """Processes for the rules: ``--jobs N`` as given; automatic (0) is one per idle CPU (there
    is no transfer of documents to pay for, unlike parsing); :mod:`eksmllint.parallel` still runs
    a run too small to pay for a fork in one process."""
    return max(1, int(jobs)) if jobs else idle_cpus()


def confirmed_rule_jobs(planned: int, cpu_s: float, wall_s: float) -> int:
    """The automatic rule processes, checked against what parsing the run measured (``cpu_s`` of
    this process over ``wall_s``): a process that did not get :data:`MIN_CPU_SHARE` of a CPU on its
    own would have its fork compete with it, not run beside it, so it stays one process."""
    if planned > 1 and wall_s >= MIN_MEASURED_WALL and cpu_s < MIN_CPU_SHARE * wall_s:
        return 1
    return planned
