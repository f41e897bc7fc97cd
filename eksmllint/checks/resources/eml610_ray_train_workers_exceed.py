"""EML610 ray-train-workers-exceed: a Ray Train launch (a RayJob's entrypoint, or the entrypoint of a
``ray job submit`` a container runs) asks for more workers x GPUs per worker than its Ray cluster's
groups can ever offer: the trainer's placement group is never satisfied and the job holds the
cluster's GPUs until its deadline."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from eksmllint.checks.helpers import container_invocations, script_invocations, sentences
from eksmllint.checks.resources._shared import option_path
from eksmllint.launch.model import Invocation, parse_int
from eksmllint.quantity import parse_count
from eksmllint.resource import Resource, get_path
from eksmllint.workload import Container, Workload

if TYPE_CHECKING:
    from eksmllint.core.context import LintRun, RuleContext
    from eksmllint.core.finding import DocPath, Finding

RAY_GROUP = "ray.io"

#: Ray Train's ScalingConfig as a training script takes it on its command line (canonical names:
#: ``--num-workers`` and ``--num_workers`` alike): Ray's Train examples read ``--num-workers N
#: --use-gpu`` (use_gpu: one GPU per worker); ``--gpus-per-worker`` is resources_per_worker GPU.
SCALING_ARGS: dict[str, tuple[str, ...]] = {
    "num_workers": ("num_workers",),
    "use_gpu": ("use_gpu",),
    "gpus_per_worker": ("gpus_per_worker", "num_gpus_per_worker"),
}
#: KubeRay's key in ``clusterSelector`` naming the RayCluster a RayJob runs on (RayJob controller).
CLUSTER_SELECTOR_KEY = "ray.io/cluster"
#: KubeRay names a RayCluster's head Service ``<cluster>-head-svc`` (utils.GenerateHeadServiceName):
#: a ``ray job submit --address http://<cluster>-head-svc[.<namespace>...]:8265`` names its cluster.
HEAD_SERVICE_SUFFIX = "-head-svc"
#: The first KubeRay release that creates ``numOfHosts`` pods per replica (kuberay#1834); before it
#: the field is unknown and each replica is one pod.
NUM_OF_HOSTS_RELEASE = "1.1"


@dataclass(frozen=True)
class Ask:
    """What the Ray Train launch asks: workers, and GPUs each (one bundle per worker)."""

    workers: int
    gpus: int
    path: DocPath  # where the launch is written


@dataclass(frozen=True)
class Group:
    """A head or worker group: its pods at most, and the GPUs Ray sees on each pod."""

    name: str
    pods: int
    gpus: int


def check(ctx: RuleContext, w: Workload) -> Iterator[Finding]:
    job = w.resource
    if job.kind == "RayJob" and job.group == RAY_GROUP:
        entrypoint = job.get(("spec", "entrypoint"))
        if isinstance(entrypoint, str):
            # a `ray job submit` inside the entrypoint runs elsewhere: judged by its own address
            asks = [
                ask
                for inv in script_invocations(entrypoint)
                if inv.ray_job is None and (ask := _scaling(inv, ("spec", "entrypoint"))) is not None
            ]
            if asks:  # else the count comes from code
                yield from _judge(ctx, job, asks, _cluster(ctx.run, job))
    for t in w.templates:
        for c in t.containers:
            for inv in container_invocations(c):
                ask = _scaling(inv, None, c) if inv.ray_job is not None else None
                if ask is not None:
                    yield from _judge(ctx, job, [ask], _submitted_to(ctx.run, job, t.role, c, inv))


def _judge(
    ctx: RuleContext, resource: Resource, asks: list[Ask], cluster: tuple[Resource, DocPath] | None
) -> Iterator[Finding]:
    """A finding for the first launch the cluster (None: unknown, silent) can never place."""
    if cluster is None:
        return  # a cluster that is not in the run, or selected by other labels
    holder, base = cluster
    groups = _groups(ctx, holder, base)
    if groups is None:
        return
    for ask in asks:
        fit = [(g, g.pods * (g.gpus // ask.gpus)) for g in groups]
        total = sum(n for _, n in fit)
        if ask.workers > total:
            yield _report(ctx, resource, holder, base, ask, fit, total)
            return  # one finding per command line: the first launch that cannot be placed


def _report(
    ctx: RuleContext,
    resource: Resource,
    holder: Resource,
    base: DocPath,
    ask: Ask,
    fit: list[tuple[Group, int]],
    total: int,
) -> Finding:
    offers = ", ".join(f"{g.name} {g.pods} x {g.gpus}" for g, _ in fit if g.gpus) or "none"
    where = "its rayClusterSpec" if holder is resource else f"RayCluster {holder.name}"
    return ctx.report(
        resource,
        ask.path,
        f"Ray Train asks {ask.workers} workers x {_gpus(ask.gpus)} but {where} can place at most {total}",
        related=[holder.location(base + ("workerGroupSpecs",))],
        detail=sentences(
            f"GPU pods at most (group pods x GPUs): {offers}; each worker's GPUs must be on one pod",
            "The trainer's placement group is never satisfied: the job holds the cluster's GPUs until it times out",
            _assumed(ctx, holder, base),
        ),
    )


def _gpus(n: int) -> str:
    return "1 GPU" if n == 1 else f"{n} GPUs"


def _arg(inv: Invocation, key: str):
    return next((o for name in SCALING_ARGS[key] if (o := inv.script_flag(name)) is not None), None)


def _scaling(inv: Invocation, path: DocPath | None, c: Container | None = None) -> Ask | None:
    """The workers and GPUs each of a Ray Train driver's literal arguments, written at ``path`` (a
    RayJob's entrypoint) or in container ``c``; None when either comes from code."""
    if inv.launcher != "python":
        return None  # torchrun & co. are not how a Ray Train driver starts
    workers_opt = _arg(inv, "num_workers")
    workers = workers_opt.int_value() if workers_opt is not None else None
    if workers is None or workers < 1:
        return None
    per_opt = _arg(inv, "gpus_per_worker")
    if per_opt is not None:
        gpus = per_opt.int_value()  # a fraction (0.5) shares GPUs: not judged
    else:
        use_gpu = _arg(inv, "use_gpu")
        gpus = 1 if use_gpu is not None and use_gpu.is_enabled() is True else None
    where = option_path(c, workers_opt) if c is not None else path
    return Ask(workers, gpus, where) if gpus and where is not None else None


