"""CustomResourceDefinitions generated from eksmllint's own CRD models (:mod:`eksmllint.models`).

The end-to-end tests install them in a real API server so that the objects the rules judge can
be created, stored and watched there; no CRD file is copied from the projects that own the
kinds. The schemas are *structural* (the API server refuses anything else): every node has a
type, ``$ref`` is inlined, a union of integer and string becomes ``x-kubernetes-int-or-string``,
and an open part (an ``Obj`` mapping, a ``LooseModel``, ``Any``) keeps whatever it is given with
``x-kubernetes-preserve-unknown-fields``. Only the shape is carried over: no ``default`` (the API
server would write it into stored objects), no ``pattern`` (Python regexes are not always
Kubernetes' dialect), no descriptions. Validation stays eksmllint's (EML002).

``eksmllint.crds.render()`` prints them (``python -m eksmllint.crds``).
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

#: kind -> (plural, scope). The names are the owners' (the plural is what RBAC rules and URLs use).
CRD_NAMES: dict[str, tuple[str, str]] = {
    "NodePool": ("nodepools", "Cluster"),
    "EC2NodeClass": ("ec2nodeclasses", "Cluster"),
    "PyTorchJob": ("pytorchjobs", "Namespaced"),
    "TFJob": ("tfjobs", "Namespaced"),
    "MPIJob": ("mpijobs", "Namespaced"),
    "XGBoostJob": ("xgboostjobs", "Namespaced"),
    "PaddleJob": ("paddlejobs", "Namespaced"),
    "JAXJob": ("jaxjobs", "Namespaced"),
    "TrainJob": ("trainjobs", "Namespaced"),
    "TrainingRuntime": ("trainingruntimes", "Namespaced"),
    "ClusterTrainingRuntime": ("clustertrainingruntimes", "Cluster"),
    "Job": ("jobs", "Namespaced"),  # batch.volcano.sh
    "Queue": ("queues", "Cluster"),  # scheduling.volcano.sh
    "PodGroup": ("podgroups", "Namespaced"),
    "RayCluster": ("rayclusters", "Namespaced"),
    "RayJob": ("rayjobs", "Namespaced"),
    "RayService": ("rayservices", "Namespaced"),
    "JobSet": ("jobsets", "Namespaced"),
    "LeaderWorkerSet": ("leaderworkersets", "Namespaced"),
    "ClusterQueue": ("clusterqueues", "Cluster"),
    "LocalQueue": ("localqueues", "Namespaced"),
    "ResourceFlavor": ("resourceflavors", "Cluster"),
}

_KEPT = ("enum", "minimum", "maximum", "minItems", "maxItems")
_PRESERVE = {"x-kubernetes-preserve-unknown-fields": True}


def _version_rank(version: str) -> tuple[int, int, int]:
    """Kubernetes' version priority: GA over beta over alpha, then the numbers."""
    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", version)
    if not m:
        return (-1, 0, 0)
    stage = {"alpha": 0, "beta": 1, None: 2}[m.group(2)]
    return (stage, int(m.group(1)), int(m.group(3) or 0))


