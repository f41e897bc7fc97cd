"""Rule tests of the 2xx family (gang scheduling, queues) beyond their fixtures: edge cases each
rule must stay silent on, fixes that really remove their finding, and robustness on malformed input."""

from __future__ import annotations

import textwrap

import pytest
from builders import said
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rule_properties import assert_fixes_remove_findings, assert_never_crashes

from eksmllint.config import Config
from eksmllint.core.engine import lint_text
from eksmllint.platform import Platform

CODES = ("EML201", "EML202", "EML203", "EML204")


def lint(text: str, *codes: str, rules: dict | None = None, platform: dict | None = None):
    cfg = Config(select=codes or CODES, rules=rules or {}, platform=Platform(**(platform or {})))
    return [f for f in lint_text(textwrap.dedent(text), cfg, name="t.yaml").active]


def codes(findings) -> list[str]:
    return sorted(f.code for f in findings)


# --- EML201-EML204 edge cases -----------------------------------------------------------------

PYTORCHJOB = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: ddp
  namespace: ns
spec:
{spec}
  pytorchReplicaSpecs:
    Worker:
      replicas: 4
      template:
{template}
        spec:
{pod}
          containers:
            - name: pytorch
              image: nvcr.io/nvidia/pytorch:24.05-py3
              command: {command}
              resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def pytorchjob(spec: str = "  runPolicy: {}", template: str = "", pod: str = "", command: str = "[python, t.py]"):
    return PYTORCHJOB.format(spec=spec, template=template, pod=pod or "          hostIPC: false", command=command)


def test_eml201_kubeflow_variants():
    assert codes(lint(pytorchjob(), "EML201")) == ["EML201"]
    # schedulerName volcano alone creates no PodGroup
    assert codes(lint(pytorchjob(pod="          schedulerName: volcano"), "EML201")) == ["EML201"]
    assert lint(pytorchjob(spec="  runPolicy: {schedulingPolicy: {minAvailable: 4}}"), "EML201") == []
    assert lint(pytorchjob(template="        metadata: {labels: {scheduling.x-k8s.io/pod-group: g}}"), "EML201") == []
    assert lint(pytorchjob(spec="  elasticPolicy: {minReplicas: 1, maxReplicas: 4}"), "EML201") == []
    assert lint(pytorchjob(command="[torchrun, --nnodes=2:4, t.py]"), "EML201") == []


def test_eml201_indexed_job_needs_a_collective():
    indexed = """\
apiVersion: batch/v1
kind: Job
metadata: {name: shard}
spec:
  completionMode: Indexed
  completions: 8
  parallelism: 8
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: c
          image: python:3.12-slim
          command: [python, process_shard.py]
"""
    assert lint(indexed, "EML201") == []  # embarrassingly parallel CPU work
    assert codes(lint(indexed.replace("[python, process_shard.py]", "[torchrun, --nnodes=8, t.py]"), "EML201")) == [
        "EML201"
    ]


def test_eml202_elastic_and_templated_values():
    elastic = pytorchjob(
        spec="  runPolicy: {schedulingPolicy: {minAvailable: 2}}", command="[torchrun, --nnodes=2:4, t.py]"
    )
    assert lint(elastic, "EML202") == []
    assert lint(pytorchjob(spec="  runPolicy: {schedulingPolicy: {minAvailable: '{{ .Values.n }}'}}"), "EML202") == []


def test_eml202_volcano_default_min_from_task_min():
    vcjob = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: v}
spec:
  tasks:
    - name: w
      replicas: 4
      minAvailable: 1
      template:
        spec:
          containers:
            - {name: c, image: nvcr.io/nvidia/pytorch:24.05-py3, resources: {limits: {nvidia.com/gpu: 1}}}
"""
    found = lint(vcjob, "EML202")
    assert codes(found) == ["EML202"] and "gangs only 1 of the 4" in said(found[0])
    assert lint(vcjob.replace("minAvailable: 1", "minAvailable: 4"), "EML202") == []


def test_eml203_only_when_the_run_defines_that_kind():
    vcjob = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {{name: v}}
spec:
  queue: {queue}
  tasks:
    - name: w
      replicas: 2
      template:
        spec:
          containers:
            - {{name: c, image: nvcr.io/nvidia/pytorch:24.05-py3}}
"""
    queue = "---\napiVersion: scheduling.volcano.sh/v1beta1\nkind: Queue\nmetadata: {name: other}\nspec: {weight: 1}\n"
    assert lint(vcjob.format(queue="elsewhere"), "EML203") == []
    assert codes(lint(vcjob.format(queue="elsewhere") + queue, "EML203")) == ["EML203"]
    assert lint(vcjob.format(queue="default") + queue, "EML203") == []  # Volcano's built-in queue
    # a scheduler whose name says volcano is accepted
    assert (
        lint(
            vcjob.format(queue="other").replace("spec:\n  queue", "spec:\n  schedulerName: volcano-gpu\n  queue")
            + queue,
            "EML203",
        )
        == []
    )


