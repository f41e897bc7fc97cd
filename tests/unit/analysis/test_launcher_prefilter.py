"""Guarded patterns (``eksmllint.guarded``) answer as their bare regexes do: every match holds
one of the words tested first."""

from __future__ import annotations

import builders as b
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eksmllint.checks.gang._shared import _ELASTIC_NNODES, _HOROVOD_ELASTIC, is_elastic
from eksmllint.checks.launch.eml804_rendezvous_missing import _RDZV_MENTION
from eksmllint.guarded import Guarded
from eksmllint.loader import parse_source
from eksmllint.resource import SourceFile
from eksmllint.workload import DISTRIBUTED_LAUNCHERS, workload_of

# Near misses and hits of every guarded pattern, glued together in any order.
_WORDS = [
    "torchrun",
    "torch.distributed.run",
    "torch.distributed.launch",
    "python -m",
    "mpirun",
    "mpiexec",
    "horovodrun",
    "deepspeed",
    "accelerate launch",
    "accelerate",
    "xtorchrun",
    "--nnodes=2:4",
    "--nnodes 4:2",
    "--nnodes 1:3",
    "--min-np",
    "--max-np 4",
    "--host-discovery-script",
    "-np 8",
    "PET_MASTER_ADDR",
    "PET_RDZV_ENDPOINT",
    "rdzv-endpoint",
    "rdzv_id",
    "master_addr",
    "master",
    "train.py",
    " ",
    "\n",
    "_",
]
_TEXT = st.lists(st.sampled_from(_WORDS), max_size=12).map("".join)
_GUARDED = {
    "launchers": DISTRIBUTED_LAUNCHERS,
    "rendezvous": _RDZV_MENTION,
    "horovod": _HOROVOD_ELASTIC,
    "nnodes": _ELASTIC_NNODES,
}


def _spans(matches):
    return [(m.span(), m.group(0)) for m in matches]


@pytest.mark.parametrize("name", sorted(_GUARDED))
@settings(max_examples=300, deadline=None)
@given(text=_TEXT)
def test_a_guarded_pattern_is_its_regex(name, text):
    guarded: Guarded = _GUARDED[name]
    found = guarded.search(text)
    assert _spans([found] if found else []) == _spans([m for m in [guarded.pattern.search(text)] if m])
    assert _spans(guarded.finditer(text)) == _spans(guarded.pattern.finditer(text))


def _pytorchjob_running(text: str):
    doc = b.pytorchjob(worker=b.replica(2, b.pod_template(b.container(command=["bash", "-c", text]))))
    resources, _ = parse_source(SourceFile("t.yaml", b.manifest(doc), "yaml"))
    return workload_of(resources[0])


@settings(max_examples=200, deadline=None)
@given(_TEXT)
def test_is_elastic_reads_the_command_as_the_regexes_do(text):
    w = _pytorchjob_running(text)
    expected = bool(_HOROVOD_ELASTIC.pattern.search(text)) or any(
        int(m.group(1)) < int(m.group(2)) for m in _ELASTIC_NNODES.pattern.finditer(text)
    )
    assert is_elastic(w) == expected
