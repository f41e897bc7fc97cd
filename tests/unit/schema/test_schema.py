"""EML002 core-schema validation and EML003 deprecation data."""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eksmllint.schema import ApiStatus, SchemaIssue, api_status, core, deprecations, supported_versions, validate_core


def _job() -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "labels": {"app.kubernetes.io/name": "train"}},
        "spec": {
            "completionMode": "Indexed",
            "completions": 4,
            "parallelism": 4,
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "trainer",
                            "image": "public.ecr.aws/x/trainer:1",
                            "command": ["torchrun", "train.py"],
                            "ports": [{"containerPort": 29500, "protocol": "TCP"}],
                            "resources": {
                                "limits": {"nvidia.com/gpu": 8, "cpu": 96, "memory": "1000Gi"},
                                "requests": {"cpu": "90500m", "memory": 1.5e12},
                            },
                            "env": [{"name": "NCCL_DEBUG", "value": "INFO"}],
                        }
                    ],
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                }
            },
        },
    }


def _deployment() -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 1}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {
                            "name": "web",
                            "image": "nginx",
                            "readinessProbe": {"httpGet": {"path": "/", "port": "http"}},
                            "livenessProbe": {"tcpSocket": {"port": 8080}},
                        }
                    ]
                },
            },
        },
    }


def _containers(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return doc["spec"]["template"]["spec"]["containers"]


# --------------------------------------------------------------------------- validate_core


def test_valid_job_and_deployment_pass() -> None:
    assert validate_core(_job()) == []
    assert validate_core(_deployment()) == []


def test_unknown_field_points_at_the_key_and_suggests_the_fix() -> None:
    doc = _job()
    spec = doc["spec"]["template"]["spec"]
    spec["containrs"] = spec.pop("containers")
    issues = validate_core(doc)
    assert issues is not None
    unknown = [i for i in issues if i.message.startswith("unknown field")]
    assert unknown == [
        SchemaIssue(
            ("spec", "template", "spec", "containrs"),
            'unknown field "spec.template.spec.containrs" (did you mean "containers"?)',
        )
    ]
    # and the now-missing required list is reported on the parent object
    assert (
        SchemaIssue(("spec", "template", "spec"), 'missing required field "containers" in spec.template.spec') in issues
    )


def test_unknown_field_inside_a_list_item() -> None:
    doc = _job()
    _containers(doc)[0]["resource"] = {}
    issues = validate_core(doc)
    assert [i.path for i in issues] == [("spec", "template", "spec", "containers", 0, "resource")]
    assert "spec.template.spec.containers[0].resource" in issues[0].message


def test_wrong_type_message() -> None:
    doc = _deployment()
    doc["spec"]["replicas"] = "3"
    assert validate_core(doc) == [
        SchemaIssue(("spec", "replicas"), '"spec.replicas": expected integer, got string "3"')
    ]


@pytest.mark.parametrize("value", [True, 3.0, [3], {"n": 3}])
def test_integer_field_rejects_non_integers(value: Any) -> None:
    doc = _deployment()
    doc["spec"]["replicas"] = value
    issues = validate_core(doc)
    assert len(issues) == 1 and issues[0].path == ("spec", "replicas")
    assert "expected integer" in issues[0].message


def test_int32_range_is_checked() -> None:
    doc = _deployment()
    doc["spec"]["replicas"] = 2**31
    (issue,) = validate_core(doc)
    assert issue.path == ("spec", "replicas") and "out of range for int32" in issue.message


def test_missing_required_at_top_level_and_nested() -> None:
    doc = _deployment()
    del doc["spec"]["selector"]
    del _containers(doc)[0]["name"]
    issues = validate_core(doc)
    assert SchemaIssue(("spec",), 'missing required field "selector" in spec') in issues
    assert (
        SchemaIssue(
            ("spec", "template", "spec", "containers", 0),
            'missing required field "name" in spec.template.spec.containers[0]',
        )
        in issues
    )


@pytest.mark.parametrize("value", ["25%", 1, 0, None])
def test_int_or_string_fields_accept_both(value: Any) -> None:
    doc = _deployment()
    doc["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] = value
    _containers(doc)[0]["readinessProbe"]["httpGet"]["port"] = value if value is not None else 80
    assert validate_core(doc) == []


def test_int_or_string_rejects_other_types() -> None:
    doc = _deployment()
    doc["spec"]["strategy"]["rollingUpdate"]["maxSurge"] = 1.5
    (issue,) = validate_core(doc)
    assert issue.path == ("spec", "strategy", "rollingUpdate", "maxSurge")
    assert "expected string or integer" in issue.message


@pytest.mark.parametrize("value", [4, "4", 0.5, "500m", "16Gi"])
def test_quantities_accept_numbers_and_strings(value: Any) -> None:
    doc = _job()
    _containers(doc)[0]["resources"]["limits"]["cpu"] = value
    assert validate_core(doc) == []


def test_map_values_must_be_strings() -> None:
    doc = _job()
    doc["metadata"]["labels"]["version"] = 2
    assert validate_core(doc) == [
        SchemaIssue(("metadata", "labels", "version"), '"metadata.labels.version": expected string, got integer 2')
    ]


def test_yaml_timestamps_count_as_strings_and_null_is_allowed() -> None:
    doc = _job()
    doc["metadata"]["creationTimestamp"] = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    doc["status"] = {}
    doc["spec"]["activeDeadlineSeconds"] = None
    assert validate_core(doc) == []


@pytest.mark.parametrize(
    "obj",
    [
        {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "spec": {}},
        # same first DNS label as core "batch": kubernetes_validate would look up job-batch-v1alpha1.json
        {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "spec": {}},
        {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "spec": {}},
        {"apiVersion": "v1", "kind": "NoSuchKind"},
        {"apiVersion": "policy/v1beta1", "kind": "PodDisruptionBudget"},  # removed in 1.25: EML003's job
        {"kind": "Pod"},
        {"apiVersion": 1, "kind": ["Pod"]},
    ],
)
def test_non_core_or_unidentifiable_returns_none(obj: dict[str, Any]) -> None:
    assert validate_core(obj) is None


def test_non_dict_returns_none() -> None:
    assert validate_core(["not", "a", "mapping"]) is None  # type: ignore[arg-type]
    assert validate_core(None) is None  # type: ignore[arg-type]


def test_kind_availability_follows_the_version() -> None:
    doc = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}}
    assert validate_core(doc, "1.33") is None  # DRA v1 is GA from 1.34
    assert validate_core(doc, "1.34") == []