def _cluster(run: LintRun, job: Resource) -> tuple[Resource, DocPath] | None:
    """(the resource holding the RayClusterSpec, its path): the RayJob's own ``rayClusterSpec``,
    else the RayCluster its ``clusterSelector`` names, when the run holds exactly one."""
    if isinstance(job.get(("spec", "rayClusterSpec")), dict):
        return job, ("spec", "rayClusterSpec")
    selector = job.get(("spec", "clusterSelector"))
    if not isinstance(selector, dict) or set(selector) != {CLUSTER_SELECTOR_KEY}:
        return None
    name = selector[CLUSTER_SELECTOR_KEY]
    return _raycluster(run, name, job.namespace) if isinstance(name, str) else None


def _raycluster(run: LintRun, name: str, namespace: str | None) -> tuple[Resource, DocPath] | None:
    found = [r for r in run.find("RayCluster", name, namespace) if r.group == RAY_GROUP]
    return (found[0], ("spec",)) if len(found) == 1 else None


def _submitted_to(
    run: LintRun, owner: Resource, role: str, c: Container, inv: Invocation
) -> tuple[Resource, DocPath] | None:
    """The cluster of a ``ray job submit``: the RayCluster of the run whose head Service its
    ``--address`` (else the container's ``RAY_ADDRESS``) names; a RayJob's own submitter pod that
    names no literal address submits to the RayJob's cluster."""
    opt = (inv.ray_job or {}).get("address")
    address = opt.resolved if opt is not None else c.env.get("RAY_ADDRESS")
    if not address:
        if owner.kind == "RayJob" and role == "submitter":
            return _cluster(run, owner)
        return None
    host = address.split("://", 1)[-1].split("/", 1)[0].rsplit(":", 1)[0]
    service, _, rest = host.partition(".")
    if not service.endswith(HEAD_SERVICE_SUFFIX):
        return None  # an IP, a load balancer, ray://: not a cluster the run can name
    namespace = rest.split(".", 1)[0] if rest else owner.namespace
    return _raycluster(run, service.removesuffix(HEAD_SERVICE_SUFFIX), namespace)


