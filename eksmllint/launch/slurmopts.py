"""Option tables of ``sbatch`` and ``srun`` (from their man pages, Slurm 23.x/24.x, plus
the pyxis ``--container-*`` options and SageMaker HyperPod's ``--auto-resume``).

Both parse options with getopt_long: long options take ``--name=value`` or ``--name value``
(``opt`` ones only the ``=`` form), short ones ``-N4`` or ``-N 4``, unambiguous prefixes of
long names are accepted, and parsing stops at the first non-option.  Knowing which options
take a value is what lets us find the program after ``srun``'s options, and which options
exist lets ``#SBATCH --nodse=4`` be reported the way sbatch itself would reject it.
"""

from __future__ import annotations

from dataclasses import dataclass

REQ, OPT, NONE = "req", "opt", "none"


@dataclass(frozen=True)
class SlurmOpt:
    long: str
    short: str | None
    arg: str  # REQ | OPT | NONE
    scope: str = "both"  # "both" | "sbatch" | "srun"

    @property
    def canonical(self) -> str:
        return self.long.replace("-", "_")


_TABLE: tuple[tuple[str, str | None, str, str], ...] = (
    ("account", "A", REQ, "both"),
    ("acctg-freq", None, REQ, "both"),
    ("array", "a", REQ, "sbatch"),
    ("batch", None, REQ, "sbatch"),
    ("bb", None, REQ, "both"),
    ("bbf", None, REQ, "both"),
    ("begin", "b", REQ, "both"),
    ("chdir", "D", REQ, "both"),
    ("cluster-constraint", None, REQ, "both"),
    ("clusters", "M", REQ, "both"),
    ("comment", None, REQ, "both"),
    ("constraint", "C", REQ, "both"),
    ("container", None, REQ, "both"),
    ("container-id", None, REQ, "both"),
    ("contiguous", None, NONE, "both"),
    ("core-spec", "S", REQ, "both"),
    ("cores-per-socket", None, REQ, "both"),
    ("cpu-freq", None, REQ, "both"),
    ("cpus-per-gpu", None, REQ, "both"),
    ("cpus-per-task", "c", REQ, "both"),
    ("deadline", None, REQ, "both"),
    ("delay-boot", None, REQ, "both"),
    ("dependency", "d", REQ, "both"),
    ("distribution", "m", REQ, "both"),
    ("error", "e", REQ, "both"),
    ("exclude", "x", REQ, "both"),
    ("exclusive", None, OPT, "both"),
    ("export", None, REQ, "both"),
    ("export-file", None, REQ, "sbatch"),
    ("extra", None, REQ, "both"),
    ("extra-node-info", "B", REQ, "both"),
    ("get-user-env", None, OPT, "sbatch"),
    ("gid", None, REQ, "both"),
    ("gpu-bind", None, REQ, "both"),
    ("gpu-freq", None, REQ, "both"),
    ("gpus", "G", REQ, "both"),
    ("gpus-per-node", None, REQ, "both"),
    ("gpus-per-socket", None, REQ, "both"),
    ("gpus-per-task", None, REQ, "both"),
    ("gres", None, REQ, "both"),
    ("gres-flags", None, REQ, "both"),
    ("help", "h", NONE, "both"),
    ("hint", None, REQ, "both"),
    ("hold", "H", NONE, "both"),
    ("ignore-pbs", None, NONE, "sbatch"),
    ("input", "i", REQ, "both"),
    ("job-name", "J", REQ, "both"),
    ("kill-on-invalid-dep", None, REQ, "sbatch"),
    ("licenses", "L", REQ, "both"),
    ("mail-type", None, REQ, "both"),
    ("mail-user", None, REQ, "both"),
    ("mcs-label", None, REQ, "both"),
    ("mem", None, REQ, "both"),
    ("mem-bind", None, REQ, "both"),
    ("mem-per-cpu", None, REQ, "both"),
    ("mem-per-gpu", None, REQ, "both"),
    ("mincpus", None, REQ, "both"),
    ("network", None, REQ, "both"),
    ("nice", None, OPT, "both"),
    ("no-kill", "k", OPT, "both"),
    ("no-requeue", None, NONE, "sbatch"),
    ("nodefile", "F", REQ, "sbatch"),
    ("nodelist", "w", REQ, "both"),
    ("nodes", "N", REQ, "both"),
    ("ntasks", "n", REQ, "both"),
    ("ntasks-per-core", None, REQ, "both"),
    ("ntasks-per-gpu", None, REQ, "both"),
    ("ntasks-per-node", None, REQ, "both"),
    ("ntasks-per-socket", None, REQ, "both"),
    ("oom-kill-step", None, OPT, "both"),
    ("open-mode", None, REQ, "both"),
    ("output", "o", REQ, "both"),
    ("overcommit", "O", NONE, "both"),
    ("oversubscribe", "s", NONE, "both"),
    ("parsable", None, NONE, "sbatch"),
    ("partition", "p", REQ, "both"),
    ("power", None, REQ, "both"),
    ("prefer", None, REQ, "both"),
    ("priority", None, REQ, "both"),
    ("profile", None, REQ, "both"),
    ("propagate", None, OPT, "both"),
    ("qos", "q", REQ, "both"),
    ("quiet", "Q", NONE, "both"),
    ("reboot", None, NONE, "both"),
    ("requeue", None, NONE, "sbatch"),
    ("reservation", None, REQ, "both"),
    ("resv-ports", None, OPT, "both"),
    ("segment", None, REQ, "both"),
    ("signal", None, REQ, "both"),
    ("sockets-per-node", None, REQ, "both"),
    ("spread-job", None, NONE, "both"),
    ("stepmgr", None, NONE, "sbatch"),
    ("switches", None, REQ, "both"),
    ("test-only", None, NONE, "both"),
    ("thread-spec", None, REQ, "both"),
    ("threads-per-core", None, REQ, "both"),
    ("time", "t", REQ, "both"),
    ("time-min", None, REQ, "both"),
    ("tmp", None, REQ, "both"),
    ("tres-bind", None, REQ, "both"),
    ("tres-per-task", None, REQ, "both"),
    ("uid", None, REQ, "both"),
    ("usage", None, NONE, "both"),
    ("use-min-nodes", None, NONE, "both"),
    ("verbose", "v", NONE, "both"),
    ("version", "V", NONE, "both"),
    ("wait", "W", NONE, "sbatch"),
    ("wait-all-nodes", None, REQ, "sbatch"),
    ("wckey", None, REQ, "both"),
    ("wrap", None, REQ, "sbatch"),
    ("x11", None, OPT, "both"),
    # srun only
    ("accel-bind", None, REQ, "srun"),
    ("auto-resume", None, OPT, "srun"),
    ("bcast", None, OPT, "srun"),
    ("bcast-exclude", None, REQ, "srun"),
    ("compress", None, OPT, "srun"),
    ("cpu-bind", None, REQ, "srun"),
    ("disable-status", "X", NONE, "srun"),
    ("epilog", None, REQ, "srun"),
    ("exact", None, NONE, "srun"),
    ("het-group", None, REQ, "srun"),
    ("immediate", "I", OPT, "srun"),
    ("jobid", None, REQ, "srun"),
    ("kill-on-bad-exit", "K", OPT, "srun"),
    ("label", "l", NONE, "srun"),
    ("launch-cmd", None, NONE, "srun"),
    ("launcher-opts", None, REQ, "srun"),
    ("mpi", None, REQ, "srun"),
    ("multi-prog", None, NONE, "srun"),
    ("no-allocate", "Z", NONE, "srun"),
    ("overlap", None, NONE, "srun"),
    ("preserve-env", "E", NONE, "srun"),
    ("prolog", None, REQ, "srun"),
    ("pty", None, NONE, "srun"),
    ("quit-on-interrupt", None, NONE, "srun"),
    ("relative", "r", REQ, "srun"),
    ("send-libs", None, OPT, "srun"),
    ("slurmd-debug", None, REQ, "srun"),
    ("task-epilog", None, REQ, "srun"),
    ("task-prolog", None, REQ, "srun"),
    ("threads", "T", REQ, "srun"),
    ("unbuffered", "u", NONE, "srun"),
    ("wait", "W", REQ, "srun"),
    ("whole", None, NONE, "srun"),
    # pyxis (NVIDIA container plugin for Slurm), used by most GPU clusters
    ("container-image", None, REQ, "both"),
    ("container-mounts", None, REQ, "both"),
    ("container-workdir", None, REQ, "both"),
    ("container-name", None, REQ, "both"),
    ("container-save", None, REQ, "both"),
    ("container-env", None, REQ, "both"),
    ("container-mount-home", None, NONE, "both"),
    ("no-container-mount-home", None, NONE, "both"),
    ("container-remap-root", None, NONE, "both"),
    ("no-container-remap-root", None, NONE, "both"),
    ("container-entrypoint", None, NONE, "both"),
    ("no-container-entrypoint", None, NONE, "both"),
    ("container-entrypoint-log", None, NONE, "both"),
    ("container-writable", None, NONE, "both"),
    ("container-readonly", None, NONE, "both"),
)


