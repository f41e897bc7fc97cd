"""The one placement answer (eksmllint.analysis.placement) and the property it exists for: no pod
template gets "no NodePool can launch it" (EML702) from one rule and "it lands on pool X"
(EML501/EML502) from another."""

from __future__ import annotations

import textwrap

import builders as b
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from repository import ROOT

from eksmllint.analysis.placement import device_fit, placement
from eksmllint.config import Config
from eksmllint.core.context import LintRun
from eksmllint.core.engine import lint_paths, lint_text
from eksmllint.loader import parse_source
from eksmllint.paths import rule_fixtures_dir
from eksmllint.resource import SourceFile


def _run(text: str) -> LintRun:
    resources, problems = parse_source(SourceFile("t.yaml", textwrap.dedent(text), "yaml"))
    assert not problems
    return LintRun(resources)


def _pool(name: str, reqs: list) -> str:
    return b.manifest(b.nodepool(name, *reqs)) + "---\n"


def _job(selector: dict, limits: dict, name: str = "j") -> str:
    template = b.pod_template(
        b.container("c", "repo/img:1.0", limits=limits), restartPolicy="Never", nodeSelector=selector
    )
    return b.manifest(b.job(name, template, namespace="ml"))


def _types(reqs: list) -> list:
    return [{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": reqs}]


def test_serves_kinds_but_hosts_only_the_full_count():
    run = _run(_pool("a10g", _types(["g5.2xlarge", "g5.12xlarge"])) + _job({}, {"nvidia.com/gpu": 8}))
    (t,) = run.templates
    where = placement(run, t)
    (pool,) = run.nodepools
    assert where.usable == [pool] and where.hosting == []  # EML602's case, not EML702's
    assert sorted(it.name for it in where.types_on(pool)) == ["g5.12xlarge", "g5.2xlarge"]
    assert where.hosting_types(pool) == ()
    four = _run(_pool("a10g", _types(["g5.2xlarge", "g5.12xlarge"])) + _job({}, {"nvidia.com/gpu": 4}))
    assert [p.name for p in placement(four, four.templates[0]).hosting] == ["a10g"]


def test_one_answer_per_template_and_shared_by_equal_templates():
    text = (
        _pool("gpu", _types(["p5.48xlarge"]))
        + _job({}, {"nvidia.com/gpu": 8})
        + "---\n"
        + _job({}, {"nvidia.com/gpu": 8}, name="k")
    )
    run = _run(text)
    a, b = run.templates
    assert placement(run, a) is placement(run, a) is placement(run, b)


def test_gpu_pod_pinned_to_a_cpu_type_lands_nowhere():
    # The contradiction of issue 12: the type has no GPU, the pool allows any type.
    run = _run(
        _pool("general", [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}])
        + _job({"node.kubernetes.io/instance-type": "c6i.4xlarge"}, {"nvidia.com/gpu": 1})
    )
    (t,) = run.templates
    where = placement(run, t)
    assert where.usable == [] and where.hosting == []
    fit = device_fit(run.nodepools[0], where.terms[0], t.accelerators)
    assert fit.reason is not None and "nvidia.com/gpu" in fit.reason


def test_unknown_instance_types_stay_unknown():
    run = _run(
        _pool("general", [{"key": "karpenter.k8s.aws/instance-generation", "operator": "Gt", "values": ["4"]}])
        + _job({}, {"nvidia.com/gpu": 1})
    )
    (t,) = run.templates
    where = placement(run, t)
    assert where.hosting == run.nodepools and where.instance_types is None


# --- no contradiction -----------------------------------------------------------------------------

CLAIMS_LANDING = ("EML501", "EML502", "EML503", "EML106", "EML101")


def _contradictions(result, run_templates) -> list[str]:
    """Templates reported by EML702 and also claimed to land by a 5xx / 1xx rule."""
    out = []
    for t in run_templates:
        ref = t.resource.ref

        def on_template(f, t=t, ref=ref) -> bool:
            return f.resource == ref and tuple(f.location.path[: len(t.path)]) == tuple(t.path)

        nowhere = [f for f in result.active if f.code == "EML702" and on_template(f)]
        if not nowhere:
            continue
        lands = [f for f in result.active if f.code in CLAIMS_LANDING and (on_template(f) or t.display() in f.message)]
        if lands:
            out.append(f"{t.display()}: {nowhere[0].message} / {lands[0].code} {lands[0].message}")
    return out


def _templates_of(paths: list[str]):
    from eksmllint.loader import load

    loaded = load(paths)
    return LintRun(loaded.resources).templates


def test_fixture_of_the_contradiction():
    bad = rule_fixtures_dir() / "EML502-training-pod-disruptable" / "bad.yaml"
    result = lint_paths([str(bad)], Config())
    templates = [t for t in _templates_of([str(bad)]) if t.resource.name == "gpu-on-cpu-type"]
    assert [f for f in result.active if f.code == "EML702" and f.resource == templates[0].resource.ref]
    assert not [f for f in result.active if f.code in CLAIMS_LANDING and f.resource == templates[0].resource.ref]
    assert _contradictions(result, templates) == []


def test_no_contradiction_in_rule_fixtures_and_examples():
    dirs = [
        d / part
        for d in sorted(rule_fixtures_dir().iterdir())
        for part in ("bad", "bad.yaml", "good", "good.yaml")
        if (d / part).exists()
    ]
    dirs.append(ROOT / "fixtures" / "examples")
    found = []
    for d in dirs:
        result = lint_paths([str(d)], Config())
        found += _contradictions(result, _templates_of([str(d)]))
    assert found == []


INSTANCE_TYPES = [
    "g5.2xlarge",
    "g5.12xlarge",
    "p4d.24xlarge",
    "p5.48xlarge",
    "trn1.32xlarge",
    "inf2.xlarge",
    "c6i.4xlarge",
    "m6i.large",
    "ml.g5.8xlarge",
]
FAMILIES = ["g5", "p4d", "p5", "trn1", "c6i", "m6i", "g6"]
CATEGORIES = ["g", "p", "trn", "inf", "c", "m"]
GPU_NAMES = ["a10g", "a100", "h100", "t4"]
OPS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]


