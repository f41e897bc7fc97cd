"""Properties of ``eksmllint fix`` over generated manifests.

Hypothesis writes PyTorchJobs and Pods (random GPU counts, memory limits, /dev/shm variants,
torchrun flags), optionally with a NodePool/EC2NodeClass they land on, and prints them in random
styles: key order, indentation, sequence-dash style, quoting, flow vs block, comments. For each:

- the fix converges and every fix the rules offered applied (none refused);
- it is idempotent: fixing the fixed text changes nothing;
- the findings that were fixed are gone, and nothing fixable is left;
- no error-level finding appears that was not there before;
- every original line outside the nodes the fixes target is unchanged (byte identity), both for
  each single fix and for the whole loop.

Set ``EKSMLLINT_FIX_EXAMPLES`` to run more examples.
"""

from __future__ import annotations

import difflib
import json
import os
import re

import builders as b
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from eksmllint.config import Config
from eksmllint.core.engine import lint_text
from eksmllint.core.finding import RemovePath, Severity
from eksmllint.core.registry import default_registry
from eksmllint.fix.apply import apply_fix, finding_ops
from eksmllint.fix.engine import applicable, fix_text

EXAMPLES = int(os.environ.get("EKSMLLINT_FIX_EXAMPLES", "120"))
CFG = Config()
REGISTRY = default_registry()
IMAGE = "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:2.3.0-gpu-py311-cu121-ubuntu20.04-ec2"
INSTANCES = {"p4d.24xlarge": 8, "g5.12xlarge": 4, "g5.2xlarge": 1, "p5.48xlarge": 8}


# -- manifests as data --------------------------------------------------------------------------
@st.composite
def shuffled(draw, mapping: dict) -> dict:
    keys = draw(st.permutations(list(mapping)))
    return {k: mapping[k] for k in keys}


@st.composite
def container(draw, gpus: int, shm: str) -> dict:
    mem = draw(st.sampled_from([None, "16Gi", "64Gi", "160Gi", "1000Gi", "65536Mi"]))
    limits: dict = {"cpu": draw(st.sampled_from(["8", "44", 16]))}
    requests: dict = {}
    if mem:
        limits["memory"] = mem
    if gpus:
        where = draw(st.sampled_from(["limits", "limits", "requests", "both-differ"]))
        value = draw(st.sampled_from([gpus, str(gpus)]))
        if where in ("limits", "both-differ"):
            limits["nvidia.com/gpu"] = value
        if where in ("requests", "both-differ"):
            requests["nvidia.com/gpu"] = gpus if where == "requests" else max(1, gpus - 1)
    nproc = draw(st.sampled_from([gpus or 1, max(1, gpus * 2)]))
    command = ["torchrun", f"--nproc_per_node={nproc}", "train.py"]
    if draw(st.booleans()):
        command += ["--num_workers", str(draw(st.sampled_from([2, 8])))]
    if draw(st.integers(0, 3)) == 0:  # a shell script: printed as a literal block scalar
        banner = draw(st.sampled_from(["", 'echo "was: torchrun --fp16 --num_workers 64"\n']))  # text, not flags
        command = ["/bin/bash", "-c", "set -euo pipefail\n" + banner + " ".join(command) + "\n"]
    c: dict = {
        "name": "trainer",
        "image": IMAGE,
        "command": command,
        "resources": draw(shuffled({"limits": draw(shuffled(limits)), **({"requests": requests} if requests else {})})),
    }
    if shm != "none":
        c["volumeMounts"] = [{"name": "dshm", "mountPath": "/dev/shm"}]
    if draw(st.booleans()):
        c["env"] = [{"name": "NCCL_DEBUG", "value": "INFO"}]
    return draw(shuffled(c))


