"""What a check sees: the run (resources, workloads, NodePools, graph) and a reporting helper."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from eksmllint.analysis.workload_class import classification_of, classify
from eksmllint.core.finding import DocPath, Finding, Fix, Location, Severity
from eksmllint.platform import Platform
from eksmllint.resource import Resource, SourceFile
from eksmllint.workload import PodTemplate, Workload, workload_of

if TYPE_CHECKING:
    import networkx as nx

    from eksmllint.core.rule import Rule
    from eksmllint.scheduling import Landing, NodePoolView

KARPENTER_GROUP = "karpenter.sh"
KUEUE_GROUP = "kueue.x-k8s.io"


@dataclass(frozen=True)
class RunSettings:
    kubernetes_version: str = "1.33"
    mode: str = "cli"  # cli | webhook: reference rules stay silent in the webhook without context
    reference_kinds: tuple[str, ...] | None = None  # EML703: kinds to check (None = auto)
    platform: Platform = field(default_factory=Platform)  # releases of Karpenter, Kueue... assumed


@dataclass(eq=False)
class LintRun:
    """Everything loaded for one lint run. Built once; rules only read it."""

    resources: list[Resource]
    files: list[SourceFile] = field(default_factory=list)
    settings: RunSettings = field(default_factory=RunSettings)

    @cached_property
    def workloads(self) -> list[Workload]:
        return [w for r in self.resources if (w := workload_of(r)) is not None]

    @cached_property
    def templates(self) -> list[PodTemplate]:
        return [t for w in self.workloads for t in w.templates]

    @cached_property
    def by_kind(self) -> dict[str, list[Resource]]:
        out: dict[str, list[Resource]] = {}
        for r in self.resources:
            out.setdefault(r.kind, []).append(r)
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

    def find(self, kind: str, name: str, namespace: str | None = None, group: str | None = None) -> list[Resource]:
        """Resources of ``kind`` named ``name``; with a namespace, those in it or with none given."""
        return [
            r
            for r in self._by_kind_name.get((kind, name), ())
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
        return self.__dict__.setdefault("_memo_" + name, {})

    def once(self, name: str, obj: object, compute: Callable[[LintRun, Any], Any]) -> Any:
        """``compute(run, obj)``, computed once per run and object. For answers that depend on the
        run (its ConfigMaps, NodePools): the webhook shares workload views between requests' runs,
        so such answers must not be stored on the views themselves."""
        memo = self.memo(name)
        found = memo.get(id(obj))
        if found is None:
            found = memo[id(obj)] = compute(self, obj)
        return found

    @cached_property
    def nodepools(self) -> list[NodePoolView]:
        from eksmllint.scheduling import NodePoolView

        return [NodePoolView(r) for r in self.of_kind("NodePool", KARPENTER_GROUP)]

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
            from eksmllint.scheduling import land, placement_key

            key = placement_key(template)
            shared = self._landing_by_key
            found = shared.get(key)
            if found is None:
                found = shared[key] = land(template, self.nodepools)
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
        classes never reach the check."""
        classes = self.rule.spec.workload_classes
        if not classes:
            return True
        found = classification_of(target)
        return found is None or found.cls.value in classes

    def report(
        self,
        resource: Resource,
        path: DocPath,
        message: str,
        *,
        fix: Fix | None = None,
        related: Iterable[Location] = (),
        severity: Severity | None = None,
    ) -> Finding:
        workload = self.run.workload_for(resource)
        found = classify(workload) if workload is not None else None
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
        extra: Any = (),
    ) -> Finding:
        path = file.path if isinstance(file, SourceFile) else file
        return Finding(
            code=self.rule.code,
            slug=self.rule.slug,
            severity=severity or self.rule.severity,
            message=message,
            location=Location(path, line, col),
            fix=fix,
            extra=tuple(extra),
        )