def test_field_availability_follows_the_version() -> None:
    doc = _job()
    _containers(doc)[0]["resources"]["claims"] = [{"name": "gpu"}]
    assert validate_core(doc, "1.33") == []
    issues = validate_core(doc, "1.25")  # resources.claims arrived in 1.26
    assert [i.path for i in issues] == [("spec", "template", "spec", "containers", 0, "resources", "claims")]


def test_issue_count_is_bounded_and_deterministic() -> None:
    doc = {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [{"nme": f"c{i}"} for i in range(50)]}}
    first = validate_core(doc)
    assert len(first) == core.MAX_ISSUES
    assert first[-1].path == () and "only the first" in first[-1].message
    assert validate_core(copy.deepcopy(doc)) == first


def test_versions() -> None:
    versions = supported_versions()
    assert "1.25" in versions and "1.33" in versions
    assert versions == sorted(versions, key=lambda v: tuple(map(int, v.split("."))))
    assert validate_core(_job(), "v1.33") == validate_core(_job(), "1.33.4") == []
    with pytest.raises(ValueError, match=r"supported: 1\.25"):
        validate_core(_job(), "1.12")
    with pytest.raises(ValueError):
        validate_core(_job(), "latest")


def test_validator_is_built_once_per_kind_and_version(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, str, str]] = []
    real = core._build_validator

    def counting(api_version: str, kind: str, version: str):  # type: ignore[no-untyped-def]
        calls.append((api_version, kind, version))
        return real(api_version, kind, version)

    monkeypatch.setattr(core, "_VALIDATORS", {})
    monkeypatch.setattr(core, "_build_validator", counting)
    validate_core(_job(), "1.30")
    other = _job()
    other["metadata"]["name"] = "other"
    validate_core(other, "1.30")
    validate_core({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob"}, "1.30")
    validate_core({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob"}, "1.30")
    assert calls == [("batch/v1", "Job", "1.30"), ("kubeflow.org/v1", "PyTorchJob", "1.30")]


def test_jsonschema_fallback_agrees(monkeypatch: pytest.MonkeyPatch) -> None:
    """If the closure compiler refuses a schema, a jsonschema validator takes over."""

    def refuse(self, name):  # type: ignore[no-untyped-def]
        raise core._Unsupported("forced")

    monkeypatch.setattr(core, "_VALIDATORS", {})
    monkeypatch.setattr(core._Compiler, "definition", refuse)
    assert validate_core(_deployment(), "1.31") == []
    bad = _deployment()
    bad["spec"]["replicas"] = "3"
    (issue,) = validate_core(bad, "1.31")
    assert issue.path == ("spec", "replicas")


def _oracle_valid(doc: dict[str, Any], version: str) -> bool:
    """Plain jsonschema on the same bundled definitions (with IntOrString/Quantity accepting null)."""
    defs = core._definitions(version)
    name = core._kind_index(version)[(doc["apiVersion"], doc["kind"])]
    return jsonschema.Draft202012Validator({"$defs": defs, "$ref": f"#/$defs/{name}"}).is_valid(doc)


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: None,
        lambda d: d["spec"].__setitem__("replicas", "x"),
        lambda d: d["spec"].__setitem__("bogus", 1),
        lambda d: d["spec"]["template"]["spec"]["containers"][0].__setitem__("ports", [{"containerPort": "80"}]),
        lambda d: d["spec"]["template"]["spec"]["containers"][0].pop("name"),
        lambda d: d["metadata"].__setitem__("annotations", {"a": None}),
    ],
)
def test_verdict_matches_plain_jsonschema(mutate) -> None:  # type: ignore[no-untyped-def]
    doc = _deployment()
    mutate(doc)
    assert (validate_core(doc, "1.33") == []) == _oracle_valid(doc, "1.33")


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True),
    st.text(max_size=8),
)
_keys = st.one_of(
    st.sampled_from(
        [
            "spec",
            "template",
            "containers",
            "metadata",
            "name",
            "ports",
            "resources",
            "limits",
            "labels",
            "selector",
            "replicas",
            "env",
            "x",
        ]
    ),
    st.text(max_size=5),
    st.integers(),
    st.none(),
    st.booleans(),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_keys, inner, max_size=5)),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(
        [
            ("batch/v1", "Job"),
            ("apps/v1", "Deployment"),
            ("v1", "Pod"),
            ("v1", "Service"),
            ("v1", "ConfigMap"),
            ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
        ]
    ),
    body=st.dictionaries(_keys, _values, max_size=6),
)
def test_never_raises_on_arbitrary_documents(kind: tuple[str, str], body: dict[Any, Any]) -> None:
    doc = dict(body)
    doc["apiVersion"], doc["kind"] = kind
    issues = validate_core(doc)
    assert isinstance(issues, list) and len(issues) <= core.MAX_ISSUES
    for issue in issues:
        assert isinstance(issue.message, str) and issue.message
        assert all(isinstance(p, (str, int)) for p in issue.path)