def shm_volume(shm: str, size: str) -> dict | None:
    return {
        "none": None,
        "memory-sized": {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": size}},
        "memory-unbounded": {"name": "dshm", "emptyDir": {"medium": "Memory"}},
        "disk": {"name": "dshm", "emptyDir": {}},
        "hostpath": {"name": "dshm", "hostPath": {"path": "/dev/shm"}},
    }[shm]


@st.composite
def pod_spec(draw, instance: str | None) -> dict:
    gpus = draw(st.integers(0, 8))
    shm = draw(st.sampled_from(["none", "none", "memory-sized", "memory-unbounded", "disk", "hostpath"]))
    spec: dict = {"containers": [draw(container(gpus, shm))]}
    vol = shm_volume(shm, draw(st.sampled_from(["8Gi", "40Gi", "2000Gi"])))
    if vol:
        spec["volumes"] = [vol]
    if draw(st.booleans()):
        spec["restartPolicy"] = "OnFailure"
    if instance:
        spec["nodeSelector"] = {"node.kubernetes.io/instance-type": instance}
    return draw(shuffled(spec))


@st.composite
def workload(draw, instance: str | None) -> dict:
    meta = {"name": draw(st.sampled_from(["llama", "vit-pretrain", "bert"])), "namespace": "training"}
    if draw(st.booleans()):
        meta["labels"] = {"app": "train"}
    if draw(st.booleans()):
        template: dict = {"spec": draw(pod_spec(instance))}
        if draw(st.booleans()):
            template["metadata"] = {"labels": {"app": "train"}}
        worker = {
            "replicas": draw(st.integers(1, 4)),
            "restartPolicy": "OnFailure",
            "template": draw(shuffled(template)),
        }
        spec: dict = {"pytorchReplicaSpecs": {"Worker": draw(shuffled(worker))}}
        if draw(st.booleans()):
            spec["runPolicy"] = {"schedulingPolicy": {"minAvailable": draw(st.integers(1, 4))}}
        return draw(
            shuffled(
                {
                    "apiVersion": "kubeflow.org/v1",
                    "kind": "PyTorchJob",
                    "metadata": draw(shuffled(meta)),
                    "spec": draw(shuffled(spec)),
                }
            )
        )
    return draw(
        shuffled(
            {"apiVersion": "v1", "kind": "Pod", "metadata": draw(shuffled(meta)), "spec": draw(pod_spec(instance))}
        )
    )


@st.composite
def nodepool(draw, instance: str) -> list[dict]:
    disruption: dict = {
        "consolidationPolicy": draw(st.sampled_from(["WhenEmpty", "WhenEmptyOrUnderutilized"])),
        "consolidateAfter": "5m",
    }
    if draw(st.booleans()):
        disruption["budgets"] = [{"nodes": draw(st.sampled_from(["0", "10%"]))}]
    pool = b.nodepool(
        "gpu",
        b.requirement(b.INSTANCE_TYPE, instance),
        b.requirement(b.CAPACITY_TYPE, "on-demand"),
        b.requirement("topology.kubernetes.io/zone", "us-west-2a"),
        node_class="gpu",
        template={"expireAfter": "Never"},
        disruption=draw(shuffled(disruption)),
    )
    ebs = {"volumeSize": "200Gi", "volumeType": "gp3"}
    if draw(st.booleans()):
        ebs["encrypted"] = True
    nodeclass = b.ec2nodeclass(
        "gpu",
        {"alias": "al2023@v20250715"},
        amiFamily="AL2023",
        role="KarpenterNodeRole-ml",
        subnetSelectorTerms=[{"tags": {"karpenter.sh/discovery": "ml"}}],
        securityGroupSelectorTerms=[{"tags": {"karpenter.sh/discovery": "ml"}}],
        blockDeviceMappings=[{"deviceName": "/dev/xvda", "ebs": draw(shuffled(ebs))}],
    )
    return [pool, nodeclass]


# -- printing in random styles ------------------------------------------------------------------
_PLAIN = re.compile(r"[A-Za-z0-9-][A-Za-z0-9._/@:=-]*")


class Printer:
    """Writes data as YAML, drawing every style decision from hypothesis."""

    def __init__(self, draw) -> None:
        self.draw = draw
        self.indent = draw(st.sampled_from([2, 4]))
        self.seq_indent = draw(st.sampled_from([0, self.indent]))
        self.notes = 0

    def coin(self, p: float) -> bool:
        return self.draw(st.integers(0, 99)) < p * 100

    def comment(self) -> str:
        if not self.coin(0.15):
            return ""
        self.notes += 1
        return f"{self.draw(st.sampled_from([' ', '  ']))}# note {self.notes}"

    def scalar(self, v, flow: bool) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int):
            return str(v)
        plain = bool(_PLAIN.fullmatch(v)) and yaml.safe_load(v) == v and not (flow and re.search(r"[,\[\]{}]", v))
        style = self.draw(st.sampled_from((["plain", "plain"] if plain else []) + ["single", "double"]))
        if style == "plain":
            return v
        if style == "single":
            return "'" + v.replace("'", "''") + "'"
        return json.dumps(v)

    def small(self, v, depth: int = 0) -> bool:
        if isinstance(v, dict):
            return depth < 2 and len(v) <= 3 and all(self.small(x, depth + 1) for x in v.values())
        if isinstance(v, list):
            return depth < 2 and len(v) <= 4 and all(self.small(x, depth + 1) for x in v)
        return True

    def flow(self, v) -> str:
        if isinstance(v, str) and "\n" in v:
            return json.dumps(v)
        if isinstance(v, dict):
            return "{" + ", ".join(f"{self.scalar(k, True)}: {self.flow(x)}" for k, x in v.items()) + "}"
        if isinstance(v, list):
            return "[" + ", ".join(self.flow(x) for x in v) + "]"
        return self.scalar(v, True)

    def block(self, value, col: int, first_comment_ok: bool = True) -> list[str]:
        pad = " " * col
        lines: list[str] = []
        if isinstance(value, dict):
            for i, (k, v) in enumerate(value.items()):
                if (i or first_comment_ok) and self.coin(0.08):
                    lines.append(f"{pad}# {'about ' + str(k)}")
                key = self.scalar(k, False)
                if isinstance(v, str) and "\n" in v:
                    lines.append(f"{pad}{key}: {self.literal(v, col + self.indent)}")
                elif isinstance(v, (dict, list)) and v and not (self.small(v) and self.coin(0.3)):
                    lines.append(f"{pad}{key}:{self.comment()}")
                    lines += self.block(v, col + (self.indent if isinstance(v, dict) else self.seq_indent))
                else:
                    lines.append(f"{pad}{key}: {self.flow(v)}{self.comment()}")
            return lines
        for item in value:
            if isinstance(item, (dict, list)) and item and not (self.small(item) and self.coin(0.2)):
                sub = self.block(item, col + 2, first_comment_ok=False)
                lines.append(f"{pad}- {sub[0][col + 2 :]}")
                lines += sub[1:]
            elif isinstance(item, str) and "\n" in item:
                lines.append(f"{pad}- {self.literal(item, col + 2)}")
            else:
                lines.append(f"{pad}- {self.flow(item)}{self.comment()}")
        return lines

    def literal(self, text: str, col: int) -> str:
        """A ``|`` block scalar (the caller's line holds the header)."""
        body = text.removesuffix("\n")
        header = ("|" if text.endswith("\n") else "|-") + self.comment()
        return header + "".join("\n" + " " * col + line for line in body.split("\n"))


