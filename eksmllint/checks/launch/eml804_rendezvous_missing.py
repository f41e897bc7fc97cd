"""EML804 rendezvous-missing: a multi-node torchrun (in a container or a Slurm script) names no
rendezvous host and no operator injects one."""

from __future__ import annotations

from collections.abc import Iterator

from eksmllint.analysis.launch_sites import Site, container_sites, container_text, slurm_files, slurm_sites
from eksmllint.core.context import LintRun, RuleContext
from eksmllint.core.finding import Finding
from eksmllint.guarded import Guarded
from eksmllint.launch.model import Invocation, Option, parse_int
from eksmllint.workload import Workload

# torchrun reads only its arguments and PET_<OPTION> variables (torch/distributed/argparse_util.py
# ``env``: "Get argument values from PET_{dest} before defaulting"): a plain MASTER_ADDR is ignored.
_RDZV_ENV = ("PET_MASTER_ADDR", "PET_RDZV_ENDPOINT")
_RDZV_MENTION = Guarded(
    r"PET_MASTER_ADDR|PET_RDZV_ENDPOINT|rdzv[_-]endpoint|master[_-]addr",
    ("MASTER_ADDR", "RDZV_ENDPOINT", "rdzv", "master"),
)


def _nnodes_max(opt: Option | None) -> int | None:
    """torchrun ``--nnodes``: ``4`` -> 4, ``2:8`` -> 8 (elastic); None when not literal."""
    if opt is None or opt.resolved is None:
        return None
    text = opt.resolved.strip()
    if ":" in text:
        return parse_int(text.split(":", 1)[1])
    return parse_int(text)


def _operator_injects_rendezvous(w: Workload) -> str | None:
    """The operator that sets PET_MASTER_ADDR (PyTorchJob, TrainJob) for torchrun. Volcano's
    ``pytorch`` plugin is not one: it sets MASTER_ADDR/MASTER_PORT/WORLD_SIZE/RANK, which reach
    torchrun only through the command (``--master_addr=$MASTER_ADDR --node_rank=$RANK``)."""
    return w.kind if w.has("operator-managed") else None


def _missing_rendezvous(inv: Invocation) -> Option | None:
    """The ``--nnodes`` option of a multi-node torchrun that names no rendezvous host."""
    if inv.launcher != "torchrun" or inv.option("standalone") is not None:
        return None
    nnodes = inv.option("nnodes")
    n = _nnodes_max(nnodes)
    if n is None or n <= 1:
        return None
    if inv.option("rdzv_endpoint") is not None or inv.option("master_addr") is not None:
        return None
    if any(k in inv.env for k in _RDZV_ENV):
        return None
    return nnodes


def check(ctx: RuleContext, run: LintRun) -> Iterator[Finding]:
    for t in run.templates:
        if _operator_injects_rendezvous(t.workload):
            continue
        for c in t.containers:
            if any(k in c.env for k in _RDZV_ENV) or _RDZV_MENTION.search(container_text(c)):
                continue
            for site in container_sites(c):
                nnodes = _missing_rendezvous(site.inv)
                if nnodes is not None:
                    yield site.report(ctx, nnodes.position, nnodes.raw, _rdzv_message(site, nnodes))
    for src, script in slurm_files(run):
        if _RDZV_MENTION.search(src.text or ""):
            continue
        for site in slurm_sites(src, script):
            nnodes = _missing_rendezvous(site.inv)
            if nnodes is not None:
                yield site.report(ctx, nnodes.position, nnodes.raw, _rdzv_message(site, nnodes))


def _rdzv_message(site: Site, nnodes: Option) -> str:
    return (
        f"torchrun --nnodes={nnodes.resolved} in {site.where} names no rendezvous host (no --rdzv_endpoint, "
        "--master_addr or PET_MASTER_ADDR, and no operator injects one; torchrun ignores a plain MASTER_ADDR): "
        "every node rendezvouses with itself at 127.0.0.1 and waits forever; pass --rdzv_backend=c10d "
        "--rdzv_endpoint=<rank-0 host>:29400 (or --master_addr=$MASTER_ADDR --node_rank=$RANK)"
    )