#: A LocalQueue lq (namespace ns) of ClusterQueue cq, between documents (braces doubled for str.format).
LOCAL_QUEUE = """\
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq, namespace: ns}}
spec: {{clusterQueue: cq}}
---
"""
KUEUE = (
    """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: cq}}
spec:
{cohort}
  resourceGroups:
    - coveredResources: [nvidia.com/gpu]
      flavors:
        - name: f
          resources:
            - {{name: nvidia.com/gpu, nominalQuota: 4{borrow}}}
"""
    + LOCAL_QUEUE
    + """apiVersion: batch/v1
kind: Job
metadata:
  name: j
  namespace: ns
  labels: {{kueue.x-k8s.io/queue-name: lq}}
spec:
  parallelism: 8
  template:
    spec:
      restartPolicy: Never
      containers:
        - {{name: c, image: nvcr.io/nvidia/pytorch:24.05-py3, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}
"""
)


@pytest.mark.parametrize(
    "cohort, borrow, reported",
    [
        ("  namespaceSelector: {}", "", True),  # no cohort: 4 < 8
        ("  cohortName: c", "", False),  # cohort without limit: unbounded
        ("  cohortName: c", ", borrowingLimit: 4", False),  # 4 + 4 = 8
        ("  cohortName: c", ", borrowingLimit: 3", True),  # 4 + 3 < 8
    ],
)
def test_eml204_kueue_limits(cohort, borrow, reported):
    found = lint(KUEUE.format(cohort=cohort, borrow=borrow), "EML204")
    assert codes(found) == (["EML204"] if reported else [])


COVERAGE = (
    """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {{name: cq}}
spec:
  cohortName: shared
  resourceGroups: {groups}
"""
    + LOCAL_QUEUE
    + """apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: j
  namespace: ns
  labels: {{kueue.x-k8s.io/queue-name: lq}}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
            - {{name: c, image: i, resources: {master}}}
    Worker:
      replicas: {workers}
      template:
        spec:
          initContainers:
            - {{name: init, image: i, resources: {init}}}
          containers:
            - {{name: c, image: i, resources: {worker}}}
"""
)
GPU_CPU_MEMORY = (
    "[{coveredResources: [cpu, memory, nvidia.com/gpu], flavors: [{name: f, resources: "
    "[{name: cpu, nominalQuota: 900}, {name: memory, nominalQuota: 9Ti}, {name: nvidia.com/gpu, nominalQuota: 64}]}]}]"
)
P5_WORKER = "{limits: {nvidia.com/gpu: 8, vpc.amazonaws.com/efa: 32, cpu: '90', memory: 900Gi}}"


def coverage(groups=GPU_CPU_MEMORY, master="{requests: {cpu: '2'}}", worker=P5_WORKER, init="{}", workers=2):
    text = COVERAGE.format(groups=groups, master=master, worker=worker, init=init, workers=workers)
    return lint(text, "EML204")


def test_eml204_resource_the_cluster_queue_does_not_cover():
    (found,) = coverage()
    assert "The job's worker pods request vpc.amazonaws.com/efa, which ClusterQueue 'cq'" in said(found)
    assert "cover cpu, memory, nvidia.com/gpu" in said(found)  # a cohort does not add resources
    # the master requests memory (from its limits) too: grouped by the templates requesting them
    gpu_cpu = "[{coveredResources: [cpu, nvidia.com/gpu], flavors: [{name: f, resources: [{name: cpu}]}]}]"
    (found,) = coverage(master="{limits: {memory: 8Gi}}", groups=gpu_cpu)
    assert "The job's pods request memory; the job's worker pods request vpc.amazonaws.com/efa" in said(found)
    # an init container's request counts; flavor resources count as covered
    (found,) = coverage(worker="{limits: {nvidia.com/gpu: 8}}", init="{requests: {ephemeral-storage: 1Gi}}")
    assert "request ephemeral-storage" in said(found)


