"""The exported resource graph: model, DOT / Mermaid / JSON / SVG output, --focus, the CLI, and
the progress bar.

The expectations are computed from the lint result itself (which findings exist, on which
resource), so the tests keep their meaning while other rules are added.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest
from builders import PLATFORM
from click.testing import CliRunner
from repository import ROOT

from eksmllint.cli import cli
from eksmllint.config import Config
from eksmllint.core.engine import lint_paths, lint_text
from eksmllint.core.finding import Severity
from eksmllint.render import svg
from eksmllint.render.graph_export import (
    EDGE_TYPES,
    SEVERITY_COLORS,
    FocusError,
    bundle_edges,
    export_graph,
    focus,
    node_id,
)
from eksmllint.render.graph_text import to_dot, to_json, to_json_data, to_mermaid
from eksmllint.render.progress import ProgressBar, progress_for, wanted

EXAMPLES = ROOT / "fixtures" / "examples"

# PLATFORM (builders): a small platform the graph is drawn from.


@pytest.fixture(scope="module")
def result():
    return lint_text(PLATFORM, name="platform.yaml")


@pytest.fixture(scope="module")
def graph(result):
    return export_graph(result)


def resource_ids(result) -> set[str]:
    return {node_id(r.key) for r in result.run.resources}


# --- the model --------------------------------------------------------------------------------


def test_one_node_per_resource_and_template(result, graph):
    res = {nid for nid, n in graph.nodes.items() if n.type == "resource"}
    assert res == resource_ids(result)
    templates = {nid for nid, n in graph.nodes.items() if n.type == "template"}
    assert len(templates) == len(result.run.templates) >= 4  # master, worker, eval pod, daemon
    assert all(graph.nodes[t].owner in res for t in templates)


def test_typed_edges_of_the_platform(graph):
    edges = {(e.source, e.target, e.type) for e in graph.edges}
    assert all(t in EDGE_TYPES for _, _, t in edges)
    assert ("PyTorchJob/train/llama", "PyTorchJob/train/llama:master", "template-of") in edges
    assert ("PyTorchJob/train/llama:master", "NodePool/gpu", "can-land-on") in edges
    assert ("PyTorchJob/train/llama:master", "PersistentVolumeClaim/train/ckpt", "mounts") in edges
    assert ("PyTorchJob/train/llama:master", "ConfigMap/train/nccl-env", "mounts") in edges
    assert ("PersistentVolumeClaim/train/ckpt", "StorageClass/fsx", "uses-storageclass") in edges
    assert ("NodePool/gpu", "EC2NodeClass/gpu-class", "uses-nodeclass") in edges
    assert ("Job/train/eval:pod", "NodePool/gpu", "blocked-by-taint") in edges
    blocked = [e for e in graph.edges if e.type == "blocked-by-taint"]
    assert blocked[0].detail == "nvidia.com/gpu"
    assert len(edges) == len(graph.edges)  # no duplicate (source, target, type)


KUEUE = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: h100}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      requirements:
        - {key: node.kubernetes.io/instance-type, operator: In, values: [p5.48xlarge]}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: h100-flavor}
spec:
  nodeLabels: {karpenter.sh/nodepool: h100}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: research}
spec:
  namespaceSelector: {}
  resourceGroups:
    - coveredResources: [nvidia.com/gpu]
      flavors:
        - name: h100-flavor
          resources: [{name: nvidia.com/gpu, nominalQuota: 64}]
        - name: not-defined-here
          resources: [{name: nvidia.com/gpu, nominalQuota: 8}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: team-a, namespace: ml}
spec: {clusterQueue: research}
"""


def test_kueue_quota_chain_reaches_the_nodepool():
    edges = {(e.source, e.target, e.type) for e in export_graph(lint_text(KUEUE, name="kueue.yaml")).edges}
    assert ("LocalQueue/ml/team-a", "ClusterQueue/research", "submits-to") in edges
    assert ("ClusterQueue/research", "ResourceFlavor/h100-flavor", "uses-flavor") in edges
    assert ("ResourceFlavor/h100-flavor", "NodePool/h100", "flavor-of") in edges
    assert not [e for e in edges if "not-defined-here" in e[1]]  # no edge to a missing object
    assert all(t in EDGE_TYPES for _, _, t in edges)


