"""Precisions selected in the training configs a container's launch line reads (DeepSpeed
``fp16.enabled`` / ``bf16.enabled``, accelerate ``mixed_precision``, Lightning
``trainer.precision``, ``TrainingArguments`` ``fp16`` / ``bf16``), found and read by the one config
reader :mod:`eksmllint.analysis.configs`."""

from __future__ import annotations

from eksmllint.analysis.configs import container_configs
from eksmllint.checks.precision._uses import CONFIG, DS_CONFIG, Use
from eksmllint.workload import Container


def config_uses(run, c: Container) -> list[Use]:
    """A :class:`Use` per precision a config of ``c`` selects: at the ConfigMap key that holds the
    config, or at the launch word naming a config file of the run (which no fix rewrites)."""
    uses: list[Use] = []
    for ref in container_configs(run, c):
        cfg = ref.config
        if not cfg.form.modelled:
            continue
        origin = DS_CONFIG if cfg.form.name == "deepspeed" else CONFIG
        for precision, setting in cfg.precisions():
            text = f"{cfg.form.label} {setting} {cfg.where}"
            if cfg.mounted is not None:
                uses.append(Use(precision, origin, text, cfg.mounted.configmap, ("data", cfg.mounted.key)))
            elif ref.word is not None:
                uses.append(Use(precision, origin, text, c.template.resource, ref.word.path, word=ref.word))
    return uses
