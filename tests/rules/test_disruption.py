"""Rule tests of the 5xx family (Karpenter disruption) beyond their fixtures: duration parsing,
the disruption-exposure model, edge cases each rule must stay silent on, fixes that really remove
their finding, and robustness on malformed input."""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rule_properties import assert_fixes_remove_findings, assert_never_crashes

from eksmllint.checks.disruption._shared import exposure, format_seconds, human_duration, parse_go_duration
from eksmllint.config import Config
from eksmllint.core.engine import lint_text
from eksmllint.loader import parse_source
from eksmllint.platform import Platform
from eksmllint.resource import SourceFile

CODES = ("EML501", "EML502", "EML503")


def lint(text: str, *codes: str, rules: dict | None = None, platform: dict | None = None):
    cfg = Config(select=codes or CODES, rules=rules or {}, platform=Platform(**(platform or {})))
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


DRIFT_10 = "{consolidationPolicy: WhenEmpty, consolidateAfter: 1m, budgets: [{nodes: '10%', reasons: [Drifted]}]}"
PROTECTED = '{karpenter.sh/do-not-disrupt: "true"}'


def test_eml501_drifted_budget_with_protected_pods_is_the_recommended_setting():
    pool = nodepool("a10g", ["g5.2xlarge"], DRIFT_10) + NODECLASS
    assert lint(pool + job("train", annotations=PROTECTED), "EML501") == []
    # an unprotected training pod on the pool: drift reaches a busy node
    assert codes(lint(pool + job("train"), "EML501")) == ["EML501"]
    assert codes(lint(pool + job("a", annotations=PROTECTED) + job("b"), "EML501")) == ["EML501"]
    # the run holds no workload: the pool is judged by its own settings, as before
    assert codes(lint(pool, "EML501")) == ["EML501"]


def test_eml501_termination_grace_period_overrides_do_not_disrupt_for_drift():
    consolidating = "{consolidationPolicy: WhenEmptyOrUnderutilized, consolidateAfter: 1m}"
    pool = nodepool("a10g", ["g5.2xlarge"], consolidating, extra="terminationGracePeriod: 24h") + NODECLASS
    [finding] = lint(pool + job("train", annotations=PROTECTED), "EML501")
    assert "replace drifted nodes" in finding.message and "consolidate" not in finding.message
    assert "terminationGracePeriod" in finding.message
    assert finding.fix is not None
    [drift] = [op.value for op in finding.fix.ops if getattr(op, "value", {}) and "reasons" in op.value]
    assert drift["reasons"] == ["Drifted"] and "schedule" in drift  # a window, never a permanent zero
    # without the grace period, do-not-disrupt keeps both consolidation and drift off busy nodes
    no_grace = nodepool("a10g", ["g5.2xlarge"], consolidating) + NODECLASS
    assert lint(no_grace + job("train", annotations=PROTECTED), "EML501") == []


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


def _daily_pool() -> str:
    return (
        nodepool(
            "daily",
            ["g5.2xlarge"],
            "{consolidationPolicy: WhenEmpty, consolidateAfter: 1m, budgets: [{nodes: '0'}]}",
            "expireAfter: 24h",
        )
        + NODECLASS
    )


def _with_kueue_limit(text: str, seconds: str) -> str:
    return text.replace("metadata:\n  name: a\n", f"metadata:\n  name: a\n  labels: {{{KUEUE_LIMIT}: '{seconds}'}}\n")


def _with_pod_deadline(text: str, seconds: int) -> str:
    return text.replace(
        "      restartPolicy: Never", f"      restartPolicy: Never\n      activeDeadlineSeconds: {seconds}"
    )


KUEUE_LIMIT = "kueue.x-k8s.io/max-exec-time-seconds"


def test_eml503_kueue_maximum_execution_time_is_a_run_length():
    (found,) = lint(_daily_pool() + _with_kueue_limit(job("a"), "259200"), "EML503")
    assert found.message.startswith(f"{KUEUE_LIMIT} 259200 (3 days) lets the job run longer than NodePool 'daily'")
    assert lint(_daily_pool() + _with_kueue_limit(job("a"), "72000"), "EML503") == []
    assert lint(_daily_pool() + _with_kueue_limit(job("a"), "${LIMIT}"), "EML503") == []


