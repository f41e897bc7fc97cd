"""Provisioners: how the nodes a pod can land on come to exist, and which labels they carry.

One row per form in ``provisioners.yaml`` (Karpenter NodePool + EC2NodeClass, EKS Auto Mode
NodePool + NodeClass, SageMaker HyperPod ``ml.*`` nodes, managed node groups, Kueue
ResourceFlavor ``nodeLabels``, and forms recognised but not modelled). :mod:`eksmllint.scheduling`
reads it to tell NodePools apart by ``nodeClassRef`` (group + kind, never the name alone), to know
which labels a pool's nodes carry without the pool naming them, and to tell which form a pod aims
at (the open-world gate: a rule concluding "no pool can host it" speaks only when the run holds the
pools of that form).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from eksmllint.tables import load_table

DATA = Path(__file__).with_name("provisioners.yaml")


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class NodeClassRef(_Row):
    group: str
    kind: str


class LabelSet(_Row):
    """Label keys by exact key, by prefix, or by key with given values."""

    keys: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()
    values: dict[str, tuple[str, ...]] = Field(default_factory=dict)

    def has_key(self, key: str) -> bool:
        return key in self.keys or key.startswith(self.prefixes) or key in self.values

    def matches(self, key: str, values: Iterable[str]) -> bool:
        """A positive requirement on ``key`` with ``values`` selects this set."""
        if key in self.values:
            vals = tuple(values)
            return bool(vals) and all(v in self.values[key] for v in vals)
        return key in self.keys or key.startswith(self.prefixes)


class BuiltInPool(_Row):
    """A NodePool the provisioner creates in every cluster that uses it (no manifest in the run)."""

    requirements: tuple[dict[str, Any], ...]
    taints: tuple[dict[str, str], ...] = ()


class Provisioner(BaseModel):
    """One provisioner form (a row of ``provisioners.yaml``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    name: str = ""  # the row's key, filled in by the table
    label: str
    kind: Literal["nodepool", "selector", "flavor"]
    modelled: bool = True
    node_class: NodeClassRef | None = Field(None, alias="node-class")
    default_node_class: bool = Field(False, alias="default-node-class")
    sets_labels: LabelSet = Field(default_factory=LabelSet, alias="sets-labels")
    pod_labels: LabelSet = Field(default_factory=LabelSet, alias="pod-labels")
    instance_type_prefix: str | None = Field(None, alias="instance-type-prefix")
    why: str | None = None
    source: str
    built_in_pools: dict[str, BuiltInPool] = Field(default_factory=dict, alias="built-in-pools")
    built_in_pools_source: str | None = Field(None, alias="built-in-pools-source")

    @model_validator(mode="after")
    def _shape(self) -> Provisioner:
        if self.kind == "nodepool" and self.node_class is None:
            raise ValueError(f"{self.label}: a nodepool provisioner names its node-class (group + kind)")
        if not self.modelled and not self.why:
            raise ValueError(f"{self.label}: a form that is not modelled says why (`why:`)")
        if self.built_in_pools and (self.kind != "nodepool" or not self.built_in_pools_source):
            raise ValueError(f"{self.label}: built-in pools belong to a nodepool form and cite a source")
        return self

    def aimed_at_by(self, key: str, values: tuple[str, ...]) -> bool:
        """A positive pod requirement (key In values / Exists) that only this form's nodes satisfy."""
        if self.pod_labels.matches(key, values):
            return True
        prefix = self.instance_type_prefix
        if not prefix or key not in _INSTANCE_TYPE_KEYS:
            return False
        start: str = prefix
        return bool(values) and all(v.startswith(start) for v in values)


_INSTANCE_TYPE_KEYS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")


class _CommonLabels(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    keys: tuple[str, ...]
    source: str


class ProvisionerTable(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    label_aliases: dict[str, str] = Field(alias="label-aliases")
    label_aliases_source: str = Field(alias="label-aliases-source")
    common_labels: _CommonLabels = Field(alias="common-labels")
    provisioners: dict[str, Provisioner]

    @model_validator(mode="after")
    def _consistent(self) -> ProvisionerTable:
        refs: dict[tuple[str, str], str] = {}
        defaults = [n for n, p in self.provisioners.items() if p.default_node_class]
        if len(defaults) != 1:
            raise ValueError(f"exactly one provisioner is the default node class, got {defaults}")
        for name, p in self.provisioners.items():
            object.__setattr__(p, "name", name)
            if p.node_class is not None:
                ref = (p.node_class.group, p.node_class.kind)
                if ref in refs:
                    raise ValueError(f"node class {ref} is claimed by {refs[ref]} and {name}")
                refs[ref] = name
        return self

    # --- lookups ------------------------------------------------------------------------------
    def by_node_class(self, group: str | None, kind: str | None) -> Provisioner | None:
        """The NodePool form a ``nodeClassRef`` names; the default (Karpenter's EC2NodeClass) when
        neither group nor kind is given (v1beta1 pools). None: a node class no row knows."""
        if not group and not kind:
            return self.default
        for p in self.provisioners.values():
            ref = p.node_class
            if ref is not None and (not group or group == ref.group) and (not kind or kind == ref.kind):
                return p
        return None

    @property
    def default(self) -> Provisioner:
        return next(p for p in self.provisioners.values() if p.default_node_class)

    def of_kind(self, kind: str) -> list[Provisioner]:
        return [p for p in self.provisioners.values() if p.kind == kind]


@lru_cache(maxsize=1)
def provisioners() -> ProvisionerTable:
    """The provisioner table, validated once."""
    return load_table(ProvisionerTable, DATA)


def label_aliases() -> Mapping[str, str]:
    """Provider label -> the catalogue's key (instance-type math only)."""
    return provisioners().label_aliases
