"""EML401/EML402 judge Slurm batch scripts on the hardware of their partition (a Slinky NodeSet in
the run), and stay silent when the partition's hardware is not known."""

from __future__ import annotations

from pathlib import Path

import yaml

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