@st.composite
def manifests(draw) -> tuple[str, list, str]:
    instance = draw(st.sampled_from([None, *INSTANCES]))
    docs = [draw(workload(instance))]
    if draw(st.integers(0, 5)) == 0:  # a kind: List holding the workload (fix paths get a base path)
        docs = [{"apiVersion": "v1", "kind": "List", "items": [docs[0], draw(workload(instance))]}]
    if instance and draw(st.booleans()):
        docs += draw(nodepool(instance))
    docs = draw(st.permutations(docs))
    if len(docs) == 1 and draw(st.integers(0, 7)) == 0:  # a JSON manifest
        return json.dumps(docs[0], indent=draw(st.sampled_from([2, 4]))) + "\n", list(docs), "job.json"
    printer = Printer(draw)
    parts = []
    for i, doc in enumerate(docs):
        head = "---\n" if i or draw(st.booleans()) else ""
        if draw(st.booleans()):
            head += "# generated manifest\n"
        parts.append(head + "\n".join(printer.block(doc, 0)) + "\n")
    text = "".join(parts)
    if draw(st.integers(0, 9)) == 0 and list(yaml.safe_load_all(text[:-1])) == docs:
        text = text[:-1]  # no final newline (unless a final literal block needs it)
    if draw(st.integers(0, 9)) == 0:
        text = text.replace("\n", "\r\n")  # Windows line breaks
    return text, list(docs), "job.yaml"