def _build(scope: str) -> tuple[dict[str, SlurmOpt], dict[str, SlurmOpt]]:
    longs: dict[str, SlurmOpt] = {}
    shorts: dict[str, SlurmOpt] = {}
    for long, short, arg, sc in _TABLE:
        if sc not in ("both", scope):
            continue
        opt = SlurmOpt(long, short, arg, sc)
        longs[long] = opt
        if short:
            shorts[short] = opt
    return longs, shorts


SBATCH_LONG, SBATCH_SHORT = _build("sbatch")
SRUN_LONG, SRUN_SHORT = _build("srun")


def lookup_long(name: str, table: dict[str, SlurmOpt]) -> SlurmOpt | None:
    """Exact long name, else a unique prefix (getopt_long accepts abbreviations)."""
    if name in table:
        return table[name]
    matches = [opt for long, opt in table.items() if long.startswith(name)]
    return matches[0] if len(matches) == 1 and name else None


# --------------------------------------------------------------------------- parsing

from collections.abc import Sequence  # noqa: E402

from .model import Arg, Option, canonical_name  # noqa: E402


def split_value(a: Arg) -> tuple[str, str | None]:
    """Value part of ``--name=value`` as written and resolved."""
    value = a.value.split("=", 1)[1] if "=" in a.value else ""
    resolved = a.resolved.split("=", 1)[1] if a.resolved is not None and "=" in a.resolved else None
    return value, resolved


