"""The webhook's adapter: an admitted object (decoded JSON) in, the engine's findings and a safe-fix
JSON Patch out.

Linting goes through :class:`eksmllint.core.engine.Linter`, the same path as ``eksmllint lint``
(dispatch, EML000 for crashes, severity overrides, suppression, order). Two things keep a request
cheap against a large context (50 NodePools of context cost ~20 ms per request otherwise):

- the context's derived views (workloads, per-kind index, NodePool views) are built once per
  context snapshot (:class:`~eksmllint.core.context.SharedViews`) and the run of a request is
  made *over* them (:meth:`LintRun.over <eksmllint.core.context.LintRun.over>`);
- the admitted object is the run's *focus*: when it is a workload (what the webhook sees at
  volume), the per-resource targets are its own; ``run`` rules still see the whole run. Any other
  object (a NodePool, a ConfigMap) gets the full dispatch, because a rule may report on an object
  other than its target.

Fixes go through :func:`eksmllint.fix.loop.fix_until_settled`, the loop of ``eksmllint fix``.
``tests/test_server_linting.py`` checks that the webhook and the engine give the same findings on
every rule fixture.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from eksmllint.config import Config
from eksmllint.core.context import NO_SHARED_VIEWS, LintRun
from eksmllint.core.engine import INTERNAL_ERROR, Linter
from eksmllint.core.finding import Applicability, Finding
from eksmllint.core.registry import Registry
from eksmllint.platform.kinds import kinds_with
from eksmllint.resource import Document, Resource, SourceFile
from eksmllint.server.context import ContextSnapshot
from eksmllint.yamlpos import YList, YMap

ADMISSION_FILE = "<admission>"
INTERNAL_ERROR_CODE = INTERNAL_ERROR[0]
#: A resource annotation that exempts the object from the webhook entirely (value "true" or a
#: reason; "false" or "" does not exempt). Per-rule exemptions use ``eksmllint.io/ignore``.
EXEMPT_ANNOTATION = "eksmllint.io/exempt"
#: Kinds whose pod templates the webhook judges when they are admitted. Objects a controller
#: creates from them (a PyTorchJob's Pods, a JobSet's Jobs) were judged as part of their owner;
#: judging them again would report every finding twice, to the controller instead of the user, and
#: a denial would send the controller into a retry loop.
JUDGED_OWNER_KINDS = kinds_with("owner")


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
        self.linter = Linter(cfg, registry, mode="webhook")
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
        if namespace and isinstance(meta, YMap) and not meta.get("namespace"):
            # The API server may not have filled metadata.namespace in yet: the request says it.
            meta["namespace"] = namespace
            meta.pos["namespace"] = (1, 1)
        src = SourceFile(ADMISSION_FILE, "", "json")
        doc = Document(src, 0, data, 1)
        src.documents.append(doc)
        res = Resource(doc, data)
        shared = context.views.without(res.key) if context is not None else NO_SHARED_VIEWS
        run = LintRun.over(shared, [res], [src], self.linter.settings)
        return ObjectLint(self.linter.lint(run, focus=res), res)

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
        from eksmllint.fix.loop import MAX_PASSES, fix_until_settled

        codes = self.mutate_codes if codes is None else codes
        result = MutationResult([], patched=obj)
        if not codes:
            return result
        doc = copy.deepcopy(obj)
        seen = {_canonical(doc)}
        gave_up: list[str] = []

        def lint() -> ObjectLint:
            found = self.lint(doc, context, namespace)
            result.internal_errors.extend(found.internal_errors)
            return found

        def pending(found: ObjectLint) -> list[Finding]:
            return [
                f
                for f in found.active
                if f.code in codes and f.fix is not None and f.fix.applicability == Applicability.SAFE
            ]

        def apply(fixable: list[Finding], _pass_no: int) -> bool:
            nonlocal doc
            chosen, _ = select_fixes(fixable)
            step: list[dict] = []
            for f in chosen:
                assert f.fix is not None  # pending() keeps findings with a fix
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
                return False
            key = _canonical(doc)
            if key in seen:  # two fixes undo each other: give up rather than oscillate
                gave_up.append("fixes do not converge; no patch")
                return False
            seen.add(key)
            result.patch += step
            return True

        def give_up(_fixable: list[Finding]) -> None:
            gave_up.append(f"fixes did not settle after {MAX_PASSES} passes; no patch")

        fix_until_settled(lint, pending, apply, give_up)
        if gave_up:
            return MutationResult([], [], result.errors + gave_up, result.internal_errors, obj)
        result.patched = doc
        return result


def _canonical(doc: Any) -> str:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), default=str)
