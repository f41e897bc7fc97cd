"""Unit tests of the 2xx (gang, queues) and 5xx (disruption) rules beyond their fixtures:
duration parsing, the disruption-exposure model, edge cases each rule must stay silent on,
fixes that really remove their finding, and robustness on malformed input."""

from __future__ import annotations

import copy
import textwrap

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eksmllint.checks.disruption._shared import exposure, format_seconds, human_duration, parse_go_duration
from eksmllint.config import Config
from eksmllint.core.engine import lint_text
from eksmllint.fix.apply import apply_fix
from eksmllint.loader import parse_source
from eksmllint.paths import rule_fixtures_dir
from eksmllint.resource import SourceFile

FIXTURES = rule_fixtures_dir()
OUR_CODES = ("EML201", "EML202", "EML203", "EML204", "EML501", "EML502", "EML503")


def lint(text: str, *codes: str, rules: dict | None = None):
    cfg = Config(select=codes or OUR_CODES, rules=rules or {})
    return [f for f in lint_text(textwrap.dedent(text), cfg, name="t.yaml").active]


def codes(findings) -> list[str]:
    return sorted(f.code for f in findings)


def resource(text: str):
    src = SourceFile("t.yaml", textwrap.dedent(text), "yaml")
    resources, problems = parse_source(src)
    assert not problems
    return resources[0]


# --- Go durations -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, seconds",
    [
        ("720h", 720 * 3600),
        ("1h30m", 5400),
        ("90s", 90),
        ("1.5h", 5400),
        ("0", 0),
        ("500ms", 0.5),
        ("2h45m30s", 2 * 3600 + 45 * 60 + 30),
        (" 24h ", 86400),
    ],
)
def test_parse_go_duration(text, seconds):
    assert parse_go_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["Never", "10", "", "1d", "-1h", "h", "1h 30m", None, 3600, "1.5.2h"])
def test_parse_go_duration_rejects(text):
    assert parse_go_duration(text) is None


def test_duration_formatting():
    assert format_seconds(5400) == "1h30m"
    assert format_seconds(90) == "1m30s"
    assert format_seconds(0) == "0s"
    assert human_duration(3456000) == "40 days"
    assert human_duration(36 * 3600) == "36h"


# --- disruption exposure ----------------------------------------------------------------------

POOL = """\
apiVersion: karpenter.sh/{version}
kind: NodePool
metadata:
  name: p
spec:
  template:
    spec:
      requirements: []
      nodeClassRef: {{group: karpenter.k8s.aws, kind: EC2NodeClass, name: x}}
  disruption: {disruption}
"""


@pytest.mark.parametrize(
    "disruption, uncovered",
    [
        ("{consolidationPolicy: WhenEmpty, consolidateAfter: 1m}", ("Drifted",)),
        ("{consolidationPolicy: WhenEmpty, consolidateAfter: 1m, budgets: [{nodes: '0'}]}", ()),
        ("{consolidationPolicy: WhenEmpty, consolidateAfter: 1m, budgets: [{nodes: '0%'}]}", ()),
        ("{consolidateAfter: 1m}", ("Underutilized", "Drifted")),  # CRD default policy
        (
            "{consolidationPolicy: Balanced, consolidateAfter: 1m, budgets: [{nodes: '0', reasons: [Drifted]}]}",
            ("Underutilized",),
        ),
        ("{consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: Never}", ("Drifted",)),
        (
            "{consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 1m, "
            "budgets: [{nodes: '0', reasons: [Underutilized, Drifted]}]}",
            (),
        ),
        (
            "{consolidationPolicy: WhenEmpty, consolidateAfter: 1m, "
            "budgets: [{nodes: '0', schedule: '@daily', duration: 10m}]}",
            ("Drifted",),
        ),
        (
            "{consolidationPolicy: WhenEmpty, consolidateAfter: 1m, budgets: [{nodes: '0', reasons: [Empty]}]}",
            ("Drifted",),
        ),
        # a scheduled zero budget naming Drifted is a drift maintenance window (the EML501 fix writes one)
        (
            "{consolidationPolicy: WhenEmpty, consolidateAfter: 1m, budgets: [{nodes: '0', reasons: [Drifted], "
            "schedule: '0 4 * * sun', duration: 164h}]}",
            (),
        ),
        (
            "{consolidateAfter: 1m, budgets: [{nodes: '0', reasons: [Underutilized, Drifted], "
            "schedule: '0 4 * * sun', duration: 164h}]}",
            ("Underutilized",),
        ),
    ],
)
def test_exposure(disruption, uncovered):
    assert exposure(resource(POOL.format(version="v1", disruption=disruption))).uncovered == uncovered