def _autoscaling(holder: Resource, base: DocPath) -> bool | None:
    value = holder.get(base + ("enableInTreeAutoscaling",), False)
    return value if isinstance(value, bool) else None


def _groups(ctx: RuleContext, holder: Resource, base: DocPath) -> list[Group] | None:
    """The head and every worker group with the most pods it can run (replicas clamped into
    [minReplicas, maxReplicas], or maxReplicas with in-tree autoscaling, x numOfHosts) and the GPUs
    of each pod; None when one of them is unknown or unbounded."""
    autoscaling = _autoscaling(holder, base)
    head = holder.get(base + ("headGroupSpec",))
    workers = holder.get(base + ("workerGroupSpecs",), [])
    if autoscaling is None or not isinstance(head, dict) or not isinstance(workers, list):
        return None
    head_gpus = _pod_gpus(head)
    if head_gpus is None:
        return None
    groups = [Group("head", 1, head_gpus)]
    hosts_known = ctx.platform.at_least("kuberay", NUM_OF_HOSTS_RELEASE)
    for spec in workers:
        if not isinstance(spec, dict):
            return None
        pods, gpus = _group_pods(spec, autoscaling, hosts_known), _pod_gpus(spec)
        if pods is None or gpus is None:
            return None
        groups.append(Group(str(spec.get("groupName", "?")), pods, gpus))
    return groups


#: A count written but not a literal int (templated, malformed): the group cannot be judged.
_UNREADABLE = -1


def _int_field(spec: dict, key: str, default: int) -> int:
    """A literal non-negative int field, ``default`` when absent, else :data:`_UNREADABLE`."""
    value = spec.get(key, default)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else _UNREADABLE


#: ``maxReplicas`` absent: KubeRay's default is the int32 maximum (no bound).
_UNBOUNDED = 2**31 - 1


def _group_pods(spec: dict, autoscaling: bool, hosts_known: bool) -> int | None:
    """KubeRay's pods of a worker group at most (GetWorkerGroupDesiredReplicas; CRD defaults
    replicas 0, minReplicas 0, maxReplicas the int32 maximum, numOfHosts 1)."""
    replicas, low, high = (
        _int_field(spec, k, d) for k, d in (("replicas", 0), ("minReplicas", 0), ("maxReplicas", _UNBOUNDED))
    )
    hosts = _int_field(spec, "numOfHosts", 1) if hosts_known else 1
    if _UNREADABLE in (replicas, low, high, hosts):
        return None
    most = high if autoscaling else min(max(replicas, low), high)
    return None if most == _UNBOUNDED else most * hosts


def _pod_gpus(spec: dict) -> int | None:
    """GPUs Ray sees on a pod of the group: ``rayStartParams`` ``num-gpus``, else the Ray container's
    (the first) limits of every resource ending in ``gpu``, as KubeRay passes them to ``ray start``.
    None when written but unreadable, or when the group's own ``resources`` may set GPUs."""
    resources = spec.get("resources")
    if isinstance(resources, dict) and any("gpu" in str(k).lower() for k in resources):
        return None  # KubeRay 1.5's group resources: not read yet
    params = spec.get("rayStartParams")
    if isinstance(params, dict) and "num-gpus" in params:
        return parse_int(str(params["num-gpus"]))
    containers = get_path(spec, ("template", "spec", "containers"))
    if not isinstance(containers, list) or not containers or not isinstance(containers[0], dict):
        return None
    limits = get_path(containers[0], ("resources", "limits"))
    total = 0
    for key, value in limits.items() if isinstance(limits, dict) else ():
        if str(key).endswith("gpu"):
            count = parse_count(value)
            if count is None:
                return None
            total += count
    return total


def _assumed(ctx: RuleContext, holder: Resource, base: DocPath) -> str:
    scaling = "maxReplicas (in-tree autoscaling)" if _autoscaling(holder, base) else "replicas within min/maxReplicas"
    return f"Counted: {scaling} x numOfHosts; {ctx.platform.describe('kuberay')}"
