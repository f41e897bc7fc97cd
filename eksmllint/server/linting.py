"""Lint one admitted object against a (possibly large) context, and compute its safe-fix patch.

Why not :func:`eksmllint.core.engine.lint_loaded`? It dispatches every rule over every resource of
the run, context included, and only afterwards drops the findings that point into context files;
and it rebuilds the run's derived views (workloads, NodePool views, per-kind index) from the whole
context on every call. With 50 NodePools of context that is ~20 ms of wasted work per admission
request, and it grows with the cluster. Here:

- when the admitted object is a workload (what the webhook sees at volume), the per-resource
  targets (``templates``, ``workloads``, ``resources``) are restricted to it; ``run`` rules still
  see the whole run. Any other object (a NodePool, a ConfigMap) gets the engine's full dispatch,
  because a rule may report on an object other than its target;
- the context's derived views come precomputed from the :class:`ContextSnapshot`.

The rest (severity overrides, suppression, mandatory rules, crash isolation as ``EML000``)
follows the engine; ``tests/test_server_linting.py`` checks that both give the same findings on
every rule fixture.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from eksmllint.config import Config
from eksmllint.core import suppression
from eksmllint.core.context import KARPENTER_GROUP, LintRun, RuleContext, RunSettings
from eksmllint.core.engine import internal_error, select_rules, targets
from eksmllint.core.finding import Applicability, Finding, Severity
from eksmllint.core.registry import Registry
from eksmllint.core.rule import Rule
from eksmllint.resource import Document, Resource, SourceFile
from eksmllint.scheduling import NodePoolView
from eksmllint.server.context import ContextSnapshot
from eksmllint.workload import workload_of
from eksmllint.yamlpos import YList, YMap

ADMISSION_FILE = "<admission>"
INTERNAL_ERROR_CODE = "EML000"
#: A resource annotation that exempts the object from the webhook entirely (value "true" or a
#: reason; "false" or "" does not exempt). Per-rule exemptions use ``eksmllint.io/ignore``.
EXEMPT_ANNOTATION = "eksmllint.io/exempt"
MAX_FIX_PASSES = 5
#: Kinds whose pod templates the webhook judges when they are admitted. Objects a controller
#: creates from them (a PyTorchJob's Pods, a JobSet's Jobs) were judged as part of their owner;
#: judging them again would report every finding twice, to the controller instead of the user, and
#: a denial would send the controller into a retry loop.
JUDGED_OWNER_KINDS = frozenset(
    {"Job", "CronJob", "PyTorchJob", "TFJob", "MPIJob", "TrainJob", "JobSet", "RayCluster", "RayJob", "LeaderWorkerSet"}
)


@dataclass
class ObjectLint:
    """The findings on one admitted object (suppressed ones kept, with ``suppressed_by``)."""

    findings: list[Finding]
    resource: Resource

    @property
    def active(self) -> list[Finding]:
        return [f for f in self.findings if f.suppressed_by is None]

    @property
    def internal_errors(self) -> list[Finding]:
        return [f for f in self.active if f.code == INTERNAL_ERROR_CODE]


@dataclass
class MutationResult:
    patch: list[dict]
    applied: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # fixes that could not be lowered
    internal_errors: list[Finding] = field(default_factory=list)
    patched: Any = None  # the object with the patch applied


def to_ymap(value: Any) -> Any:
    """Plain JSON data to the loader's position-aware containers (all positions 1:1: there is no
    file). Iterative, so a deeply nested object cannot exhaust the stack."""

    def make(v: Any) -> Any:
        if isinstance(v, dict):
            m = YMap()
            m.start = (1, 1)
            return m
        if isinstance(v, list):
            seq = YList()
            seq.start = (1, 1)
            return seq
        return v

    root = make(value)
    stack = [(value, root)]
    while stack:
        src, dst = stack.pop()
        if isinstance(src, dict):
            for k, v in src.items():
                child = make(v)
                dst[k] = child
                dst.pos[k] = (1, 1)
                if child is not v:
                    stack.append((v, child))
        else:
            for v in src:
                child = make(v)
                dst.append(child)
                dst.pos.append((1, 1))
                if child is not v:
                    stack.append((v, child))
    return root


def _workload_view(res: Resource) -> tuple[Any, Exception | None]:
    """(the object's workload view or None, the error that prevented building it)."""
    try:
        return workload_of(res), None
    except Exception as exc:
        return None, exc


def judged_owner(obj: dict) -> str | None:
    """``Kind/name`` of the controller owner when it is one of :data:`JUDGED_OWNER_KINDS`."""
    meta = obj.get("metadata")
    refs = meta.get("ownerReferences") if isinstance(meta, dict) else None
    if not isinstance(refs, list):
        return None
    for ref in refs:
        if isinstance(ref, dict) and ref.get("controller") is True and ref.get("kind") in JUDGED_OWNER_KINDS:
            return f"{ref['kind']}/{ref.get('name', '')}"
    return None


def is_exempt(obj: dict) -> str | None:
    """The exemption reason when the object carries :data:`EXEMPT_ANNOTATION`, else None."""
    meta = obj.get("metadata")
    ann = meta.get("annotations") if isinstance(meta, dict) else None
    raw = ann.get(EXEMPT_ANNOTATION) if isinstance(ann, dict) else None
    if not isinstance(raw, str):
        return None
    value = raw.strip()
    if not value or value.lower() == "false":
        return None
    return value


class AdmissionLinter:
    """Stateless apart from its immutable configuration: safe to call from several threads."""

    def __init__(self, cfg: Config, registry: Registry, mutate: Iterable[str] = ()) -> None:
        self.cfg = cfg
        self.registry = registry
        self.rules: list[Rule] = select_rules(registry, cfg)
        self.settings = RunSettings(cfg.kubernetes_version, "webhook", cfg.reference_kinds, cfg.platform)
        self.mandatory = frozenset(r.code for r in registry if r.spec.mandatory)
        self.enabled = frozenset(r.code for r in self.rules)
        self.overrides = {}
        for name, sev in cfg.severity.items():
            rule = registry.get(name)
            if rule:
                self.overrides[rule.code] = Severity.parse(sev)
        self.mutate_codes = self.resolve_codes(mutate)

    def resolve_codes(self, selectors: Iterable[str]) -> frozenset[str]:
        """Rule codes named by selectors (code, slug, family, prefix); unknown names raise
        ``ValueError``; rules without a safe fix are refused (they can never mutate)."""
        codes: set[str] = set()
        for sel in selectors:
            sel = sel.strip()
            if not sel:
                continue
            found = self.registry.select(sel)
            if not found:
                raise ValueError(f"--mutate: no such rule {sel!r}")
            codes.update(r.code for r in found if r.spec.fix == "safe")
            if len(found) == 1 and found[0].spec.fix != "safe":
                raise ValueError(f"--mutate: {found[0].code} ({found[0].slug}) has no safe fix")
        return frozenset(codes)

    # -- linting -----------------------------------------------------------------------------
    def lint(self, obj: dict, context: ContextSnapshot | None = None, namespace: str | None = None) -> ObjectLint:
        """Run the enabled rules on ``obj`` (a decoded Kubernetes object), with ``context``."""
        data = to_ymap(obj)
        meta = data.get("metadata")
        if namespace and isinstance(meta, dict) and not meta.get("namespace"):
            # The API server may not have filled metadata.namespace in yet: the request says it.
            meta["namespace"] = namespace
            meta.pos["namespace"] = (1, 1)
        src = SourceFile(ADMISSION_FILE, "", "json")
        doc = Document(src, 0, data, 1)
        src.documents.append(doc)
        res = Resource(doc, data)
        own, unreadable = _workload_view(res)
        run = self._run(res, src, context, own)
        findings: list[Finding] = []
        if unreadable is not None:
            # A value the workload parser chokes on (parallelism: "²"): the template rules cannot
            # judge this object, the others still do, so their denial stands.
            findings.append(
                Finding(
                    INTERNAL_ERROR_CODE,
                    "internal-error",
                    Severity.ERROR,
                    f"the pod templates of {res.ref.display()} could not be read, template "
                    f"rules skipped: {type(unreadable).__name__}: {unreadable}",
                    res.location(()),
                    res.ref,
                )
            )
        # Rules may report on an object other than their target (a Job's template rule pointing
        # at the DeepSpeed ConfigMap it mounts). Workloads are what the webhook admits at volume,
        # and for them only their own targets are dispatched; anything else (a NodePool, a
        # ConfigMap: rare admissions) gets the engine's full dispatch so nothing is missed.
        for rule in self.rules:
            rctx = RuleContext(rule, run)
            try:
                pairs = targets(rule, run) if own is None else self._targets(rule, run, res, own)
                for target, resource in pairs:
                    try:
                        findings.extend(rule.check(rctx, target) or ())
                    except Exception as exc:  # a broken rule is a finding, never a failed request
                        findings.append(internal_error(rule, resource, target, exc))
            except Exception as exc:  # the dispatch itself (a derived view of the run) failed
                findings.append(internal_error(rule, res, res, exc))
        findings = [f for f in findings if f.location.file == ADMISSION_FILE]
        if self.overrides:
            findings = [f.with_(severity=self.overrides[f.code]) if f.code in self.overrides else f for f in findings]
        scope = suppression.collect(
            self.registry, [res], [src], {k: list(v) for k, v in self.cfg.per_path_ignores.items()}
        )
        findings = suppression.apply(findings, scope, self.mandatory)
        if suppression.UNUSED_CODE in self.enabled:
            findings += suppression.unused(scope)
        return ObjectLint(sorted(set(findings), key=_admission_order), res)

    def _run(self, res: Resource, src: SourceFile, snapshot: ContextSnapshot | None, own) -> LintRun:
        """The run: the admitted object first, then the context (minus the stored version of the
        object being updated). LintRun's derived views are cached_properties; they are seeded with
        what the snapshot computed once, instead of being rebuilt from thousands of context
        objects (PVCs, DaemonSets...) on every request. Same content and order as LintRun would
        compute (tests/test_server_linting.py compares findings with the engine's). ``own`` is the
        object's workload view (None when it is not a workload or could not be read)."""
        if snapshot is None:
            run = LintRun([res], [src], self.settings)
            run.__dict__["workloads"] = [own] if own else []
            return run
        replaced = res.name is not None and res.key in snapshot.keys

        def keep(items: list, resource_of=lambda x: x) -> list:
            return [x for x in items if resource_of(x).key != res.key] if replaced else items

        run = LintRun([res, *keep(snapshot.resources)], [src, *snapshot.files], self.settings)
        run.__dict__["workloads"] = ([own] if own else []) + keep(snapshot.workloads, lambda w: w.resource)
        by_kind = dict(snapshot.by_kind)
        by_kind[res.kind] = [res, *keep(by_kind.get(res.kind, []))]
        run.__dict__["by_kind"] = by_kind
        pool = [NodePoolView(res)] if res.kind == "NodePool" and res.group == KARPENTER_GROUP else []
        run.__dict__["nodepools"] = pool + keep(snapshot.nodepool_views, lambda v: v.resource)
        return run

    @staticmethod
    def _targets(rule: Rule, run: LintRun, res: Resource, own) -> Iterable[tuple[object, Resource | None]]:
        """The engine's dispatch restricted to the admitted workload ``own`` (see :meth:`lint`)."""
        target = rule.spec.target
        if target == "templates":
            return ((t, res) for t in own.templates)
        if target == "workloads":
            return [(own, res)]
        if target == "resources":
            kinds = rule.spec.kinds
            return [(res, res)] if not kinds or res.kind in kinds else []
        if target == "files":
            return ((f, None) for f in run.files if not f.context_only)
        return [(run, None)]

    # -- mutation ----------------------------------------------------------------------------
    def mutate(
        self,
        obj: dict,
        context: ContextSnapshot | None = None,
        namespace: str | None = None,
        codes: frozenset[str] | None = None,
    ) -> MutationResult:
        """The RFC 6902 patch made of the safe fixes of ``codes`` (default: ``--mutate``).

        Fixes are applied in passes like ``eksmllint fix`` (non-conflicting fixes together, then
        re-lint), each pass's patch computed against the object as the previous passes left it,
        so the concatenated patch applies to the original in order. Re-running on the patched
        object yields an empty patch (the fixed rules no longer fire), which is what makes the
        webhook safe under ``reinvocationPolicy: IfNeeded``."""
        from eksmllint.fix import FixError, select_fixes, to_json_patch
        from eksmllint.fix.jsonpatch import apply_json_patch

        codes = self.mutate_codes if codes is None else codes
        result = MutationResult([], patched=obj)
        if not codes:
            return result
        doc = copy.deepcopy(obj)
        seen = {_canonical(doc)}
        for _ in range(MAX_FIX_PASSES):
            lint = self.lint(doc, context, namespace)
            result.internal_errors += lint.internal_errors
            fixable = [
                f
                for f in lint.active
                if f.code in codes and f.fix is not None and f.fix.applicability == Applicability.SAFE
            ]
            if not fixable:
                break
            chosen, _ = select_fixes(fixable)
            step: list[dict] = []
            for f in chosen:
                try:
                    ops = to_json_patch(f.fix, doc, f.base_path)
                    doc = apply_json_patch(doc, ops)
                except (FixError, KeyError, IndexError, TypeError, ValueError) as err:
                    result.errors.append(f"{f.code} {f.slug}: {err}")
                    continue
                if ops:
                    step += ops
                    result.applied.append(f)
            if not step:
                break
            key = _canonical(doc)
            if key in seen:  # two fixes undo each other: give up rather than oscillate
                result.errors.append("fixes do not converge; no patch")
                return MutationResult([], [], result.errors, result.internal_errors, obj)
            seen.add(key)
            result.patch += step
        result.patched = doc
        return result


def _admission_order(f: Finding) -> tuple:
    """The engine's order, then the path and the rest: an admitted object has no lines (every
    position is 1:1), and ties left to the set's hash order made denial messages differ from
    one process to the next."""
    return (*f.sort_key(), format_path(f.location.path), f.slug, int(f.severity), f.suppressed_by or "")


def _canonical(doc: Any) -> str:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), default=str)


def format_path(path: Iterable[Any]) -> str:
    """``spec.containers[0].resources.limits[nvidia.com/gpu]``: dotted, with list indices and
    keys that contain dots or slashes in brackets (what users can find in their manifest)."""
    out = ""
    for elem in path:
        if isinstance(elem, int) and not isinstance(elem, bool):
            out += f"[{elem}]"
        else:
            text = str(elem)
            if not text or any(ch in text for ch in "./[]"):
                out += f"[{text}]"
            else:
                out += f".{text}" if out else text
    return out or "<object>"