def test_exposure_v1beta1_default_policy():
    exp = exposure(resource(POOL.format(version="v1beta1", disruption="{}")))
    assert exp.policy == "WhenUnderutilized" and exp.uncovered == ("Underutilized", "Drifted")


# --- EML501 / EML502 / EML503 -----------------------------------------------------------------

NODECLASS = """\
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: gpu
spec:
  amiSelectorTerms: [{alias: al2023@v20250715}]
  role: node-role
  subnetSelectorTerms: [{tags: {k: v}}]
  securityGroupSelectorTerms: [{tags: {k: v}}]
"""


def nodepool(
    name: str,
    types: list[str],
    disruption: str = "{consolidationPolicy: WhenEmpty, consolidateAfter: 1m}",
    extra: str = "",
) -> str:
    """A NodePool limited to ``types``; ``extra`` lines go into spec.template.spec."""
    extra_lines = "".join(f"      {line}\n" for line in extra.splitlines())
    return (
        "---\napiVersion: karpenter.sh/v1\nkind: NodePool\n"
        f"metadata:\n  name: {name}\n"
        "spec:\n  template:\n    spec:\n      requirements:\n"
        f"        - {{key: node.kubernetes.io/instance-type, operator: In, values: {types}}}\n"
        "      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}\n"
        f"{extra_lines}"
        f"  disruption: {disruption}\n"
    )


def job(
    name: str,
    gpus: int = 1,
    annotations: str = "",
    deadline: str = "",
    selector: str = "",
    kind_header: str = "apiVersion: batch/v1\nkind: Job",
) -> str:
    ann = f"\n    metadata:\n      annotations: {annotations}" if annotations else ""
    sel = f"\n      nodeSelector: {selector}" if selector else ""
    dl = f"\n  activeDeadlineSeconds: {deadline}" if deadline else ""
    limits = f"{{nvidia.com/gpu: {gpus}, cpu: '4', memory: 16Gi}}" if gpus else "{cpu: '1', memory: 1Gi}"
    return f"""---
{kind_header}
metadata:
  name: {name}
spec:{dl}
  template:{ann}
    spec:{sel}
      restartPolicy: Never
      containers:
        - name: c
          image: nvcr.io/nvidia/pytorch:24.05-py3
          resources:
            limits: {limits}
"""


def test_eml501_lone_accelerator_pool_and_option():
    text = nodepool("trn", ["trn1.32xlarge"]) + NODECLASS
    assert codes(lint(text, "EML501")) == ["EML501"]
    assert lint(text, "EML501", rules={"EML501": {"unused-accelerator-pools": False}}) == []


def test_eml501_silent_on_inference_and_cpu_pools():
    text = nodepool("inf", ["inf2.xlarge", "inf2.8xlarge"]) + nodepool("cpu", ["m6i.xlarge"]) + NODECLASS
    assert lint(text, "EML501") == []


def test_eml501_pool_serving_a_gpu_deployment_is_not_training():
    deployment = """\
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: svc
spec:
  selector: {matchLabels: {app: svc}}
  template:
    metadata: {labels: {app: svc}}
    spec:
      containers:
        - name: c
          image: vllm/vllm-openai:v0.6.3
          resources: {limits: {nvidia.com/gpu: 1}}
"""
    text = nodepool("a10g", ["g5.2xlarge"]) + NODECLASS + deployment
    assert lint(text, "EML501") == []
    # a training Job landing there makes it a training pool again
    assert codes(lint(text + job("train"), "EML501")) == ["EML501"]


def test_gpu_pod_does_not_land_on_cpu_pool():
    text = nodepool("cpu", ["m6i.xlarge"], "{consolidateAfter: 1m}") + NODECLASS + job("train", gpus=1)
    assert lint(text, "EML501", "EML502") == []
    # a CPU training pod (a Kubeflow-like job on CPU) does land there
    cpu_pod = job("cpu-train", gpus=0, kind_header="apiVersion: batch/v1\nkind: Job").replace(
        "metadata:\n  name: cpu-train", "metadata:\n  name: cpu-train"
    )
    assert lint(text + cpu_pod, "EML502") == []  # not training: no accelerator, not a training kind


def test_eml502_protected_by_annotation_or_duration():
    pool = nodepool("a10g", ["g5.2xlarge"], "{consolidateAfter: 1m}") + NODECLASS
    assert codes(lint(pool + job("a"), "EML502")) == ["EML502"]
    assert lint(pool + job("b", annotations="{karpenter.sh/do-not-disrupt: 'true'}"), "EML502") == []
    assert lint(pool + job("c", annotations="{karpenter.sh/do-not-disrupt: '30m'}"), "EML502") == []
    assert codes(lint(pool + job("d", annotations="{karpenter.sh/do-not-disrupt: 'false'}"), "EML502")) == ["EML502"]


