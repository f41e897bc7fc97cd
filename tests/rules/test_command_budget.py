"""A container command too large to read is not read, and said so (issue 22, item 3).

A PyTorchJob padded to 80,000 command arguments (1.4 MB, under the API server's limits) took
seconds of launch and precision analysis, ~40 us a word, past the webhook's time budget. The
readers now do one unit of work per word up to the budget and none past it. Counted, not timed:
the per-word steps of both readers (kubelet ``$(VAR)`` expansion of each argument) are counted.
"""

from __future__ import annotations

import pytest
from builders import container, manifest, pod_template, pytorchjob, replica, said

from eksmllint.analysis import commands
from eksmllint.checks import helpers
from eksmllint.config import parse_config
from eksmllint.core.engine import lint_text
from eksmllint.launch import command as launch_command
from eksmllint.workload import MAX_COMMAND_CHARS, MAX_COMMAND_WORDS


def _job(argv: list[str]) -> str:
    c = container("pytorch", command=argv, gpus=8)
    return manifest(pytorchjob("big", worker=replica(2, pod_template(c)), namespace="ml"))


def _padded(words: int) -> list[str]:
    head = ["torchrun", "--nnodes=2", "--nproc_per_node=4", "train.py"]  # 4 per pod, 8 GPUs: EML604
    return head + [f"--opt-{i:05d}=v" for i in range(words - len(head))]


@pytest.fixture
def word_steps(monkeypatch):
    """How many words each reader expanded (one call per word read)."""
    counts = {"launch": 0, "commands": 0}

    def counting(name, real):
        def step(*args, **kwargs):
            counts[name] += 1
            return real(*args, **kwargs)

        return step

    monkeypatch.setattr(launch_command, "_expand_k8s", counting("launch", launch_command._expand_k8s))
    monkeypatch.setattr(commands, "_expand", counting("commands", commands._expand))
    helpers._analyse.cache_clear()  # launches are cached per command line
    yield counts
    helpers._analyse.cache_clear()


def _lint(text: str):
    return lint_text(text, parse_config({}, "test"), name="m.yaml").active


def test_a_command_within_the_budget_is_read_once_per_word(word_steps):
    found = _lint(_job(_padded(MAX_COMMAND_WORDS)))
    assert word_steps == {"launch": MAX_COMMAND_WORDS, "commands": MAX_COMMAND_WORDS}
    assert any(f.code == "EML604" for f in found)  # judged: the launcher's mismatch is found
    assert not any("not judged" in f.message for f in found)


def test_a_command_over_the_budget_is_not_read_and_said_once(word_steps):
    found = _lint(_job(_padded(MAX_COMMAND_WORDS + 1)))
    assert word_steps == {"launch": 0, "commands": 0}
    (note,) = [f for f in found if f.code == "EML004"]
    assert f"{MAX_COMMAND_WORDS + 1:,} words (more than {MAX_COMMAND_WORDS:,})" in said(note)
    assert "nothing is concluded from it" in said(note)
    assert note.location.path[-1] == "command"
    assert not any(f.code == "EML604" for f in found)  # nothing concluded from an unread command
    assert {"EML201", "EML301"} <= {f.code for f in found}  # the rest of the object is judged


def test_a_long_script_is_measured_in_characters(word_steps):
    script = "torchrun --nproc_per_node=4 train.py " + "x" * MAX_COMMAND_CHARS
    found = _lint(_job(["bash", "-c", script]))
    assert word_steps == {"launch": 0, "commands": 0}
    assert any("characters (more than" in said(f) for f in found if f.code == "EML004")