# -- what "untouched" means ---------------------------------------------------------------------
def _last_line(node) -> int:
    end = node.end_mark
    return end.line - 1 if end.column == 0 and end.line > node.start_mark.line else end.line


def _span(node, key=None) -> set[int]:
    first = key.start_mark.line if key is not None else node.start_mark.line
    return set(range(first, _last_line(node) + 1))


def allowed_lines(text: str, doc_index: int, ops) -> set[int]:
    """Original lines a fix may rewrite (0-based): the target node and the line that holds it;
    when a key/item is only added to a block collection, none."""
    root = [n for n in yaml.compose_all(text) if n is not None][doc_index]
    allowed: set[int] = set()
    for op in ops:
        node, key, parent, pkey, idx = root, None, None, None, -1
        exists = True
        for elem in op.path:
            child = None
            if isinstance(node, MappingNode):
                for j, (k, v) in enumerate(node.value):
                    if isinstance(k, ScalarNode) and k.value == str(elem):
                        child = (v, k, j)
                        break
            elif isinstance(node, SequenceNode) and isinstance(elem, int) and 0 <= elem < len(node.value):
                child = (node.value[elem], None, elem)
            if child is None:
                exists = False
                break
            parent, pkey = node, key
            node, key, idx = child
        if exists:
            allowed |= _span(node, key)
            if node.start_mark.line > 0:  # a "- " item or a key on the previous line
                allowed.add(node.start_mark.line - 1 if key is None else key.start_mark.line)
            if isinstance(op, RemovePath) and parent is not None:
                if idx + 1 < len(parent.value):
                    nxt = parent.value[idx + 1]
                    allowed.add((nxt[0] if isinstance(nxt, tuple) else nxt).start_mark.line)
                if len(parent.value) == 1:
                    allowed |= _span(parent, pkey)
        elif not (isinstance(node, (MappingNode, SequenceNode)) and node.flow_style is not True and node.value):
            allowed |= _span(node, key)
    return allowed


def assert_only_targets_changed(original: str, fixed: str, allowed: set[int]) -> None:
    assert original.endswith("\n") == fixed.endswith("\n"), "the final newline (or its absence) changed"
    nl = "\r\n" if "\r\n" in original else "\n"
    a = (original + nl).splitlines(keepends=True)  # compare lines, not the file's last break
    b = (fixed + nl).splitlines(keepends=True)
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, _, _ in sm.get_opcodes():
        if tag in ("replace", "delete"):
            bad = [i + 1 for i in range(i1, i2) if i not in allowed]
            assert not bad, f"untargeted lines {bad} changed:\n" + "".join(difflib.unified_diff(a, b))


# -- the properties -----------------------------------------------------------------------------
def _errors(result) -> set:
    return {(f.code, f.resource) for f in result.active if f.severity == Severity.ERROR}


@settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(manifests())
def test_fix_properties(sample):
    text, docs, name = sample
    assert list(yaml.safe_load_all(text)) == docs, "the generator printed YAML that does not load back"
    before = lint_text(text, CFG, name=name, registry=REGISTRY)

    # each single fix, on the original text, leaves every untargeted line alone
    for f in before.active:
        if applicable(f, True):
            single = apply_fix(text, f.fix, f.location.doc_index, f.base_path, json_file=name.endswith(".json"))
            assert_only_targets_changed(text, single, allowed_lines(text, f.location.doc_index, finding_ops(f)))

    out = fix_text(text, CFG, name=name, unsafe=True, registry=REGISTRY)
    assert out.error is None, out.error
    assert not out.failed, [(f.code, why) for f, why in out.failed]
    if name.endswith(".json"):
        json.loads(out.fixed)  # still JSON, not merely YAML

    again = fix_text(out.fixed, CFG, name=name, unsafe=True, registry=REGISTRY)
    assert again.fixed == out.fixed and not again.applied, "fixing a fixed file changed it"

    after = lint_text(out.fixed, CFG, name=name, registry=REGISTRY)
    assert not [f for f in after.active if applicable(f, True)], "fixable findings left"
    gone = {(f.code, f.resource, f.location.path, f.message) for f in out.applied}
    still = {(f.code, f.resource, f.location.path, f.message) for f in after.active}
    assert not gone & still, f"fixed findings still reported: {gone & still}"
    assert _errors(after) <= _errors(before), f"new errors: {_errors(after) - _errors(before)}"

    if out.changed:
        allowed: set[int] = set()
        for f in out.applied:  # later passes' paths may not exist in the original: their ancestors count
            allowed |= allowed_lines(text, f.location.doc_index, finding_ops(f))
        assert_only_targets_changed(text, out.fixed, allowed)


# -- JSON Patch means what the ops mean ---------------------------------------------------------
_keys = st.sampled_from(["spec", "a", "b/c", "x~y", "containers", "0"])
_leaf = st.one_of(st.integers(-3, 3), st.text("ab", max_size=2), st.booleans(), st.none())
_docs = st.recursive(
    _leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_keys, inner, max_size=3)),
    max_leaves=12,
)


def _paths(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, prefix + (i,))


@st.composite
def doc_and_fix(draw):
    from eksmllint.core.finding import AppendItem, Fix, SetValue

    doc = draw(st.dictionaries(_keys, _docs, min_size=1, max_size=4))
    ops = []
    for _ in range(draw(st.integers(1, 4))):
        base = draw(st.sampled_from(list(_paths(doc))))
        path = base + tuple(draw(st.lists(st.one_of(_keys, st.integers(0, 3)), max_size=2)))
        kind = draw(st.sampled_from(["set", "append", "remove"]))
        value = draw(_docs)
        ops.append(
            SetValue(path, value)
            if kind == "set"
            else AppendItem(path, value)
            if kind == "append"
            else RemovePath(path)
        )
    return doc, Fix("random", tuple(ops))


@settings(max_examples=max(200, EXAMPLES), deadline=None)
@given(doc_and_fix())
def test_json_patch_applies_like_the_ops(sample):
    import pytest

    jsonpatch = pytest.importorskip("jsonpatch")
    from eksmllint.fix.jsonpatch import to_json_patch
    from eksmllint.fix.model import apply_ops
    from eksmllint.fix.spans import FixError

    doc, fix = sample
    try:
        expected = apply_ops(doc, fix.ops)
    except FixError:
        return  # e.g. a path through a scalar: to_json_patch must refuse it as well
    try:
        patch = to_json_patch(fix, doc)
    except FixError as err:  # JSON objects have string keys only
        assert "indexes a list" in str(err) and any(model_int(op.path) for op in fix.ops)
        return
    assert jsonpatch.apply_patch(doc, patch) == expected


def model_int(path) -> bool:
    return any(isinstance(e, int) and not isinstance(e, bool) for e in path)