def test_nodes_carry_their_worst_finding(result, graph):
    active = result.active
    assert any(f.severity == Severity.ERROR for f in active)  # the eval Job's untolerated taint
    for nid in resource_ids(result):
        mine = [
            f
            for f in active
            if f.resource and node_id(("res", f.resource.kind, f.resource.namespace, f.resource.name)) == nid
        ]
        node = graph.nodes[nid]
        assert len(node.findings) == len(mine)
        assert node.severity == (max(f.severity for f in mine) if mine else None)
    assert graph.nodes["Namespace/train"].severity is None


def test_template_gets_the_findings_inside_it(result, graph):
    tpl_findings = [f for f in result.active if f.resource and f.resource.name == "eval"]
    assert tpl_findings, "the eval Job must have a finding inside its pod template"
    tnode = graph.nodes["Job/train/eval:pod"]
    assert {f.code for f in tnode.findings} == {f.code for f in tpl_findings}
    # findings of the worker template do not leak onto the master template
    master = graph.nodes["PyTorchJob/train/llama:master"]
    for f in master.findings:
        assert "Master" in f.location.path


def test_instance_types_are_opt_in(result):
    plain = export_graph(result)
    assert not any(n.type == "instance-type" for n in plain.nodes.values())
    full = export_graph(result, include_instance_types=True)
    covers = [e for e in full.edges if e.type == "covers"]
    assert all(full.nodes[e.target].type == "instance-type" for e in covers)
    assert len(full.nodes) - len(plain.nodes) == len({e.target for e in covers})


# --- DOT --------------------------------------------------------------------------------------


