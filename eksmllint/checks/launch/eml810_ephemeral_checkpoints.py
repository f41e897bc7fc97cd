"""EML810 ephemeral-checkpoints: a training program writes its checkpoints where they do not outlive
the pod (no volume, an emptyDir or a generic ephemeral volume)."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from eksmllint.analysis.deepspeed_configs import norm
from eksmllint.analysis.launch_sites import container_sites
from eksmllint.analysis.workload_class import WorkloadClass, classify_template
from eksmllint.checks.helpers import fmt_list
from eksmllint.core.context import RuleContext
from eksmllint.core.finding import Finding
from eksmllint.workload import Container, PodTemplate

CHECKPOINT_ARGS = ("output_dir", "checkpoint_dir", "save_dir", "ckpt_dir", "save")


def _mount_for(c: Container, directory: str) -> tuple[int, dict] | None:
    """The volume mount holding ``directory`` (longest mountPath prefix)."""
    best: tuple[int, dict] | None = None
    best_len = -1
    for i, m in c.volume_mounts:
        mp = str(m.get("mountPath", "")).rstrip("/") or "/"
        if directory == mp or directory.startswith(mp.rstrip("/") + "/"):
            if len(mp) > best_len:
                best, best_len = (i, m), len(mp)
    return best


def _shared_with_other_container(t: PodTemplate, c: Container, volume: str) -> bool:
    return any(
        o is not c and any(m.get("name") == volume for _, m in o.volume_mounts)
        for o in t.containers + t.init_containers
    )


def _rank_containers(t: PodTemplate, c: Container) -> list[tuple[PodTemplate, Container]]:
    """Where the processes ``c`` starts write their files: ``c`` itself, or for an MPIJob launcher
    (workload class ``launcher``: mpirun starts the ranks over ssh) the workers' first containers."""
    if classify_template(t).cls is not WorkloadClass.LAUNCHER:
        return [(t, c)]
    return [(u, u.containers[0]) for u in t.workload.templates if u is not t and u.containers]


def check(ctx: RuleContext, t: PodTemplate) -> Iterator[Finding]:
    for c in t.containers:
        wd = c.data.get("workingDir")
        seen: set[str] = set()
        hosts = _rank_containers(t, c)
        if not hosts:
            continue
        for site in container_sites(c):
            for name in CHECKPOINT_ARGS:
                opt = site.inv.script_flag(name)
                if opt is None or not opt.resolved or "$" in opt.resolved:
                    continue
                directory = opt.resolved.strip()
                if not directory.startswith("/"):
                    if name == "save" or not (isinstance(wd, str) and wd.startswith("/")):
                        continue
                    directory = posixpath.join(wd, directory)
                directory = norm(directory)
                if directory in seen:
                    continue
                seen.add(directory)
                flag = opt.raw.split("=", 1)[0].split()[0]
                problems = [_ephemeral_problem(u, uc, directory) for u, uc in hosts]
                if any(p is None for p in problems):
                    continue  # at least one pod that runs the ranks keeps it: stay silent
                where = (
                    f"container {c.name!r}"
                    if hosts == [(t, c)]
                    else (
                        f"the {fmt_list(sorted({u.role for u, _ in hosts}))} pods (container {hosts[0][1].name!r}), "
                        "where mpirun starts the ranks,"
                    )
                )
                yield site.report(
                    ctx, opt.value_position or opt.position, opt.raw, f"{flag} {directory} of {where} {problems[0]}"
                )


def _ephemeral_problem(t: PodTemplate, c: Container, directory: str) -> str | None:
    mount = _mount_for(c, directory)
    if mount is None:
        return (
            "is on no volume: checkpoints go to the container's own filesystem and are lost when the "
            "container restarts or the pod is rescheduled; mount a PersistentVolumeClaim there"
        )
    _, m = mount
    vname = m.get("name")
    vol = t.volume(vname) if isinstance(vname, str) else None
    if vol is None or not isinstance(vname, str):
        return None  # a dangling mount is EML703's business
    _, v = vol
    if "emptyDir" in v:
        kind = (
            "a memory-backed emptyDir"
            if isinstance(v.get("emptyDir"), dict) and v["emptyDir"].get("medium") == "Memory"
            else "an emptyDir"
        )
    elif "ephemeral" in v:
        kind = "a generic ephemeral volume"
    else:
        return None
    if _shared_with_other_container(t, c, vname):
        return None  # a sidecar mounting it too presumably uploads the checkpoints
    return (
        f"is on {kind} (volume {vname!r} at {m.get('mountPath')}), which is deleted with the pod: a "
        "rescheduled or retried pod cannot resume from its checkpoints; use a PersistentVolumeClaim"
    )