@st.composite
def requirement(draw) -> dict:
    key, values = draw(
        st.sampled_from(
            [
                ("node.kubernetes.io/instance-type", INSTANCE_TYPES),
                ("karpenter.k8s.aws/instance-family", FAMILIES),
                ("karpenter.k8s.aws/instance-category", CATEGORIES),
                ("karpenter.k8s.aws/instance-gpu-name", GPU_NAMES),
                ("karpenter.k8s.aws/instance-gpu-count", ["0", "1", "4", "7"]),
                ("karpenter.k8s.aws/instance-cpu", ["8", "64", "100"]),
                ("karpenter.sh/capacity-type", ["spot", "on-demand"]),
                ("team", ["vision", "nlp"]),
                ("topology.kubernetes.io/zone", ["us-west-2a", "us-west-2b"]),
            ]
        )
    )
    op = draw(st.sampled_from(OPS))
    req: dict = {"key": key, "operator": op}
    if op in ("In", "NotIn"):
        req["values"] = draw(st.lists(st.sampled_from(values), min_size=1, max_size=3, unique=True))
    elif op in ("Gt", "Lt"):
        req["values"] = [draw(st.sampled_from(["0", "1", "4", "7", "64"]))]
    return req


@st.composite
def nodepool(draw, index: int) -> dict:
    spec: dict = {
        "requirements": draw(st.lists(requirement(), max_size=3)),
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
    }
    if draw(st.booleans()):
        spec["taints"] = [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]
    template: dict = {"spec": spec}
    if draw(st.booleans()):
        template["metadata"] = {"labels": {"team": draw(st.sampled_from(["vision", "nlp"]))}}
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": f"pool-{index}"},
        "spec": {
            "template": template,
            "disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "5m"},
        },
    }


@st.composite
def job(draw) -> dict:
    limits: dict = {"cpu": "4", "memory": "16Gi"}
    device = draw(st.sampled_from([None, "nvidia.com/gpu", "aws.amazon.com/neuron"]))
    if device:
        limits[device] = draw(st.sampled_from([1, 4, 8, 16]))
    spec: dict = {
        "restartPolicy": "Never",
        "containers": [{"name": "c", "image": "repo/img:1.0", "resources": {"limits": limits}}],
    }
    if draw(st.booleans()):
        key, values = draw(
            st.sampled_from(
                [
                    ("node.kubernetes.io/instance-type", INSTANCE_TYPES),
                    ("karpenter.k8s.aws/instance-family", FAMILIES),
                    ("karpenter.k8s.aws/instance-gpu-name", GPU_NAMES),
                    ("team", ["vision", "nlp"]),
                ]
            )
        )
        spec["nodeSelector"] = {key: draw(st.sampled_from(values))}
    affinity: dict = {}
    if draw(st.booleans()):
        terms = draw(st.lists(st.lists(requirement(), min_size=1, max_size=2), min_size=1, max_size=2))
        affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [{"matchExpressions": t} for t in terms]
        }
    if draw(st.booleans()):  # preferred terms never exclude a pool
        affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": 50, "preference": {"matchExpressions": draw(st.lists(requirement(), min_size=1, max_size=2))}}
        ]
    if affinity:
        spec["affinity"] = {"nodeAffinity": affinity}
    if draw(st.booleans()):
        spec["tolerations"] = [
            draw(st.sampled_from([{"operator": "Exists"}, {"key": "nvidia.com/gpu", "operator": "Exists"}]))
        ]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": "ml"},
        "spec": {"template": {"spec": spec}},
    }


@st.composite
def pools_and_job(draw) -> str:
    n = draw(st.integers(1, 3))
    docs = [draw(nodepool(i)) for i in range(n)] + [draw(job())]
    return yaml.safe_dump_all(docs, sort_keys=False)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pools_and_job())
def test_no_template_is_both_unplaceable_and_landed(text):
    result = lint_text(text, Config())
    run = _run(text)
    assert _contradictions(result, run.templates) == []
    for t in run.templates:  # the rules' answer is the analysis': EML702 <=> nothing usable
        where = placement(run, t)
        assert set(map(id, where.hosting)) <= set(map(id, where.usable))


def test_a_templated_selector_leaves_the_placement_unknown():
    # envsubst manifests pin `${INSTANCE_TYPE}`: no pool offers that literal, but the value is
    # filled in before apply, so neither "no NodePool" (EML702) nor "lands on X" may be claimed.
    pool = _pool("trn", _types(["trn1.32xlarge"]))
    templated = _run(
        pool + _job({"node.kubernetes.io/instance-type": "${INSTANCE_TYPE}"}, {"aws.amazon.com/neuron": 16})
    )
    where = placement(templated, templated.templates[0])
    assert not where.present and where.usable == [] and where.instance_types is None
    codes = {"EML702", "EML502", "EML101", "EML106", "EML602"}
    text = pool + _job({"node.kubernetes.io/instance-type": "${INSTANCE_TYPE}"}, {"aws.amazon.com/neuron": 16})
    assert not [f for f in lint_text(text).active if f.code in codes]
    literal = pool + _job({"node.kubernetes.io/instance-type": "p5.48xlarge"}, {"aws.amazon.com/neuron": 16})
    assert "EML702" in {f.code for f in lint_text(literal).active}  # a literal mismatch is still reported