class _Converter:
    """Pydantic's JSON schema of one model to a structural OpenAPI v3 schema."""

    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs
        self.expanding: set[str] = set()

    def convert(self, node: Any) -> dict[str, Any]:
        if not isinstance(node, dict) or not node:
            return dict(_PRESERVE)
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            if name in self.expanding:  # recursive model: keep the rest as given
                return {"type": "object", **_PRESERVE}
            self.expanding.add(name)
            try:
                return self.convert(self.defs[name])
            finally:
                self.expanding.discard(name)
        if "allOf" in node and len(node["allOf"]) == 1:
            return self.convert(node["allOf"][0])
        for key in ("anyOf", "oneOf"):
            if key in node:
                return self._union(node[key])
        if "const" in node:
            node = {**node, "enum": [node["const"]]}
        kind = node.get("type")
        if isinstance(kind, list):
            return self._union([{"type": t} for t in kind])
        out: dict[str, Any]
        if kind == "object":
            out = self._object(node)
        elif kind == "array":
            out = {"type": "array", "items": self.convert(node.get("items"))}
        elif kind in ("string", "integer", "number", "boolean"):
            out = {"type": kind}
        elif kind == "null":
            return {"nullable": True, **_PRESERVE}
        else:
            return dict(_PRESERVE)
        out.update({k: node[k] for k in _KEPT if k in node})
        return out

    def _object(self, node: dict[str, Any]) -> dict[str, Any]:
        extra = node.get("additionalProperties")
        props = node.get("properties")
        if props:
            out: dict[str, Any] = {
                "type": "object",
                "properties": {name: self.convert(sub) for name, sub in props.items()},
            }
            required = [r for r in node.get("required", ()) if r in props]
            if required:
                out["required"] = required
            if extra not in (None, False):  # a LooseModel: known fields typed, the rest kept
                out.update(_PRESERVE)
            return out
        if isinstance(extra, dict) and extra:
            return {"type": "object", "additionalProperties": self.convert(extra)}
        return {"type": "object", **_PRESERVE}

    def _union(self, members: list[Any]) -> dict[str, Any]:
        nullable = any(isinstance(m, dict) and m.get("type") == "null" for m in members)
        rest = [m for m in members if not (isinstance(m, dict) and m.get("type") == "null")]
        converted = [self.convert(m) for m in rest]
        types = {c.get("type") for c in converted}
        if len(converted) == 1:
            out = converted[0]
        elif types <= {"integer", "string", "number"} and "string" in types:
            out = {"x-kubernetes-int-or-string": True}  # IntOrString, Quantity
        elif types == {"integer", "number"}:
            out = {"type": "number"}
        else:
            out = dict(_PRESERVE)
        if nullable:
            out = {**out, "nullable": True}
        return out


def schema_of(model: type) -> dict[str, Any]:
    """The structural ``openAPIV3Schema`` of one :class:`~eksmllint.models.KubeObject` model."""
    raw = model.model_json_schema(by_alias=True, mode="validation")  # type: ignore[attr-defined]
    converter = _Converter(raw.get("$defs", {}))
    props = dict(raw.get("properties", {}))
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            # The API server owns metadata's schema; a CRD may not restrict it beyond name.
            "metadata": {"type": "object"},
            "status": {"type": "object", **_PRESERVE},
        },
    }
    for name, sub in props.items():
        if name not in schema["properties"]:
            schema["properties"][name] = converter.convert(sub)
    required = [r for r in raw.get("required", ()) if r not in ("apiVersion", "kind", "metadata", "status")]
    if required:
        schema["required"] = required
    return schema


def crds(groups: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """One CRD per (group, kind) eksmllint has a model for (``groups``: only these), every
    modelled version served, the highest-priority one stored."""
    from eksmllint.models import KNOWN_CRD_KINDS, model_for

    by_kind: dict[tuple[str, str], list[str]] = defaultdict(list)
    for api_version, kind in KNOWN_CRD_KINDS:
        group, _, version = api_version.rpartition("/")
        if kind in CRD_NAMES and (groups is None or group in groups):
            by_kind[(group, kind)].append(version)
    out = []
    for (group, kind), versions in sorted(by_kind.items()):
        plural, scope = CRD_NAMES[kind]
        ordered = sorted(versions, key=_version_rank, reverse=True)
        out.append(
            {
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": f"{plural}.{group}", "labels": {"app.kubernetes.io/managed-by": "eksmllint"}},
                "spec": {
                    "group": group,
                    "names": {"kind": kind, "plural": plural, "singular": kind.lower(), "listKind": f"{kind}List"},
                    "scope": scope,
                    "versions": [
                        {
                            "name": v,
                            "served": True,
                            "storage": v == ordered[0],
                            "schema": {"openAPIV3Schema": schema_of(model_for(f"{group}/{v}", kind))},  # type: ignore[arg-type]
                            "subresources": {"status": {}},
                        }
                        for v in ordered
                    ],
                },
            }
        )
    return out


def render(groups: tuple[str, ...] | None = None) -> str:
    import yaml

    return yaml.safe_dump_all(crds(groups), sort_keys=False)


if __name__ == "__main__":  # pragma: no cover - a convenience for looking at them
    print(render(), end="")
