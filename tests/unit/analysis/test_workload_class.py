"""The workload classification (eksmllint.analysis.workload_class): one class per workload with
its evidence, the gate that keeps rules on the classes they judge, and where the class shows
(JSON findings, explain)."""

from __future__ import annotations

import json
import textwrap

import builders as b
import pytest
import yaml
from pydantic import ValidationError

from eksmllint.analysis.workload_class import WorkloadClass, classify, classify_template
from eksmllint.config import Config
from eksmllint.core.context import LintRun
from eksmllint.core.engine import lint_text, run_rules
from eksmllint.core.registry import default_registry
from eksmllint.core.rule import Rule, RuleSpec
from eksmllint.docs import explain_text
from eksmllint.formatters.json import render
from eksmllint.loader import parse_source
from eksmllint.resource import SourceFile
from eksmllint.workload import workload_of

C = WorkloadClass


def workload(text: str):
    resources, problems = parse_source(SourceFile("t.yaml", textwrap.dedent(text), "yaml"))
    assert not problems
    return workload_of(resources[0])


def job(
    command: str | None = None,
    *,
    image: str = "example.com/tool:1.0",
    gpus: int = 1,
    pods: int = 4,
    indexed: bool = True,
) -> str:
    main = b.container("main", image, command=yaml.safe_load(command) if command else None, gpus=gpus or None)
    mode = {"completionMode": "Indexed"} if indexed else {}
    return b.manifest(
        b.job("j", b.pod_template(main, restartPolicy="Never"), completions=pods, parallelism=pods, **mode)
    )


def pytorchjob(command: str = '["python", "train.py"]') -> str:
    template = b.pod_template(b.container("pytorch", command=yaml.safe_load(command), gpus=1))
    return b.manifest(b.pytorchjob("p", master=b.replica(1, template), worker=b.replica(3, template)))


def mpijob(launcher_command: str, launcher_as_worker: bool = False) -> str:
    launcher = b.pod_template(b.container("launcher", command=yaml.safe_load(launcher_command)))
    worker = b.pod_template(b.container("worker", gpus=8))
    spec: dict = {"slotsPerWorker": 8}
    if launcher_as_worker:
        spec["runLauncherAsWorker"] = True
    return b.manifest(b.mpijob("m", launcher=b.replica(1, launcher), worker=b.replica(2, worker), **spec))


def deployment(command: str, gpus: int = 1, image: str = "example.com/app:1.0", probe: bool = False) -> str:
    container = b.container("app", image, command=yaml.safe_load(command), gpus=gpus)
    if probe:
        container["ports"] = [{"containerPort": 8000}]
        container["readinessProbe"] = {"httpGet": {"path": "/health", "port": 8000}}
    return b.manifest(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "d"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "d"}},
                "template": b.pod_template(container, labels={"app": "d"}),
            },
        }
    )


