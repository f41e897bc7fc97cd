"""Hostile launch scripts stay bounded (issue 16 items 1 and 4).

Exponential expansion (``A="$A $A"`` repeated, arrays, ``+=``, kubelet ``$(VAR)`` in env, a script
that runs itself through ``bash -c``) must not exhaust memory: each input runs in a child process
limited to 1 GiB of address space (so that the code before the fix fails cleanly instead of taking
the machine down) and reports its tracemalloc peak, which must stay small; the over-budget value
must be unknown, never a made-up one. EML805's work is measured by the number of Slurm parses.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from repository import ROOT

from eksmllint.analysis import launch_sites
from eksmllint.checks.launch import eml805_srun_launcher_multiplied as eml805
from eksmllint.checks.launch.eml805_srun_launcher_multiplied import steps_edits_805, text_edits_805
from eksmllint.launch import deepspeed, parse_sbatch, slurm
from eksmllint.launch.command import analyse_container, k8s_env
from eksmllint.launch.shell import MAX_VALUE_CHARS

PEAK_LIMIT = 64 * 1024 * 1024  # bytes of Python allocations one hostile script may cause

CHILD = textwrap.dedent(
    """\
    import json, resource, sys, tracemalloc
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    import eksmllint.launch, eksmllint.launch.command  # imports are not the input's cost
    tracemalloc.start()
    ns = {}
    exec(sys.stdin.read(), ns)
    print(json.dumps({"peak": tracemalloc.get_traced_memory()[1], "result": ns.get("result")}))
    """
)


def run_bounded(code: str) -> dict:
    """Run ``code`` (which sets ``result``) in a child limited to 1 GiB; its peak and result."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        input=code,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["peak"] < PEAK_LIMIT, f"peak {out['peak']:,} bytes"
    return out


def doubling(lines: int) -> str:
    return "\n".join(["A=x"] + ['A="$A $A"'] * lines)


def test_doubling_variable_in_a_batch_script_is_bounded_and_unknown() -> None:
    script = f"#!/bin/bash\n#SBATCH --nodes=2\n{doubling(40)}\nsrun torchrun --nproc_per_node=$A train.py\n"
    out = run_bounded(
        "from eksmllint.launch import parse_sbatch\n"
        f"s = parse_sbatch({script!r})\n"
        "result = [s.variables.get('A'), [(i.launcher, i.option('nproc_per_node').resolved) for i in s.invocations]]\n"
    )
    assert out["result"] == [None, [["torchrun", None]]]  # unknown, and the launch is still read


def test_doubling_in_a_bash_c_container_command_is_bounded() -> None:
    script = doubling(40).replace("\n", "; ") + "; torchrun --nproc_per_node=$A train.py"
    out = run_bounded(
        "from eksmllint.launch import analyse_container\n"
        f"invs = analyse_container(['bash', '-c', {script!r}], None, {{}})\n"
        "result = [(i.launcher, i.option('nproc_per_node').resolved) for i in invs]\n"
    )
    assert out["result"] == [["torchrun", None]]


@pytest.mark.parametrize(
    "body",
    [
        "\n".join(["A=(x)"] + ['A=("${A[@]}" "${A[@]}")'] * 40),  # array doubling
        "\n".join(["A=x"] + ["A+=$A"] * 40),  # append doubling
        "\n".join(["A=x"] + ['A="$A$A$A$A$A$A$A$A"'] * 20),  # wider fan-out
        "\n".join(
            ["A='x x x x x x x x '"] + ['A="$A$A"'] * 12 + ["cmd $A $A $A $A $A $A $A $A"] * 1000
        ),  # many split references
        "\n".join(f"V{k}=1\ntrue" for k in range(3000)),  # a variable snapshot per command
        "export S='" + "; ".join(['bash -c "$S"'] * 50) + '\'\nbash -c "$S"',  # a script running itself, 50**4 times
    ],
    ids=["array", "append", "fan-out", "references", "snapshots", "self-running"],
)
def test_other_amplifications_are_bounded(body: str) -> None:
    out = run_bounded(f"from eksmllint.launch import parse_sbatch\nresult = parse_sbatch({body!r}).errors\n")
    assert out["result"] == []  # not "could not analyse script: MemoryError" (the limit hit before the fix)


def test_kubelet_env_doubling_is_bounded_and_unknown() -> None:
    out = run_bounded(
        "from eksmllint.launch.command import k8s_env, analyse_container\n"
        "pairs = [('V0', 'x')] + [(f'V{k}', f'$(V{k-1})$(V{k-1})') for k in range(1, 40)]\n"
        "env = k8s_env(pairs)\n"
        "invs = analyse_container(['torchrun', '--nproc_per_node=$(V39)', 'train.py'], None, env)\n"
        "result = [env['V39'], [i.option('nproc_per_node').resolved for i in invs]]\n"
    )
    assert out["result"] == [None, [None]]


