"""EML703 dangling-reference: a PVC, ConfigMap, Secret, ServiceAccount, PriorityClass,
StorageClass or EC2NodeClass referenced by name is missing from the run (only for the kinds the
run holds, the ``kinds`` option or config ``reference-kinds``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from eksmllint.checks.scheduling._shared import elsewhere, literal_name, optional_volume
from eksmllint.core.context import LintRun, RuleContext
from eksmllint.core.finding import DocPath, Finding
from eksmllint.graph import template_references
from eksmllint.resource import Resource
from eksmllint.suggest import Names

REFERENCE_KINDS = (
    "PersistentVolumeClaim",
    "ConfigMap",
    "Secret",
    "ServiceAccount",
    "PriorityClass",
    "StorageClass",
    "EC2NodeClass",
)
NAMESPACED = frozenset({"PersistentVolumeClaim", "ConfigMap", "Secret", "ServiceAccount"})
_KIND_NAMES = {k.lower(): k for k in REFERENCE_KINDS} | {
    "pvc": "PersistentVolumeClaim",
    "sa": "ServiceAccount",
    "sc": "StorageClass",
    "cm": "ConfigMap",
}
#: Objects every cluster has although no manifest defines them.
BUILTIN = frozenset(
    {
        ("ServiceAccount", "default"),  # created in every namespace by the service-account controller
        ("ConfigMap", "kube-root-ca.crt"),  # published in every namespace (root CA publisher, 1.21+)
        ("PriorityClass", "system-node-critical"),
        ("PriorityClass", "system-cluster-critical"),
        ("StorageClass", "gp2"),  # created by EKS on every cluster (not default-annotated since 1.30)
    }
)


def _kind_list(value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else []


def checked_kinds(ctx: RuleContext) -> set[str]:
    """Kinds EML703 checks: the rule option ``kinds`` (a list, ``auto`` = the reference kinds the run
    holds at least one object of), else config ``reference-kinds``, else ``auto``; minus
    ``exclude-kinds``. In the admission webhook the run is one object: nothing is checked unless
    cluster context is loaded, and then only kinds the context holds."""
    run = ctx.run
    present = {k for k in REFERENCE_KINDS if run.by_kind.get(k)}
    webhook = run.settings.mode == "webhook"
    if webhook and not any(f.context_only for f in run.files):
        return set()
    configured = _kind_list(ctx.options.get("kinds", "auto"))
    if [k.lower() for k in configured] == ["auto"] and run.settings.reference_kinds is not None:
        configured = list(run.settings.reference_kinds)  # the rule option is more specific
    kinds: set[str] = set()
    for k in configured:
        if k.lower() == "auto":
            kinds |= present
        elif k.lower() in _KIND_NAMES:
            kinds.add(_KIND_NAMES[k.lower()])
    kinds -= {_KIND_NAMES.get(k.lower(), k) for k in _kind_list(ctx.options.get("exclude-kinds"))}
    return kinds & present if webhook else kinds


@dataclass(frozen=True)
class Reference:
    source: Resource
    kind: str
    name: str
    namespace: str | None  # the namespace the object must be in (None: cluster-scoped or unknown)
    path: DocPath


def workload_references(run: LintRun) -> Iterator[Reference]:
    """Every by-name reference of the run EML703 resolves."""
    for t in run.templates:
        r = t.resource
        for kind, raw_name, path in template_references(t):
            name = literal_name(raw_name)
            if name is None or kind not in REFERENCE_KINDS or optional_volume(t, path):
                continue
            yield Reference(r, kind, name, r.namespace if kind in NAMESPACED else None, path)
        for i, _ in t.volumes:  # generic ephemeral volumes name a StorageClass
            path = t.spec_path + ("volumes", i, "ephemeral", "volumeClaimTemplate", "spec", "storageClassName")
            if (sc := literal_name(r.get(path))) is not None:
                yield Reference(r, "StorageClass", sc, None, path)
    for w in run.workloads:
        r = w.resource
        for path in (("spec", "runPolicy", "schedulingPolicy", "priorityClass"), ("spec", "priorityClassName")):
            if path[1] == "priorityClassName" and not w.is_volcano_job:
                continue
            if (name := literal_name(r.get(path))) is not None:
                yield Reference(r, "PriorityClass", name, None, path)
        vcts = r.get(("spec", "volumeClaimTemplates")) if r.kind == "StatefulSet" else None
        if isinstance(vcts, list):
            for i in range(len(vcts)):
                path = ("spec", "volumeClaimTemplates", i, "spec", "storageClassName")
                if (sc := literal_name(r.get(path))) is not None:
                    yield Reference(r, "StorageClass", sc, None, path)
    for pvc in run.of_kind("PersistentVolumeClaim"):
        if (sc := literal_name(pvc.get(("spec", "storageClassName")))) is not None:
            yield Reference(pvc, "StorageClass", sc, None, ("spec", "storageClassName"))
    for pool in run.nodepools:
        form = pool.form  # an Auto Mode pool names a NodeClass, never an EC2NodeClass
        ref = form.node_class if form is not None else None
        if ref is not None and ref.kind == "EC2NodeClass" and (name := literal_name(pool.node_class_name)) is not None:
            yield Reference(
                pool.resource, "EC2NodeClass", name, None, ("spec", "template", "spec", "nodeClassRef", "name")
            )


def _secret_generators(run: LintRun, namespace: str | None) -> set[str]:
    """Names of Secrets that objects of the run create: ExternalSecret (``spec.target.name``, else
    its own name), SealedSecret (its name), SecretProviderClass (``spec.secretObjects[].secretName``).
    Computed once per run and namespace."""
    memo = run.memo("eml703-secret-generators")
    if namespace not in memo:
        memo[namespace] = _generated_secrets(run, namespace)
    return memo[namespace]


def _generated_secrets(run: LintRun, namespace: str | None) -> set[str]:
    names: set[str] = set()

    def in_ns(r: Resource) -> bool:
        return namespace is None or r.namespace in (None, namespace)

    for r in run.of_kind("ExternalSecret"):
        target = r.get(("spec", "target", "name"))
        made = target if target else r.name
        if in_ns(r) and isinstance(made, str):
            names.add(made)
    for r in run.of_kind("SealedSecret"):
        made = r.get(("spec", "template", "metadata", "name")) or r.name
        if in_ns(r) and isinstance(made, str):
            names.add(made)
    for r in run.of_kind("SecretProviderClass"):
        objs = r.get(("spec", "secretObjects"))
        if in_ns(r) and isinstance(objs, list):
            names.update(o["secretName"] for o in objs if isinstance(o, dict) and isinstance(o.get("secretName"), str))
    return names


def is_defined(run: LintRun, kind: str, name: str, namespace: str | None) -> bool:
    """Whether the run defines (or generates, for Secrets) ``kind`` ``name`` in ``namespace``."""
    if run.find(kind, name, namespace):
        return True
    return kind == "Secret" and name in _secret_generators(run, namespace)


def _assumed(run: LintRun, kind: str) -> str:
    """What the finding assumed: the run is a partial view of the cluster."""
    if run.by_kind.get(kind):
        return f"the run holds {kind} objects, so it is assumed to hold every one the cluster has"
    return f"the configuration says the run holds every {kind} the cluster has"


def suggestions(run: LintRun, kind: str, namespace: str | None) -> Names:
    """The names a reference to ``kind`` in ``namespace`` could have meant (those in it or with
    no namespace; every one for ``None``), indexed once per run, kind and namespace."""
    by_kind = run.memo("eml703-names-by-namespace")
    if kind not in by_kind:
        by_kind[kind] = {}
        for x in run.of_kind(kind):
            if x.name:
                by_kind[kind].setdefault(x.namespace, set()).add(x.name)
    memo = run.memo("eml703-names")
    if (kind, namespace) not in memo:
        by_ns = by_kind[kind]
        if namespace is None:
            names = set().union(*by_ns.values())
        else:
            names = by_ns.get(None, set()) | by_ns.get(namespace, set())
        memo[(kind, namespace)] = Names(names, cutoff=0.75)
    return memo[(kind, namespace)]


def check(ctx: RuleContext, run: LintRun) -> Iterator[Finding]:
    """EML703: a referenced object is not defined in the run (only for kinds the run holds)."""
    kinds = checked_kinds(ctx)
    if not kinds:
        return
    for ref in workload_references(run):
        if ref.kind not in kinds or (ref.kind, ref.name) in BUILTIN:
            continue
        if is_defined(run, ref.kind, ref.name, ref.namespace):
            continue
        where = f" in namespace {ref.namespace}" if ref.namespace else ""
        others = elsewhere(run, ref.kind, ref.name, ref.namespace) if ref.namespace else []
        if others and ref.kind in ("PersistentVolumeClaim", "ConfigMap"):
            continue  # EML704 (cross-namespace-reference) reports it
        if others:
            hint = f"; one exists in namespace {others[0].namespace}, which pods cannot use"
        else:
            close = suggestions(run, ref.kind, ref.namespace).closest(ref.name)
            hint = f"; did you mean {close!r}?" if close else ""
        yield ctx.report(
            ref.source,
            ref.path,
            f"{ref.kind} {ref.name!r} is referenced but no manifest in the run defines it{where}{hint}",
            detail=f"Assumed complete: {_assumed(run, ref.kind)}.",
        )
