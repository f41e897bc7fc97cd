"""Family 6xx (accelerator and resource math): fix round-trips, edge cases and silence rules.

The fixture tests prove each rule fires on its bad example; these tests pin down what the
fixtures cannot show: that every safe fix, applied by the real fixer, makes the finding go
away with the value computed from facts, and that unknown facts keep the rules silent.
"""

from __future__ import annotations

import textwrap
from decimal import Decimal

import pytest
import yaml
from builders import said

from eksmllint.checks.resources._shared import pod_request, replace_flag_value
from eksmllint.config import Config
from eksmllint.core.engine import lint_text
from eksmllint.fix import fix_text
from eksmllint.paths import rule_fixtures_dir

CODES = [f"EML60{i}" for i in range(1, 10)]
FIXABLE = ["EML601", "EML604", "EML605", "EML606", "EML608"]


def lint(text: str, code: str):
    result = lint_text(textwrap.dedent(text), Config(select=(code,)))
    return [f for f in result.active if f.code == code]


def fixture_bad(code: str) -> str:
    (case,) = [d for d in rule_fixtures_dir().iterdir() if d.name.startswith(code + "-")]
    return (case / "bad.yaml").read_text(encoding="utf-8")


def pytorchjob(container: str, *, worker_replicas: int = 1, spec_extra: str = "", pod_extra: str = "") -> str:
    """A PyTorchJob with one Worker template; ``container`` is the YAML of its container body."""
    body = textwrap.indent(textwrap.dedent(container).strip(), " " * 14)
    extra = textwrap.indent(textwrap.dedent(spec_extra).strip(), "  ") if spec_extra else ""
    pod = textwrap.indent(textwrap.dedent(pod_extra).strip(), " " * 10) if pod_extra else ""
    return (
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: j\n  namespace: t\nspec:\n"
        + (extra + "\n" if extra else "")
        + "  pytorchReplicaSpecs:\n    Worker:\n"
        + f"      replicas: {worker_replicas}\n      template:\n        spec:\n"
        + (pod + "\n" if pod else "")
        + "          containers:\n            - name: pytorch\n              image: img:1.0\n"
        + body
        + "\n"
    )


# --- fixes, applied by the real fixer ---------------------------------------------------------
@pytest.mark.parametrize("code", FIXABLE)
def test_safe_fixes_remove_the_finding(code):
    before = lint_text(fixture_bad(code), Config(select=(code,)))
    fixable = [f for f in before.active if f.code == code and f.fix is not None]
    assert fixable, f"{code} bad fixture offers no fix"
    out = fix_text(fixture_bad(code), Config(select=(code,)), name="bad.yaml")
    assert out.fixed is not None and out.fixed != out.original, out.error or out.failed
    after = [f for f in lint_text(out.fixed, Config(select=(code,))).active if f.code == code]
    assert len(after) == len([f for f in before.active if f.code == code]) - len(fixable)


def test_eml601_copies_request_into_limits():
    out = fix_text(fixture_bad("EML601"), Config(select=("EML601",)), name="bad.yaml")
    docs = list(yaml.safe_load_all(out.fixed))
    res = docs[0]["spec"]["template"]["spec"]["containers"][0]["resources"]
    assert res["limits"]["nvidia.com/gpu"] == res["requests"]["nvidia.com/gpu"] == 1
    assert res["limits"]["vpc.amazonaws.com/efa"] == 1


