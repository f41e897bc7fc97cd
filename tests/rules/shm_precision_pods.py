"""Pod manifests and a lint helper shared by the shm and precision rule tests."""

from __future__ import annotations

import textwrap

from eksmllint.config import Config
from eksmllint.core.engine import lint_text

SHM_AND_PRECISION = ("EML302", "EML303", "EML304", "EML305", "EML401", "EML402", "EML403", "EML404")


def lint(text: str, *codes: str):
    cfg = Config(select=codes or SHM_AND_PRECISION)
    result = lint_text(textwrap.dedent(text), cfg)
    return [f for f in result.active if f.code in (codes or SHM_AND_PRECISION) or f.code == "EML000"]


def job(container: str, volumes: str = "", spec_extra: str = "") -> str:
    """A batch Job whose pod spec has one container (indented YAML snippets)."""
    return (
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: ns}\nspec:\n  template:\n    spec:\n"
        "      restartPolicy: Never\n"
        + textwrap.indent(textwrap.dedent(spec_extra), " " * 6)
        + "      containers:\n"
        + textwrap.indent(textwrap.dedent(container), " " * 8)
        + ("      volumes:\n" + textwrap.indent(textwrap.dedent(volumes), " " * 8) if volumes else "")
    )


GPU4 = """\
- name: c
  image: repo/img:1.0
  command: ["python", "train.py", "--num_workers", "4"]
  resources:
    limits: {nvidia.com/gpu: 4, cpu: "40", memory: MEM}
  volumeMounts:
    - {name: dshm, mountPath: /dev/shm}
"""


def gpu4(mem: str = "160Gi") -> str:
    return GPU4.replace("MEM", mem)
