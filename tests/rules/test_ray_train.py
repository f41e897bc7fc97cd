"""EML610 ray-train-workers-exceed: what the fixtures cannot show — every entrypoint form the command
reader follows, KubeRay's pod counting (clamping, autoscaling, numOfHosts by release, num-gpus
override, the head), heterogeneous groups, and the cases that must stay silent."""

from __future__ import annotations

from typing import Any

import pytest
from builders import container, manifest, pod_template, said
from hypothesis import given, settings
from hypothesis import strategies as st

from eksmllint.config import Config
from eksmllint.core.engine import lint_text
from eksmllint.platform.versions import Platform

CODE = "EML610"


def lint(text: str, platform: dict[str, str] | None = None):
    cfg = Config(select=(CODE,), platform=Platform(**(platform or {})))
    return [f for f in lint_text(text, cfg).active if f.code == CODE]


def group(name: str = "gpu", gpus: int | None = 8, **fields: Any) -> dict[str, Any]:
    """A worker group whose Ray container (the first) has ``gpus`` GPUs."""
    params = fields.pop("rayStartParams", {})
    return {
        "groupName": name,
        **fields,
        "rayStartParams": params,
        "template": pod_template(container("ray-worker", "rayproject/ray:2.40.0-gpu", gpus=gpus)),
    }


def cluster_spec(*groups: dict[str, Any], head_gpus: int | None = None, **fields: Any) -> dict[str, Any]:
    head = {
        "rayStartParams": {},
        "template": pod_template(container("ray-head", "rayproject/ray:2.40.0", gpus=head_gpus)),
    }
    return {**fields, "headGroupSpec": head, "workerGroupSpecs": list(groups)}