def _unquote(s: str) -> str:
    return s[1:-1].replace('\\"', '"').replace("\\\\", "\\") if s.startswith('"') else s


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # pydot 4 on pyparsing 3.2+
def test_dot_parses_with_pydot(graph):
    pydot = pytest.importorskip("pydot", reason="pydot is a test dependency (pip install -e .[test])")
    parsed = pydot.graph_from_dot_data(to_dot(graph))
    assert parsed and len(parsed) == 1
    g = parsed[0]
    nodes = {
        _unquote(n.get_name()): n for n in g.get_nodes() if _unquote(n.get_name()) not in ("node", "edge", "graph")
    }
    assert set(nodes) == set(graph.nodes)
    assert len(g.get_edges()) == len(graph.edges)
    for nid, n in graph.nodes.items():
        fill = _unquote(nodes[nid].get("fillcolor"))
        assert fill == SEVERITY_COLORS[str(n.severity) if n.severity else None][0]
    odd = [nid for nid in graph.nodes if "quoted" in nid]
    assert odd and odd[0] in nodes  # quotes and brackets in a name survive the quoting


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed (apt-get install graphviz)")
def test_dot_renders_with_graphviz(graph):
    out = subprocess.run(["dot", "-Tsvg"], input=to_dot(graph), capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "Warning" not in out.stderr and "Error" not in out.stderr, out.stderr
    root = ET.fromstring(out.stdout)
    ns = {"s": "http://www.w3.org/2000/svg"}
    drawn = root.findall(".//s:g[@class]", ns)
    assert sum(1 for g in drawn if "node" in g.get("class", "").split()) == len(graph.nodes)
    assert sum(1 for g in drawn if "edge" in g.get("class", "").split()) == len(graph.edges)


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed (apt-get install graphviz)")
def test_dot_edges_carry_no_labels_and_one_legend_names_their_types(graph):
    """At size, a label on every edge overlaps into a tangle (issue 25 item 10): edges are told
    apart by colour, named once in the legend of the graph's title, and in each edge's tooltip."""
    out = subprocess.run(["dot", "-Tsvg"], input=to_dot(graph), capture_output=True, text=True, timeout=60)
    root = ET.fromstring(out.stdout)
    ns = {"s": "http://www.w3.org/2000/svg"}
    edges = [g for g in root.findall(".//s:g[@class]", ns) if "edge" in g.get("class", "").split()]
    assert edges and all(g.find(".//s:text", ns) is None for g in edges)
    drawing = root.find("s:g", ns)  # Graphviz's graph0: the graph's own label is its direct text
    assert drawing is not None
    legend = " ".join(t.text or "" for t in drawing.findall("s:text", ns))
    assert {e.type for e in graph.edges} <= set(legend.split())
    assert all(f'tooltip="{e.type}' in to_dot(graph) for e in graph.edges)


# --- Mermaid ----------------------------------------------------------------------------------

_MM_NODE = re.compile(r'^  (n\d+)(\["[^"\[\]{}|]*"\]|\(\["[^"\[\]{}|]*"\]\))$')
_MM_EDGE = re.compile(r"^  (n\d+) (-->|-\.->)\|([a-z-]+)\| (n\d+)$")
_MM_CLASSDEF = re.compile(r"^  classDef (error|warning|info) [a-z-]+:[#\w.]+(,[a-z-]+:[#\w.]+)*$")
_MM_CLASS = re.compile(r"^  class (n\d+(?:,n\d+)*) (error|warning|info)$")


def check_mermaid(text: str) -> tuple[set[str], list[tuple[str, str, str]], dict[str, str]]:
    """A grammar check of the flowchart subset eksmllint emits; returns (nodes, edges, classes)."""
    lines = text.rstrip("\n").split("\n")
    assert lines[0] == "flowchart LR"
    nodes: set[str] = set()
    edges: list[tuple[str, str, str]] = []
    classes: dict[str, str] = {}
    defined_classes: set[str] = set()
    for ln in lines[1:]:
        if ln.startswith("  %%"):
            continue
        if m := _MM_NODE.match(ln):
            assert m.group(1) not in nodes, f"node defined twice: {ln}"
            label = m.group(2)
            # entity codes only; no raw characters the grammar reserves
            assert not re.search(r"#(?!\d+;)", label), ln
            nodes.add(m.group(1))
        elif m := _MM_EDGE.match(ln):
            edges.append((m.group(1), m.group(4), m.group(3)))
        elif m := _MM_CLASSDEF.match(ln):
            defined_classes.add(m.group(1))
        elif m := _MM_CLASS.match(ln):
            assert m.group(2) in defined_classes, "class used before classDef"
            for n in m.group(1).split(","):
                classes[n] = m.group(2)
        else:
            raise AssertionError(f"not valid flowchart syntax: {ln!r}")
    for a, b, _ in edges:
        assert a in nodes and b in nodes, f"edge to an undefined node: {a} -> {b}"
    return nodes, edges, classes


def test_mermaid_is_a_valid_flowchart(graph):
    nodes, edges, classes = check_mermaid(to_mermaid(graph))
    assert len(nodes) == len(graph.nodes)
    assert sorted(t for _, _, t in edges) == sorted(e.type for e in graph.edges)
    coloured = {nid for nid, n in graph.nodes.items() if n.severity is not None}
    assert len(classes) == len(coloured) > 0
    dashed = [ln for ln in to_mermaid(graph).splitlines() if "-.->" in ln]
    assert len(dashed) == sum(1 for e in graph.edges if e.type == "blocked-by-taint")


def test_mermaid_check_rejects_bad_syntax():
    with pytest.raises(AssertionError):
        check_mermaid('flowchart LR\n  n0["a"]\n  n0 --> n1\n')
    with pytest.raises(AssertionError):
        check_mermaid('flowchart LR\n  n0["a "quoted" b"]\n')


# --- JSON -------------------------------------------------------------------------------------


def test_json_round_trips(graph):
    data = json.loads(to_json(graph))
    assert data["schema"] == "eksmllint-graph/1"
    ids = [n["id"] for n in data["nodes"]]
    assert len(ids) == len(set(ids)) == len(graph.nodes)
    assert all(e["source"] in ids and e["target"] in ids for e in data["edges"])
    by_id = {n["id"]: n for n in data["nodes"]}
    for nid, n in graph.nodes.items():
        assert len(by_id[nid]["findings"]) == len(n.findings)
        assert by_id[nid]["severity"] == (str(n.severity) if n.severity else None)
    assert to_json_data(graph) == data


# --- focus ------------------------------------------------------------------------------------


def test_focus_on_a_workload_keeps_its_neighbourhood(graph):
    sub = focus(graph, "pytorchjob/llama")
    ids = set(sub.nodes)
    assert {
        "PyTorchJob/train/llama",
        "PyTorchJob/train/llama:master",
        "PyTorchJob/train/llama:worker",
        "NodePool/gpu",
        "EC2NodeClass/gpu-class",
        "PersistentVolumeClaim/train/ckpt",
        "StorageClass/fsx",
        "ConfigMap/train/nccl-env",
    } <= ids
    # the device plugin that lands on the job's pool is part of the picture
    assert "DaemonSet/kube-system/nvidia-device-plugin" in ids
    # unrelated workloads and objects are not
    assert "Job/train/eval" not in ids and "Namespace/train" not in ids
    assert all(e.source in ids and e.target in ids for e in sub.edges)
    assert sub.focus == "pytorchjob/llama"
    assert "focus pytorchjob/llama" in to_dot(sub)


def test_focus_on_a_nodepool_shows_who_lands_on_it(graph):
    sub = focus(graph, "NodePool/gpu")
    assert {"Job/train/eval", "Job/train/eval:pod", "PyTorchJob/train/llama", "EC2NodeClass/gpu-class"} <= set(
        sub.nodes
    )


def test_focus_with_namespace_and_errors(graph):
    assert "PyTorchJob/train/llama" in focus(graph, "PyTorchJob/train/llama").nodes
    with pytest.raises(FocusError, match="no such resource"):
        focus(graph, "PyTorchJob/other/llama")
    with pytest.raises(FocusError, match="PyTorchJob/train/llama"):  # lists what exists
        focus(graph, "PyTorchJob/nope")
    with pytest.raises(FocusError, match="KIND/NAME"):
        focus(graph, "llama")


# --- SVG layout -------------------------------------------------------------------------------


def test_svg_has_one_node_per_resource_and_edges_point_right(result, graph):
    text = svg.render_svg(graph)
    root = ET.fromstring(text)  # well-formed XML
    ns = "{http://www.w3.org/2000/svg}"
    groups = [g for g in root.iter(f"{ns}g") if g.get("data-node-id")]
    resources = [g.get("data-node-id") for g in groups if g.get("data-type") == "resource"]
    assert sorted(resources) == sorted(resource_ids(result))
    assert len(groups) == len(graph.nodes)
    sev = {g.get("data-node-id"): g.get("data-severity") for g in groups}
    assert sev["Job/train/eval"] == "error"
    paths = [p for p in root.iter(f"{ns}path") if p.get("data-type")]
    assert len(paths) == len(graph.edges)
    placed, width, height = svg.layout(graph)
    for e in graph.edges:
        if e.type in svg.LAYOUT_REVERSED:
            assert placed[e.target].x < placed[e.source].x, e
        else:
            assert placed[e.source].x < placed[e.target].x, e
    for a in placed.values():  # no two boxes overlap
        assert 0 <= a.x and a.x + svg.NODE_W <= width and 0 <= a.y and a.y + a.h <= height
        for b in placed.values():
            if a is not b and a.x == b.x:
                assert a.y + a.h <= b.y or b.y + b.h <= a.y


def test_bundles_stand_for_every_edge_once():
    from eksmllint.render.graph_export import ExportEdge

    lands = [ExportEdge(f"t{i}", f"p{j}", "can-land-on") for i in range(5) for j in range(3)]
    mounts = [ExportEdge("t0", "cm", "mounts"), ExportEdge("t1", "cm", "mounts")]
    pair = [ExportEdge(f"t{i}", f"q{j}", "queued-in") for i in range(2) for j in range(2)]
    edges = lands + mounts + pair
    bundles, plain = bundle_edges(edges)
    # five templates landing on the same three pools: 8 curves instead of 15; one target or a
    # 2 x 2 block saves nothing and stays plain
    assert [(b.type, len(b.sources), b.targets) for b in bundles] == [("can-land-on", 5, ("p0", "p1", "p2"))]
    assert sorted(plain, key=str) == sorted(mounts + pair, key=str)
    covered = [(s, t, b.type) for b in bundles for s in b.sources for t in b.targets]
    covered += [(e.source, e.target, e.type) for e in plain]
    assert sorted(covered) == sorted((e.source, e.target, e.type) for e in edges)


def test_examples_graph_fits_the_report_width_with_bundles():
    result = lint_paths([str(EXAMPLES)], Config())
    graph = export_graph(result)
    text = svg.render_svg(graph)
    root = ET.fromstring(text)
    assert float(root.get("width")) <= svg.FIT_WIDTH  # drawn at 1:1, so labels keep their size
    assert int(root.get("data-bundles")) >= 1
    assert int(root.get("data-curves")) < int(root.get("data-edges"))
    bundled = [b for b in root.iter("{http://www.w3.org/2000/svg}g") if "bundle" in (b.get("class") or "")]
    assert all(b.find("{http://www.w3.org/2000/svg}title") is not None for b in bundled)  # members on hover


def test_the_legend_explains_junctions_only_where_the_drawing_has_one(graph):
    examples = export_graph(lint_paths([str(EXAMPLES)], Config()))
    drawn, plain = svg.draw_svg(examples), svg.draw_svg(graph)
    assert drawn.bundles >= 1 and f'data-bundles="{drawn.bundles}"' in drawn.svg
    assert plain.bundles == 0
    assert "junction" in svg.legend_html(examples, bundled=drawn.bundles > 0)
    assert "junction" not in svg.legend_html(graph, bundled=plain.bundles > 0)
    # a bundle's tooltip names its first twelve sources, then how many more
    bundle = next(b for b in ET.fromstring(drawn.svg).iter("{http://www.w3.org/2000/svg}g") if b.get("data-sources"))
    tip = bundle.find("{http://www.w3.org/2000/svg}title").text.splitlines()
    sources = int(bundle.get("data-sources"))
    assert len([t for t in tip if t.startswith("from ")]) == min(sources, 12)
    assert (f"... and {sources - 12} more" in tip) == (sources > 12)


def test_isotonic_spacing_is_feasible_and_optimal():
    ys = svg._isotonic_spaced([10, 0, 50], [20, 20, 20])
    assert ys[1] - ys[0] >= 20 - 1e-9 and ys[2] - ys[1] >= 20 - 1e-9
    assert ys[2] == pytest.approx(50)  # unconstrained node stays where it wants
    # the two crowded nodes share the violation equally: 15 up and 15 down
    assert ys[:2] == [pytest.approx(-5), pytest.approx(15)]
    assert svg._isotonic_spaced([0, 100], [10, 10]) == [0, 100]


# --- CLI --------------------------------------------------------------------------------------


@pytest.fixture()
def platform_file(tmp_path):
    p = tmp_path / "platform.yaml"
    p.write_text(PLATFORM, encoding="utf-8")
    return p


@pytest.mark.parametrize("fmt", ["dot", "mermaid", "json", "html"])
def test_graph_command_formats(platform_file, fmt, tmp_path):
    out = tmp_path / f"g.{fmt}"
    r = CliRunner().invoke(cli, ["graph", "--format", fmt, "--output", str(out), str(platform_file)])
    assert r.exit_code == 0, r.output
    text = out.read_text(encoding="utf-8")
    if fmt == "dot":
        assert text.startswith("digraph eksmllint {") and '"NodePool/gpu"' in text
    elif fmt == "mermaid":
        check_mermaid(text)
    elif fmt == "json":
        assert {n["id"] for n in json.loads(text)["nodes"]} >= {"NodePool/gpu", "PyTorchJob/train/llama"}
    else:
        assert text.startswith("<!DOCTYPE html>") and 'data-node-id="NodePool/gpu"' in text


def test_graph_command_focus_and_errors(platform_file, tmp_path):
    r = CliRunner().invoke(cli, ["graph", "--format", "json", "--focus", "Job/eval", str(platform_file)])
    assert r.exit_code == 0, r.output
    ids = {n["id"] for n in json.loads(r.output)["nodes"]}
    assert "Job/train/eval" in ids and "PyTorchJob/train/llama:worker" not in ids
    r = CliRunner().invoke(cli, ["graph", "--focus", "Job/missing", str(platform_file)])
    assert r.exit_code == 2 and "no such resource" in r.output
    r = CliRunner().invoke(cli, ["graph", str(tmp_path / "nope.yaml")])
    assert r.exit_code == 2
    r = CliRunner().invoke(cli, ["graph"])
    assert r.exit_code == 2
    r = CliRunner().invoke(cli, ["graph", "--format", "png", str(platform_file)])
    assert r.exit_code == 2


@pytest.mark.skipif(not EXAMPLES.is_dir(), reason="fixtures/examples not present")
@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed (apt-get install graphviz)")
def test_examples_graph_pipes_into_dot():
    r = CliRunner().invoke(cli, ["graph", "--format", "dot", str(EXAMPLES)])
    assert r.exit_code == 0, r.output
    out = subprocess.run(["dot", "-Tsvg"], input=r.output, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "<svg" in out.stdout, out.stderr
    # identical edges meet in junction points: fewer lines drawn than the graph has edges
    graph = export_graph(lint_paths([str(EXAMPLES)], Config()))
    root = ET.fromstring(out.stdout)
    classes = [g.get("class", "").split() for g in root.iter("{http://www.w3.org/2000/svg}g")]
    assert sum(1 for c in classes if "bundle" in c) == len(bundle_edges(graph.edges)[0]) >= 1
    assert sum(1 for c in classes if "edge" in c) < len(graph.edges)


# --- progress ---------------------------------------------------------------------------------


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_only_on_a_terminal_outside_ci():
    tty, pipe = FakeTTY(), io.StringIO()
    assert wanted(tty, {}, total=1000)
    assert not wanted(pipe, {}, total=1000)  # pipes never
    assert not wanted(tty, {"CI": "true"}, total=1000)  # CI never
    assert wanted(tty, {"CI": "false"}, total=1000)
    assert not wanted(tty, {"TERM": "dumb"}, total=1000)
    assert not wanted(tty, {}, total=50)  # a few files: no flash of a bar
    assert progress_for(1000, pipe, {}) is None


def test_progress_bar_draws_throttles_and_clears():
    now = [0.0]
    out = FakeTTY()
    bar = ProgressBar(out, clock=lambda: now[0])
    bar(1, 400)
    first = out.getvalue()
    assert first.startswith("\r[") and "1/400 files" in first
    bar(2, 400)  # within the redraw interval: nothing
    assert out.getvalue() == first
    now[0] = 1.0
    bar(200, 400)
    assert "200/400 files" in out.getvalue() and "#" * 15 in out.getvalue()
    bar(400, 400)
    assert out.getvalue().endswith("\r") and bar.closed  # the line is wiped, nothing left behind
    size = len(out.getvalue())
    bar(400, 400)
    assert len(out.getvalue()) == size


GARBAGE = {
    "bad.yaml": "a: [1\n",
    "empty.yaml": "",
    "weird.yaml": "kind: Job\nmetadata: 5\nspec: []\n",
    "list.yaml": "apiVersion: v1\nkind: List\nitems:\n- kind: ConfigMap\n  metadata: {name: x}\n- 7\n",
    "seq.yaml": "- 1\n- 2\n",
    "np.yaml": (
        'apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {name: "<script>alert(1)</script>"}\n'
        "spec: {template: {spec: {nodeClassRef: {name: [1]}}}}\n"
    ),
    "job.sbatch": "#!/bin/bash\n#SBATCH --nodes=2\nsrun python x.py\n",
}


@pytest.mark.parametrize("fmt", ["dot", "mermaid", "json", "html"])
def test_graph_of_garbage_never_crashes(tmp_path, fmt):
    for name, text in GARBAGE.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    r = CliRunner().invoke(cli, ["graph", "--format", fmt, str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert r.exception is None
    if fmt in ("html", "mermaid"):
        assert "<script>alert" not in r.output  # names are data, never markup
    if fmt == "dot" and shutil.which("dot"):
        out = subprocess.run(["dot", "-Tsvg"], input=r.output, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
    if fmt == "mermaid":
        check_mermaid(r.output)
    if fmt == "json":
        kinds = {n["kind"] for n in json.loads(r.output)["nodes"]}
        assert {"NodePool", "ConfigMap", "Job"} <= kinds


def test_module_level_progress_callback(monkeypatch):
    from eksmllint.render import progress as mod

    tty = FakeTTY()
    monkeypatch.setattr(mod.sys, "stderr", tty)
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("NO_PROGRESS", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    for i in range(0, 501):
        mod.progress(i, 500)
    assert "0/500 files" in tty.getvalue() and tty.getvalue().endswith("\r")
    monkeypatch.setenv("CI", "true")
    tty.seek(0)
    tty.truncate()
    for i in range(0, 501):
        mod.progress(i, 500)
    assert tty.getvalue() == ""  # CI=true: never a bar