CASES = [
    # training
    (pytorchjob(), C.TRAINING_COLLECTIVE, "PyTorchJob"),
    (job('["torchrun", "--nnodes=4", "--nproc_per_node=1", "pretrain.py"]'), C.TRAINING_COLLECTIVE, "torchrun"),
    (job('["python", "finetune.py"]', indexed=False, pods=1), C.TRAINING_SINGLE, "finetune.py"),
    (
        job('["python", "run_clm.py", "--num_train_epochs", "3"]', indexed=False, pods=1),
        C.TRAINING_SINGLE,
        "num_train_epochs",
    ),
    (job('["python", "main.py"]', pods=4), C.TRAINING_COLLECTIVE, "hold accelerators"),
    # inference
    (deployment('["vllm", "serve", "meta-llama/Llama-3.1-8B"]'), C.INFERENCE, "vllm serve"),
    (deployment('["python3", "-m", "sglang.launch_server", "--tp", "2"]', gpus=2), C.INFERENCE, "sglang"),
    (deployment('["/bin/sh", "-c", "tritonserver --model-repository=/models"]'), C.INFERENCE, "tritonserver"),
    (deployment('["python", "app.py"]', probe=True), C.INFERENCE, "probe"),
    (job('["python", "main.py"]', image="vllm/vllm-openai:v0.8.5"), C.INFERENCE, "vllm/vllm-openai"),
    # benchmark, burn-in, placeholder, data processing
    (
        mpijob('["mpirun", "-np", "16", "/opt/nccl-tests/build/all_reduce_perf", "-b", "8", "-e", "8G"]'),
        C.BENCHMARK,
        "nccl-tests",
    ),
    (job('["/bin/sh", "-c", "/app/gpu_burn 600"]'), C.BURN_IN, "gpu_burn"),
    (job('["dcgmi", "diag", "-r", "3"]', indexed=False, pods=1), C.BURN_IN, "dcgmi diag"),
    (
        job(
            '["torchrun", "--nproc_per_node=32", "run_clm.py", "--dataset_name", "synthetic", "--save_strategy", "no"]'
        ),
        C.BURN_IN,
        "synthetic",
    ),
    (job(image="registry.k8s.io/pause:3.10"), C.PLACEHOLDER, "pause"),
    (job('["sleep", "600"]'), C.PLACEHOLDER, "sleep 600"),
    (job('["sh", "-c", "sleep infinity"]'), C.PLACEHOLDER, "sleep infinity"),
    (job('["tail", "-f", "/dev/null"]'), C.PLACEHOLDER, "tail -f /dev/null"),
    (
        job('["python", "-c", "import ray; ray.data.read_parquet(src).map_batches(f)"]', gpus=0),
        C.DATA_PROCESSING,
        "ray.data",
    ),
    (job('["spark-submit", "etl.py"]', gpus=0, indexed=False, pods=1), C.DATA_PROCESSING, "spark-submit"),
    # thin evidence
    (deployment('["python", "app.py"]'), C.UNKNOWN, "no training"),
]


@pytest.mark.parametrize("text, expected, reason", CASES, ids=[f"{c[1].value}-{i}" for i, c in enumerate(CASES)])
def test_classification_and_its_evidence(text, expected, reason):
    found = classify(workload(text))
    assert found.cls is expected, found
    assert any(reason in e for e in found.evidence), found.evidence


def test_idle_only_when_it_is_the_whole_command():
    w = workload(job('["sh", "-c", "sleep 5 && torchrun --nnodes=4 --nproc_per_node=1 train.py"]'))
    assert classify(w).cls is C.TRAINING_COLLECTIVE


def test_accelerators_rule_out_data_processing():
    w = workload(job('["python", "-c", "import ray; ray.data.read_parquet(src)"]', gpus=1, indexed=False, pods=1))
    assert classify(w).cls is not C.DATA_PROCESSING


def test_collective_needs_more_than_one_pod():
    single = workload(job('["torchrun", "--standalone", "--nproc_per_node=8", "train.py"]', gpus=8, pods=1))
    assert classify(single).cls is C.TRAINING_SINGLE and not classify(single).collective
    bench = classify(workload(mpijob('["mpirun", "all_reduce_perf", "-b", "8"]')))
    assert bench.cls is C.BENCHMARK and bench.collective


def test_is_collective_is_the_classification_answer():
    """Regression: a scale test's pause pods holding GPUs counted as a collective (EML201, EML808)."""
    w = workload(job(image="registry.k8s.io/pause:3.10", pods=16))
    assert w.is_multi_pod and not w.is_collective
    assert workload(pytorchjob()).is_collective


def test_computed_once_per_workload():
    w = workload(pytorchjob())
    assert classify(w) is classify(w)
    assert classify_template(w.templates[0]) is classify_template(w.templates[0])


def test_mpijob_launcher_is_a_launcher_unless_it_runs_as_a_worker():
    cmd = '["mpirun", "-np", "16", "python", "train.py", "--save", "/fsx/ckpt"]'
    w = workload(mpijob(cmd))
    launcher, worker = w.templates
    assert classify_template(launcher).cls is C.LAUNCHER
    assert classify_template(worker).cls is C.TRAINING_COLLECTIVE
    w = workload(mpijob(cmd, launcher_as_worker=True))
    assert classify_template(w.templates[0]).cls is C.TRAINING_COLLECTIVE


def test_launcher_of_a_benchmark_stays_a_benchmark():
    w = workload(mpijob('["mpirun", "all_reduce_perf", "-b", "8"]'))
    assert classify_template(w.templates[0]).cls is C.BENCHMARK


# --- rules state the classes they judge ---------------------------------------------------------


