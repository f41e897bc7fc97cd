"""The substring prefilters in front of command regexes never change an answer."""

from __future__ import annotations

import builders as b
from hypothesis import given, settings
from hypothesis import strategies as st

from eksmllint.checks.gang._shared import _ELASTIC_NNODES, _HOROVOD_ELASTIC, is_elastic
from eksmllint.loader import parse_source
from eksmllint.resource import SourceFile
from eksmllint.workload import DISTRIBUTED_LAUNCHERS, distributed_launcher, workload_of

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
    "train.py",
    " ",
    "\n",
    "_",
]
_TEXT = st.lists(st.sampled_from(_WORDS), max_size=12).map("".join)


def _span(m):
    return None if m is None else (m.span(), m.group(0))


@settings(max_examples=400, deadline=None)
@given(_TEXT)
def test_distributed_launcher_is_the_regex(text):
    assert _span(distributed_launcher(text)) == _span(DISTRIBUTED_LAUNCHERS.search(text))


def _pytorchjob_running(text: str):
    doc = b.pytorchjob(worker=b.replica(2, b.pod_template(b.container(command=["bash", "-c", text]))))
    resources, _ = parse_source(SourceFile("t.yaml", b.manifest(doc), "yaml"))
    return workload_of(resources[0])


@settings(max_examples=200, deadline=None)
@given(_TEXT)
def test_is_elastic_reads_the_command_as_the_regexes_do(text):
    w = _pytorchjob_running(text)
    expected = bool(_HOROVOD_ELASTIC.search(text)) or any(
        int(m.group(1)) < int(m.group(2)) for m in _ELASTIC_NNODES.finditer(text)
    )
    assert is_elastic(w) == expected


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["PET_MASTER_ADDR", "PET_RDZV_ENDPOINT", "rdzv-endpoint", "rdzv_id", "master_addr", "master", "x"]
        ),
        max_size=6,
    ).map(" ".join)
)
def test_rendezvous_mention_is_the_regex(text):
    from eksmllint.checks.launch.eml804_rendezvous_missing import _RDZV_MENTION, _mentions_rendezvous

    assert _mentions_rendezvous(text) == (_RDZV_MENTION.search(text) is not None)