def test_eml503_the_shortest_bound_counts():
    # a 1h limit (pod deadline or Kueue's) ends every pod long before the 24h node expires, even
    # though the Job itself may run two days
    two_days = job("a", deadline="172800")
    assert codes(lint(_daily_pool() + two_days, "EML503")) == ["EML503"]
    assert lint(_daily_pool() + _with_pod_deadline(two_days, 3600), "EML503") == []
    assert lint(_daily_pool() + _with_kueue_limit(two_days, "3600"), "EML503") == []


def test_eml502_duration_against_the_shortest_bound():
    pool = nodepool("a10g", ["g5.2xlarge"], "{consolidateAfter: 1m}") + NODECLASS
    thirty_minutes = job("a", deadline="172800", annotations="{karpenter.sh/do-not-disrupt: '30m'}")
    (found,) = lint(pool + thirty_minutes, "EML502")
    assert "only for their first 30m of a run allowed 2 days" in found.message
    # pods that live at most 20 minutes are protected for their whole life
    assert lint(pool + _with_pod_deadline(thirty_minutes, 1200), "EML502") == []
    (found,) = lint(
        pool + _with_kueue_limit(job("a", annotations="{karpenter.sh/do-not-disrupt: '30m'}"), "7200"), "EML502"
    )
    assert "of a run allowed 2h" in found.message


def test_eml502_duration_values_need_karpenter_1_12():
    pool = nodepool("a10g", ["g5.2xlarge"], "{consolidateAfter: 1m}") + NODECLASS
    thirty_minutes = job("a", annotations="{karpenter.sh/do-not-disrupt: '30m'}")
    assert lint(pool + thirty_minutes, "EML502") == []  # run length unknown: taken as chosen
    (found,) = lint(pool + thirty_minutes, "EML502", platform={"karpenter": "1.11"})
    assert (
        "(karpenter.sh/do-not-disrupt is '30m', a duration Karpenter 1.11 (from the config) does not read: "
        'only "true" protects before Karpenter 1.12)' in found.message
    )
    assert found.fix is not None  # the fix writes "true", which every release reads
    assert (
        lint(
            pool + job("b", annotations="{karpenter.sh/do-not-disrupt: 'true'}"),
            "EML502",
            platform={"karpenter": "1.11"},
        )
        == []
    )


def test_eml503_duration_protects_only_while_it_lasts():
    pool = _daily_pool().replace("expireAfter: 24h", "expireAfter: 24h\n      terminationGracePeriod: 1h")
    two_days = "172800"

    def found(value: str, **platform: str):
        text = pool + job("a", deadline=two_days, annotations=f"{{karpenter.sh/do-not-disrupt: '{value}'}}")
        return lint(text, "EML503", platform=platform)

    # a duration covering the whole run blocks the expired node's drain like "true" (up to the grace period)
    (protected,) = found("72h")
    assert "+ terminationGracePeriod 1h" in protected.message
    # a shorter one has lapsed when the node expires late in the run; before Karpenter 1.12 none counts
    for unprotected in (found("1h"), found("72h", karpenter="1.11")):
        assert len(unprotected) == 1 and "terminationGracePeriod" not in unprotected[0].message
    # without a grace period the drain waits for a protected pod: silent
    no_grace = _daily_pool() + job("b", deadline=two_days, annotations="{karpenter.sh/do-not-disrupt: '72h'}")
    assert lint(no_grace, "EML503") == []
    assert codes(lint(no_grace, "EML503", platform={"karpenter": "1.11"})) == ["EML503"]


# --- fixes remove their finding ---------------------------------------------------------------


@pytest.mark.parametrize(
    "case, code",
    [("EML501-nodepool-disruption-budget", "EML501"), ("EML502-training-pod-disruptable", "EML502")],
)
def test_fixes_remove_their_findings(case, code):
    assert_fixes_remove_findings(case, code)


# --- robustness -------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_disruption_rules_never_crash_on_mutated_manifests(data):
    assert_never_crashes(data, "EML50*", CODES)
