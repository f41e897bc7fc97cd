"""Launch analysis: container commands, Slurm batch scripts and DeepSpeed configs read into
typed structures (pure functions, no rules)."""

from .command import analyse_container, expand_k8s_vars, k8s_env
from .model import Arg, ArgPosition, Invocation, Option, Source, SrunInfo
from .slurm import Directive, SlurmScript, is_slurm_script, parse_sbatch

__all__ = [
    "Arg",
    "ArgPosition",
    "Directive",
    "Invocation",
    "Option",
    "SlurmScript",
    "Source",
    "SrunInfo",
    "analyse_container",
    "expand_k8s_vars",
    "is_slurm_script",
    "k8s_env",
    "parse_sbatch",
]
