"""What a check sees: the run (resources, workloads, NodePools, graph) and a reporting helper."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from eksmllint.analysis.workload_class import classification_of, classify
from eksmllint.apigroups import KARPENTER_GROUP
from eksmllint.apigroups import KUEUE_GROUP as KUEUE_GROUP  # re-exported: checks import it from here
from eksmllint.core.finding import DocPath, Finding, Fix, Location, Severity
from eksmllint.lazy import cached_property
from eksmllint.platform import Platform
from eksmllint.resource import Resource, SourceFile
from eksmllint.workload import PodTemplate, Workload, workload_of

if TYPE_CHECKING:
    import networkx as nx

    from eksmllint.core.rule import Rule
    from eksmllint.landing import Landing
    from eksmllint.scheduling import NodePoolView


_MISSING = object()


@dataclass(frozen=True)
class RunSettings:
    kubernetes_version: str = "1.33"
    mode: str = "cli"  # cli | webhook: reference rules stay silent in the webhook without context
    reference_kinds: tuple[str, ...] | None = None  # EML703: kinds to check (None = auto)
    platform: Platform = field(default_factory=Platform)  # releases of Karpenter, Kueue... assumed


@dataclass(frozen=True, eq=False)
class SharedViews:
    """Resources shared by many runs (the webhook's cluster context) with the views a run derives
    from them (workload views, per-kind index, NodePool views), built once by :meth:`of`. A run
    made with :meth:`LintRun.over` reads them instead of deriving them again. Read-only: runs in
    several threads share one."""

    resources: list[Resource] = field(default_factory=list)
    files: list[SourceFile] = field(default_factory=list)
    workloads: list[Workload] = field(default_factory=list)
    by_kind: dict[str, list[Resource]] = field(default_factory=dict)
    nodepools: list[NodePoolView] = field(default_factory=list)
    keys: frozenset[tuple] = frozenset()  # keys of the named resources (does an object replace one?)
    paths: frozenset[str] = frozenset()  # of the files: findings in them are not reported

    @classmethod
    def of(cls, run: LintRun) -> SharedViews:
        """The views of ``run`` (whose workloads the engine has built: :func:`build_workloads`)."""
        keys = frozenset(r.key for r in run.resources if r.name is not None)
        paths = frozenset(f.path for f in run.files)
        return cls(run.resources, run.files, run.workloads, run.by_kind, run.nodepools, keys, paths)

    def without(self, key: tuple) -> SharedViews:
        """These views minus the resource with ``key`` (an object being updated replaces its
        stored version); ``self`` when there is none."""
        if key not in self.keys:
            return self

        def keep(items: list, resource_of: Callable[[Any], Resource] = lambda x: x) -> list:
            return [x for x in items if resource_of(x).key != key]

        by_kind = dict(self.by_kind)
        kind = key[1]
        by_kind[kind] = keep(by_kind.get(kind, []))
        return SharedViews(
            keep(self.resources),
            self.files,
            keep(self.workloads, lambda w: w.resource),
            by_kind,
            keep(self.nodepools, lambda v: v.resource),
            self.keys - {key},
            self.paths,
        )


NO_SHARED_VIEWS = SharedViews()


@dataclass(eq=False)
class LintRun:
    """Everything loaded for one lint run. Built once; rules only read it."""

    resources: list[Resource]
    files: list[SourceFile] = field(default_factory=list)
    settings: RunSettings = field(default_factory=RunSettings)
    #: Resources at the end of ``resources`` whose views come ready-made (:meth:`over`).
    shared: SharedViews = field(default=NO_SHARED_VIEWS, repr=False)
    _memos: defaultdict[str, dict] = field(default_factory=lambda: defaultdict(dict), init=False, repr=False)

    @classmethod
    def over(
        cls, shared: SharedViews, resources: list[Resource], files: list[SourceFile], settings: RunSettings
    ) -> LintRun:
        """A run of ``resources`` and ``files`` followed by ``shared``'s, whose derived views are
        reused rather than derived again (the webhook: one admitted object before thousands of
        context objects). Same content and order as the run of all of them."""
        return cls([*resources, *shared.resources], [*files, *shared.files], settings, shared)

    @property
    def own_resources(self) -> list[Resource]:
        """The resources that are not from :attr:`shared`."""
        return self.resources[: len(self.resources) - len(self.shared.resources)]

    @property
    def own_files(self) -> list[SourceFile]:
        """The files that are not from :attr:`shared`."""
        return self.files[: len(self.files) - len(self.shared.files)]

    @cached_property
    def own_workloads(self) -> list[Workload]:
        return [w for r in self.own_resources if (w := workload_of(r)) is not None]

    def build_workloads(self, crashed: Callable[[Resource, Exception], object]) -> None:
        """Build the workload views of the run's own resources one at a time, before any rule
        reads them: a resource whose view cannot be built is passed to ``crashed`` and left out
        of :attr:`workloads`, instead of failing everything that reads them.

        A kind whose pods another object defines (a TrainJob: its runtime's template, merged) is
        built from that object when the run holds it; a runtime a TrainJob of the run uses is
        judged through the TrainJob, not again on its own."""
        from eksmllint.platform.derived import trainjob_resource
        from eksmllint.platform.kinds import row_for

        built: list[Workload] = []
        used: set[int] = set()  # runtimes judged through a TrainJob
        for resource in self.own_resources:
            try:
                row = row_for(resource.group, resource.kind)
                if row is not None and row.runtime_ref is not None:
                    merged = trainjob_resource(self, resource)
                    workload = workload_of(merged) if merged is not None else None
                    if merged is not None and not resource.doc.file.context_only:
                        used.add(id(merged.origin))  # (a context TrainJob's findings are not reported)
                else:
                    workload = workload_of(resource)
            except Exception as exc:
                crashed(resource, exc)
                continue
            if workload is not None:
                built.append(workload)
        self.__dict__["own_workloads"] = [w for w in built if not (w.has("runtime") and id(w.resource) in used)]
        self.__dict__.pop("workloads", None)

    def own_workload(self, resource: Resource) -> Workload | None:
        """The workload view of one of the run's own resources (None: not a workload, or its
        view could not be built)."""

        return next((w for w in self.own_workloads if w.resource.owner is resource), None)

    @cached_property
    def workloads(self) -> list[Workload]:
        return self.own_workloads + self.shared.workloads if self.shared.workloads else self.own_workloads

    @cached_property
    def templates(self) -> list[PodTemplate]:
        return [t for w in self.workloads for t in w.templates]

    @cached_property
    def by_kind(self) -> dict[str, list[Resource]]:
        own: dict[str, list[Resource]] = {}
        for r in self.own_resources:
            own.setdefault(r.kind, []).append(r)
        if not self.shared.resources:
            return own
        out = dict(self.shared.by_kind)
        for kind, items in own.items():
            out[kind] = items + out.get(kind, [])
        return out

    def of_kind(self, kind: str, group: str | None = None) -> list[Resource]:
        items = self.by_kind.get(kind, [])
        return [r for r in items if group is None or r.group == group]

    @cached_property
    def _by_kind_name(self) -> dict[tuple[str, str | None], list[Resource]]:
        out: dict[tuple[str, str | None], list[Resource]] = {}
        for r in self.resources:
            out.setdefault((r.kind, r.name), []).append(r)
        return out

    @cached_property
    def _by_kind_name_namespace(self) -> dict[tuple[str, str | None, str | None], list[Resource]]:
        out: dict[tuple[str, str | None, str | None], list[Resource]] = {}
        for r in self.resources:
            out.setdefault((r.kind, r.name, r.namespace), []).append(r)
        return out

    def find(self, kind: str, name: str, namespace: str | None = None, group: str | None = None) -> list[Resource]:
        """Resources of ``kind`` named ``name``; with a namespace, those in it or with none given."""
        found: Sequence[Resource] = self._by_kind_name.get((kind, name), ())
        if namespace is not None and len(found) > 1:  # one name in hundreds of namespaces: no scan
            index = self._by_kind_name_namespace
            inside, unset = index.get((kind, name, namespace), ()), index.get((kind, name, None), ())
            if not (inside and unset):  # else both, interleaved in run order: filtered below
                found = inside or unset
        return [
            r
            for r in found
            if (group is None or r.group == group) and (namespace is None or r.namespace in (None, namespace))
        ]

    @cached_property
    def _nodepool_by_resource(self) -> dict[int, NodePoolView]:
        return {id(p.resource): p for p in self.nodepools}

    def nodepool_of(self, resource: Resource) -> NodePoolView | None:
        """The NodePool view of a NodePool resource of this run (None for anything else)."""
        return self._nodepool_by_resource.get(id(resource))

    @cached_property
    def _workload_by_resource(self) -> dict[int, Workload]:
        return {id(w.resource): w for w in self.workloads}

    def workload_for(self, resource: Resource) -> Workload | None:
        """The run's (cached) workload view of ``resource``; None when it has no pod templates."""
        return self._workload_by_resource.get(id(resource))

    def memo(self, name: str) -> dict:
        """A dict that lives as long as the run: for rules' own caches (keys are the rule's business)."""
        return self._memos[name]

    def once(self, name: str, obj: object, compute: Callable[[LintRun, Any], Any]) -> Any:
        """``compute(run, obj)``, computed once per run and object. For answers that depend on the
        run (its ConfigMaps, NodePools): the webhook shares workload views between requests' runs,
        so such answers must not be stored on the views themselves."""
        memo = self._memos[name]
        found = memo.get(id(obj), _MISSING)
        if found is _MISSING:  # a None answer is an answer too: computed once like any other
            found = memo[id(obj)] = compute(self, obj)
        return found

    @cached_property
    def nodepools(self) -> list[NodePoolView]:
        from eksmllint.scheduling import NodePoolView

        own = [NodePoolView(r) for r in self.own_resources if r.kind == "NodePool" and r.group == KARPENTER_GROUP]
        return own + self.shared.nodepools if self.shared.nodepools else own

    @cached_property
    def _landing_cache(self) -> dict[int, Landing]:
        return {}

    @cached_property
    def _landing_by_key(self) -> dict[tuple, Landing]:
        return {}

    def landing(self, template: PodTemplate) -> Landing:
        """Where ``template`` can land (NodePools, instance types). Computed once per placement key
        (requirement terms + tolerations): templates that agree on those share one Landing, so
        placing N templates on P pools costs (distinct keys) x P, not N x P."""
        cache = self._landing_cache
        found = cache.get(id(template))
        if found is None:
            from eksmllint.landing import built_in_pools, land, queue_flavors
            from eksmllint.scheduling import placement_key

            flavors = queue_flavors(self, template)  # Kueue adds a flavor's nodeLabels and tolerations
            key = (placement_key(template), flavors)
            shared = self._landing_by_key
            found = shared.get(key)
            if found is None:
                found = shared[key] = land(template, self.nodepools, flavors, built_in_pools(self))
            cache[id(template)] = found
        return found

    @cached_property
    def graph(self) -> nx.MultiDiGraph:
        from eksmllint.graph import build_graph

        return build_graph(self)


@dataclass(frozen=True)
class RuleContext:
    rule: Rule
    run: LintRun

    @property
    def options(self):
        return self.rule.options

    @property
    def platform(self) -> Platform:
        """The releases of the platform components this run assumes (config ``platform:``)."""
        return self.run.settings.platform

    def judges(self, target: PodTemplate | Workload) -> bool:
        """Is ``target`` of a workload class this rule judges (rule YAML ``workload-classes``)?
        For checks whose target is the run or a resource; template and workload targets of other
        classes never reach the check (:func:`eksmllint.core.engine.target_items`)."""
        classes = self.rule.spec.workload_classes
        if not classes:
            return True
        found = classification_of(target)
        return found is None or found.cls in classes  # a str enum: compares as its name

    def report(
        self,
        resource: Resource,
        path: DocPath,
        message: str,
        *,
        fix: Fix | None = None,
        related: Iterable[Location] = (),
        severity: Severity | None = None,
        detail: str | None = None,
    ) -> Finding:
        workload = self.run.workload_for(resource)
        found = classify(workload) if workload is not None else None
        if fix is not None and not resource.fixable(getattr(op, "path", ()) for op in fix.ops):
            fix = None  # it would edit, in the runtime, a value a TrainJob overrides
        return Finding(
            code=self.rule.code,
            slug=self.rule.slug,
            severity=severity or self.rule.severity,
            message=message,
            location=resource.location(path),
            resource=resource.ref,
            fix=fix,
            related=tuple(related),
            base_path=resource.base_path,
            workload_class=found.cls.value if found else None,
            workload_evidence=found.evidence if found else (),
            detail=detail,
        )

    def report_file(
        self,
        file: SourceFile | str,
        line: int,
        col: int,
        message: str,
        *,
        fix: Fix | None = None,
        severity: Severity | None = None,
        detail: str | None = None,
    ) -> Finding:
        path = file.path if isinstance(file, SourceFile) else file
        return Finding(
            code=self.rule.code,
            slug=self.rule.slug,
            severity=severity or self.rule.severity,
            message=message,
            location=Location(path, line, col),
            fix=fix,
            detail=detail,
        )