def test_deep_nesting_does_not_raise() -> None:
    props: dict[str, Any] = {}
    node = props
    for _ in range(5000):
        node["x"] = {"type": "object", "properties": {}}
        node = node["x"]["properties"]
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": {"properties": props}}}]},
    }
    issues = validate_core(crd)
    assert isinstance(issues, list)


# --------------------------------------------------------------------------- deprecations


@pytest.mark.parametrize(
    ("api_version", "kind", "version", "state", "replacement", "mechanical"),
    [
        ("policy/v1beta1", "PodDisruptionBudget", "1.24", "deprecated", "policy/v1", False),
        ("policy/v1beta1", "PodDisruptionBudget", "1.25", "removed", "policy/v1", False),
        ("batch/v1beta1", "CronJob", "1.33", "removed", "batch/v1", True),
        ("autoscaling/v2beta2", "HorizontalPodAutoscaler", "1.25", "deprecated", "autoscaling/v2", True),
        ("autoscaling/v2beta2", "HorizontalPodAutoscaler", "1.26", "removed", "autoscaling/v2", True),
        ("storage.k8s.io/v1beta1", "CSIStorageCapacity", "1.27", "removed", "storage.k8s.io/v1", True),
        ("extensions/v1beta1", "Deployment", "1.25", "removed", "apps/v1", False),
        ("networking.k8s.io/v1beta1", "Ingress", "1.30", "removed", "networking.k8s.io/v1", False),
        ("karpenter.sh/v1beta1", "NodePool", "1.31", "deprecated", "karpenter.sh/v1", False),
        ("karpenter.sh/v1beta1", "NodePool", "1.32", "removed", "karpenter.sh/v1", False),
        ("karpenter.k8s.aws/v1beta1", "EC2NodeClass", "1.33", "removed", "karpenter.k8s.aws/v1", False),
        ("karpenter.sh/v1alpha5", "Provisioner", "1.25", "removed", "karpenter.sh/v1", False),
        ("kubeflow.org/v1", "MPIJob", "1.33", "deprecated", "kubeflow.org/v2beta1", False),
        ("ray.io/v1alpha1", "RayCluster", "1.33", "deprecated", "ray.io/v1", True),
        ("kueue.x-k8s.io/v1beta1", "ClusterQueue", "1.33", "deprecated", "kueue.x-k8s.io/v1beta2", False),
    ],
)
def test_api_status(api_version: str, kind: str, version: str, state: str, replacement: str, mechanical: bool) -> None:
    status = api_status(api_version, kind, version)
    assert isinstance(status, ApiStatus)
    assert (status.state, status.replacement, status.mechanical) == (state, replacement, mechanical)
    assert status.since and status.note


