"""What a check sees: the run (resources, workloads, NodePools, graph) and a reporting helper."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Iterable

from eksmllint.core.finding import DocPath, Finding, Fix, Location, Severity
from eksmllint.resource import Resource, SourceFile
from eksmllint.workload import PodTemplate, Workload, workload_of

if TYPE_CHECKING:
    import networkx as nx

    from eksmllint.core.rule import Rule
    from eksmllint.scheduling import Landing, NodePoolView

KARPENTER_GROUP = "karpenter.sh"


@dataclass(frozen=True)
class RunSettings:
    kubernetes_version: str = "1.33"
    mode: str = "cli"  # cli | webhook: reference rules stay silent in the webhook without context
    reference_kinds: tuple[str, ...] | None = None  # EML703: kinds to check (None = auto)


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

    def find(self, kind: str, name: str, namespace: str | None = None, group: str | None = None) -> list[Resource]:
        """Resources of ``kind`` named ``name``; with a namespace, those in it or with none given."""
        return [
            r for r in self.of_kind(kind, group)
            if r.name == name and (namespace is None or r.namespace in (None, namespace))
        ]

    @cached_property
    def nodepools(self) -> list["NodePoolView"]:
        from eksmllint.scheduling import NodePoolView

        return [NodePoolView(r) for r in self.of_kind("NodePool", KARPENTER_GROUP)]

    @cached_property
    def _landing_cache(self) -> dict[int, "Landing"]:
        return {}

    def landing(self, template: PodTemplate) -> "Landing":
        """Where ``template`` can land (NodePools, instance types); computed once per template."""
        from eksmllint.scheduling import land

        key = id(template)
        cache = self._landing_cache
        if key not in cache:
            cache[key] = land(template, self.nodepools)
        return cache[key]

    @cached_property
    def graph(self) -> "nx.MultiDiGraph":
        from eksmllint.graph import build_graph

        return build_graph(self)


@dataclass(frozen=True)
class RuleContext:
    rule: "Rule"
    run: LintRun

    @property
    def options(self):
        return self.rule.options

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
        )

    def report_file(self, file: SourceFile | str, line: int, col: int, message: str, *,
                    fix: Fix | None = None, severity: Severity | None = None, extra: Any = ()) -> Finding:
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
