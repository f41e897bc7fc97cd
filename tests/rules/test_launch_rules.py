"""Unit tests of the launch rules (EML005, EML801-EML810) beyond their fixtures.

The fixtures pin *where* findings are; these tests pin the cases a fixture cannot express: JSON
files (which hold no ``# expect`` comments), how ``--deepspeed PATH`` is matched to a file of the
run, fixes and the text edits EML805 carries, and the silence cases. Inputs are small inline
snippets shaped like the user's seed manifests.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from builders import said

from eksmllint.checks.launch.eml805_srun_launcher_multiplied import text_edits_805
from eksmllint.checks.launch.eml807_mutable_image import image_mutability
from eksmllint.config import Config
from eksmllint.core.engine import lint_paths, lint_text
from eksmllint.core.finding import RemovePath, SetValue
from eksmllint.fix.apply import apply_fix
from eksmllint.launch import parse_sbatch

SEED_SLURM = textwrap.dedent(
    """\
    #!/bin/bash
    #SBATCH --job-name=llama3-finetune
    #SBATCH --partition=gpu-a100
    #SBATCH --nodes=4
    #SBATCH --ntasks-per-node=8
    #SBATCH --gpus-per-node=8
    export MASTER_ADDR=$(scontrol show hostname $SLURM_NODELIST | head -n 1)
    export MASTER_PORT=29500
    export WORLD_SIZE=$((SLURM_NNODES * SLURM_NTASKS_PER_NODE))
    srun --ntasks=$WORLD_SIZE \\
        --ntasks-per-node=$SLURM_NTASKS_PER_NODE \\
        torchrun \\
            --nnodes=$SLURM_NNODES \\
            --nproc_per_node=$SLURM_NTASKS_PER_NODE \\
            --rdzv_backend=c10d \\
            --rdzv_endpoint=$MASTER_ADDR:$MASTER_PORT \\
            train_llama.py \\
                --per_device_train_batch_size 1 \\
                --gradient_accumulation_steps 8 \\
                --bf16 \\
                --deepspeed configs/ds_config_zero3.json
    """
)

DS_ZERO3 = textwrap.dedent(
    """\
    {
      "bf16": {
        "enabled": true
      },
      "zero_optimization": {
        "stage": 3
      },
      "gradient_accumulation_steps": 32,
      "train_micro_batch_size_per_gpu": 1
    }
    """
)


def lint(paths: list[Path], *codes: str):
    result = lint_paths([str(p) for p in paths], Config(select=codes))
    return [f for f in result.active if f.code in codes]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- EML809 matching


def test_seed_deepspeed_config_beside_the_script_is_matched(tmp_path: Path) -> None:
    script = write(tmp_path / "05-slurm-llama3-finetune-job.sh", SEED_SLURM)
    cfg = write(tmp_path / "25-deepspeed-zero3-config.json", DS_ZERO3)
    found = lint([tmp_path], "EML809")
    assert len(found) == 1
    f = found[0]
    assert f.location.file == str(cfg) and f.location.line == 8  # "gradient_accumulation_steps": 32
    assert "32" in said(f) and "--gradient_accumulation_steps 8" in said(f) and "line 19" in said(f)
    assert "the only DeepSpeed config beside the script" in said(f)
    assert f.fix is not None and f.fix.ops == (SetValue(("gradient_accumulation_steps",), "auto"),)
    fixed = json.loads(apply_fix(cfg.read_text(), f.fix, json_file=True))
    assert fixed["gradient_accumulation_steps"] == "auto" and fixed["bf16"] == {"enabled": True}
    assert script.exists()


def test_exact_relative_path_wins_over_other_configs(tmp_path: Path) -> None:
    write(tmp_path / "run.sbatch", SEED_SLURM)
    exact = write(tmp_path / "configs" / "ds_config_zero3.json", DS_ZERO3)
    write(tmp_path / "other_deepspeed.json", DS_ZERO3.replace("32", "8"))
    found = lint([tmp_path], "EML809")
    assert [(f.location.file, "matched" in said(f)) for f in found] == [(str(exact), False)]


def test_basename_match_names_how_it_matched(tmp_path: Path) -> None:
    write(tmp_path / "jobs" / "run.sbatch", SEED_SLURM)
    cfg = write(tmp_path / "jobs" / "ds" / "ds_config_zero3.json", DS_ZERO3)
    found = lint([tmp_path], "EML809")
    assert len(found) == 1 and found[0].location.file == str(cfg)
    assert "matched by file name" in said(found[0])


def test_two_candidate_configs_and_no_name_match_stay_silent(tmp_path: Path) -> None:
    write(tmp_path / "run.sbatch", SEED_SLURM)
    write(tmp_path / "ds_config_a.json", DS_ZERO3)
    write(tmp_path / "ds_config_b.json", DS_ZERO3)
    assert lint([tmp_path], "EML809") == []


def test_config_in_another_directory_is_not_guessed(tmp_path: Path) -> None:
    write(tmp_path / "slurm" / "run.sbatch", SEED_SLURM)
    write(tmp_path / "deepspeed" / "zero3.json", DS_ZERO3)
    assert lint([tmp_path], "EML809") == []


def test_auto_values_and_matching_values_are_clean(tmp_path: Path) -> None:
    write(tmp_path / "run.sbatch", SEED_SLURM.replace("--ntasks-per-node=8", "--ntasks-per-node=1"))
    write(tmp_path / "configs" / "ds_config_zero3.json", DS_ZERO3.replace("32", '"auto"'))
    assert lint([tmp_path], "EML809") == []


def test_train_batch_size_against_world_size(tmp_path: Path) -> None:
    script = SEED_SLURM.replace("--ntasks-per-node=8", "--ntasks-per-node=1").replace(
        "--nproc_per_node=$SLURM_NTASKS_PER_NODE", "--nproc_per_node=8"
    )
    write(tmp_path / "run.sbatch", script)
    # micro 1 x accumulation 8 (auto -> launcher) x 4 nodes x 8 GPUs = 256, not 512
    cfg = DS_ZERO3.replace(
        '"gradient_accumulation_steps": 32', '"gradient_accumulation_steps": "auto",\n  "train_batch_size": 512'
    )
    write(tmp_path / "configs" / "ds_config_zero3.json", cfg)
    found = lint([tmp_path], "EML809")
    assert len(found) == 1 and "= 256" in said(found[0]) and "refuses to start" in said(found[0])
    write(tmp_path / "configs" / "ds_config_zero3.json", cfg.replace("512", "256"))
    assert lint([tmp_path], "EML809") == []


def test_plain_deepspeed_config_gets_no_auto_fix(tmp_path: Path) -> None:
    # DeepSpeed's own --deepspeed_config rejects "auto": report without a fix
    write(tmp_path / "run.sbatch", SEED_SLURM.replace("--deepspeed configs/", "--deepspeed_config configs/"))
    write(tmp_path / "configs" / "ds_config_zero3.json", DS_ZERO3)
    found = lint([tmp_path], "EML809")
    assert len(found) == 1 and found[0].fix is None


def test_precision_mismatch_in_a_json_file(tmp_path: Path) -> None:
    write(
        tmp_path / "run.sbatch",
        SEED_SLURM.replace("--bf16", "--fp16").replace("accumulation_steps 8", "accumulation_steps 32"),
    )
    cfg = write(tmp_path / "configs" / "ds_config_zero3.json", DS_ZERO3)
    found = lint([tmp_path], "EML809")
    assert len(found) == 1 and found[0].location.line == 3  # "enabled": true of the bf16 block
    assert "bf16.enabled is true" in said(found[0]) and "fp16" in said(found[0])
    fixed = json.loads(apply_fix(cfg.read_text(), found[0].fix, json_file=True))
    assert fixed["bf16"] == {"enabled": "auto"} and fixed["fp16"] == {"enabled": "auto"}


# --------------------------------------------------------------------------- EML005


def test_invalid_json_is_left_to_eml001(tmp_path: Path) -> None:
    write(tmp_path / "ds_config.json", '{\n  "zero_optimization": {"stage": 3,,}\n}\n')
    result = lint_paths([str(tmp_path)], Config(select=("EML005",)))
    codes = [f.code for f in result.active]
    assert "EML001" in codes and "EML005" not in codes


def test_deepspeed_value_errors_in_a_json_file(tmp_path: Path) -> None:
    cfg = write(tmp_path / "zero.json", '{\n  "zero_optimization": {\n    "stage": "three"\n  }\n}\n')
    found = lint([tmp_path], "EML005")
    assert [(f.location.file, f.location.line) for f in found] == [(str(cfg), 3)]
    assert "zero_optimization.stage" in said(found[0])


def test_json_named_by_a_launcher_counts_even_without_a_deepspeed_name(tmp_path: Path) -> None:
    write(tmp_path / "run.sbatch", SEED_SLURM.replace("configs/ds_config_zero3.json", "train.json"))
    write(tmp_path / "train.json", '{"train_batch_size": "lots"}\n')
    found = lint([tmp_path], "EML005")
    assert len(found) == 1 and "Named by --deepspeed train.json" in said(found[0])
    # an unrelated JSON file with the same content is not a DeepSpeed config
    write(tmp_path / "run.sbatch", SEED_SLURM)
    assert lint([tmp_path], "EML005") == []


def test_unmounted_configmaps_are_not_checked() -> None:
    text = textwrap.dedent(
        """\
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: ds}
        data:
          ds_config.json: '{"train_batch_size": "lots"}'
        """
    )
    assert [f for f in lint_text(text, Config(select=("EML005",))).active if f.code == "EML005"] == []


# --------------------------------------------------------------------------- EML805 text edits


def _apply_edits(text: str, edits) -> str:
    lines = text.split("\n")
    for line, col, old, new in edits:
        src = lines[line - 1]
        assert src[col - 1 : col - 1 + len(old)] == old
        lines[line - 1] = src[: col - 1] + new + src[col - 1 + len(old) :]
    return "\n".join(lines)


def test_eml805_edits_make_one_launcher_per_node_with_all_gpus() -> None:
    script = parse_sbatch(SEED_SLURM)
    inv = script.invocations[0]
    edits = text_edits_805(SEED_SLURM, script, inv)
    assert [e[2:] for e in edits] == [
        ("--ntasks-per-node=8", "--ntasks-per-node=1"),
        ("--nproc_per_node=$SLURM_NTASKS_PER_NODE", "--nproc_per_node=8"),
    ]
    after = parse_sbatch(_apply_edits(SEED_SLURM, edits))
    fixed = after.invocations[0]
    assert after.tasks_per_node(fixed.under_srun) == 1
    assert fixed.option("nproc_per_node").int_value() == 8
    assert fixed.under_srun.int_option("ntasks") == 4  # WORLD_SIZE follows the directive


def test_eml805_literal_srun_count_is_edited_in_place(tmp_path: Path) -> None:
    text = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=4\nsrun -n 8 torchrun --nproc_per_node=4 --nnodes=2 --rdzv_endpoint=h:1 t.py\n"
    src = write(tmp_path / "a.sbatch", text)
    found = lint([src], "EML805")
    assert len(found) == 1 and found[0].location.line == 4
    fix = found[0].fix
    assert fix is not None and fix.edits_text
    edits = [(op.line, op.col, op.old, op.new) for op in fix.ops]
    after = parse_sbatch(_apply_edits(text, edits))
    assert after.tasks_per_node(after.invocations[0].under_srun) == 1


def test_eml805_silent_for_one_task_or_plain_python(tmp_path: Path) -> None:
    one = write(tmp_path / "one.sbatch", SEED_SLURM.replace("--ntasks-per-node=8", "--ntasks-per-node=1"))
    py = write(tmp_path / "py.sbatch", "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\nsrun python train.py\n")
    assert lint([one, py], "EML805") == []


# --------------------------------------------------------------------------- container rules


TRAINIUM_JOB = textwrap.dedent(
    """\
    apiVersion: batch/v1
    kind: Job
    metadata: {name: llama3-lora, namespace: training}
    spec:
      parallelism: 4
      completions: 4
      template:
        spec:
          restartPolicy: OnFailure
          initContainers:
            - name: setup
              image: amazon/aws-cli:latest
              command: ["/bin/bash", "-c", "aws s3 sync s3://b/m /shared/m"]
          containers:
            - name: trainer
              image: 763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training-neuronx:2.1.0-neuronx-py310-sdk2.18.0-ubuntu20.04
              command: ["torchrun", "--nproc_per_node=32", "--nnodes=4", "--node_rank=$(JOB_COMPLETION_INDEX)",
                        "--master_addr=$(MASTER_ADDR)", "train_lora.py"]
              args: ["--output_dir=/shared/checkpoints/lora"]
              env:
                - name: MASTER_ADDR
                  valueFrom: {fieldRef: {fieldPath: status.podIP}}
                - name: JOB_COMPLETION_INDEX
                  valueFrom: {fieldRef: {fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}
              resources:
                limits: {aws.amazon.com/neuron: 16, memory: 500Gi, cpu: "128"}
              volumeMounts:
                - {name: shared, mountPath: /shared}
          volumes:
            - name: shared
              persistentVolumeClaim: {claimName: fsx}
    """
)


def _codes(text: str, *codes: str):
    return [f for f in lint_text(text, Config(select=codes)).active if f.code in codes]


def test_seed_trainium_job_findings() -> None:
    found = {f.code: f for f in _codes(TRAINIUM_JOB, "EML801", "EML802", "EML807", "EML808", "EML810", "EML804")}
    assert set(found) == {"EML801", "EML802", "EML807", "EML808"}
    fix = found["EML801"].fix
    assert fix is not None and fix.ops == (SetValue(("spec", "completionMode"), "Indexed"),)
    assert "1 more use" in found["EML801"].message
    assert "aws-cli:latest" in said(found["EML807"]) and "init container" in found["EML807"].message


def test_eml801_fix_applies_and_cronjob_path() -> None:
    f = _codes(TRAINIUM_JOB, "EML801")[0]
    fixed = apply_fix(TRAINIUM_JOB, f.fix)
    assert _codes(fixed, "EML801") == []
    cron = textwrap.dedent(
        """\
        apiVersion: batch/v1
        kind: CronJob
        metadata: {name: nightly}
        spec:
          schedule: "0 1 * * *"
          jobTemplate:
            spec:
              completions: 2
              parallelism: 2
              template:
                spec:
                  restartPolicy: Never
                  containers:
                    - name: shard
                      image: python:3.11.9
                      args: ["python", "s.py", "--shard", "$(JOB_COMPLETION_INDEX)"]
        """
    )
    (f,) = _codes(cron, "EML801")
    assert f.fix.ops == (SetValue(("spec", "jobTemplate", "spec", "completionMode"), "Indexed"),)


def test_eml803_fix_removes_the_env_entry() -> None:
    text = textwrap.dedent(
        """\
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          containers:
            - name: c
              image: nvcr.io/nvidia/pytorch:24.05-py3
              env:
                - {name: CUDA_VISIBLE_DEVICES, value: "0"}
                - {name: KEEP, value: "1"}
              resources:
                limits: {nvidia.com/gpu: 2}
        """
    )
    (f,) = _codes(text, "EML803")
    assert f.fix.ops == (RemovePath(("spec", "containers", 0, "env", 0)),)
    assert "hides 1 of the 2" in said(f)
    assert "KEEP" in apply_fix(text, f.fix) and "CUDA_VISIBLE_DEVICES" not in apply_fix(text, f.fix)


@pytest.mark.parametrize(
    ("image", "mutable"),
    [
        ("amazon/aws-cli:latest", True),
        ("busybox", True),
        ("my-registry:5000/team/img", True),
        ("my-registry:5000/team/img:1.2", False),
        ("img:latest@sha256:" + "a" * 64, False),
        ("nvcr.io/nvidia/pytorch:24.05-py3", False),
        ("$(IMAGE)", False),
        ("IMG_PLACEHOLDER", False),
        ("<ACCOUNT>.dkr.ecr.us-west-2.amazonaws.com/x:latest", False),
        ("", False),
    ],
)
def test_image_mutability(image: str, mutable: bool) -> None:
    assert (image_mutability(image) is not None) == mutable


def test_eml804_operator_and_env_silence() -> None:
    base = textwrap.dedent(
        """\
        apiVersion: batch.volcano.sh/v1alpha1
        kind: Job
        metadata: {name: v}
        spec:
          schedulerName: volcano
          minAvailable: 2
          PLUGINS
          tasks:
            - name: worker
              replicas: 2
              template:
                spec:
                  restartPolicy: Never
                  containers:
                    - name: c
                      image: pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime
                      command: ["torchrun", "--nnodes=2", "--nproc_per_node=1", "t.py"]
                      ENV
        """
    )

    def make(plugins: str = "", env: str = "") -> str:
        return base.replace("PLUGINS", plugins).replace("ENV", env)

    assert len(_codes(make(), "EML804")) == 1
    # Volcano's pytorch plugin and a plain MASTER_ADDR set variables torchrun does not read
    plugin = make(plugins='plugins: {pytorch: ["--port=23456"]}')
    assert len(_codes(plugin, "EML804")) == 1
    assert len(_codes(make(env='env: [{name: MASTER_ADDR, value: "v-worker-0.v"}]'), "EML804")) == 1
    wired = plugin.replace('"--nnodes=2",', '"--nnodes=2", "--master_addr=$(MASTER_ADDR)", "--node_rank=$(RANK)",')
    assert _codes(wired, "EML804") == []
    assert _codes(make(env='env: [{name: PET_MASTER_ADDR, value: "v-worker-0.v"}]'), "EML804") == []
    elastic = make().replace("--nnodes=2", "--nnodes=1:2")
    assert len(_codes(elastic, "EML804")) == 1
    single = make().replace("--nnodes=2", "--nnodes=1")
    assert _codes(single, "EML804") == []


def test_eml810_bash_script_points_at_its_list_element() -> None:
    text = textwrap.dedent(
        """\
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          containers:
            - name: c
              image: nvcr.io/nvidia/pytorch:24.05-py3
              workingDir: /work
              command: ["bash", "-c", "cd /work\\npython train.py --save_dir out/ckpt"]
              resources:
                limits: {nvidia.com/gpu: 1}
        """
    )
    (f,) = _codes(text, "EML810")
    assert f.location.path == ("spec", "containers", 0, "command", 2)
    assert "/work/out/ckpt" in said(f) and "line 2 of the command[2] script" in said(f)


def test_rules_never_raise_on_odd_shapes(tmp_path: Path) -> None:
    odd = textwrap.dedent(
        """\
        apiVersion: batch/v1
        kind: Job
        metadata: {name: odd}
        spec:
          completions: "4"
          completionMode: 7
          template:
            spec:
              restartPolicy: [x]
              volumes: [{name: v, downwardAPI: {items: [{fieldRef: 3}]}}, 5]
              containers:
                - name: c
                  image: 12
                  command: [torchrun, --nnodes, 4, 7, null]
                  args: {a: b}
                  env: [{name: MASTER_ADDR, valueFrom: [1]}, {name: CUDA_VISIBLE_DEVICES, value: 3}, 9]
                  resources: {limits: {nvidia.com/gpu: x}}
                  volumeMounts: [{name: v, mountPath: 5}]
        ---
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: cm}
        data: [1, 2]
        """
    )
    write(tmp_path / "odd.yaml", odd)
    write(tmp_path / "ds_config.json", "[1, 2]\n")
    write(tmp_path / "x.sbatch", "#SBATCH --nodes=\x00\nsrun 'unterminated\n")
    result = lint_paths([str(tmp_path)], Config(select=("EML005", "EML8")))
    assert not [f for f in result.active if f.code == "EML000"], [said(f) for f in result.active]


def _checkpoint_pod(args: str, mounts: str = "", volumes: str = "", working_dir: str = "") -> str:
    """A one-GPU training pod running ``torchrun train.py ARGS`` with the given mounts."""
    return (
        textwrap.dedent(
            """\
        apiVersion: batch/v1
        kind: Job
        metadata: {name: train}
        spec:
          backoffLimit: 0
          template:
            spec:
              restartPolicy: Never
              containers:
                - name: train
                  image: nvcr.io/nvidia/pytorch:24.05-py3
        """
        )
        + textwrap.indent(
            textwrap.dedent(
                f"""\
            {working_dir}
            command: [torchrun, --nproc_per_node=1, train.py, {args}]
            resources:
              limits: {{nvidia.com/gpu: 1}}
            volumeMounts:
              - {{name: shm, mountPath: /dev/shm}}
            {mounts}
            """
            ),
            " " * 10,
        )
        + textwrap.indent(
            textwrap.dedent(
                f"""\
            volumes:
              - {{name: shm, emptyDir: {{medium: Memory}}}}
            {volumes}
            """
            ),
            " " * 6,
        )
    )


@pytest.mark.parametrize(
    "args",
    ["--checkpoint_dir=./checkpoints", "--checkpoint-dir, checkpoints", "--save_dir=out/ckpt", "--output_dir, ."],
)
def test_eml810_relative_checkpoint_dir_without_a_writable_volume_is_the_container_filesystem(args: str) -> None:
    (f,) = _codes(_checkpoint_pod(args), "EML810")
    assert "image's working directory" in said(f) and "container's own filesystem" in said(f)


def test_eml810_relative_checkpoint_dir_stays_silent_when_a_volume_may_hold_the_working_directory() -> None:
    pvc = _checkpoint_pod(
        "--checkpoint_dir=./checkpoints",
        mounts="  - {name: data, mountPath: /workspace}",
        volumes="  - {name: data, persistentVolumeClaim: {claimName: data}}",
    )
    assert _codes(pvc, "EML810") == []
    # a read-only volume (ConfigMap) cannot hold checkpoints: it does not change the verdict
    config = _checkpoint_pod(
        "--checkpoint_dir=./checkpoints",
        mounts="  - {name: cfg, mountPath: /config}",
        volumes="  - {name: cfg, configMap: {name: cfg}}",
    )
    assert len(_codes(config, "EML810")) == 1


def test_eml810_relative_checkpoint_dir_on_scratch_volumes_only_is_lost_either_way() -> None:
    scratch = _checkpoint_pod(
        "--checkpoint_dir=./checkpoints",
        mounts="  - {name: scratch, mountPath: /workspace}",
        volumes="  - {name: scratch, emptyDir: {}}",
    )
    (f,) = _codes(scratch, "EML810")
    assert "'scratch'" in said(f) and "deleted with the pod" in said(f)


def test_eml810_checkpoint_file_on_no_volume() -> None:
    (f,) = _codes(_checkpoint_pod("--checkpoint-file=/workspace/checkpoint.pth.tar"), "EML810")
    assert "--checkpoint-file /workspace/checkpoint.pth.tar" in said(f) and "on no volume" in said(f)


def test_eml810_tmp_is_the_container_filesystem_unless_a_volume_is_mounted_there() -> None:
    (f,) = _codes(_checkpoint_pod("--checkpoint_dir=/tmp/ckpt"), "EML810")
    assert "/tmp" in said(f) and "container's own filesystem" in said(f)
    on_pvc = _checkpoint_pod(
        "--checkpoint_dir=/tmp/ckpt",
        mounts="  - {name: ckpt, mountPath: /tmp}",
        volumes="  - {name: ckpt, persistentVolumeClaim: {claimName: ckpt}}",
    )
    assert _codes(on_pvc, "EML810") == []


@pytest.mark.parametrize(
    "args",
    [
        "--resume_from_checkpoint=./checkpoints",  # read, not written
        "--checkpoint=./ckpt/model.pt",  # load or save: unknown
        "--checkpoint_path=/models/base.pt",  # often the weights a fine-tune starts from
        "--save=./ckpt",  # Megatron --save relative: the launcher's directory is unknown
        "--checkpoint_dir=$(CKPT)",
    ],
)
def test_eml810_stays_silent_on_reads_and_unknown_destinations(args: str) -> None:
    assert _codes(_checkpoint_pod(args), "EML810") == []


def _jobset(failure_policy: str = "", job_spec: str = "backoffLimit: 0", restart: str = "Never") -> str:
    """A 4-pod torchrun JobSet (2 child Jobs of 2 pods) with the given failurePolicy and child Job spec."""
    head = "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: llama}\nspec:\n"
    body = textwrap.dedent(
        f"""\
        replicatedJobs:
          - name: workers
            replicas: 2
            template:
              spec:
                parallelism: 2
                completions: 2
                {job_spec}
                template:
                  spec:
                    restartPolicy: {restart}
                    containers:
                      - name: train
                        image: nvcr.io/nvidia/pytorch:24.05-py3
                        command: [torchrun, --nnodes=4, --nproc_per_node=8, --rdzv_backend=c10d,
                                  "--rdzv_endpoint=llama-workers-0-0.llama:29400", train.py]
                        resources:
                          limits: {{nvidia.com/gpu: 8}}
        """
    )
    return head + textwrap.indent(textwrap.dedent(failure_policy) + body, "  ")


def test_eml808_jobset_failure_policy_restarts_the_group_only_after_a_child_job_fails() -> None:
    policy = "failurePolicy: {maxRestarts: 3}\n"
    assert _codes(_jobset(policy), "EML808") == []  # the documented pattern: backoffLimit 0
    (f,) = _codes(_jobset(policy, job_spec="backoffLimit: 6"), "EML808")
    assert f.location.path[-1] == "backoffLimit"
    assert "failurePolicy acts on the whole JobSet only after a child Job fails" in said(f)
    assert "backoffLimit: 0" in said(f)
    (unset,) = _codes(_jobset(policy, job_spec="completionMode: Indexed"), "EML808")
    assert "default 6" in said(unset)
    # OnFailure restarts the container in place; the Job fails (and the JobSet restarts) once the
    # restarts pass backoffLimit, so a small backoffLimit is the same fast failure
    (on_failure,) = _codes(_jobset(policy, job_spec="backoffLimit: 6", restart="OnFailure"), "EML808")
    assert "OnFailure" in said(on_failure)
    assert _codes(_jobset(policy, restart="OnFailure"), "EML808") == []


def test_eml808_jobset_without_failure_policy_still_reports_pod_retries() -> None:
    (f,) = _codes(_jobset(job_spec="backoffLimit: 6"), "EML808")
    assert "set spec.failurePolicy" in said(f)
    assert _codes(_jobset(), "EML808") == []  # backoffLimit 0 and no failurePolicy: the JobSet fails fast


def test_eml808_jobset_in_place_restart_strategy_restarts_every_pod_together() -> None:
    policy = "failurePolicy: {maxRestarts: 3, restartStrategy: InPlaceRestart}\n"
    assert _codes(_jobset(policy, job_spec="backoffLimit: 2147483647"), "EML808") == []


def test_eml808_jobset_rule_that_ignores_max_restarts_on_every_failure_loops_forever() -> None:
    unbounded = """\
        failurePolicy:
          maxRestarts: 3
          rules:
            - name: always
              action: RestartJobSetAndIgnoreMaxRestarts
        """
    (f,) = _codes(_jobset(unbounded), "EML808")
    assert f.location.path == ("spec", "failurePolicy", "rules", 0, "action")
    assert "forever" in said(f) and "onJobFailureReasons" in said(f)
    scoped = """\
        failurePolicy:
          maxRestarts: 3
          rules:
            - action: RestartJobSetAndIgnoreMaxRestarts
              onJobFailureReasons: [PodFailurePolicy]
            - action: RestartJobSet
        """
    assert _codes(_jobset(scoped), "EML808") == []
    caught_first = """\
        failurePolicy:
          rules:
            - action: FailJobSet
            - action: RestartJobSetAndIgnoreMaxRestarts
        """
    assert _codes(_jobset(caught_first), "EML808") == []  # the first rule matches every failure


def _training_runtime(failure_policy: str = "", job_spec: str = "backoffLimit: 0") -> str:
    """:func:`_jobset`'s JobSet as a TrainingRuntime's template (no TrainJob of the run uses it)."""
    jobset = _jobset(failure_policy, job_spec).split("spec:\n", 1)[1]
    head = "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainingRuntime\nmetadata: {name: llama}\n"
    return (
        head + "spec:\n  mlPolicy: {numNodes: 4, torch: {}}\n  template:\n    spec:\n" + textwrap.indent(jobset, "    ")
    )


def test_eml808_reads_a_training_runtimes_jobset_failure_policy() -> None:
    unbounded = """\
        failurePolicy:
          rules:
            - action: RestartJobSetAndIgnoreMaxRestarts
        """
    (f,) = _codes(_training_runtime(unbounded), "EML808")
    assert f.location.path == ("spec", "template", "spec", "failurePolicy", "rules", 0, "action")
    assert "forever" in said(f)
    (retries,) = _codes(_training_runtime("failurePolicy: {maxRestarts: 3}\n", "backoffLimit: 6"), "EML808")
    assert "spec.template.spec.failurePolicy acts on the whole JobSet" in said(retries)
    assert _codes(_training_runtime("failurePolicy: {maxRestarts: 3}\n"), "EML808") == []
    in_place = "failurePolicy: {maxRestarts: 3, restartStrategy: InPlaceRestart}\n"
    assert _codes(_training_runtime(in_place, "backoffLimit: 6"), "EML808") == []


def _lws(restart_policy: str) -> str:
    return textwrap.dedent(
        f"""\
        apiVersion: leaderworkerset.x-k8s.io/v1
        kind: LeaderWorkerSet
        metadata: {{name: trainer}}
        spec:
          replicas: 1
          leaderWorkerTemplate:
            size: 4
            {restart_policy}
            workerTemplate:
              spec:
                containers:
                  - name: train
                    image: nvcr.io/nvidia/pytorch:24.05-py3
                    command: [torchrun, --nnodes=4, --nproc_per_node=8, --rdzv_backend=c10d,
                              "--rdzv_endpoint=$(LWS_LEADER_ADDRESS):29400", train.py]
                    resources:
                      limits: {{nvidia.com/gpu: 8}}
        """
    )


def test_eml808_leaderworkerset_group_restart_policy() -> None:
    (f,) = _codes(_lws("restartPolicy: None"), "EML808")
    assert f.location.path == ("spec", "leaderWorkerTemplate", "restartPolicy")
    assert "4-pod group" in said(f) and "RecreateGroupOnPodRestart" in said(f)
    assert len(_codes(_lws("restartPolicy: Default"), "EML808")) == 1  # the deprecated name of None
    assert _codes(_lws(""), "EML808") == []  # the default recreates the whole group
    assert _codes(_lws("restartPolicy: RecreateGroupAfterStart"), "EML808") == []


# --------------------------------------------------------------------------- Slurm: srun-native launches


def _sbatch(tmp_path: Path, header: str, step: str, name: str = "train.sbatch") -> Path:
    lines = ["#!/bin/bash"] + [f"#SBATCH {d}" for d in header.split(";")] + [step]
    return write(tmp_path / name, "\n".join(lines) + "\n")


def test_eml806_srun_native_one_task_per_gpu_is_judged_right(tmp_path: Path) -> None:
    ok = _sbatch(tmp_path, "--nodes=2;--ntasks-per-node=8;--gpus-per-task=1", "srun python train.py")
    assert lint([ok], "EML806", "EML805") == []
    over = _sbatch(tmp_path, "--nodes=2;--ntasks-per-node=8;--gpus-per-node=4", "srun python train.py", "over.sbatch")
    (f,) = lint([over], "EML806")
    assert "8 Python processes per node" in said(f) and "4 GPUs per node" in said(f)


def test_eml806_gpus_per_task_counts_the_gpus_of_a_per_node_launcher(tmp_path: Path) -> None:
    script = _sbatch(
        tmp_path,
        "--nodes=2",
        "srun --ntasks-per-node=1 --gpus-per-task=4 torchrun --nnodes=2 --nproc_per_node=8 "
        "--rdzv_backend=c10d --rdzv_endpoint=$HEAD:29500 train.py",
    )
    (f,) = lint([script], "EML806")
    assert "--nproc_per_node=8" in said(
        f
    ) and "4 GPUs per node GPUs per node: srun --gpus-per-task=4 x 1 task per node" in said(f)
    ok = _sbatch(
        tmp_path,
        "--nodes=2;--ntasks-per-node=1;--gpus-per-task=8",
        "srun torchrun --nnodes=2 --nproc_per_node=8 --rdzv_backend=c10d --rdzv_endpoint=$HEAD:29500 train.py",
        "ok.sbatch",
    )
    assert lint([ok], "EML806") == []


def test_eml806_gpus_per_task_beyond_the_partition_nodes(tmp_path: Path) -> None:
    nodeset = write(
        tmp_path / "nodeset.yaml",
        textwrap.dedent(
            """\
            apiVersion: slinky.slurm.net/v1alpha1
            kind: NodeSet
            metadata: {name: gpu, namespace: slurm}
            spec:
              replicas: 2
              partition: {enabled: true}
              template:
                spec:
                  nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}
            """
        ),
    )
    script = _sbatch(tmp_path, "--partition=gpu;--nodes=2;--ntasks-per-node=8;--gpus-per-task=2", "srun python t.py")
    (f,) = lint([script, nodeset], "EML806")
    assert "16 GPUs per node" in said(f) and "have 8" in said(f)


def test_eml806_torchrun_without_nnodes_on_several_nodes_runs_one_world_per_node(tmp_path: Path) -> None:
    step = "srun torchrun --nproc_per_node=8 --rdzv_backend=c10d --rdzv_endpoint=$HEAD:29500 train.py"
    (f,) = lint([_sbatch(tmp_path, "--nodes=4;--ntasks-per-node=1;--gpus-per-node=8", step)], "EML806")
    assert "no --nnodes" in said(f) and "4 nodes" in said(f)
    one_node = step.replace("srun torchrun", "srun --nodes=1 torchrun")
    assert lint([_sbatch(tmp_path, "--nodes=4;--gpus-per-node=8", one_node, "one.sbatch")], "EML806") == []
    exported = "export PET_NNODES=4\n" + step
    assert lint([_sbatch(tmp_path, "--nodes=4;--gpus-per-node=8", exported, "pet.sbatch")], "EML806") == []


def test_eml809_world_size_from_sbatch_nodes_and_gpus_when_torchrun_uses_every_gpu(tmp_path: Path) -> None:
    write(
        tmp_path / "ds_config.json",
        '{"train_batch_size": 32, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 2}\n',
    )
    step = (
        "srun torchrun --nnodes=$SLURM_NNODES --nproc_per_node=gpu --rdzv_backend=c10d "
        "--rdzv_endpoint=$HEAD:29500 train.py --deepspeed ds_config.json"
    )
    script = _sbatch(tmp_path, "--nodes=4;--ntasks-per-node=1;--gpus-per-node=8", step)
    (f,) = lint([script, tmp_path / "ds_config.json"], "EML809")
    assert "micro batch 2 x gradient accumulation 2 x 32 processes" in said(f)
    assert "--nproc_per_node=gpu: 8 GPUs per node" in said(f)
    unknown_gpus = _sbatch(tmp_path, "--nodes=4;--ntasks-per-node=1", step, "unknown.sbatch")
    assert lint([unknown_gpus, tmp_path / "ds_config.json"], "EML809") == []


def test_eml809_names_the_sbatch_nodes_and_srun_tasks_behind_the_world_size(tmp_path: Path) -> None:
    config = write(
        tmp_path / "ds_config.json",
        '{"train_batch_size": 32, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 2}\n',
    )
    torchrun = (
        "srun torchrun --nnodes=$SLURM_NNODES --nproc_per_node=8 --rdzv_backend=c10d "
        "--rdzv_endpoint=$HEAD:29500 train.py --deepspeed ds_config.json"
    )
    (f,) = lint([_sbatch(tmp_path, "--nodes=4;--ntasks-per-node=1;--gpus-per-node=8", torchrun), config], "EML809")
    assert "x 32 processes (--nnodes=$SLURM_NNODES is 4 from #SBATCH --nodes=4, line 2)" in said(f)
    native = _sbatch(
        tmp_path,
        "--nodes=4;--ntasks-per-node=8;--gpus-per-task=1",
        "srun python train.py --deepspeed ds_config.json",
        "native.sbatch",
    )
    (g,) = lint([native, config], "EML809")
    assert "x 32 processes (srun starts 8 tasks per node on 4 nodes)" in said(g)
    right = _sbatch(
        tmp_path,
        "--nodes=1;--ntasks-per-node=8;--gpus-per-task=1",
        "srun python train.py --deepspeed ds_config.json",
        "right.sbatch",
    )
    assert lint([right, config], "EML809") == []  # 2 x 2 x 8 = 32


def test_eml806_accelerate_num_processes_is_a_total_over_the_machines(tmp_path: Path) -> None:
    step = (
        "srun accelerate launch --num_processes=8 --num_machines=2 --machine_rank=$SLURM_NODEID "
        "--main_process_ip=$HEAD --main_process_port=29500 train.py"
    )
    (f,) = lint([_sbatch(tmp_path, "--nodes=2;--ntasks-per-node=1;--gpus-per-node=8", step)], "EML806")
    assert "accelerate --num_processes=8 over 2 machines starts 4 processes per node" in said(f)
    assert "4 allocated GPUs per node stay idle" in said(f)
    total = step.replace("--num_processes=8", "--num_processes=16")
    assert (
        lint([_sbatch(tmp_path, "--nodes=2;--ntasks-per-node=1;--gpus-per-node=8", total, "ok.sbatch")], "EML806") == []
    )


# --------------------------------------------------------------------------- EML811


@pytest.mark.parametrize(
    "step,reported",
    [
        # what srun's per-node shell expands: single quotes, or escaped in double quotes
        ("srun bash -c 'torchrun --nnodes 2 --rdzv_endpoint $(hostname):29500 t.py'", True),
        ('srun bash -c "torchrun --nnodes 2 --rdzv_endpoint \\$(hostname):29500 t.py"', True),
        ("srun bash -c 'torchrun --nnodes 2 --master_addr $SLURMD_NODENAME t.py'", True),
        # the batch shell expands it once, on the first node: the right host
        ('srun bash -c "torchrun --nnodes 2 --rdzv_endpoint $(hostname):29500 t.py"', False),
        ("srun torchrun --nnodes 2 --rdzv_endpoint $(hostname):29500 t.py", False),
        # ranks
        ("srun torchrun --nnodes 2 --node_rank 1 --master_addr $H t.py", True),
        ('srun bash -c "torchrun --nnodes 2 --node_rank $SLURM_NODEID --master_addr $H t.py"', True),
        ("srun bash -c 'torchrun --nnodes 2 --node_rank $SLURM_NODEID --master_addr $H t.py'", False),
        ('srun bash -c "torchrun --nnodes 2 --node_rank \\$SLURM_PROCID --master_addr $H t.py"', False),
        ("torchrun --nnodes 2 --node_rank 0 --master_addr $H t.py", False),  # not under srun
    ],
)
def test_811_per_node_expansions_and_constant_ranks(tmp_path: Path, step: str, reported: bool) -> None:
    write(
        tmp_path / "run.sbatch", f"#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\nH=$(hostname)\n{step}\n"
    )
    assert len(lint([tmp_path], "EML811")) == int(reported)


def test_811_silent_on_one_node(tmp_path: Path) -> None:
    step = "srun bash -c 'torchrun --rdzv_endpoint $(hostname):29500 --node_rank 0 t.py'"
    write(tmp_path / "run.sbatch", f"#!/bin/bash\n#SBATCH --nodes=1\n{step}\n")
    assert lint([tmp_path], "EML811") == []


def test_eml811_silent_on_a_rank_escaped_in_the_launcher_variable(tmp_path: Path) -> None:
    # `\$SLURM_NODEID` is stored unexpanded in LAUNCHER; the per-node `bash -c` expands it on each
    # node. The command reader follows $LAUNCHER, but when the variable was expanded is not
    # visible on the srun line: EML811 must not call it "expanded once by the batch shell".
    script = (
        "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n"
        'LAUNCHER="accelerate launch --num_machines 2 --num_processes 16 --main_process_ip node-0 '
        '--machine_rank \\$SLURM_NODEID"\n'
        'srun bash -c "$LAUNCHER train.py"\n'
    )
    (tmp_path / "train.sbatch").write_text(script)
    result = lint_paths([str(tmp_path)], Config())
    assert [f.message for f in result.active if f.code == "EML811"] == []
    # the same rank written on the srun line is expanded by the batch shell: reported
    direct = script.replace(
        'srun bash -c "$LAUNCHER train.py"',
        "srun accelerate launch --num_machines 2 --num_processes 16 --main_process_ip node-0 "
        "--machine_rank $SLURM_NODEID train.py",
    )
    (tmp_path / "train.sbatch").write_text(direct)
    assert [f.code for f in lint_paths([str(tmp_path)], Config()).active if f.code == "EML811"] == ["EML811"]


def test_eml809_names_a_value_passed_through_a_variable_by_what_it_holds(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """\
        #!/bin/bash
        #SBATCH --nodes=1
        CMD="train.py --deepspeed ds_config.json --gradient_accumulation_steps 4"
        srun --ntasks-per-node=1 torchrun --nproc_per_node=8 $CMD
        """
    )
    (tmp_path / "train.sbatch").write_text(script)
    (tmp_path / "ds_config.json").write_text('{"train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 8}')
    (f,) = [f for f in lint_paths([str(tmp_path)], Config(select=("EML809",))).active if f.code == "EML809"]
    assert "passes --gradient_accumulation_steps 4 (from $CMD) at line 4" in said(f)