def test_eml604_fix_values_come_from_the_pod():
    out = fix_text(fixture_bad("EML604"), Config(select=("EML604",)), name="bad.yaml")
    docs = list(yaml.safe_load_all(out.fixed))
    assert (
        docs[0]["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["command"][1]
        == "--nproc_per_node=8"
    )  # the --flag= form is kept
    assert docs[1]["spec"]["nprocPerNode"] == "4"  # a string field stays a string
    assert docs[2]["spec"]["template"]["spec"]["containers"][0]["command"][2] == "4"
    script = docs[3]["spec"]["template"]["spec"]["containers"][0]["command"][2]
    assert "torchrun --nproc_per_node 32 train_llama.py" in script  # 16 devices x 2 cores
    assert docs[4]["spec"]["trainer"]["numProcPerNode"] == 8


def test_eml606_fix_uses_the_corrected_slot_count():
    out = fix_text(fixture_bad("EML606"), Config(select=("EML606",)), name="bad.yaml")
    docs = list(yaml.safe_load_all(out.fixed))
    assert docs[0]["spec"]["slotsPerWorker"] == 8
    assert docs[0]["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["command"][3] == "16"
    assert docs[1]["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["command"][3] == "12"


def test_replace_flag_value_spellings_and_ambiguity():
    assert (
        replace_flag_value("torchrun --nproc-per-node=8 x", "nproc_per_node", "8", "4")
        == "torchrun --nproc-per-node=4 x"
    )
    assert (
        replace_flag_value("torchrun --nproc_per_node '8' x", "nproc_per_node", "8", "4")
        == "torchrun --nproc_per_node '4' x"
    )
    two = "torchrun --nnodes=2 a.py\ntorchrun --nnodes=2 b.py"
    assert replace_flag_value(two, "nnodes", "2", "4") is None  # which one? no fix
    assert replace_flag_value("torchrun --nnodes=2:4 x", "nnodes", "2", "3") is None


# --- EML601 -----------------------------------------------------------------------------------
def test_eml601_equal_counts_in_other_spellings_are_fine():
    text = pytorchjob("""
        resources:
          requests: {nvidia.com/gpu: "2"}
          limits: {nvidia.com/gpu: 2}
    """)
    assert lint(text, "EML601") == []


def test_eml601_templated_values_are_not_compared():
    text = pytorchjob("""
        resources:
          requests: {nvidia.com/gpu: $GPUS}
          limits: {nvidia.com/gpu: $GPUS_MAX}
    """)
    assert lint(text, "EML601") == []


# --- EML602 / EML603 --------------------------------------------------------------------------
def test_eml602_silent_without_a_pinned_instance_type():
    text = pytorchjob("resources: {limits: {nvidia.com/gpu: 64}}")
    assert lint(text, "EML602") == []


def test_eml602_reports_only_beyond_the_largest_type():
    pin = """
        affinity:
          nodeAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              nodeSelectorTerms:
                - matchExpressions:
                    - {key: node.kubernetes.io/instance-type, operator: In, values: [g5.2xlarge, g5.48xlarge]}
    """
    assert lint(pytorchjob("resources: {limits: {nvidia.com/gpu: 8}}", pod_extra=pin), "EML602") == []
    found = lint(pytorchjob("resources: {limits: {nvidia.com/gpu: 9}}", pod_extra=pin), "EML602")
    assert len(found) == 1 and "g5.48xlarge" in said(found[0]) and "has 8" in said(found[0])


def test_eml603_boundary_is_karpenter_allocatable():
    pin = "nodeSelector: {node.kubernetes.io/instance-type: p4d.24xlarge}"
    ok = pytorchjob("resources: {requests: {cpu: 95690m, memory: 1082712Mi}}", pod_extra=pin)
    assert lint(ok, "EML603") == []
    over = pytorchjob("resources: {requests: {cpu: 95691m, memory: 1082713Mi}}", pod_extra=pin)
    assert len(lint(over, "EML603")) == 2


def test_pod_request_formula_with_sidecar_init_and_overhead():
    text = pytorchjob(
        "resources: {requests: {cpu: '4'}}",
        pod_extra="""
            overhead: {cpu: 250m}
            initContainers:
              - {name: proxy, image: p:1, restartPolicy: Always, resources: {requests: {cpu: '1'}}}
              - {name: fetch, image: f:1, resources: {requests: {cpu: '8'}}}
        """,
    )
    result = lint_text(text, Config(select=("EML603",)))
    (t,) = result.run.templates
    req = pod_request(t, "cpu")
    # max(4 + 1 sidecar, 8 init + 1 sidecar started before it) + 0.25 overhead
    assert req is not None and req.total == Decimal("9.25") and req.container.name == "fetch"


# --- EML604 -----------------------------------------------------------------------------------
def test_eml604_unresolved_and_symbolic_values_are_silent():
    for cmd in (
        '["torchrun", "--nproc_per_node=$(NPROC)", "t.py"]',
        '["torchrun", "--nproc_per_node=gpu", "t.py"]',
        '["torchrun", "--nproc_per_node=$GPUS", "t.py"]',
    ):
        text = pytorchjob(f"""
            command: {cmd}
            env: [{{name: NPROC, valueFrom: {{fieldRef: {{fieldPath: metadata.name}}}}}}]
            resources: {{limits: {{nvidia.com/gpu: 8}}}}
        """)
        assert lint(text, "EML604") == [], cmd


def test_eml604_resolves_kubelet_variables_but_offers_no_blind_fix():
    text = pytorchjob("""
        command: ["torchrun", "--nproc_per_node=$(NPROC)", "t.py"]
        env: [{name: NPROC, value: "4"}]
        resources: {limits: {nvidia.com/gpu: 8}}
    """)
    (f,) = lint(text, "EML604")
    assert f.fix is None  # the value lives in env, not in the argument


@pytest.mark.parametrize(
    "nproc, env, reported",
    [
        (64, "", False),  # default LNC=2: 16 devices x 4 logical cores
        (7, "", True),
        (128, "", True),
        (128, 'env: [{name: NEURON_LOGICAL_NC_CONFIG, value: "1"}]', False),  # 8 physical cores per device
        (7, "env: [{name: NEURON_LOGICAL_NC_CONFIG, value: $(LNC)}]", False),  # not literal: unknown
    ],
)
def test_eml604_trainium2_counts_logical_cores(nproc, env, reported):
    text = pytorchjob(
        f"""
        command: ["torchrun", "--nproc_per_node={nproc}", "t.py"]
        {env}
        resources: {{limits: {{aws.amazon.com/neuron: 16}}}}
    """,
        pod_extra="nodeSelector: {node.kubernetes.io/instance-type: trn2.48xlarge}",
    )
    assert bool(lint(text, "EML604")) == reported


def test_eml604_cpu_only_torchrun_is_not_checked():
    text = pytorchjob('command: ["torchrun", "--nproc_per_node=4", "t.py"]\nresources: {limits: {cpu: "4"}}')
    assert lint(text, "EML604") == []


def test_eml604_nprocpernode_ignored_when_command_passes_the_flag():
    text = pytorchjob(
        """
        command: ["torchrun", "--nproc_per_node=8", "t.py"]
        resources: {limits: {nvidia.com/gpu: 8}}
    """,
        spec_extra='nprocPerNode: "4"',
    )
    assert lint(text, "EML604") == []


def test_eml604_accelerate_num_processes_is_a_total_over_machines():
    def job(flags: str, workers: int = 2) -> str:
        cmd = f'command: ["accelerate", "launch", {flags}, "t.py"]\nresources: {{limits: {{nvidia.com/gpu: 8}}}}'
        return pytorchjob(cmd, worker_replicas=workers)

    # 2 machines x 8 GPUs: 16 in total, 8 would be the per-node count
    assert lint(job('"--num_machines=2", "--num_processes=16"'), "EML604") == []
    (f,) = lint(job('"--num_machines=2", "--num_processes=8"'), "EML604")
    assert "2 machines x 8 nvidia.com/gpu make 16" in said(f)
    out = fix_text(job('"--num_machines=2", "--num_processes=8"'), Config(select=("EML604",)))
    assert "--num_processes=16" in out.fixed
    # one pod is one machine, unless a config file may say otherwise
    assert len(lint(job('"--num_processes=4"', workers=1), "EML604")) == 1
    assert lint(job('"--num_processes=8"', workers=1), "EML604") == []
    assert lint(job('"--config_file=c.yaml", "--num_processes=4"', workers=1), "EML604") == []
    # several pods and no --num_machines: the machine count is not on the command line
    assert lint(job('"--num_processes=8"'), "EML604") == []
    assert lint(job('"--num_machines=$(N)", "--num_processes=8"'), "EML604") == []


def test_eml605_accelerate_num_machines_counts_pods():
    cmd = 'command: ["accelerate", "launch", "--num_machines=2", "t.py"]'
    assert lint(pytorchjob(cmd, worker_replicas=2), "EML605") == []
    (f,) = lint(pytorchjob(cmd, worker_replicas=4), "EML605")
    assert said(f).startswith("--num_machines=2") and f.fix is not None


# --- EML605 -----------------------------------------------------------------------------------
def test_eml605_templated_replicas_are_unknown():
    text = pytorchjob('command: ["torchrun", "--nnodes=4", "t.py"]').replace("replicas: 1", "replicas: $NUM_NODES")
    assert lint(text, "EML605") == []


def test_eml605_elastic_pytorchjob_accepts_values_in_range():
    elastic = "elasticPolicy: {minReplicas: 2, maxReplicas: 8}"
    inside = pytorchjob('command: ["torchrun", "--nnodes=3", "t.py"]', worker_replicas=4, spec_extra=elastic)
    outside = pytorchjob('command: ["torchrun", "--nnodes=9", "t.py"]', worker_replicas=4, spec_extra=elastic)
    assert lint(inside, "EML605") == []
    (f,) = lint(outside, "EML605")
    assert "2:8" in said(f) and f.fix is None


def test_eml605_leaderworkerset_counts_one_group():
    text = textwrap.dedent("""
        apiVersion: leaderworkerset.x-k8s.io/v1
        kind: LeaderWorkerSet
        metadata: {name: vllm, namespace: t}
        spec:
          replicas: 3
          leaderWorkerTemplate:
            size: 2
            workerTemplate:
              spec:
                containers:
                  - name: w
                    image: w:1
                    command: ["torchrun", "--nnodes=2", "t.py"]
    """)
    assert lint(text, "EML605") == []
    assert len(lint(text.replace("--nnodes=2", "--nnodes=6"), "EML605")) == 1


# --- Trainer v2 TrainJob (EML604 / EML605) ----------------------------------------------------
def runtime(policy: str, *, kind: str = "ClusterTrainingRuntime", gpus: int | None = 8, namespace: str = "") -> str:
    """A (Cluster)TrainingRuntime named ``rt`` with ``mlPolicy`` ``policy`` (YAML flow mapping) and a
    trainer container ``node`` owning ``gpus`` GPUs."""
    res = f"resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}" if gpus is not None else ""
    ns = f", namespace: {namespace}" if namespace else ""
    return textwrap.dedent(f"""
        apiVersion: trainer.kubeflow.org/v1alpha1
        kind: {kind}
        metadata: {{name: rt{ns}}}
        spec:
          mlPolicy: {policy}
          template:
            spec:
              replicatedJobs:
                - name: node
                  template:
                    metadata:
                      labels: {{trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
                    spec:
                      template:
                        spec:
                          containers:
                            - {{name: node, image: img:1.0, {res}}}
        """)


def trainjob(trainer: str, *, ref: str = "{name: rt}") -> str:
    body = textwrap.indent(textwrap.dedent(trainer).strip(), "    ")
    return (
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: tj, namespace: t}\n"
        f"spec:\n  runtimeRef: {ref}\n  trainer:\n{body}\n"
    )


def both(*docs: str) -> str:
    return "---\n".join(textwrap.dedent(d) for d in docs)


def test_trainjob_nproc_against_the_runtime_container_gpus():
    (f,) = lint(both(runtime("{torch: {}}"), trainjob("numProcPerNode: 4")), "EML604")
    assert "node container of ClusterTrainingRuntime rt gives each node 8" in said(f)
    assert f.fix is not None and f.location.path == ("spec", "trainer", "numProcPerNode")
    assert lint(both(runtime("{torch: {}}"), trainjob("numProcPerNode: 8")), "EML604") == []
    # resourcesPerNode replaces the runtime container's resources
    override = trainjob("numProcPerNode: 8\nresourcesPerNode: {limits: {nvidia.com/gpu: 4}}")
    (f,) = lint(both(runtime("{torch: {}}"), override), "EML604")
    assert "resourcesPerNode gives each node 4" in said(f)


def test_trainjob_without_its_runtime_knows_no_devices():
    assert lint(trainjob("numProcPerNode: 4"), "EML604") == []
    # a namespaced TrainingRuntime of another namespace is not the one the TrainJob uses
    other = runtime("{torch: {}}", kind="TrainingRuntime", namespace="elsewhere")
    assert lint(both(other, trainjob("numProcPerNode: 4", ref="{kind: TrainingRuntime, name: rt}")), "EML604") == []
    same = runtime("{torch: {}}", kind="TrainingRuntime", namespace="t")
    assert len(lint(both(same, trainjob("numProcPerNode: 4", ref="{kind: TrainingRuntime, name: rt}")), "EML604")) == 1


def test_trainjob_command_flag_wins_over_numprocpernode():
    text = both(
        runtime("{torch: {}}"), trainjob('numProcPerNode: 4\ncommand: ["torchrun", "--nproc_per_node=8", "t.py"]')
    )
    assert lint(text, "EML604") == []
    (f,) = lint(text.replace("--nproc_per_node=8", "--nproc_per_node=2"), "EML604")
    assert f.location.path == ("spec", "trainer", "command", 1) and "trainer command" in said(f)
    out = fix_text(text.replace("--nproc_per_node=8", "--nproc_per_node=2"), Config(select=("EML604",)))
    assert "--nproc_per_node=8" in out.fixed


def test_trainjob_mpi_slots_and_other_policies():
    mpi_default = runtime("{mpi: {numProcPerNode: 1}}")
    assert lint(both(mpi_default, trainjob("numNodes: 2")), "EML604") == []  # the plugin raises 1 to 8
    (f,) = lint(both(mpi_default, trainjob("numProcPerNode: 4")), "EML604")
    assert "MPI hostfile" in said(f)
    # both values in the runtime: the runtime's own business, not every TrainJob's
    (f,) = lint(both(runtime("{mpi: {numProcPerNode: 4}}"), trainjob("numNodes: 2")), "EML604")
    assert f.resource.kind == "ClusterTrainingRuntime"  # reported once, on the runtime
    assert lint(both(runtime("{jax: {}}"), trainjob("numProcPerNode: 4")), "EML604") == []


def test_trainjob_nnodes_against_numnodes():
    cmd = 'command: ["torchrun", "--nnodes=4", "t.py"]'
    (f,) = lint(both(runtime("{numNodes: 1, torch: {}}"), trainjob("numNodes: 2\n" + cmd)), "EML605")
    assert "runs 2 nodes (spec.trainer.numNodes)" in said(f)
    (f,) = lint(both(runtime("{numNodes: 3, torch: {}}"), trainjob(cmd)), "EML605")
    assert "mlPolicy.numNodes of ClusterTrainingRuntime rt" in said(f)
    (f,) = lint(both(runtime("{torch: {}}"), trainjob(cmd)), "EML605")  # numNodes defaults to 1
    assert "runs 1 nodes" in said(f)
    out = fix_text(
        both(runtime("{numNodes: 4, torch: {}}"), trainjob("numNodes: 2\n" + cmd)), Config(select=("EML605",))
    )
    assert "--nnodes=2" in out.fixed


def test_trainjob_nnodes_silent_when_the_count_is_not_numnodes():
    cmd = 'command: ["torchrun", "--nnodes=4", "t.py"]'
    assert lint(trainjob(cmd), "EML605") == []  # runtime unknown, no numNodes: its default is unknown
    elastic = runtime("{torch: {elasticPolicy: {minNodes: 1, maxNodes: 8}}}")
    assert lint(both(elastic, trainjob(cmd)), "EML605") == []
    assert lint(both(runtime("{mpi: {runLauncherAsNode: true}}"), trainjob("numNodes: 2\n" + cmd)), "EML605") == []
    assert lint(trainjob("numNodes: $NODES\n" + cmd), "EML605") == []


# --- EML606 -----------------------------------------------------------------------------------
def mpijob(
    launch: str, *, slots: str = "slotsPerWorker: 8", extra: str = "", launcher_gpus: int = 0, workers: int = 2
) -> str:
    """An MPIJob v2beta1 with ``workers`` workers of 8 GPUs; ``launch`` is the launcher's command (flow list)."""
    res = f", resources: {{limits: {{nvidia.com/gpu: {launcher_gpus}}}}}" if launcher_gpus else ""
    return textwrap.dedent(f"""
        apiVersion: kubeflow.org/v2beta1
        kind: MPIJob
        metadata: {{name: m, namespace: t}}
        spec:
          {slots}
          {extra}
          mpiReplicaSpecs:
            Launcher:
              replicas: 1
              template:
                spec:
                  containers:
                    - {{name: l, image: l:1, command: {launch}{res}}}
            Worker:
              replicas: {workers}
              template:
                spec:
                  containers:
                    - {{name: w, image: w:1, resources: {{limits: {{nvidia.com/gpu: 8}}}}}}
    """)


def test_eml606_seed_style_mpijob_is_consistent():
    text = mpijob('[mpirun, -np, "32", python, t.py]', workers=4)
    assert lint(text, "EML606") == []
    (f,) = lint(text.replace("slotsPerWorker: 8", ""), "EML606")  # default 1 slot, 8 GPUs
    assert "default 1" in said(f)


def test_eml606_per_node_launcher_under_mpirun_runs_one_rank_per_node():
    torchrun = 'torchrun, --nproc_per_node, "8", t.py]'
    # -N 1: one torchrun per worker, 8 processes each: -np 2 is right, 16 would start 16 torchruns
    assert lint(mpijob(f'[mpirun, -np, "2", -N, "1", {torchrun}'), "EML606") == []
    (f,) = lint(mpijob(f'[mpirun, -np, "4", -N, "1", {torchrun}'), "EML606")
    assert "places 1 rank on each of 2 nodes (2)" in said(f) and "Set mpirun -np to 2" in f.fix.title
    # without -N, mpirun fills each worker's 8 slots first: where the torchruns land is unclear
    assert lint(mpijob(f'[mpirun, -np, "2", {torchrun}'), "EML606") == []


def test_eml606_npernode_sets_the_ranks_per_node():
    assert lint(mpijob('[mpirun, -np, "16", -N, "8", python, t.py]'), "EML606") == []
    (f,) = lint(mpijob('[mpirun, -np, "8", --npernode, "8", python, t.py]'), "EML606")
    assert "8 slots stay idle" in said(f)


def test_eml606_run_launcher_as_worker():
    as_worker = "runLauncherAsWorker: true"
    # the launcher joins the hostfile with 8 slots: 3 x 8 ranks, and it needs GPUs of its own
    ok = mpijob('[mpirun, -np, "24", python, t.py]', extra=as_worker, launcher_gpus=8)
    assert lint(ok, "EML606") == []
    (f,) = lint(ok.replace('"24"', '"16"'), "EML606")
    assert "+ 8 on the launcher" in said(f)
    (f,) = lint(mpijob('[mpirun, -np, "24", python, t.py]', extra=as_worker), "EML606")
    assert f.location.path == ("spec", "runLauncherAsWorker") and "no nvidia.com/gpu" in said(f)
    assert "MPI Operator 0.6 (assumed" in said(f)
    # before mpi-operator 0.5 the field does not exist: the hostfile holds the workers only
    old = Config(select=("EML606",), platform={"mpi-operator": "0.4"})
    (f,) = lint_text(ok, old).active
    assert "ignored before mpi-operator 0.5" in said(f) and "Set mpirun -np to 16" in f.fix.title
    # the v1 API (Training Operator) has no such field
    v1 = ok.replace("kubeflow.org/v2beta1", "kubeflow.org/v1")
    assert [said(x) for x in lint(v1, "EML606")] == [
        "mpirun -np 24 but the MPIJob offers 16 slots (2 workers x 8 slots) mpirun fails with not enough slots."
    ]


# --- EML607 -----------------------------------------------------------------------------------
def test_eml607_ignores_jobs_that_can_use_another_pool():
    bad = fixture_bad("EML607")
    other = bad.split("---")[0].replace("name: a100-training", "name: a100-overflow")
    other = other.replace("# expect: EML607", "").replace("nvidia.com/gpu: 16", "nvidia.com/gpu: 64")
    assert lint(bad + "---\n" + other, "EML607") == []


# --- EML608 / EML609 --------------------------------------------------------------------------
def test_eml608_silent_when_cores_per_device_unknown():
    text = pytorchjob("""
        env: [{name: NEURON_RT_NUM_CORES, value: "64"}]
        resources: {limits: {aws.amazon.com/neuron: 16}}
    """)
    assert lint(text, "EML608") == []


def test_eml609_single_pod_and_whole_node_are_silent():
    pin = "nodeSelector: {node.kubernetes.io/instance-type: p4d.24xlarge}"
    one = pytorchjob("resources: {limits: {nvidia.com/gpu: 4}}", worker_replicas=1, pod_extra=pin)
    whole = pytorchjob("resources: {limits: {nvidia.com/gpu: 8}}", worker_replicas=4, pod_extra=pin)
    part = pytorchjob("resources: {limits: {nvidia.com/gpu: 4}}", worker_replicas=4, pod_extra=pin)
    assert lint(one, "EML609") == [] and lint(whole, "EML609") == []
    assert len(lint(part, "EML609")) == 1


# --- robustness -------------------------------------------------------------------------------
GARBAGE = [
    "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: x}\nspec: [1, 2]\n",
    "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: x}\nspec:\n  nprocPerNode: [8]\n"
    "  pytorchReplicaSpecs: {Worker: {replicas: x, template: {spec: {containers: [oops, {name: pytorch,"
    " command: torchrun, args: [1, null, {a: b}], env: [1, {name: 3}], resources: {limits: [1],"
    " requests: {nvidia.com/gpu: {}}}}]}}}}\n",
    "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: x}\nspec:\n  slotsPerWorker: '8'\n"
    "  runLauncherAsWorker: yes\n  mpiReplicaSpecs: {Launcher: {template: {spec: {containers: [{name: l,"
    " command: [mpirun, -np]}]}}}, Worker: {replicas: 2, template: {spec: {containers: [{name: w,"
    " resources: {limits: {nvidia.com/gpu: 1.5}}}]}}}}\n",
    "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: p}\nspec:\n  limits: {nvidia.com/gpu: lots,"
    " cpu: []}\n  template: {spec: {requirements: [{key: node.kubernetes.io/instance-type, operator: In,"
    " values: [p5.48xlarge]}]}}\n",
    "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: x}\nspec:\n  trainer:"
    " {numProcPerNode: auto, resourcesPerNode: {limits: 4}}\n",
]


@pytest.mark.parametrize("text", GARBAGE)
def test_malformed_input_never_crashes(text):
    result = lint_text(text, Config(select=tuple(CODES)))
    assert not [f for f in result.findings if f.code == "EML000"], [said(f) for f in result.findings]


def test_trainjob_runtime_copies_must_agree():
    tj = trainjob("numProcPerNode: 4")
    assert len(lint(both(runtime("{torch: {}}"), runtime("{torch: {}}"), tj), "EML604")) == 1
    assert lint(both(runtime("{torch: {}}"), runtime("{torch: {}}", gpus=4), tj), "EML604") == []


def test_eml606_trainjob_on_an_mpi_runtime():
    mpirun = 'command: [mpirun, -np, "16", python, t.py]'
    gpus = "resourcesPerNode: {limits: {nvidia.com/gpu: 8}}"
    # the runtime's 1 slot per node becomes the 8 GPUs of each node: 2 x 8
    ok = both(runtime("{mpi: {numProcPerNode: 1}}", gpus=None), trainjob(f"numNodes: 2\n{gpus}\n{mpirun}"))
    assert lint(ok, "EML606") == []
    (f,) = lint(ok.replace("numNodes: 2", "numNodes: 3"), "EML606")
    assert "hostfile of the TrainJob offers 24 slots (3 nodes x 8 slots)" in said(f)
    fixed = list(
        yaml.safe_load_all(fix_text(ok.replace("numNodes: 2", "numNodes: 3"), Config(select=("EML606",))).fixed)
    )
    assert fixed[1]["spec"]["trainer"]["command"][2] == "24"
    # the TrainJob's own numProcPerNode is the slots, as written
    assert len(lint(ok.replace("numNodes: 2", "numNodes: 2\n    numProcPerNode: 4"), "EML606")) == 1
    # runLauncherAsNode: the launcher is one of the numNodes hostfile entries (and one node besides it)
    as_node = runtime("{mpi: {numProcPerNode: 1, runLauncherAsNode: true}}", gpus=None)
    assert lint(both(as_node, trainjob(f"numNodes: 2\n{gpus}\n{mpirun}")), "EML606") == []
    one = trainjob(f"numNodes: 1\n{gpus}\n{mpirun}")
    assert lint(both(as_node, one), "EML606") == []
    assert len(lint(both(runtime("{mpi: {numProcPerNode: 1}}", gpus=None), one), "EML606")) == 1
    # a torch runtime or an unknown one: no hostfile to compare with
    assert lint(both(runtime("{torch: {}}"), trainjob(f"numNodes: 3\n{mpirun}")), "EML606") == []
    assert lint(trainjob(f"numNodes: 3\n{gpus}\n{mpirun}"), "EML606") == []


def test_trainjob_node_resources_come_from_the_first_node_job_that_declares_them():
    mpi_runtime = textwrap.dedent("""
        apiVersion: trainer.kubeflow.org/v1alpha1
        kind: ClusterTrainingRuntime
        metadata: {name: rt}
        spec:
          mlPolicy: {numNodes: 1, mpi: {numProcPerNode: 1}}
          template:
            spec:
              replicatedJobs:
                - name: launcher
                  template:
                    metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
                    spec: {template: {spec: {containers: [{name: node, image: i:1}]}}}
                - name: node
                  template:
                    spec:
                      template:
                        spec:
                          containers: [{name: node, image: i:1, resources: {limits: {nvidia.com/gpu: 8}}}]
        """)
    # the launcher (the trainer's ancestor) declares no resources: the node job's 8 GPUs count
    (f,) = lint(both(mpi_runtime, trainjob("numProcPerNode: 4")), "EML604")
    assert "node container of ClusterTrainingRuntime rt gives each node 8" in said(f)
    # 2 nodes x 8 slots (the runtime's 1 slot raised to the GPUs)
    text = both(mpi_runtime, trainjob('numNodes: 2\ncommand: [mpirun, -np, "16", python, t.py]'))
    assert lint(text, "EML606") == []


def test_runtime_on_its_own_numprocpernode_against_its_node_container():
    (f,) = lint(runtime("{torch: {numProcPerNode: 4}}"), "EML604")
    assert said(f).startswith("numProcPerNode is 4 but the node container gives each node 8")
    assert f.location.path == ("spec", "mlPolicy", "torch", "numProcPerNode")
    out = fix_text(runtime("{torch: {numProcPerNode: 4}}"), Config(select=("EML604",)))
    assert yaml.safe_load(out.fixed)["spec"]["mlPolicy"]["torch"]["numProcPerNode"] == 8
    for quiet in ("{torch: {numProcPerNode: auto}}", "{torch: {numProcPerNode: 8}}", "{mpi: {numProcPerNode: 1}}"):
        assert lint(runtime(quiet), "EML604") == [], quiet
    assert lint(runtime("{torch: {numProcPerNode: 4}}", gpus=None), "EML604") == []  # no devices declared
    assert len(lint(runtime("{mpi: {numProcPerNode: 4}}"), "EML604")) == 1
