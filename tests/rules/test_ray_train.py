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
    head = {"rayStartParams": {}, "template": pod_template(container("ray-head", "rayproject/ray:2.40.0", gpus=head_gpus))}
    return {**fields, "headGroupSpec": head, "workerGroupSpecs": list(groups)}


def rayjob(entrypoint: str, spec: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"entrypoint": entrypoint, **fields}
    if spec is not None:
        body["rayClusterSpec"] = spec
    return {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": "rj", "namespace": "ml"}, "spec": body}


def raycluster(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": name, "namespace": "ml"}, "spec": spec}


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
