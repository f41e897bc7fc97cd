"""The one command reader (eksmllint.analysis.commands): program calls with word positions, and
the rules that read flags through it (EML401 precision, EML104 EFA argv, shm's DataLoader workers)
ignore echo/printf text, comments and here-documents written to files."""

from __future__ import annotations

import textwrap

import yaml

from eksmllint.analysis.commands import argument_words, container_calls, script_calls
from eksmllint.checks.efa._shared import argv_settings
from eksmllint.checks.helpers import dataloader_workers
from eksmllint.config import Config
from eksmllint.core.engine import lint_text
from eksmllint.fix.engine import fix_text
from eksmllint.loader import parse_source
from eksmllint.resource import SourceFile
from eksmllint.workload import workload_of

SCRIPT = (
    'echo "run with --fp16 --num_workers 9"\n'
    "cat > /tmp/run.sh <<EOF\n"
    "export FI_PROVIDER=tcp\n"
    "torchrun t.py --fp16\n"
    "EOF\n"
    "# torchrun t.py --fp16\n"
    "export FI_PROVIDER=efa && torchrun --nproc_per_node=2 t.py --fp16 --num_workers 4\n"
)


def _container(command: list, env: list | None = None):
    doc = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
        "spec": {
            "template": {"spec": {"containers": [{"name": "c", "image": "i", "command": command, "env": env or []}]}}
        },
    }
    (resource,), _ = parse_source(SourceFile("t.yaml", yaml.safe_dump(doc), "yaml"))
    (t,) = workload_of(resource).templates
    return t.containers[0]


def test_calls_name_their_program_and_drop_comments_and_heredocs():
    calls = script_calls(SCRIPT, ("args", 0), {})
    assert [c.program for c in calls] == ["echo", "cat", "export", "torchrun"]
    assert [c.reads_arguments for c in calls] == [False, True, True, True]
    texts = [w.text for c in calls for w in c.words]
    assert texts.count("--fp16") == 1 and "FI_PROVIDER=tcp" not in texts


def test_word_positions_point_at_the_written_word():
    calls = script_calls(SCRIPT, ("args", 0), {})
    fp16 = next(w for c in calls for w in c.words if w.text == "--fp16")
    assert SCRIPT[fp16.start : fp16.start + len(fp16.raw)] == "--fp16"
    assert fp16.line == 6 and fp16.path == ("args", 0) and fp16.command == 3


def test_exec_form_and_expansion():
    c = _container(["echo", "--fp16"])
    assert container_calls(c)[0].program == "echo" and argument_words(c) == []
    c = _container(
        ["bash", "-c", "python t.py --precision $(P) --mixed_precision $MP"],
        [{"name": "P", "value": "16-mixed"}, {"name": "MP", "value": "bf16"}],
    )
    assert [w.text for w in argument_words(c)][2:] == ["--precision", "16-mixed", "--mixed_precision", "bf16"]


def test_efa_argv_settings_and_dataloader_workers_read_only_real_arguments():
    c = _container(["bash", "-c", SCRIPT])
    assert [(s.name, s.value) for s in argv_settings(c)] == [("FI_PROVIDER", "efa")]
    assert dataloader_workers(c) == 4
    only_text = _container(["bash", "-c", 'echo "--num_workers 9"; printf "export FI_PROVIDER=tcp"\n'])
    assert dataloader_workers(only_text) == 0 and not list(argv_settings(only_text))


NEURON_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: j, namespace: ns}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: c
          image: repo/neuron:1.0
          command: ["/bin/bash", "-c"]
          args:
            - |
SCRIPT          resources:
            limits: {aws.amazon.com/neuron: 1, cpu: "7", memory: 28Gi}
"""


def _neuron_job(script: str) -> str:
    return NEURON_JOB.replace("SCRIPT", textwrap.indent(script, " " * 14))


def test_eml401_ignores_flags_that_are_only_text():
    text = _neuron_job('echo "use --fp16"\ncat > x.sh <<EOF\ntorchrun t.py --fp16\nEOF\n# --fp16\ntorchrun t.py\n')
    result = lint_text(text, Config(select=("EML401",)))
    assert not [f for f in result.active if f.code == "EML401"]


def test_eml401_fix_edits_only_the_real_argument():
    text = _neuron_job(SCRIPT)
    (f,) = [f for f in lint_text(text, Config(select=("EML401",))).active if f.code == "EML401"]
    assert (
        f.location.line
        == text.splitlines().index(
            "              export FI_PROVIDER=efa && torchrun --nproc_per_node=2 t.py --fp16 --num_workers 4"
        )
        + 1
    )
    out = fix_text(text, Config(select=("EML401",)), name="job.yaml")
    script = yaml.safe_load(out.fixed)["spec"]["template"]["spec"]["containers"][0]["args"][0]
    assert script == SCRIPT.replace("t.py --fp16 --num_workers", "t.py --bf16 --num_workers")
    assert not fix_text(out.fixed, Config(select=("EML401",)), name="job.yaml").applied  # idempotent


MEGATRON = (
    'LAUNCHER="python -u -m torch.distributed.run --nproc_per_node 8 --rdzv_id $(hostname)"\n'
    'srun --ntasks-per-node=1 bash -c "$LAUNCHER train.py --fp16"\n'
)


def test_launcher_in_a_variable_run_by_srun_bash_c_is_read_where_it_is_written():
    calls = script_calls(MEGATRON, ("args", 0), {})
    python = next(c for c in calls if c.program == "python")
    texts = [w.text for w in python.words]
    assert texts[:4] == ["python", "-u", "-m", "torch.distributed.run"]
    assert "$(hostname)" in texts and texts[-2:] == ["train.py", "--fp16"]
    for w in python.words:  # every word points at its own text, in the assignment or the nested script
        assert w.editable and MEGATRON[w.start : w.start + len(w.raw)] == w.raw


def test_variables_not_followed_when_conditional_or_single_quoted_and_not_exported():
    cond = script_calls('if x; then CMD="torchrun t.py --fp16"; fi\n$CMD\n', ("args", 0), {})
    assert "--fp16" not in [w.text for c in cond[1:] for w in c.words if c.program != ""]
    local = script_calls("CMD='torchrun t.py --fp16'\nbash -c '$CMD'\n", ("args", 0), {})
    exported = script_calls("export CMD='torchrun t.py --fp16'\nbash -c '$CMD'\n", ("args", 0), {})
    assert [c.program for c in local][-1] == "$CMD"
    assert [c.program for c in exported][-1] == "torchrun"


def test_exec_form_srun_bash_c_is_split_into_its_calls():
    c = _container(["srun", "-N2", "bash", "-c", "torchrun --nproc_per_node=8 t.py --fp16"])
    assert [call.program for call in container_calls(c)] == ["torchrun"]