@pytest.mark.parametrize(
    ("api_version", "kind", "version"),
    [
        ("policy/v1beta1", "PodDisruptionBudget", "1.20"),  # before deprecation
        ("policy/v1", "PodDisruptionBudget", "1.33"),
        ("kubeflow.org/v1", "PyTorchJob", "1.33"),  # only MPIJob v1 is deprecated in kubeflow.org/v1
        ("kubeflow.org/v2beta1", "MPIJob", "1.33"),
        ("batch.volcano.sh/v1alpha1", "Job", "1.33"),
        ("jobset.x-k8s.io/v1alpha2", "JobSet", "1.33"),
        ("karpenter.sh/v1", "NodePool", "1.33"),
    ],
)
def test_current_apis_have_no_status(api_version: str, kind: str, version: str) -> None:
    assert api_status(api_version, kind, version) is None


def test_replacement_is_one_the_target_version_serves() -> None:
    early = api_status("flowcontrol.apiserver.k8s.io/v1beta1", "PriorityLevelConfiguration", "1.25")
    late = api_status("flowcontrol.apiserver.k8s.io/v1beta1", "PriorityLevelConfiguration", "1.30")
    assert early is not None and late is not None
    assert (early.replacement, early.mechanical) == ("flowcontrol.apiserver.k8s.io/v1beta2", True)
    assert (late.replacement, late.mechanical) == ("flowcontrol.apiserver.k8s.io/v1", False)


def test_kind_change_is_reported() -> None:
    status = api_status("karpenter.k8s.aws/v1alpha1", "AWSNodeTemplate", "1.29")
    assert status is not None and status.replacement_kind == "EC2NodeClass"


def test_bad_version_raises() -> None:
    with pytest.raises(ValueError):
        api_status("batch/v1beta1", "CronJob", "one.twenty")


def test_every_entry_is_sourced_and_mechanical_entries_have_a_replacement() -> None:
    for entry in deprecations.ENTRIES:
        assert entry.source and entry.note, entry
        assert entry.deprecated or entry.removed, entry
        if entry.mechanical:
            assert entry.replacement and entry.replacement_kind is None, entry


def _served(api_version: str, kind: str, version: str) -> bool:
    return (api_version, kind) in core._kind_index(version)


def _minor(v: str) -> tuple[int, int]:
    major, minor = v.split(".")
    return int(major), int(minor)


def test_core_entries_agree_with_bundled_schemas() -> None:
    """Removed APIs are absent from the bundled schema of that version; replacements are present."""
    versions = supported_versions()
    for entry in (e for e in deprecations.ENTRIES if e.core):
        for kind in entry.kinds:
            for version in versions:
                if entry.removed and _minor(version) >= _minor(entry.removed):
                    assert not _served(entry.api_version, kind, version), (entry.api_version, kind, version)
                elif _minor(version) >= _minor(entry.deprecated or "0.0"):
                    assert _served(entry.api_version, kind, version), (entry.api_version, kind, version)
                status = api_status(entry.api_version, kind, version)
                if status is not None and status.replacement:
                    assert _served(status.replacement, kind, version), (status.replacement, kind, version)
            if entry.removed and _minor(entry.removed) > _minor(versions[0]):
                before = f"1.{_minor(entry.removed)[1] - 1}"
                assert _served(entry.api_version, kind, before), (entry.api_version, kind, before)
