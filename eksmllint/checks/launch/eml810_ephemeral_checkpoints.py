"""EML810 ephemeral-checkpoints: a training program writes its checkpoints where they do not outlive
the pod (no volume, an emptyDir or a generic ephemeral volume)."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from eksmllint.analysis.commands import word_location
from eksmllint.analysis.configs import container_configs
from eksmllint.analysis.deepspeed_configs import norm
from eksmllint.analysis.launch_sites import container_sites
from eksmllint.analysis.workload_class import WorkloadClass, classify_template
from eksmllint.checks.helpers import fmt_list
from eksmllint.core.context import RuleContext
from eksmllint.core.finding import Finding
from eksmllint.workload import Container, PodTemplate

#: Training-program arguments that name where checkpoints are written (any spelling: ``--checkpoint-dir``
#: is ``checkpoint_dir``). ``--checkpoint-file`` (torchelastic's ImageNet example) names the file it saves
#: and resumes from. Ambiguous names (``--checkpoint``, ``--checkpoint_path``: often weights to load) are
#: left out, and so are reads (``--resume_from_checkpoint``).
CHECKPOINT_ARGS = ("output_dir", "checkpoint_dir", "save_dir", "ckpt_dir", "checkpoint_file", "save")
#: Volumes a program cannot write its checkpoints to (the kubelet mounts them read-only).
_READ_ONLY_SOURCES = ("configMap", "secret", "downwardAPI", "projected")
#: Mount points that are never a program's working directory.
_SYSTEM_MOUNTS = ("/dev", "/proc", "/sys", "/var/run/secrets")
_LOST = "checkpoints go to the container's own filesystem and are lost when the container restarts or the pod is rescheduled"


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
                relative = not directory.startswith("/")
                if relative and isinstance(wd, str) and wd.startswith("/"):
                    directory, relative = posixpath.join(wd, directory), False
                if relative and (name == "save" or hosts != [(t, c)]):
                    continue  # Megatron's --save, or ranks started by mpirun: the directory is unknown
                directory = norm(directory)
                if directory in seen:
                    continue
                seen.add(directory)
                flag = opt.raw.split("=", 1)[0].split()[0]
                if relative:
                    problems = [_relative_problem(t, c)]
                else:
                    problems = [_ephemeral_problem(u, uc, directory) for u, uc in hosts]
                first = problems[0]
                if first is None or any(p is None for p in problems):
                    continue  # at least one pod that runs the ranks keeps it: stay silent
                where = (
                    f"container {c.name!r}"
                    if hosts == [(t, c)]
                    else (
                        f"the {fmt_list(sorted({u.role for u, _ in hosts}))} pods (container {hosts[0][1].name!r}), "
                        "where mpirun starts the ranks,"
                    )
                )
                shown = opt.resolved.strip() if relative else directory
                what, why = first
                yield site.report(
                    ctx, opt.value_position or opt.position, opt.raw, f"{flag} {shown} of {where} {what}", detail=why
                )
        yield from _config_checkpoints(ctx, t, c, hosts, seen)


def _config_checkpoints(
    ctx: RuleContext, t: PodTemplate, c: Container, hosts: list[tuple[PodTemplate, Container]], seen: set[str]
) -> Iterator[Finding]:
    """Checkpoint directories named in the training configs the container reads (``output_dir`` of
    a TrainingArguments JSON, Lightning's ``trainer.default_root_dir``): absolute paths only (a
    relative one is relative to a working directory the config does not show)."""
    for ref in container_configs(ctx.run, c):
        cfg = ref.config
        for key, directory in cfg.checkpoint_paths() if cfg.form.modelled else ():
            if not directory.startswith("/") or "$" in directory or norm(directory) in seen:
                continue
            directory = norm(directory)
            seen.add(directory)
            problems = [_ephemeral_problem(u, uc, directory) for u, uc in hosts]
            first = problems[0]
            if first is None or any(p is None for p in problems):
                continue
            what, why = first
            who = f"container {c.name!r}" if hosts == [(t, c)] else f"the ranks mpirun starts from container {c.name!r}"
            message = f"{cfg.form.label} {key}: {directory} {cfg.where}, read by {who}, {what}"
            if cfg.mounted is not None:
                yield ctx.report(cfg.mounted.configmap, ("data", cfg.mounted.key), message, detail=why)
            elif ref.word is not None:
                f = ctx.report(t.resource, ref.word.path, message, detail=why)
                yield f.with_(location=word_location(t.resource, ref.word))


def _relative_problem(t: PodTemplate, c: Container) -> tuple[str, str] | None:
    """A relative directory without ``workingDir`` is under the image's WORKDIR, which the manifest
    does not show: it is known to be lost only when no volume that outlives the pod could hold it."""
    scratch: list[str] = []
    for _, m in c.volume_mounts:
        mp = str(m.get("mountPath", ""))
        vname = m.get("name")
        vol = t.volume(vname) if isinstance(vname, str) else None
        if any(mp == s or mp.startswith(s + "/") for s in _SYSTEM_MOUNTS) or m.get("readOnly") is True:
            continue
        if vol is not None and any(k in vol[1] for k in _READ_ONLY_SOURCES):
            continue
        problem = _volume_problem(t, c, m)
        if problem is None:
            return None  # the working directory may be on this volume
        scratch.append(f"volume {vname!r} at {mp}")
    if not scratch:
        return (
            "is relative and the container mounts no writable volume",
            f"The path is relative to the image's working directory: {_LOST}; mount a PersistentVolumeClaim and pass "
            "an absolute path on it.",
        )
    return (
        "is relative: it lands in the container's filesystem or on a volume deleted with the pod",
        f"The path is relative to the image's working directory; the writable volumes are {fmt_list(scratch)}: a "
        "rescheduled or retried pod cannot resume from its checkpoints; use a PersistentVolumeClaim and an absolute "
        "path on it.",
    )


def _ephemeral_problem(t: PodTemplate, c: Container, directory: str) -> tuple[str, str] | None:
    mount = c.mount_for(directory)
    if mount is None:
        return "is on no volume", f"{_LOST[0].upper()}{_LOST[1:]}; mount a PersistentVolumeClaim there."
    return _volume_problem(t, c, mount[1])


def _volume_problem(t: PodTemplate, c: Container, m: dict) -> tuple[str, str] | None:
    """Why the volume of mount ``m`` does not keep checkpoints; None when it does (or is unknown)."""
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
        f"is on {kind}, which is deleted with the pod",
        f"Volume {vname!r} at {m.get('mountPath')}: a rescheduled or retried pod cannot resume from its checkpoints; "
        "use a PersistentVolumeClaim.",
    )