def rayjob(entrypoint: str, spec: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"entrypoint": entrypoint, **fields}
    if spec is not None:
        body["rayClusterSpec"] = spec
    return {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": "rj", "namespace": "ml"}, "spec": body}


def raycluster(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayCluster",
        "metadata": {"name": name, "namespace": "ml"},
        "spec": spec,
    }


TWO_BY_EIGHT = cluster_spec(group(replicas=2, minReplicas=2, maxReplicas=2))  # 16 one-GPU workers

#: The entrypoint forms the command reader follows (Ray runs the entrypoint with /bin/sh -c).
FORMS = {
    "direct": "python train.py {args}",
    "python -m": "python3 -m trainer.main {args}",
    "env prefix": "NCCL_DEBUG=INFO python train.py {args}",
    "cd &&": "cd /app && python train.py {args}",
    "script": "set -e\npip list\npython train.py {args}\n",
    "bash -c": "bash -c 'python train.py {args}'",
    "variable": 'CMD="python train.py {args}"\n$CMD\n',
}


@pytest.mark.parametrize("form", FORMS)
def test_every_entrypoint_form_is_read(form):
    def entry(n: int) -> str:
        return FORMS[form].format(args=f"--num-workers={n} --use-gpu")

    (f,) = lint(manifest(rayjob(entry(17), TWO_BY_EIGHT)))
    assert "asks 17 workers x 1 GPU" in said(f) and "at most 16" in said(f)
    assert f.location.path == ("spec", "entrypoint")
    assert lint(manifest(rayjob(entry(16), TWO_BY_EIGHT))) == []


@pytest.mark.parametrize(
    "args",
    [
        "--num-workers 64",  # no --use-gpu: CPU workers
        "--num-workers $N --use-gpu",  # count from the environment
        "--use-gpu",  # count from code
        "--num-workers 64 --gpus-per-worker 0.5",  # fractional GPUs share devices
        "--num-workers 64 --use-gpu=false",
    ],
)
def test_silent_when_the_count_or_gpus_come_from_code(args):
    assert lint(manifest(rayjob(f"python train.py {args}", TWO_BY_EIGHT))) == []


def test_a_torchrun_entrypoint_is_not_a_ray_train_driver():
    assert lint(manifest(rayjob("torchrun --nproc_per_node 8 train.py --num-workers 64 --use-gpu", TWO_BY_EIGHT))) == []


def test_cluster_selector_reads_the_selected_raycluster_of_the_run_only():
    job = rayjob("python train.py --num-workers 17 --use-gpu", clusterSelector={"ray.io/cluster": "shared"})
    (f,) = lint(manifest(job, raycluster("shared", TWO_BY_EIGHT)))
    assert "RayCluster shared can place at most 16" in said(f)
    assert lint(manifest(job)) == []  # the cluster is elsewhere: its groups are unknown
    assert lint(manifest(job, raycluster("other", TWO_BY_EIGHT))) == []
    other_labels = rayjob("python train.py --num-workers 17 --use-gpu", clusterSelector={"team": "a"})
    assert lint(manifest(other_labels, raycluster("shared", TWO_BY_EIGHT))) == []


def test_autoscaling_counts_max_replicas_and_is_silent_without_a_bound():
    spec = cluster_spec(group(replicas=1, minReplicas=0, maxReplicas=4), enableInTreeAutoscaling=True)
    assert lint(manifest(rayjob("python t.py --num-workers 32 --use-gpu", spec))) == []
    (f,) = lint(manifest(rayjob("python t.py --num-workers 33 --use-gpu", spec)))
    assert "maxReplicas (in-tree autoscaling)" in said(f)
    fixed = cluster_spec(group(replicas=1, minReplicas=0, maxReplicas=4))  # no autoscaler: 1 pod
    assert len(lint(manifest(rayjob("python t.py --num-workers 9 --use-gpu", fixed)))) == 1
    unbounded = cluster_spec(group(replicas=1), enableInTreeAutoscaling=True)
    assert lint(manifest(rayjob("python t.py --num-workers 999 --use-gpu", unbounded))) == []


def test_replicas_are_clamped_into_min_and_max_as_kuberay_does():
    below_min = cluster_spec(group(replicas=1, minReplicas=3, maxReplicas=5))
    assert lint(manifest(rayjob("python t.py --num-workers 24 --use-gpu", below_min))) == []
    above_max = cluster_spec(group(replicas=9, minReplicas=0, maxReplicas=2))
    assert len(lint(manifest(rayjob("python t.py --num-workers 17 --use-gpu", above_max)))) == 1


def test_num_of_hosts_counts_from_kuberay_1_1():
    spec = cluster_spec(group(replicas=1, minReplicas=1, maxReplicas=1, numOfHosts=4))
    text = manifest(rayjob("python t.py --num-workers 32 --use-gpu", spec))
    assert lint(text) == []  # 4 hosts x 8 GPUs
    (f,) = lint(text, platform={"kuberay": "1.0"})  # one pod per replica before numOfHosts
    assert "KubeRay 1.0 (from the config)" in said(f)


def test_gpus_per_pod_from_num_gpus_and_the_head():
    halved = cluster_spec(group(replicas=2, rayStartParams={"num-gpus": "4"}))
    assert len(lint(manifest(rayjob("python t.py --num-workers 9 --use-gpu", halved)))) == 1
    with_head = cluster_spec(group(replicas=2), head_gpus=1)
    assert lint(manifest(rayjob("python t.py --num-workers 17 --use-gpu", with_head))) == []


def test_a_worker_fits_only_pods_with_enough_gpus():
    spec = cluster_spec(group("small", 2, replicas=8), group("big", 8, replicas=1))
    (f,) = lint(manifest(rayjob("python t.py --num-workers 3 --gpus-per-worker 4", spec)))
    assert "3 workers x 4 GPUs" in said(f) and "at most 2" in said(f)
    assert lint(manifest(rayjob("python t.py --num-workers 12 --gpus-per-worker 2", spec))) == []


def test_unreadable_counts_keep_the_rule_silent():
    templated = cluster_spec(group(replicas="{{ .Values.workers }}"))
    assert lint(manifest(rayjob("python t.py --num-workers 99 --use-gpu", templated))) == []
    group_resources = cluster_spec(group(replicas=1, resources={"GPU": "8"}))
    assert lint(manifest(rayjob("python t.py --num-workers 99 --use-gpu", group_resources))) == []


def test_each_launch_of_the_entrypoint_is_judged():
    entry = "python prep.py --num-workers 4 --use-gpu && python train.py --num-workers 20 --use-gpu"
    (f,) = lint(manifest(rayjob(entry, TWO_BY_EIGHT)))
    assert "asks 20 workers" in said(f)


@settings(max_examples=40, deadline=None)
@given(
    groups=st.lists(st.tuples(st.integers(0, 4), st.sampled_from([0, 1, 2, 4, 8])), min_size=1, max_size=3),
    workers=st.integers(1, 40),
    per_worker=st.sampled_from([1, 2, 4]),
    extra=st.integers(1, 8),
)
def test_more_workers_never_silence_and_more_capacity_never_reports(groups, workers, per_worker, extra):
    """Monotone in both directions: asking more workers keeps a finding; adding a worker group (or
    replicas) to the cluster never creates one."""
    spec = cluster_spec(*(group(f"g{i}", g, replicas=r) for i, (r, g) in enumerate(groups)))
    bigger = cluster_spec(*spec["workerGroupSpecs"], group("more", 8, replicas=extra))

    def fires(n: int, s: dict) -> bool:
        return bool(lint(manifest(rayjob(f"python t.py --num-workers {n} --gpus-per-worker {per_worker}", s))))

    if fires(workers, spec):
        assert fires(workers + extra, spec)
    else:
        assert not fires(workers, bigger)


# --- ray job submit -------------------------------------------------------------------------------
def submit_job(command: list[str], env: list[dict[str, str]] | None = None) -> dict[str, Any]:
    extra = {"env": env} if env else {}
    submit = container(
        "submit", "rayproject/ray:2.40.0", command=command, limits={"cpu": "1", "memory": "2Gi"}, **extra
    )
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "submit", "namespace": "ml"},
        "spec": {"template": pod_template(submit, restartPolicy="Never")},
    }


