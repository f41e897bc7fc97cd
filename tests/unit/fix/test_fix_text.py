"""Text-edit fixes (``ReplaceText``) on Slurm batch scripts: EML805's fix.

Properties over generated scripts: the fix clears EML805, fixing again changes nothing, and only
the lines the edits name differ from the original (every other byte stays)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eksmllint.config import Config
from eksmllint.core.engine import lint_text
from eksmllint.core.finding import Fix, ReplaceText, SetValue
from eksmllint.fix import FixError, fix_text
from eksmllint.fix.text import ScriptText
from eksmllint.launch.slurm import parse_sbatch

ONLY_805 = Config(select=("EML805",))


def eml805(text: str, name: str = "job.sbatch"):
    return [f for f in lint_text(text, ONLY_805, name=name).active if f.code == "EML805"]


@st.composite
def scripts(draw) -> str:
    nodes = draw(st.sampled_from([1, 2, 4]))
    gpus = draw(st.sampled_from([None, 4, 8]))
    tasks = draw(st.integers(min_value=2, max_value=8))
    where = draw(st.sampled_from(["sbatch", "srun", "srun-n"]))
    launcher = draw(st.sampled_from(["torchrun", "torchrun-env", "accelerate", "deepspeed"]))
    nproc = draw(st.sampled_from([2, 4, 8]))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    directives = [f"#SBATCH --nodes={nodes}", "#SBATCH --job-name=train", "#SBATCH --time=24:00:00"]
    if gpus:
        directives.append(f"#SBATCH --gpus-per-node={gpus}")
    if where == "sbatch":
        directives.append(f"#SBATCH --ntasks-per-node={tasks}")
    directives = draw(st.permutations(directives))
    srun = "srun"
    if where == "srun":
        srun += f" --ntasks-per-node={tasks}"
    elif where == "srun-n":
        srun += f" -n {tasks * nodes}"
    command = {
        "torchrun": f"torchrun --nnodes={nodes} --nproc_per_node={nproc} --rdzv_endpoint=$HEAD:29500 train.py",
        "torchrun-env": "torchrun --nnodes=$SLURM_NNODES --nproc_per_node=$SLURM_NTASKS_PER_NODE train.py --bf16",
        "accelerate": f"accelerate launch --num_processes={nproc * nodes} --num_machines={nodes} train.py",
        "deepspeed": f"deepspeed --num_gpus={nproc} train.py --deepspeed ds.json",
    }[launcher]
    if draw(st.booleans()):  # continuation lines, as scripts usually write long launches
        continued = " \\" + newline + "    "
        body = srun + continued + command.replace(" train.py", continued + "train.py", 1)
    else:
        body = f"{srun} {command}"
    comment = draw(st.sampled_from(["", "# launch one step", "echo starting"]))
    lines = ["#!/bin/bash", *directives, "", "export HEAD=$(hostname)", comment, body, ""]
    return newline.join(lines)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scripts())
def test_eml805_fix_clears_the_finding_touches_only_its_lines_and_is_idempotent(text: str) -> None:
    found = eml805(text)
    fixable = [f for f in found if f.fix is not None]
    out = fix_text(text, ONLY_805, name="job.sbatch")
    assert not out.error and not out.failed
    if not fixable:
        assert out.fixed == text
        return
    assert fixable[0].fix.edits_text
    assert eml805(out.fixed) == []  # the finding it targets is gone
    assert not [f for f in lint_text(out.fixed, Config(), name="job.sbatch").active if f.code in ("EML000", "EML005")]
    assert fix_text(out.fixed, ONLY_805, name="job.sbatch").fixed == out.fixed  # idempotent
    edited = {op.line for f in out.applied for op in f.fix.ops}
    before, after = text.split("\n"), out.fixed.split("\n")
    changed = {i + 1 for i, (a, b) in enumerate(zip(before, after)) if a != b}
    assert len(before) == len(after) and changed and changed <= edited  # nothing else moved
    script = parse_sbatch(out.fixed)
    assert all(script.tasks_per_node(inv.under_srun) == 1 for inv in script.invocations if inv.under_srun)


def apply_text_edits(text: str, fix: Fix) -> str:
    script = ScriptText(text)
    script.apply(fix)
    return script.text


def test_text_edit_is_refused_when_the_text_moved() -> None:
    fix = Fix("t", (ReplaceText(2, 9, "--ntasks-per-node=8", "--ntasks-per-node=1"),))
    text = "#!/bin/bash\n#SBATCH --ntasks-per-node=8\n"
    assert apply_text_edits(text, fix) == "#!/bin/bash\n#SBATCH --ntasks-per-node=1\n"
    with pytest.raises(FixError, match="no longer has"):
        apply_text_edits("#!/bin/bash\n#SBATCH  --ntasks-per-node=8\n", fix)
    with pytest.raises(FixError, match="does not exist"):
        apply_text_edits("#!/bin/bash", fix)
    with pytest.raises(FixError, match="line breaks"):
        apply_text_edits(text, Fix("t", (ReplaceText(2, 9, "--ntasks-per-node=8", "a\nb"),)))
    with pytest.raises(FixError, match="mixes"):
        apply_text_edits(text, Fix("t", (SetValue(("a",), 1),)))


def test_a_fix_that_fails_halfway_changes_nothing() -> None:
    script = ScriptText("srun -n 16 x\nsrun -n 8 y\n")
    with pytest.raises(FixError, match="no longer has"):
        script.apply(Fix("t", (ReplaceText(1, 6, "-n 16", "-n 2"), ReplaceText(2, 6, "-n 16", "-n 2"))))
    assert script.text == "srun -n 16 x\nsrun -n 8 y\n"


def test_edits_apply_in_order_on_one_line() -> None:
    fix = Fix("t", (ReplaceText(1, 6, "-n 16", "-n 2"), ReplaceText(1, 16, "=8", "=4")))
    assert apply_text_edits("srun -n 16 x --a=8\n", fix) == "srun -n 2 x --a=4\n"  # col 16: after the first edit


def test_many_steps_are_fixed_in_one_pass_and_a_shared_directive_once() -> None:
    steps = "".join(f"srun --ntasks-per-node=8 torchrun --nnodes=2 --nproc_per_node=8 step{i}.py\n" for i in range(25))
    text = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=8\n\n" + steps
    out = fix_text(text, ONLY_805, name="j.sbatch")
    assert not out.error and out.passes == 1 and len(out.applied) == 25 and eml805(out.fixed) == []
    inherited = (
        "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n#SBATCH --gpus-per-node=8\n\n"
        "srun torchrun --nnodes=2 --nproc_per_node=8 a.py\nsrun torchrun --nnodes=2 --nproc_per_node=8 b.py\n"
    )
    out = fix_text(inherited, ONLY_805, name="j.sbatch")
    assert not out.error and eml805(out.fixed) == [] and "--ntasks-per-node=1\n" in out.fixed
    assert out.fixed.count("--ntasks-per-node=1") == 1  # both steps inherit one directive: edited once


@pytest.mark.parametrize("separator", ["\x0c", "\x85", "\u2028", "\r"])
def test_line_numbers_are_the_shells_whatever_other_separators_the_text_holds(separator: str) -> None:
    # str.splitlines() also breaks at these; the shell, the Slurm parser and the text edits do not.
    text = (
        "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=8\n# note" + separator + "\n"
        "#SBATCH --ntasks-per-node=8\n\nsrun torchrun --nnodes=2 --nproc_per_node=8 train.py\n"
    )
    (found,) = eml805(text)
    assert (found.location.line, found.location.col) == (5, 9) and found.fix is not None
    out = fix_text(text, ONLY_805, name="j.sbatch")
    assert out.fixed == text.replace("--ntasks-per-node=8", "--ntasks-per-node=1")