@pytest.mark.parametrize(
    "change",
    [
        {"worker": "{limits: {nvidia.com/gpu: 8, vpc.amazonaws.com/efa: 0, cpu: '90'}}"},  # zero is no request
        {"worker": "{limits: {nvidia.com/gpu: 8, vpc.amazonaws.com/efa: '${EFA}'}}"},  # templated amount
        {"worker": "{limits: {nvidia.com/gpu: 8, '${EXTRA}': 1}}"},  # templated name
        # HAMi's vGPU shares are mapped onto covered names by Kueue's resources.transformations
        {"worker": "{limits: {nvidia.com/gpu: 2, nvidia.com/gpucores: 30, nvidia.com/gpumem: 1024}}"},
        {"workers": 0},  # no worker pods
        {"groups": "${GROUPS}"},  # templated resource groups
        {"groups": "[{flavors: []}]"},  # unreadable: no coveredResources
        {"groups": GPU_CPU_MEMORY.replace("nvidia.com/gpu]", "nvidia.com/gpu, vpc.amazonaws.com/efa]")},
    ],
)
def test_eml204_coverage_silent(change):
    assert coverage(**change) == []


LWS = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: lws
  namespace: ns
{metadata}
spec:
  replicas: {groups}
{spec}
  leaderWorkerTemplate:
    size: 4
    leaderTemplate:
      spec:
{pod}
        containers:
          - {{name: c, image: i, command: [torchrun, --nnodes=4, t.py], resources: {{limits: {{nvidia.com/gpu: 8}}}}}}
    workerTemplate:
      spec:
{pod}
        containers:
          - {{name: c, image: i, command: [torchrun, --nnodes=4, t.py], resources: {{limits: {{nvidia.com/gpu: 8}}}}}}
"""


def lws(groups=2, metadata="", spec="", pod=""):
    return lint(LWS.format(groups=groups, metadata=metadata, spec=spec, pod=pod), "EML201")


def test_eml201_leaderworkerset_groups_are_collectives():
    (found,) = lws()
    assert said(found).startswith(
        "LeaderWorkerSet runs 2 groups of 4 pods, each one collective without gang scheduling Pods: leader 1 + "
        "worker 3. Pods that start first hold their share of the group's 32 accelerators"
    )
    (found,) = lws(groups=1)
    assert said(found).startswith(
        "LeaderWorkerSet runs one group of 4 pods without gang scheduling Pods: leader 1 + worker 3"
    )


def test_eml201_leaderworkerset_gang_mechanisms():
    # the LWS controller's Volcano provider: one PodGroup per group with minMember = size
    assert lws(pod="        schedulerName: volcano") == []
    assert lws(metadata="  labels: {kueue.x-k8s.io/queue-name: lq}") == []
    # ... but with startupPolicy LeaderReady its PodGroup has minMember 1
    (found,) = lws(spec="  startupPolicy: LeaderReady", pod="        schedulerName: volcano")
    assert "LeaderReady the Volcano PodGroup gangs only the leader" in said(found)
    # exclusive placement is no gang (issue 14), and the message says so
    (found,) = lws(
        metadata="  annotations: {leaderworkerset.sigs.k8s.io/exclusive-topology: topology.kubernetes.io/zone}"
    )
    assert "exclusive-topology places one group per topology domain but gangs nothing;" in said(found)


def test_eml201_names_the_kueue_release_and_its_waitforpodsready_default():
    text = LWS.format(groups=1, metadata="", spec="", pod="")
    (found,) = lint(text, "EML201")
    assert said(found).endswith(
        "requeued: Kueue 0.19 (assumed; set platform.kueue) enables waitForPodsReady by default."
    )
    (found,) = lint(text, "EML201", platform={"kueue": "0.18"})
    assert said(found).endswith(
        "a Kueue queue also needs waitForPodsReady for all pods to start together: Kueue 0.18 (from the config) "
        "leaves it off by default (on from 0.19)."
    )
    # the release changes the advice, never whether a Kueue-queued job is reported
    queued = LWS.format(groups=1, metadata="  labels: {kueue.x-k8s.io/queue-name: lq}", spec="", pod="")
    assert lint(queued, "EML201", platform={"kueue": "0.18"}) == []


# --- fixes remove their finding ---------------------------------------------------------------


@pytest.mark.parametrize(
    "case, code", [("EML202-gang-min-available", "EML202"), ("EML203-gang-scheduler-mismatch", "EML203")]
)
def test_fixes_remove_their_findings(case, code):
    assert_fixes_remove_findings(case, code)


# --- robustness -------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_gang_rules_never_crash_on_mutated_manifests(data):
    assert_never_crashes(data, "EML20*", CODES)
