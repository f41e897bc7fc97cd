"""The kinds table (eksmllint/platform/kinds.yaml) and the views it derives: TrainJob + runtime,
Katib trials, pod counts, and what is said about what is not judged."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from eksmllint.core.engine import lint_text
from eksmllint.models import KNOWN_CRD_KINDS
from eksmllint.platform.kinds import kinds_with, pod_template_paths, row_for, rows, webhook_resources
from eksmllint.server.manifests import WEBHOOK_RESOURCES

#: Modelled CRD kinds that carry no pod template, and so need no kinds row.
NO_POD_TEMPLATES = {
    "NodePool",  # Karpenter: node templates, not pod templates
    "EC2NodeClass",
    "Queue",  # Volcano / Kueue quota objects
    "PodGroup",
    "ClusterQueue",
    "LocalQueue",
    "ResourceFlavor",
    "Controller",  # Slinky slurmctld, accounting and REST: the operator's own pods
    "Accounting",
    "RestApi",
    "Token",
    "Cluster",
}


def test_every_modelled_crd_with_pod_templates_has_a_kinds_row():
    """Forgetting a kind is a test failure, not a silent skip: a model added for a CRD either gets a
    row or is declared template-free above."""
    missing = sorted(
        f"{api} {kind}"
        for api, kind in KNOWN_CRD_KINDS
        if kind not in NO_POD_TEMPLATES and row_for(api.split("/")[0], kind) is None
    )
    assert not missing, f"modelled kinds with pod templates but no row in kinds.yaml: {missing}"


def test_rows_are_unique_and_sourced():
    seen = [(r.group, r.kind) for r in rows()]
    assert len(seen) == len(set(seen))
    assert all(r.source for r in rows())


def test_a_job_is_a_batch_job_unless_its_group_says_volcano():
    assert row_for("batch", "Job").group == "batch"
    assert row_for("batch.volcano.sh", "Job").group == "batch.volcano.sh"
    assert row_for("example.com", "Job").group == "batch"  # a kind written under another group
    assert row_for("example.com", "Widget") is None


def test_the_webhook_is_sent_every_kind_that_has_a_resource():
    sent = {(g, res) for g, _, resources in WEBHOOK_RESOURCES for res in resources}
    assert {(r.group, r.resource) for r in rows() if r.resource} <= sent
    assert ("sagemaker.amazonaws.com", "hyperpodpytorchjobs") in sent
    assert webhook_resources()[0] == ("", ("v1",), ("pods",))


def test_owner_kinds_include_every_operator_kind():
    assert {"Job", "PyTorchJob", "MPIJob", "TrainJob", "JobSet", "RayJob", "HyperPodPyTorchJob"} <= kinds_with("owner")


def _workloads(*docs: dict):
    result = lint_text(yaml.safe_dump_all(docs, sort_keys=False))
    return result, result.run.workloads


def _container(**resources) -> dict:
    return (
        {"name": "node", "image": "img:1", "resources": {"limits": resources}}
        if resources
        else {"name": "node", "image": "img:1"}
    )


def _runtime(name="rt", *, jobs=None, **policy) -> dict:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "ClusterTrainingRuntime",
        "metadata": {"name": name},
        "spec": {
            "mlPolicy": {"numNodes": 1, "torch": {}, **policy},
            "template": {
                "spec": {
                    "replicatedJobs": jobs
                    or [{"name": "node", "template": {"spec": {"template": {"spec": {"containers": [_container()]}}}}}]
                }
            },
        },
    }


def _trainjob(runtime="rt", **trainer) -> dict:
    return {
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "tj", "namespace": "ml"},
        "spec": {"runtimeRef": {"name": runtime}, "trainer": trainer},
    }


def test_a_trainjob_runs_its_runtimes_template_with_its_overrides():
    _, workloads = _workloads(
        _runtime(), _trainjob(numNodes=4, image="img:2", resourcesPerNode={"limits": {"nvidia.com/gpu": 8}})
    )
    (w,) = workloads  # the runtime is judged through the TrainJob, not again on its own
    assert w.resource.owner.kind == "TrainJob" and w.resource.origin.kind == "ClusterTrainingRuntime"
    (t,) = w.templates
    assert t.replicas == 4
    assert t.containers[0].image == "img:2" and t.accelerators == {"nvidia.com/gpu": 8}
    assert w.operator_managed and w.is_collective


def test_numnodes_falls_back_to_the_runtime_and_an_mpi_launcher_as_node_counts():
    _, (w,) = _workloads(_runtime(numNodes=3), _trainjob())
    assert w.templates[0].replicas == 3
    jobs = [
        {"name": "launcher", "template": {"spec": {"template": {"spec": {"containers": [_container()]}}}}},
        {"name": "node", "template": {"spec": {"template": {"spec": {"containers": [_container()]}}}}},
    ]
    mpi = _runtime(jobs=jobs)
    mpi["spec"]["mlPolicy"] = {"numNodes": 1, "mpi": {"runLauncherAsNode": True}}
    _, (w,) = _workloads(mpi, _trainjob(numNodes=4))
    assert [(t.role, t.replicas) for t in w.templates] == [("job:launcher", 1), ("job:node", 3)]


def test_findings_on_an_overridden_value_point_at_the_trainjob_and_carry_no_runtime_fix():
    text = yaml.safe_dump_all(
        [
            _runtime(),
            _trainjob(
                numNodes=2,
                image="img:latest",
                command=["torchrun", "--nproc_per_node=8", "t.py"],
                resourcesPerNode={"limits": {"nvidia.com/gpu": 4}},
            ),
        ],
        sort_keys=False,
    )
    result = lint_text(text)
    by_code = {f.code: f for f in result.active}
    trainjob_line = text.splitlines().index("kind: TrainJob") + 1
    assert by_code["EML807"].location.line > trainjob_line  # spec.trainer.image, not the runtime's image
    assert by_code["EML807"].location.path == ("spec", "trainer", "image")
    assert by_code["EML301"].location.line < trainjob_line  # the runtime's container: where /dev/shm goes
    assert by_code["EML301"].resource.kind == "TrainJob"


def test_initializers_and_jobs_others_wait_for_are_not_part_of_the_collective():
    init = {
        "name": "dataset-initializer",
        "template": {
            "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "dataset-initializer"}},
            "spec": {"template": {"spec": {"containers": [_container()]}}},
        },
    }
    node = {"name": "node", "template": {"spec": {"template": {"spec": {"containers": [_container()]}}}}}
    _, (w,) = _workloads(_runtime(jobs=[init, node]), _trainjob(numNodes=1))
    assert [t.role for t in w.collective_templates] == ["job:node"]
    assert not w.is_multi_pod
    jobset = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "js"},
        "spec": {
            "replicatedJobs": [
                {"name": "prep", "template": {"spec": {"template": {"spec": {"containers": [_container()]}}}}},
                {
                    "name": "train",
                    "dependsOn": [{"name": "prep", "status": "Complete"}],
                    "template": {"spec": {"template": {"spec": {"containers": [_container()]}}}},
                },
            ]
        },
    }
    _, (w,) = _workloads(jobset)
    assert [t.role for t in w.collective_templates] == ["job:train"]


def test_a_runtime_no_trainjob_uses_is_judged_on_its_own():
    _, (w,) = _workloads(_runtime(), _trainjob(runtime="other"))
    assert w.resource.kind == "ClusterTrainingRuntime"


def test_a_trainjob_without_its_runtime_is_said_not_judged():
    result, workloads = _workloads(_trainjob(runtime="absent"))
    assert not workloads
    (f,) = [f for f in result.active if f.code == "EML004"]
    assert "not judged" in f.message and "'absent' is not in the run" in f.message
    other = _runtime("absent")
    other["spec"]["mlPolicy"]["numNodes"] = 2
    result, workloads = _workloads(_runtime("absent"), other, _trainjob(runtime="absent"))
    (f,) = [f for f in result.active if f.code == "EML004"]
    assert "2 different ClusterTrainingRuntimes named 'absent'" in f.message


def test_a_katib_trial_is_judged_as_the_object_it_runs():
    trial = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "spec": {
            "pytorchReplicaSpecs": {
                "Worker": {"replicas": 2, "template": {"spec": {"containers": [_container(**{"nvidia.com/gpu": 8})]}}}
            }
        },
    }
    exp = {
        "apiVersion": "kubeflow.org/v1beta1",
        "kind": "Experiment",
        "metadata": {"name": "hpo", "namespace": "ml"},
        "spec": {"trialTemplate": {"trialSpec": trial}},
    }
    result, (w,) = _workloads(exp)
    assert w.kind == "PyTorchJob" and w.resource.owner.kind == "Experiment"
    shm = [f for f in result.active if f.code == "EML301"]
    assert shm and shm[0].location.path[:3] == ("spec", "trialTemplate", "trialSpec")
    assert shm[0].resource.kind == "Experiment"


def test_an_unknown_kind_that_carries_pod_templates_is_said_not_judged():
    doc = {
        "apiVersion": "example.com/v1",
        "kind": "FancyTrainer",
        "metadata": {"name": "x"},
        "spec": {"workers": {"template": {"spec": {"containers": [_container()]}}}},
    }
    result = lint_text(yaml.safe_dump(doc))
    (f,) = [f for f in result.active if f.code == "EML004"]
    assert "not judged" in f.message and "spec.workers.template" in f.message


@given(
    st.recursive(
        st.none() | st.integers() | st.text(max_size=3),
        lambda c: (
            st.lists(c, max_size=4)
            | st.dictionaries(st.sampled_from(["spec", "containers", "template", "x"]), c, max_size=4)
        ),
        max_leaves=60,
    )
)
def test_pod_template_scan_finds_only_mappings_with_containers(data):
    for path in pod_template_paths(data):
        node = data
        for key in path:
            node = node[key]
        assert isinstance(node["spec"]["containers"], list) and node["spec"]["containers"]


@pytest.mark.parametrize("depth", [10, 10_000])
def test_pod_template_scan_is_bounded_on_deep_input(depth):
    data: dict = {}
    cur = data
    for _ in range(depth):
        cur["x"] = {}
        cur = cur["x"]
    assert pod_template_paths(data) == []
