"""EML401/EML402 judge Slurm batch scripts on the hardware of their partition (a Slinky NodeSet in
the run), and stay silent when the partition's hardware is not known."""

from __future__ import annotations

from pathlib import Path

import yaml
from builders import said

from eksmllint.config import Config
from eksmllint.core.engine import lint_paths

SCRIPT = """#!/bin/bash
#SBATCH --partition=gpu
#SBATCH --nodes=2
#SBATCH --gpus-per-node=8
echo "use --bf16 next time"
LAUNCHER="python -u -m torch.distributed.run --nproc_per_node 8 --nnodes $SLURM_NNODES --rdzv_endpoint $(hostname):6000"
srun bash -c "$LAUNCHER pretrain.py --fp16"
"""


def _nodeset(name: str, instance: str | None) -> dict:
    template = {"spec": {"nodeSelector": {"node.kubernetes.io/instance-type": instance}}} if instance else {"spec": {}}
    return {
        "apiVersion": "slinky.slurm.net/v1beta1",
        "kind": "NodeSet",
        "metadata": {"name": name, "namespace": "slurm"},
        "spec": {"controllerRef": {"name": "slurm"}, "partition": {"enabled": True}, "template": template},
    }


def _lint(tmp_path: Path, *nodesets: dict) -> list[str]:
    (tmp_path / "train.sbatch").write_text(SCRIPT)
    (tmp_path / "nodesets.yaml").write_text(yaml.safe_dump_all(nodesets))
    result = lint_paths([str(tmp_path)], Config())
    return [f"{f.location.line}:{f.location.col} {f.message} {f.detail}" for f in result.active if f.code == "EML401"]


def test_fp16_on_an_a100_partition_is_reported_at_the_flag(tmp_path):
    (found,) = _lint(tmp_path, _nodeset("gpu", "p4d.24xlarge"))
    assert found.startswith("7:") and "(--fp16)" in found and "partition 'gpu' of NodeSet 'gpu'" in found


def test_unknown_partition_hardware_stays_silent(tmp_path):
    assert _lint(tmp_path, _nodeset("gpu", None)) == []  # the NodeSet does not pin an instance type
    assert _lint(tmp_path, _nodeset("cpu", "p4d.24xlarge")) == []  # no NodeSet serves partition gpu


CONFIG_SCRIPT = """#!/bin/bash
#SBATCH --partition=gpu
#SBATCH --nodes=2
#SBATCH --gpus-per-node=8
srun --ntasks-per-node=1 accelerate launch --config_file configs/acc.yaml train.py
srun --ntasks-per-node=1 torchrun --nproc_per_node 8 train.py --deepspeed ds_config.json
"""


def _lint_configs(tmp_path: Path, files: dict[str, str]) -> list[str]:
    (tmp_path / "configs").mkdir()
    (tmp_path / "train.sbatch").write_text(CONFIG_SCRIPT)
    (tmp_path / "nodesets.yaml").write_text(yaml.safe_dump(_nodeset("gpu", "p4d.24xlarge")))
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    result = lint_paths([str(tmp_path)], Config())
    return [f"{f.location.line}:{f.location.col} {said(f)}" for f in result.active if f.code == "EML401"]


def test_a_config_file_beside_the_script_is_read_for_precision(tmp_path):
    accelerate = "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nmixed_precision: fp16\n"
    (found,) = _lint_configs(tmp_path, {"configs/acc.yaml": accelerate})
    assert found.startswith("5:") and "accelerate mixed_precision: fp16 in" in found and "acc.yaml" in found
    deepspeed = '{"train_micro_batch_size_per_gpu": 4, "fp16": {"enabled": true}}'
    (found,) = _lint_configs(_fresh(tmp_path), {"ds_config.json": deepspeed})
    assert found.startswith("6:") and "fp16.enabled: true" in found


def test_a_config_the_script_does_not_name_or_that_selects_bf16_stays_silent(tmp_path):
    bf16 = "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nmixed_precision: bf16\n"
    assert _lint_configs(tmp_path, {"configs/acc.yaml": bf16}) == []
    fp16 = "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nmixed_precision: fp16\n"
    assert _lint_configs(_fresh(tmp_path), {"configs/other.yaml": fp16}) == []  # not the file it names


def _fresh(tmp_path: Path) -> Path:
    d = tmp_path / "again"
    d.mkdir()
    return d