def _spec(**extra) -> dict:
    return {
        "code": "EML999",
        "slug": "probe",
        "severity": "warning",
        "fix": "no",
        "summary": "s",
        "check": "x:y",
        "target": "templates",
        "description": "d",
        "rationale": "r",
        **extra,
    }


def test_unknown_class_name_is_rejected():
    with pytest.raises(ValidationError, match="unknown workload class"):
        RuleSpec.model_validate(_spec(**{"workload-classes": ["trainin"]}))


def test_check_is_only_called_on_the_classes_the_rule_judges():
    seen = []

    def check(ctx, t):
        seen.append(t.workload.resource.name)
        return ()

    rule = Rule(RuleSpec.model_validate(_spec(**{"workload-classes": ["training-collective"]})), check)
    served = workload(deployment('["vllm", "serve", "m"]'))
    trained = workload(pytorchjob())
    run = LintRun([served.resource, trained.resource])
    run_rules(run, [rule])
    assert seen == ["p", "p"]
    seen.clear()
    run_rules(run, [rule.with_options({})], focus=served.resource)  # the webhook's admitted object
    assert seen == []
    run_rules(run, [rule], focus=trained.resource)
    assert seen == ["p", "p"]


def test_every_rule_names_known_classes_and_collective_rules_judge_training():
    registry = default_registry()
    for code in ("EML201", "EML202", "EML106", "EML301", "EML502", "EML609", "EML808", "EML810"):
        assert "training-collective" in registry.get(code).spec.workload_classes, code
    for code in ("EML201", "EML808", "EML609", "EML301"):
        assert not {"inference", "burn-in", "placeholder", "unknown"} & set(registry.get(code).spec.workload_classes)


# --- where the class shows ----------------------------------------------------------------------


def test_json_finding_carries_the_class_and_its_evidence():
    result = lint_text(textwrap.dedent(pytorchjob()), Config(select=("EML201",)), name="t.yaml")
    doc = json.loads(render(result, default_registry(), {}))
    [finding] = doc["findings"]
    assert finding["workload_class"]["class"] == "training-collective"
    assert any("PyTorchJob" in e for e in finding["workload_class"]["evidence"])


def test_explain_lists_the_judged_classes():
    text = explain_text(default_registry().get("EML201"))
    assert "Judges workloads classified as" in text and "training-collective, benchmark" in text
    assert "Judges workloads" not in explain_text(default_registry().get("EML601"))


def test_explain_eml808_names_the_better_patterns_and_the_option():
    text = explain_text(default_registry().get("EML808"))
    assert "podFailurePolicy" in text and "failurePolicy" in text and "max-backoff-limit: 3" in text


@pytest.mark.parametrize("limit, flagged", [(None, False), (1, True)])
def test_eml808_backoff_threshold_is_an_option(limit, flagged):
    data = yaml.safe_load(job('["torchrun", "--nnodes=4", "--nproc_per_node=1", "train.py"]'))
    data["spec"]["backoffLimit"] = 2
    text = yaml.safe_dump(data)
    rules = {"EML808": {"max-backoff-limit": limit}} if limit is not None else {}
    found = lint_text(textwrap.dedent(text), Config(select=("EML808",), rules=rules), name="t.yaml").active
    assert bool(found) is flagged


@pytest.mark.parametrize("command", ['["sh", "-c", "tail -f /dev/null"]', '["/bin/bash", "-c", "exec sleep infinity"]'])
def test_idle_commands_wrapped_in_a_shell(command):
    assert classify(workload(job(command))).cls is C.PLACEHOLDER


def test_gpu_daemonset_without_a_known_tool_is_burn_in():
    data = yaml.safe_load(deployment('["/opt/check/run.sh"]'))
    data["kind"] = "DaemonSet"
    del data["spec"]["replicas"]
    found = classify(workload(yaml.safe_dump(data)))
    assert found.cls is C.BURN_IN and "DaemonSet" in found.evidence[0]


def test_cpu_ray_client_is_data_processing():
    data = yaml.safe_load(job('["python", "client.py"]', gpus=0, indexed=False, pods=1))
    data["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "RAY_ADDRESS", "value": "ray://head:10001"}]
    assert classify(workload(yaml.safe_dump(data))).cls is C.DATA_PROCESSING