@pytest.mark.parametrize(
    "address",
    ["http://shared-head-svc:8265", "http://shared-head-svc.ml.svc.cluster.local:8265", "shared-head-svc.ml:8265"],
)
def test_ray_job_submit_names_its_cluster_by_the_head_service(address):
    def job(n: int) -> str:
        return manifest(
            submit_job(f"ray job submit --address={address} -- python t.py --num-workers={n} --use-gpu".split()),
            raycluster("shared", TWO_BY_EIGHT),
        )

    (f,) = lint(job(17))
    assert "RayCluster shared can place at most 16" in said(f)
    assert f.location.path[-2:] == ("command", 7)  # the element holding the worker count
    assert lint(job(16)) == []


def test_ray_job_submit_forms():
    cluster = raycluster("shared", TWO_BY_EIGHT)
    script = (
        "ray job submit --address http://shared-head-svc:8265 --no-wait -- 'python t.py --num-workers 17 --use-gpu'"
    )
    assert len(lint(manifest(submit_job(["bash", "-c", script]), cluster))) == 1  # one quoted entrypoint word
    from_env = submit_job(
        ["ray", "job", "submit", "--", "python", "t.py", "--num-workers", "17", "--use-gpu"],
        env=[{"name": "RAY_ADDRESS", "value": "http://shared-head-svc:8265"}],
    )
    assert len(lint(manifest(from_env, cluster))) == 1
    elsewhere = ["ray", "job", "submit", "--address", "http://shared-head-svc.other:8265", "--", "python", "t.py"]
    assert lint(manifest(submit_job([*elsewhere, "--num-workers", "99", "--use-gpu"]), cluster)) == []
    balancer = ["ray", "job", "submit", "--address", "http://10.0.0.7:8265", "--", "python", "t.py"]
    assert lint(manifest(submit_job([*balancer, "--num-workers", "99", "--use-gpu"]), cluster)) == []


def test_a_rayjob_submitter_without_an_address_submits_to_its_own_cluster():
    submitter = pod_template(
        container(
            "submit",
            "rayproject/ray:2.40.0",
            command="ray job submit -- python t.py --num-workers 17 --use-gpu".split(),
        ),
        restartPolicy="Never",
    )
    (f,) = lint(manifest(rayjob("python t.py", TWO_BY_EIGHT, submitterPodTemplate=submitter)))
    assert "its rayClusterSpec can place at most 16" in said(f)


def test_a_submit_inside_an_entrypoint_is_not_held_against_the_rayjobs_cluster():
    entry = "ray job submit --address http://10.0.0.7:8265 -- python t.py --num-workers 99 --use-gpu"
    assert lint(manifest(rayjob(entry, TWO_BY_EIGHT))) == []


def test_flags_a_submit_passes_on_are_not_the_submit_containers_own():
    """EML301 reads --num-workers as DataLoader workers of the container; behind `ray job submit --`
    they are the Ray cluster's, so the small submit container needs no /dev/shm for them."""
    command = "ray job submit --address http://x-head-svc:8265 -- python train.py --num-workers 8".split()
    text = manifest(submit_job(command))
    assert [f.code for f in lint_text(text, Config(select=("EML301",))).active] == []
    local = manifest(submit_job(["python", "train.py", "--num-workers", "8"]))
    assert [f.code for f in lint_text(local, Config(select=("EML301",))).active] == ["EML301"]