def test_values_within_the_budget_still_resolve() -> None:
    env = k8s_env([("A", "x" * 1000), ("B", "$(A)-$(A)")])
    assert env["B"] == "x" * 1000 + "-" + "x" * 1000
    s = parse_sbatch(
        '#!/bin/bash\nA=8\nfor i in 1 2 3 4 5 6 7 8; do A="$A"; done\nB="$A$A"\nsrun torchrun --nproc_per_node=$A t.py\n'
    )
    assert s.variables["B"] == "88" and s.invocations[0].option("nproc_per_node").resolved == "8"
    big = "y" * (MAX_VALUE_CHARS // 2 - 10)
    assert parse_sbatch(f'A={big}\nB="$A$A"\n').variables["B"] == big * 2
    assert "B" not in parse_sbatch(f'A={big}yyyyyyyyyyyyyyyyyyyyyyyy\nB="$A$A"\n').variables  # just over: unknown
    assert (
        analyse_container(["bash", "-c", "torchrun --nproc_per_node=4 t.py"], None, {})[0]
        .option("nproc_per_node")
        .resolved
        == "4"
    )


def test_deeply_nested_deepspeed_json_records_only_shallow_key_paths() -> None:
    depth, width = 900, 20000
    key = "k" * 200
    text = (
        "".join(f'{{"{key}{d}":' for d in range(depth))
        + "{"
        + ",".join(f'"a{i}":1' for i in range(width))
        + "}"
        + "}" * depth
    )
    lines = deepspeed._json_key_lines(text)
    assert 0 < len(lines) <= 8 and all(len(p) <= 512 for p in lines)
    cfg = deepspeed.parse_deepspeed(
        '{"zero_optimization": {"offload_param": {"device": "cpu"}}, "bf16": {"enabled": true}}', "ds.json"
    )
    assert cfg.line_of("zero_optimization.offload_param.device") == 1 and cfg.line_of("bf16.enabled") == 1


def test_yaml_deepspeed_aliases_are_walked_once() -> None:
    levels = ["a0: &a0 {x: 1, y: 2}"] + [
        f"a{k}: &a{k} {{" + ", ".join(f"p{j}: *a{k - 1}" for j in range(10)) + "}" for k in range(1, 9)
    ]
    text = "\n".join(levels) + "\nbf16:\n  enabled: true\n"
    lines = deepspeed._yaml_key_lines(text)  # 10**8 paths if every alias were walked
    assert lines["bf16.enabled"] == 11 and len(lines) < 200


# --------------------------------------------------------------------------- EML805 work


def srun_steps(n: int, own_option: bool) -> str:
    head = ["#!/bin/bash", "#SBATCH --nodes=2", "#SBATCH --gpus-per-node=8"]
    srun = "srun --ntasks-per-node=8" if own_option else "srun"
    if not own_option:
        head.append("#SBATCH --ntasks-per-node=8")
    return "\n".join(head + [f"{srun} torchrun --nproc_per_node=4 train.py --step {k}" for k in range(n)]) + "\n"


@pytest.mark.parametrize("own_option", [False, True])
def test_eml805_parses_do_not_grow_with_the_number_of_steps(monkeypatch: pytest.MonkeyPatch, own_option: bool) -> None:
    counts = []
    real = slurm._parse
    for n in (20, 200):
        calls: list[int] = []

        def counting(text: str, calls: list[int] = calls) -> slurm.SlurmScript:
            calls.append(1)
            return real(text)

        monkeypatch.setattr(slurm, "_parse", counting)
        launch_sites.slurm_of.cache_clear()
        eml805._edited.cache_clear()
        text = srun_steps(n, own_option)
        script = launch_sites.slurm_of(text)
        edits = steps_edits_805(text, script, list(script.invocations))
        assert len(edits) == n and all(edits)  # every step gets its (two-edit) fix
        counts.append(len(calls))
    assert counts[0] == counts[1] <= 4  # the script, then one re-parse per round of edits


@pytest.mark.parametrize("stray", [False, True], ids=["shared parse", "an edit that would land in a comment"])
def test_eml805_steps_together_get_their_one_by_one_edits(monkeypatch: pytest.MonkeyPatch, stray: bool) -> None:
    text = srun_steps(6, True) + (
        "X=--ntasks-per-node=8\n"
        + (
            "srun -n  16 torchrun --nproc_per_node=4 c.py  # not -n 16\n"
            if stray
            else "srun --ntasks-per-node=8 torchrun --nproc_per_node=4 a.py; srun torchrun b.py\n"
        )
        + "srun -n 16 torchrun --nproc_per_node=4 d.py\n"
    )
    script = parse_sbatch(text)
    invs = list(script.invocations)
    one_by_one = []
    for inv in invs:
        eml805._edited.cache_clear()
        one_by_one.append(text_edits_805(text, script, inv))
    shared = []
    real = eml805._combined
    monkeypatch.setattr(eml805, "_combined", lambda *a: shared.append(real(*a)) or shared[-1])
    assert steps_edits_805(text, script, invs) == one_by_one
    assert one_by_one[0] == (
        (4, 6, "--ntasks-per-node=8", "--ntasks-per-node=1"),
        (4, 35, "--nproc_per_node=4", "--nproc_per_node=8"),
    )
    assert one_by_one[-1] == ((12, 6, "-n 16", "-n 2"), (12, 20, "--nproc_per_node=4", "--nproc_per_node=8"))
    assert any(view is not None for view in shared)  # steps did share parses
    assert not stray or shared[0] is None  # not in the round with the stray edit: each step was parsed alone


# --------------------------------------------------------------------------- other shapes

SHAPES = {
    "heredocs": lambda n: "cat <<EOF\n" * n + "x\n" + "EOF\n" * n,
    "here-strings": lambda n: "cat <<< " + '"$A"' * n + "\n",
    "continuations": lambda n: "srun torchrun " + "\\\n" * n + "x.py\n",
    "nested $(": lambda n: "echo " + "$(" * n + ")" * n + "\n",
    "unterminated $(": lambda n: "echo " + "$(" * n + "\n",
    "nested quotes": lambda n: "echo " + '"$(echo ' * n + ')"' * n + "\n",
    "nested ${": lambda n: "echo " + "${A:-" * n + "}" * n + "\n",
    "huge #SBATCH header": lambda n: "#!/bin/bash\n" + "#SBATCH --nodes=1 --gres=gpu:8\n" * n + "srun torchrun x.py\n",
    "srun chain": lambda n: "srun " * n + "torchrun x.py\n",
    "bash -c chain": lambda n: "bash -c " * n + "torchrun\n",
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_nesting_and_long_sections_stay_within_a_small_multiple_of_the_input(shape: str) -> None:
    """Memory per input byte, deterministic unlike time: ``srun srun ...`` copied the rest of the
    line at every level (1,700 bytes per input byte at 20 kB, then a RecursionError)."""
    per_step = len(SHAPES[shape](2)) - len(SHAPES[shape](1))
    n = 20_000 // per_step
    out = run_bounded(
        "from eksmllint.launch import parse_sbatch, analyse_container\n"
        f"text = {SHAPES[shape](n)!r}\n"
        "parse_sbatch(text)\n"
        "analyse_container(['bash', '-c', text], None, {})\n"
        "result = len(text)\n"
    )
    assert out["peak"] < 500 * out["result"] + (1 << 20), f"{out['peak']:,} bytes for {out['result']:,}"


def test_srun_nesting_is_read_up_to_the_depth_scripts_use() -> None:
    assert [i.wrappers for i in parse_sbatch("srun srun srun srun torchrun x.py\n").invocations] == [("srun",) * 4]
    assert parse_sbatch("srun " * 5 + "torchrun x.py\n").invocations == []  # deeper: not a shape we read


def test_the_issue_pytorchjob_lints_without_a_crash_in_bounded_memory() -> None:
    """Issue 16's 740-byte PyTorchJob (23 doublings) took the webhook to ~1.5 GiB."""
    script = doubling(23).replace("\n", "; ") + "; torchrun --nnodes=2 --nproc_per_node=8 train.py $A"
    container = {"name": "pytorch", "image": "registry.example/train:1.0", "command": ["bash", "-c", script]}
    master = {"replicas": 1, "template": {"spec": {"containers": [container]}}}
    job = json.dumps(
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "PyTorchJob",
            "metadata": {"name": "doubling"},
            "spec": {"pytorchReplicaSpecs": {"Master": master}},
        }
    )  # JSON is YAML: 636 bytes
    out = run_bounded(
        "from eksmllint.config import Config\nfrom eksmllint.core.engine import lint_text\n"
        f"result = sorted({{f.code for f in lint_text({job!r}, Config(), name='job.yaml').active}})\n"
    )
    assert "EML000" not in out["result"] and "EML001" not in out["result"]
