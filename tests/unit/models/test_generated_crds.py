"""eksmllint.crds: CRDs generated from the models are structural and keep the models' shape.
(That the API server accepts them is proven by the end-to-end tests, which install them.)"""

from __future__ import annotations

import pytest

from eksmllint.crds import CRD_NAMES, crds, schema_of
from eksmllint.models import KNOWN_CRD_KINDS, model_for

ANYTHING = ("x-kubernetes-preserve-unknown-fields", "x-kubernetes-int-or-string")


def nodes(schema: dict, path: str = ""):
    yield path, schema
    for name, sub in schema.get("properties", {}).items():
        yield from nodes(sub, f"{path}.{name}")
    if isinstance(schema.get("items"), dict):
        yield from nodes(schema["items"], f"{path}[]")
    if isinstance(schema.get("additionalProperties"), dict):
        yield from nodes(schema["additionalProperties"], f"{path}{{}}")


ALL = crds()


@pytest.mark.parametrize("crd", ALL, ids=lambda c: c["metadata"]["name"])
def test_every_node_is_structural(crd):
    for version in crd["spec"]["versions"]:
        for path, node in nodes(version["schema"]["openAPIV3Schema"]):
            assert "type" in node or any(node.get(k) for k in ANYTHING), (version["name"], path, node)
            assert not {"$ref", "anyOf", "oneOf", "allOf", "default", "pattern", "title"} & set(node), (path, node)
            assert not ("properties" in node and isinstance(node.get("additionalProperties"), dict)), path
    assert sum(v["storage"] for v in crd["spec"]["versions"]) == 1


def test_one_crd_per_modelled_kind_with_every_version():
    modelled = {(av.rpartition("/")[0], kind) for av, kind in KNOWN_CRD_KINDS if kind in CRD_NAMES}
    assert {(c["spec"]["group"], c["spec"]["names"]["kind"]) for c in ALL} == modelled
    nodepools = next(c for c in ALL if c["metadata"]["name"] == "nodepools.karpenter.sh")
    assert [(v["name"], v["storage"]) for v in nodepools["spec"]["versions"]] == [("v1", True), ("v1beta1", False)]


def test_the_schema_keeps_the_models_fields_and_openness():
    spec = schema_of(model_for("kubeflow.org/v1", "PyTorchJob"))["properties"]["spec"]
    replica = spec["properties"]["pytorchReplicaSpecs"]
    assert replica["type"] == "object"
    master = replica["properties"]["Master"] if "properties" in replica else replica["additionalProperties"]
    assert master["properties"]["replicas"]["type"] == "integer"
    template = master["properties"]["template"]
    assert template["type"] == "object" and template["x-kubernetes-preserve-unknown-fields"] is True  # Obj
    assert "x-kubernetes-preserve-unknown-fields" not in spec  # a CRDModel: closed