def test_eml503_grace_period_and_never():
    short = nodepool(
        "daily",
        ["g5.2xlarge"],
        "{consolidationPolicy: WhenEmpty, consolidateAfter: 1m, budgets: [{nodes: '0'}]}",
        "expireAfter: 24h\nterminationGracePeriod: 1h",
    )
    never = nodepool(
        "never",
        ["g5.2xlarge"],
        "{consolidationPolicy: WhenEmpty, consolidateAfter: 1m, budgets: [{nodes: '0'}]}",
        "expireAfter: Never",
    )
    protected = "{karpenter.sh/do-not-disrupt: 'true'}"
    sel_daily = "{karpenter.sh/nodepool: daily}"
    found = lint(
        short + never + NODECLASS + job("a", deadline="172800", annotations=protected, selector=sel_daily), "EML503"
    )
    assert codes(found) == ["EML503"] and "terminationGracePeriod 1h" in found[0].message
    # within expireAfter + grace: silent
    assert (
        lint(short + NODECLASS + job("b", deadline="90000", annotations=protected, selector=sel_daily), "EML503") == []
    )
    assert (
        lint(never + NODECLASS + job("c", deadline="99999999", selector="{karpenter.sh/nodepool: never}"), "EML503")
        == []
    )


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
    assert codes(found) == ["EML202"] and "gangs only 1 of the 4" in found[0].message
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


KUEUE = """\
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
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {{name: lq, namespace: ns}}
spec: {{clusterQueue: cq}}
---
apiVersion: batch/v1
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


# --- fixes remove their finding ---------------------------------------------------------------


@pytest.mark.parametrize(
    "case, code",
    [
        ("EML202-gang-min-available", "EML202"),
        ("EML203-gang-scheduler-mismatch", "EML203"),
        ("EML501-nodepool-disruption-budget", "EML501"),
        ("EML502-training-pod-disruptable", "EML502"),
    ],
)
def test_fixes_remove_their_findings(case, code):
    text = (FIXTURES / case / "bad.yaml").read_text(encoding="utf-8")
    cfg = Config(select=(code,))
    before = [f for f in lint_text(text, cfg, name="bad.yaml").active if f.code == code]
    fixable = [f for f in before if f.fix is not None]
    assert fixable, "the bad fixture has fixable findings"
    for _ in range(len(before)):  # one fix per pass, re-linting in between (paths stay valid)
        current = [f for f in lint_text(text, cfg, name="bad.yaml").active if f.code == code and f.fix]
        if not current:
            break
        f = current[0]
        text = apply_fix(text, f.fix, f.location.doc_index)
    after = [f for f in lint_text(text, cfg, name="bad.yaml").active if f.code == code]
    assert len(after) == len(before) - len(fixable)
    assert not [f for f in lint_text(text, Config(select=("EML002",)), name="bad.yaml").active]


# --- robustness -------------------------------------------------------------------------------

# deep-copied per draw: a shared [] or {} placed twice would make a cycle in the document
_ODD = st.sampled_from([None, "x", -1, 0, 3.5, True, [], {}, ["a"], {"k": "v"}, "720h", "Never", "0"]).map(
    copy.deepcopy
)
_DOCS = [
    d
    for case in sorted(FIXTURES.glob("EML[25]0*"))
    for name in ("bad.yaml", "good.yaml")
    for d in yaml.safe_load_all((case / name).read_text(encoding="utf-8"))
    if isinstance(d, dict)
]


def _paths(data, path=()):
    yield path
    if isinstance(data, dict):
        for k, v in data.items():
            yield from _paths(v, path + (k,))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from _paths(v, path + (i,))


def _set(data, path, value):
    cur = data
    for p in path[:-1]:
        cur = cur[p]
    cur[path[-1]] = value


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_rules_never_crash_on_mutated_manifests(data):
    docs = copy.deepcopy(data.draw(st.lists(st.sampled_from(_DOCS), min_size=1, max_size=4)))
    for _ in range(data.draw(st.integers(1, 4))):
        doc = data.draw(st.sampled_from(docs))
        paths = [p for p in _paths(doc) if p]
        _set(doc, data.draw(st.sampled_from(paths)), data.draw(_ODD))
    text = yaml.safe_dump_all(docs)
    result = lint_text(text, Config(select=OUR_CODES), name="m.yaml")
    crashes = [f.message for f in result.findings if f.code == "EML000"]
    assert not crashes, crashes
