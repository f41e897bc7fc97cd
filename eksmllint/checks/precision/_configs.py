"""Precisions selected in the training configs a launch line reads (DeepSpeed ``fp16.enabled`` /
``bf16.enabled``, accelerate ``mixed_precision``, Lightning ``trainer.precision``,
``TrainingArguments`` ``fp16`` / ``bf16``), named by a container or by a Slurm batch script, found
and read by the one config reader :mod:`eksmllint.analysis.configs`."""

from __future__ import annotations

from collections.abc import Iterator

from eksmllint.analysis.commands import SCRIPT_PATH
from eksmllint.analysis.configs import ConfigRef, container_configs, script_configs
from eksmllint.checks.precision._uses import CONFIG, DS_CONFIG, Use
from eksmllint.resource import SourceFile
from eksmllint.workload import Container


def _selections(ref: ConfigRef) -> Iterator[tuple[str, str, str]]:
    """(precision, origin, text as shown) of every precision a modelled config selects."""
    cfg = ref.config
    if not cfg.form.modelled:
        return
    origin = DS_CONFIG if cfg.form.name == "deepspeed" else CONFIG
    for precision, setting in cfg.precisions():
        yield precision, origin, f"{cfg.form.label} {setting} {cfg.where}"


def config_uses(run, c: Container) -> list[Use]:
    """A :class:`Use` per precision a config of ``c`` selects: at the ConfigMap key that holds the
    config, or at the launch word naming a config file of the run (which no fix rewrites)."""
    uses: list[Use] = []
    for ref in container_configs(run, c):
        mounted = ref.config.mounted
        for precision, origin, text in _selections(ref):
            if mounted is not None:
                uses.append(Use(precision, origin, text, mounted.configmap, ("data", mounted.key)))
            elif ref.word is not None:
                uses.append(Use(precision, origin, text, c.template.resource, ref.word.path, word=ref.word))
    return uses


def script_config_uses(run, src: SourceFile) -> list[Use]:
    """A :class:`Use` per precision a config file named by Slurm script ``src`` selects, at the
    script's word naming it."""
    return [
        Use(precision, origin, text, None, SCRIPT_PATH, word=ref.word)
        for ref in script_configs(run, src)
        if ref.word is not None
        for precision, origin, text in _selections(ref)
    ]
