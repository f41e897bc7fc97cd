"""Precision choices of Slurm batch scripts, judged against the hardware of their partition.

A script's partition (``#SBATCH --partition``) maps to hardware when a Slinky NodeSet of the run
serves it and pins an instance type (:mod:`eksmllint.analysis.partitions`); the script's words are
read by the one command reader (:mod:`eksmllint.analysis.commands`: launchers in variables,
``srun bash -c``, comments and ``echo`` text left out), its precision flags by the same
spellings as a container's (:func:`~eksmllint.checks.precision._uses.flag_uses`), and the configs
its launch lines name (a DeepSpeed, accelerate, Lightning or ``TrainingArguments`` file beside the
script) by the one config reader. A partition with
no NodeSet in the run, or one that does not pin its instance type, leaves the script unjudged.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from eksmllint.analysis.commands import batch_script_calls
from eksmllint.analysis.launch_sites import slurm_files
from eksmllint.analysis.partitions import partition_instance, partition_nodeset
from eksmllint.checks.precision._configs import script_config_uses
from eksmllint.checks.precision._uses import Use, flag_uses, unambiguous
from eksmllint.core.finding import Finding
from eksmllint.launch.slurm import script_lines
from eksmllint.resource import SourceFile


@dataclass(frozen=True)
class ScriptPrecision:
    src: SourceFile
    uses: list[Use]
    bf16: bool | None  # the partition's accelerators support bf16; None: unknown
    hardware: str


def slurm_precisions(run) -> list[ScriptPrecision]:
    """Every Slurm script of the run with its precision flags and partition hardware (once per run)."""
    return run.once("precision-of-slurm-scripts", run, _slurm_precisions)


def _slurm_precisions(run, _run) -> list[ScriptPrecision]:
    out = []
    for src, script in slurm_files(run):
        if src.context_only or not src.text:
            continue
        it = partition_instance(run, script.partition)
        nodeset = partition_nodeset(run, script.partition)
        if it is None or nodeset is None or not (it.is_nvidia or it.is_neuron):
            continue
        words = [w for call in batch_script_calls(src) if call.reads_arguments for w in call.words]
        uses = unambiguous(flag_uses(None, words)) + script_config_uses(run, src)
        if uses:
            hardware = f"{it.accelerator} ({it.name}, partition {script.partition!r} of NodeSet {nodeset.name!r})"
            out.append(ScriptPrecision(src, uses, True if it.is_neuron else it.bf16, hardware))
    return out


def script_choices(ctx, *, bf16_capable: bool, chosen: str, other: str, what: str, why: str) -> Iterator[Finding]:
    """EML401/EML402 for Slurm scripts: ``chosen`` (and not ``other``) selected on a partition whose
    accelerators' bf16 support is ``bf16_capable``. No fix: a script is rewritten by hand."""
    for sp in slurm_precisions(ctx.run):
        if sp.bf16 is not bf16_capable:
            continue
        uses = [u for u in sp.uses if u.precision == chosen]
        if not uses or any(u.precision == other for u in sp.uses):
            continue
        first = uses[0]
        line, col = _word_place(sp.src, first)
        who = f"Slurm script {sp.src.path}"
        texts = ", ".join(dict.fromkeys(u.text for u in uses))
        words = {"who": who, "texts": texts, "acc": sp.hardware}
        yield ctx.report_file(sp.src, line, col, what.format(**words), detail=why.format(**words))


def _word_place(src: SourceFile, u: Use) -> tuple[int, int]:
    """1-based line and column of the use's word in the script."""
    w = u.word
    lines = script_lines(src.text or "")
    if w is None:
        return 1, 1
    line = w.line + 1
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    col = text.find(w.raw)
    return line, (col + 1 if col >= 0 else 1)