def parse_getopt(
    args: Sequence[Arg],
    i: int,
    longs: dict[str, SlurmOpt],
    shorts: dict[str, SlurmOpt],
) -> tuple[dict[str, Option], list[Option], int, list[tuple[Arg, str]]]:
    """Parse Slurm-style options from ``args[i:]`` up to the first non-option.

    Returns options by canonical long name (last one wins, as in Slurm), all options in
    order, the index of the first non-option argument, and errors (argument, message) in
    sbatch's own words.  Unknown options are still recorded, as flags or with their
    ``=value``.
    """
    opts: dict[str, Option] = {}
    order: list[Option] = []
    errors: list[tuple[Arg, str]] = []

    def add(opt: Option) -> None:
        opts[opt.name] = opt
        order.append(opt)

    n = len(args)
    while i < n:
        a = args[i]
        if a.opaque:
            if a.option_like:
                i += 1
                continue
            break
        t = a.text
        if t == "--":
            i += 1
            break
        if t.startswith("--") and len(t) > 2:
            name, eq, _ = t[2:].partition("=")
            spec = lookup_long(name, longs)
            if spec is None:
                errors.append((a, f"unrecognized option '--{name}'"))
                value, resolved = split_value(a) if eq else (None, None)
                add(Option(canonical_name(name), value, a.raw, a.position, resolved, a.position if eq else None))
            elif spec.arg == NONE or (spec.arg == OPT and not eq):
                if eq and spec.arg == NONE:
                    errors.append((a, f"option '--{spec.long}' doesn't allow an argument"))
                add(Option(spec.canonical, None, a.raw, a.position, None))
            elif eq:
                value, resolved = split_value(a)
                add(Option(spec.canonical, value, a.raw, a.position, resolved, a.position))
            elif i + 1 < n:
                b = args[i + 1]
                add(Option(spec.canonical, b.value, f"{a.raw} {b.raw}", a.position, b.resolved, b.position))
                i += 1
            else:
                errors.append((a, f"option '--{spec.long}' requires an argument"))
            i += 1
            continue
        if t.startswith("-") and len(t) > 1:
            j = 1
            while j < len(t):
                ch = t[j]
                spec = shorts.get(ch)
                if spec is None:
                    errors.append((a, f"invalid option -- '{ch}'"))
                    j += 1
                    continue
                if spec.arg == NONE:
                    add(Option(spec.canonical, None, a.raw, a.position, None))
                    j += 1
                    continue
                rest = t[j + 1 :]
                if rest:
                    shown = a.value[j + 1 :] if a.value[: j + 1] == t[: j + 1] else rest
                    add(
                        Option(
                            spec.canonical,
                            shown,
                            a.raw,
                            a.position,
                            rest if a.resolved is not None else None,
                            a.position,
                        )
                    )
                elif spec.arg == REQ:
                    if i + 1 < n:
                        b = args[i + 1]
                        add(Option(spec.canonical, b.value, f"{a.raw} {b.raw}", a.position, b.resolved, b.position))
                        i += 1
                    else:
                        errors.append((a, f"option requires an argument -- '{ch}'"))
                else:
                    add(Option(spec.canonical, None, a.raw, a.position, None))
                break
            i += 1
            continue
        break
    return opts, order, i, errors
