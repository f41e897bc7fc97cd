"""The loader keeps positions, understands streams, and never raises on hostile input."""

from __future__ import annotations

import io
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from eksmllint.loader import load, parse_source, read_source
from eksmllint.resource import SourceFile
from eksmllint.yamlpos import MAX_EXPANDED_NODES, load_yaml_stream


def parse(text: str, name: str = "m.yaml"):
    src = SourceFile(name, text, "json" if name.endswith(".json") else "yaml")
    return parse_source(src)


def test_positions_of_keys_and_items():
    resources, problems = parse(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: a\n      image: x:1\n"
    )
    assert not problems
    (pod,) = resources
    loc = pod.location(("spec", "containers", 0, "image"))
    assert (loc.line, loc.col) == (8, 7)
    # a missing key resolves to its nearest existing ancestor
    missing = pod.location(("spec", "containers", 0, "resources", "limits"))
    assert (missing.line, missing.col) == (7, 7)


def test_multi_document_and_list_kind():
    text = "apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n"
    resources, problems = parse(text)
    assert not problems
    assert [r.name for r in resources] == ["a", "b"]
    assert resources[0].base_path == ("items", 0)
    assert resources[0].location(("metadata", "name")).path == ("items", 0, "metadata", "name")
    assert resources[1].doc.index == 1 and resources[1].location().line == 8


def test_non_kubernetes_documents_are_skipped():
    resources, problems = parse("strategy: data_parallelism\nreason: simple\n")
    assert resources == [] and problems == []


def test_json_manifest():
    resources, problems = parse('{"apiVersion": "v1", "kind": "ConfigMap",\n "metadata": {"name": "c"}}', "c.json")
    assert not problems and resources[0].name == "c"


def test_helm_source_comments_map_documents_to_templates():
    text = "---\n# Source: chart/templates/job.yaml\napiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\n---\n# Source: chart/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
    resources, _ = parse(text)
    assert [r.doc.template for r in resources] == ["chart/templates/job.yaml", "chart/templates/cm.yaml"]
    assert resources[0].location().template == "chart/templates/job.yaml"


def test_syntax_error_keeps_earlier_documents():
    resources, problems = parse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n---\nkind: [unclosed\n")
    assert [r.name for r in resources] == ["ok"]
    assert len(problems) == 1 and problems[0].line >= 5


def test_duplicate_keys_and_tabs_are_errors_with_positions():
    _, problems = parse("a: 1\nb: 2\na: 3\n")
    assert problems[0].line == 3 and "duplicate key" in problems[0].message
    _, problems = parse("a:\n\t- b\n")
    assert "tab" in problems[0].message and problems[0].line == 2


def test_alias_bomb_and_recursion_are_refused_quickly():
    bomb = 'a: &a ["x","x","x","x","x","x","x","x","x"]\n'
    for i in range(1, 10):
        prev, cur = chr(96 + i), chr(97 + i)
        bomb += f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 9) + "]\n"
    _, err = load_yaml_stream(bomb)
    assert err is not None and str(MAX_EXPANDED_NODES) in err.message
    _, err = load_yaml_stream("a: &a [*a]\n")
    assert err is not None and "recursive" in err.message


def test_tags_never_construct_objects():
    docs, err = load_yaml_stream("a: !!python/object/apply:os.system ['echo hi']\nb: !Ref x\n")
    # an unknown tag keeps the plain value; nothing is executed or constructed
    assert err is None
    assert docs[0].data["b"] == "x" and isinstance(docs[0].data["a"], list)


def test_binary_non_utf8_and_oversized_files(tmp_path):
    (tmp_path / "bin.yaml").write_bytes(b"\x00\x01\x02kind: x")
    (tmp_path / "latin.yaml").write_bytes(b"name: caf\xe9\n")
    (tmp_path / "big.yaml").write_bytes(b"a: " + b"x" * 2048 + b"\n")
    result = load([str(tmp_path)], max_bytes=1024)
    messages = {p.file.rsplit("/", 1)[-1]: p.message for p in result.problems}
    assert "binary" in messages["bin.yaml"]
    assert "UTF-8" in messages["latin.yaml"]
    assert "larger than" in messages["big.yaml"]


def test_directories_are_recursive_sorted_and_skip_git(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / ".git").mkdir()
    (tmp_path / "b" / "z.yml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: z}\n")
    (tmp_path / "a.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
    (tmp_path / ".git" / "x.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: g}\n")
    (tmp_path / "notes.txt").write_text("kind: x")
    result = load([str(tmp_path)], exclude=["*/skip/*"])
    assert [r.name for r in result.resources] == ["a", "z"]
    assert load([str(tmp_path / "nope.yaml")]).missing == [str(tmp_path / "nope.yaml")]


def test_stdin(monkeypatch):
    monkeypatch.setattr(
        sys, "stdin", io.TextIOWrapper(io.BytesIO(b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\n"))
    )
    src, problem = read_source("-")
    assert problem is None and src.path == "<stdin>"
    resources, _ = parse_source(src)
    assert resources[0].name == "s"


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=400))
def test_parse_never_raises_on_text(text):
    _, problems = parse(text)
    for p in problems:
        assert p.message


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400))
def test_read_never_raises_on_bytes(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("b") / "f.yaml"
    path.write_bytes(data)
    result = load([str(path)])
    assert all(p.message for p in result.problems)


def test_keys_equal_in_python_but_not_in_yaml_are_not_duplicates():
    # 1 == True in Python; in YAML `1` and `true` are two different keys (so are 1 and 1.0)
    for text in ("data:\n  1: a\n  true: b\n", "data:\n  1: a\n  1.0: b\n", "data:\n  0: a\n  false: b\n"):
        _, err = load_yaml_stream(text)
        assert err is None, text
    _, err = load_yaml_stream("data:\n  1: a\n  0x1: b\n")  # both resolve to the int 1: a real one
    assert err is not None and "duplicate key" in err.message and (err.line, err.col) == (3, 3)
    _, err = load_yaml_stream("data:\n  true: a\n  yes: b\n")
    assert err is not None and "duplicate key" in err.message


def _tabbed_json(body: str) -> str:
    # a tab between tokens: valid JSON that libyaml rejects, so the JSON fallback is used
    return '{"apiVersion": "v1",\t"kind": "ConfigMap",\n "metadata": {"name": "c"},\n' + body + "}"


def test_json_fallback_keeps_positions_and_checks_duplicates():
    resources, problems = parse(_tabbed_json('"data": {"a": "1"}'), "c.json")
    assert not problems and resources[0].location(("data", "a")).line == 3
    _, problems = parse(_tabbed_json('"kind": "Secret"'), "c.json")
    assert [(p.message, p.line) for p in problems] == [('duplicate key "kind"', 3)]
    # what only the JSON parser reads (here a \u escape libyaml refuses) gets the same checks
    _, problems = parse('{"a":\t"\\ud800", "a": 1}', "c.json")
    assert [(p.message, p.line) for p in problems] == [('duplicate key "a"', 1)]


def test_json_fallback_has_the_depth_limit():
    from eksmllint.yamlpos import MAX_DEPTH

    deep = "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5)
    _, problems = parse(_tabbed_json('"data": ' + deep), "c.json")
    assert [p.message for p in problems] == [f"nesting deeper than {MAX_DEPTH} levels"]
    _, problems = parse('{"a":\t"\\ud800", "b": ' + deep + "}", "c.json")
    assert [p.message for p in problems] == [f"nesting deeper than {MAX_DEPTH} levels"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(list("{}[],:?-! \n&*a1")), max_size=120).map("".join))
def test_libyaml_composes_at_most_about_one_node_per_character(text):
    """The node budget is only counted for texts of MAX_NODES / 2 characters or more
    (``yamlpos._loader_for``): that is sound while no text composes more nodes than it has
    characters (and two: ``?`` alone is a mapping of two nulls). Dense YAML punctuation is the
    worst case (``{?,?,?}``: a key and a value per two characters)."""
    import yaml

    from eksmllint import yamlpos

    class Counting(yamlpos._PosLoader):
        nodes = 0

        def descend_resolver(self, current_node, current_index):
            self.nodes += 1

    loader = Counting(text)
    try:
        while loader.check_node():
            loader.get_node()
    except yaml.YAMLError:
        pass  # the nodes composed before the error were counted all the same
    assert loader.nodes <= len(text) + 2


def test_only_texts_that_can_reach_the_node_budget_are_counted():
    from eksmllint import yamlpos

    assert type(yamlpos._loader_for("a: 1\n")) is yamlpos._PosLoader
    assert type(yamlpos._loader_for("[" + "1," * (yamlpos.MAX_NODES // 4) + "1]")) is yamlpos._CountingLoader
