"""The autofix engine: text splicing, the fix loop, atomic writes, JSON Patch, ``eksmllint fix``."""

from __future__ import annotations

import json
import os
import stat
import time

import pytest
import yaml
from click.testing import CliRunner
from repository import ROOT

from eksmllint.cli import cli
from eksmllint.config import Config
from eksmllint.core.engine import lint_text
from eksmllint.core.finding import (
    AppendItem,
    Applicability,
    Finding,
    Fix,
    Location,
    RemovePath,
    SetValue,
    Severity,
)
from eksmllint.core.registry import Registry, default_registry
from eksmllint.core.rule import Rule
from eksmllint.fix import apply as apply_mod
from eksmllint.fix import writer
from eksmllint.fix.apply import apply_findings, apply_fix, select_fixes
from eksmllint.fix.engine import fix_text
from eksmllint.fix.goldens import case_files, fix_case, fixable_cases, golden_path
from eksmllint.fix.jsonpatch import apply_json_patch, pointer, to_json_patch
from eksmllint.fix.model import apply_ops
from eksmllint.fix.run import fix_then_lint
from eksmllint.fix.spans import FixError, parse_stream

BAD301 = ROOT / "fixtures" / "rules" / "EML301-shm-missing" / "bad.yaml"


def fix(text: str, *ops, doc: int = 0, base=(), json_file: bool = False) -> str:
    return apply_fix(text, Fix("t", tuple(ops)), doc, base, json_file=json_file)


def run(*args, input=None):
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


# -- splicing: everything outside the edited node keeps its bytes ------------------------------
def test_c_loader_marks_are_character_offsets():
    text = 'a: "é😀"\nb: 1\n'
    st = parse_stream(text)
    key = st.docs[0].value[1][0]
    assert text[key.start_mark.index] == "b"


def test_insert_key_keeps_comments_quotes_and_order():
    text = "# head\nb: 'x'   # keep me\na:\n  c: \"2\" # also\n"
    out = fix(text, SetValue(("a", "d"), {"e": [1, "0"]}))
    assert out.startswith("# head\nb: 'x'   # keep me\na:\n  c: \"2\" # also\n  d:\n")
    assert yaml.safe_load(out) == {"b": "x", "a": {"c": "2", "d": {"e": [1, "0"]}}}
    assert "'0'" in out or '"0"' in out  # a string that looks like a number stays a string


@pytest.mark.parametrize("dash", ["", "  "])
def test_appended_items_follow_the_lists_dash_style(dash):
    text = f"spec:\n  volumes:\n  {dash}- name: data\n  {dash}  emptyDir: {{}}\n"
    out = fix(text, AppendItem(("spec", "volumes"), {"name": "dshm", "emptyDir": {"medium": "Memory"}}))
    assert out == text + f"  {dash}- name: dshm\n  {dash}  emptyDir:\n  {dash}    medium: Memory\n"


def test_new_list_uses_the_documents_dash_style_and_indent():
    text = "spec:\n    containers:\n    - name: a\n      image: i:1\n"
    out = fix(text, AppendItem(("spec", "containers", 0, "volumeMounts"), {"name": "v", "mountPath": "/m"}))
    assert out == text + "      volumeMounts:\n      - name: v\n        mountPath: /m\n"


def test_flow_parent_gets_flow_and_empty_flow_list_becomes_block_keeping_its_comment():
    assert fix("a: [x, y]\n", AppendItem(("a",), {"n": 1})) == "a: [x, y, {n: 1}]\n"
    assert fix("a: {p: 1}\n", SetValue(("a", "q"), "a,b")) == 'a: {p: 1, q: "a,b"}\n'
    assert fix("v: []  # none yet\n", AppendItem(("v",), {"n": "d"})) == "v:  # none yet\n  - n: d\n"


def test_scalar_replacement_keeps_quote_style_and_comment():
    assert fix("a: 'x'  # c\n", SetValue(("a",), "z")) == "a: 'z'  # c\n"
    assert fix('a: "x"\n', SetValue(("a",), "0")) == 'a: "0"\n'
    assert fix("n: 4 # gpus\n", SetValue(("n",), 8)) == "n: 8 # gpus\n"
    assert fix("a: x\n", SetValue(("a",), "yes")) == 'a: "yes"\n'  # would load as a bool unquoted


def test_block_scalar_replaced_as_literal_keeping_header_comment():
    text = "c:\n  - |  # script\n    set -e\n    torchrun --nproc_per_node 4 t.py\n  - x\n"
    out = fix(text, SetValue(("c", 0), "set -e\ntorchrun --nproc_per_node 8 t.py\n"))
    assert out == text.replace("node 4", "node 8")


def test_null_and_missing_parents_are_created():
    assert fix("a:\nb: 1\n", SetValue(("a", "x"), 1)) == "a:\n  x: 1\nb: 1\n"
    assert fix("m:\n  k: 1\n", SetValue(("m", "p", "q"), True)) == "m:\n  k: 1\n  p:\n    q: true\n"
    with pytest.raises(FixError):
        fix("a: 1\n", SetValue(("a", "b"), 2))  # through a scalar
    with pytest.raises(FixError):
        fix("a: []\n", SetValue(("a", 3), 2))  # list index out of range


def test_remove_variants():
    assert fix("a: 1\nb: 2\nc: 3\n", RemovePath(("b",))) == "a: 1\nc: 3\n"
    assert fix("- a: 1\n  b: 2\n", RemovePath((0, "a"))) == "- b: 2\n"
    assert fix("l:\n  - x\n  - y  # why\n  - z\n", RemovePath(("l", 1))) == "l:\n  - x\n  - z\n"
    assert fix("l: [x, y, z]\n", RemovePath(("l", 2))) == "l: [x, y]\n"
    assert fix("m:\n  only: 1\n", RemovePath(("m", "only"))) == "m: {}\n"
    assert fix("a: 1\nb: 2", RemovePath(("b",))) == "a: 1"  # no final newline stays so
    assert fix("a: 1\n", RemovePath(("zz",))) == "a: 1\n"  # already absent


def test_set_on_existing_collection_edits_only_what_differs():
    text = "k:\n  a: 1  # one\n  b: 2\n"
    assert fix(text, SetValue(("k",), {"a": 1, "c": 3})) == "k:\n  a: 1  # one\n  c: 3\n"
    assert fix('v: ["spot", "on-demand"]  # c\n', SetValue(("v",), ["on-demand"])) == 'v: ["on-demand"]  # c\n'
    assert fix("v: [1, 2]\n", SetValue(("v",), [1, 2])) == "v: [1, 2]\n"


def test_crlf_bom_free_text_and_no_final_newline():
    assert fix("a: 1\r\nb:\r\n  c: 2\r\n", SetValue(("b", "d"), 3)) == "a: 1\r\nb:\r\n  c: 2\r\n  d: 3\r\n"
    assert fix("a: 1", SetValue(("b",), 2)) == "a: 1\nb: 2"
    assert fix("a: 1\r\nb: 2", RemovePath(("b",))) == "a: 1"  # the whole CRLF break goes


def test_json_file_gets_json():
    text = '{\n  "a": 1,\n  "b": {"c": 2}\n}\n'
    out = fix(text, SetValue(("b", "d"), ["x"]), SetValue(("e",), True), json_file=True)
    assert out == '{\n  "a": 1,\n  "b": {"c": 2, "d": ["x"]},\n  "e": true\n}\n'


def test_multi_document_stream_keeps_separators_and_helm_headers():
    text = "---\n# Source: chart/a.yaml\na: 1\n...\n---\n# Source: chart/b.yaml\nb: 2\n"
    out = fix(text, SetValue(("c",), 3), doc=1)
    assert out == text + "c: 3\n"


def test_kind_list_items_through_base_path():
    text = "apiVersion: v1\nkind: List\nitems:\n- kind: Pod\n  metadata: {name: a}\n- kind: Pod\n  metadata:\n    name: b\n"
    out = fix(text, SetValue(("metadata", "labels", "x"), "y"), base=("items", 1))
    assert out == text + "    labels:\n      x: y\n"


def test_aliases_and_merge_keys_are_refused():
    with pytest.raises(FixError, match="alias"):
        fix("x: &a {p: 1}\ny: *a\n", SetValue(("y", "p"), 2))
    with pytest.raises(FixError, match="merge"):
        fix("base: &b {p: {x: 1}}\ny:\n  <<: *b\n  q: 2\n", SetValue(("y", "p", "z"), 2))


def test_a_splice_that_does_not_load_as_intended_is_refused(monkeypatch):
    monkeypatch.setattr(apply_mod, "apply_ops_text", lambda text, *a, **k: text + "a: [\n")
    with pytest.raises(FixError, match="not valid YAML"):
        fix("a: 1\n", SetValue(("b",), 2))
    monkeypatch.setattr(apply_mod, "apply_ops_text", lambda text, *a, **k: "a: 2\n")
    with pytest.raises(FixError, match="does not load as the fix intends"):
        fix("a: 1\n", SetValue(("b",), 2))


# -- choosing fixes -----------------------------------------------------------------------------
def finding(code: str, *ops, doc: int = 0, line: int = 1) -> Finding:
    return Finding(code, "s", Severity.WARNING, "m", Location("f", line, 1, doc), fix=Fix("t", tuple(ops)))


def test_conflicts_equal_or_prefix_paths_lower_code_wins():
    a = finding("EML302", SetValue(("spec", "x"), 1))
    b = finding("EML301", SetValue(("spec", "x", "y"), 2))  # below a: conflicts, lower code wins
    c = finding("EML303", SetValue(("spec", "z"), 3))
    d = finding("EML304", SetValue(("spec", "x"), 4), doc=1)  # another document: independent
    chosen, deferred = select_fixes([a, b, c, d])
    assert chosen == [b, c, d] and deferred == [a]


def test_removing_a_list_item_claims_the_list():
    rm = finding("EML301", RemovePath(("env", 0)))
    other = finding("EML302", SetValue(("env", 2, "value"), "x"))
    assert select_fixes([rm, other]) == ([rm], [other])


# -- the loop -----------------------------------------------------------------------------------
def _rule(code: str, slug: str, check, fix_kind: str = "safe") -> Rule:
    base = default_registry().get("EML301").spec
    spec = base.model_copy(update={"code": code, "slug": slug, "fix": fix_kind, "target": "resources", "kinds": ()})
    return Rule(spec, check)


def _registry(*rules: Rule) -> Registry:
    return Registry(list(default_registry()) + list(rules))


def test_two_containers_in_one_pod_are_fixed_over_two_passes():
    text = BAD301.read_text().replace(
        "                  memory: 160Gi\n",
        "                  memory: 160Gi\n            - name: sidecar\n              image: busybox:1.36\n"
        "              resources:\n                limits:\n                  nvidia.com/gpu: 2\n"
        '                  cpu: "4"\n                  memory: 16Gi\n',
    )
    out = fix_text(text, name="job.yaml")
    assert out.error is None and [f.code for f in out.applied] == ["EML301", "EML301"]
    data = yaml.safe_load(out.fixed)["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
    assert [v["name"] for v in data["volumes"]] == ["dshm", "dshm-1"]
    assert not [f for f in fix_text(out.fixed, name="job.yaml").applied]  # idempotent


def test_fixes_that_undo_each_other_keep_the_original():
    def up(ctx, res):
        if res.get(("spec", "n")) != 2:
            yield ctx.report(res, ("spec",), "n must be 2", fix=Fix("two", (SetValue(("spec", "n"), 2),)))

    def down(ctx, res):
        if res.get(("spec", "n")) != 1:
            yield ctx.report(res, ("spec",), "n must be 1", fix=Fix("one", (SetValue(("spec", "n"), 1),)))

    reg = _registry(_rule("EML398", "flip-up", up), _rule("EML399", "flip-down", down))
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\nspec:\n  n: 0\n"
    cfg = Config(select=("EML398", "EML399"))
    out = fix_text(text, cfg, registry=reg)
    assert out.fixed == text and out.error and "undo each other" in out.error


def test_no_convergence_within_the_cap_keeps_the_original():
    def grow(ctx, res):
        n = res.get(("spec", "n"), 0)
        yield ctx.report(res, ("spec",), "more", fix=Fix("inc", (SetValue(("spec", "n"), n + 1),)))

    reg = _registry(_rule("EML397", "always-more", grow))
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\nspec:\n  n: 0\n"
    out = fix_text(text, Config(select=("EML397",)), registry=reg, max_passes=3)
    assert out.fixed == text and "did not settle after 3 passes" in out.error


def test_unsafe_fixes_only_on_request_and_invalid_yaml_untouched():
    def unsafe(ctx, res):
        if "x" not in res.labels:
            yield ctx.report(
                res,
                ("metadata",),
                "label",
                fix=Fix("label", (SetValue(("metadata", "labels", "x"), "1"),), Applicability.UNSAFE),
            )

    reg = _registry(_rule("EML396", "unsafe-label", unsafe, "unsafe"))
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
    cfg = Config(select=("EML396",))
    assert not fix_text(text, cfg, registry=reg).changed
    assert fix_text(text, cfg, registry=reg, unsafe=True).fixed == text + '  labels:\n    x: "1"\n'
    broken = fix_text("a: [\n", cfg, registry=reg, unsafe=True)
    assert not broken.changed and "not valid YAML" in broken.note


def test_kind_list_and_json_files_through_the_loop():
    job = yaml.safe_load(BAD301.read_text())
    listed = "apiVersion: v1\nkind: List\nitems:\n" + "".join(
        "- " + yaml.safe_dump(job, sort_keys=False).replace("\n", "\n  ").rstrip() + "\n" for _ in range(2)
    )
    out = fix_text(listed, name="list.yaml")
    assert [f.location.path[:2] for f in out.applied] == [("items", 0), ("items", 1)]
    items = yaml.safe_load(out.fixed)["items"]
    assert all(
        i["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["volumes"][0]["name"] == "dshm" for i in items
    )
    as_json = json.dumps(job, indent=2) + "\n"
    fixed = fix_text(as_json, name="job.json")
    assert (
        fixed.changed
        and json.loads(fixed.fixed)["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["volumes"]
    )


def test_per_document_slices_give_the_same_text_as_whole_stream_edits():
    docs = [BAD301.read_text().replace("llama-pretrain", f"job-{i}") for i in range(3)]
    text = "# header\n---\n" + "...\n---\n".join(docs)
    found = [f for f in lint_text(text, name="s.yaml").active if f.fix]
    assert len({f.location.doc_index for f in found}) == 3
    sliced, applied, failed = apply_findings(text, found)
    whole = text
    for f in found:
        whole = apply_fix(whole, f.fix, f.location.doc_index, f.base_path)
    assert sliced == whole and len(applied) == 3 and not failed


def test_long_streams_are_fixed_in_linear_time():
    doc = BAD301.read_text()
    text = "---\n".join(doc.replace("llama-pretrain", f"job-{i}") for i in range(150))
    start = time.monotonic()
    out = fix_text(text, name="render.yaml")
    assert len(out.applied) == 150 and time.monotonic() - start < 60


# -- writes -------------------------------------------------------------------------------------
def test_atomic_write_keeps_mode_and_bom(tmp_path):
    p = tmp_path / "a.yaml"
    p.write_bytes(writer.BOM + b"a: 1\n")
    os.chmod(p, 0o640)
    data = writer.encode("a: 2\n", p.read_bytes())
    writer.atomic_write(str(p), data, expected=writer.BOM + b"a: 1\n")
    assert p.read_bytes() == writer.BOM + b"a: 2\n" and stat.S_IMODE(p.stat().st_mode) == 0o640
    assert os.listdir(tmp_path) == ["a.yaml"]


@pytest.mark.parametrize("where", ["replace", "fsync"])
def test_crash_in_the_middle_of_a_write_leaves_the_original(tmp_path, monkeypatch, where):
    p = tmp_path / "job.yaml"
    original = BAD301.read_bytes()
    p.write_bytes(original)

    def boom(*a, **k):
        raise OSError(5, "simulated crash")

    monkeypatch.setattr(os, where, boom)
    result = run("fix", str(p))
    assert result.exit_code == 1 and "could not be written" in result.output
    assert p.read_bytes() == original and os.listdir(tmp_path) == ["job.yaml"]


def test_file_changed_on_disk_is_not_overwritten(tmp_path):
    p = tmp_path / "a.yaml"
    p.write_bytes(b"a: 1\n")
    with pytest.raises(writer.WriteError, match="changed on disk"):
        writer.atomic_write(str(p), b"a: 2\n", expected=b"a: 0\n")
    assert p.read_bytes() == b"a: 1\n"


def test_symlink_read_only_and_helm_are_not_written_but_diff_works(tmp_path):
    real = tmp_path / "real.yaml"
    real.write_text(BAD301.read_text())
    link = tmp_path / "link.yaml"
    link.symlink_to(real)
    ro = tmp_path / "ro.yaml"
    ro.write_text(BAD301.read_text())
    os.chmod(ro, 0o444)
    helm = tmp_path / "rendered.yaml"
    helm.write_text("---\n# Source: chart/templates/job.yaml\n" + BAD301.read_text())
    for path, why in [(link, "symlink"), (ro, "read-only"), (helm, "Helm")]:
        before = path.read_bytes()
        result = run("fix", str(path))
        assert result.exit_code == 1 and why in result.output, result.output
        assert path.read_bytes() == before
        diff = run("fix", "--diff", str(path))
        assert diff.exit_code == 0 and "+          volumes:" in diff.output


# -- the command --------------------------------------------------------------------------------
def test_fix_in_place_diff_and_check(tmp_path):
    p = tmp_path / "job.yaml"
    p.write_text(BAD301.read_text())
    diff = run("fix", "--diff", str(p))
    assert diff.exit_code == 0 and "+                  mountPath: /dev/shm" in diff.output
    assert p.read_text() == BAD301.read_text()
    assert run("fix", "--check", str(p)).exit_code == 1
    assert p.read_text() == BAD301.read_text()
    done = run("fix", str(p))
    assert done.exit_code == 0 and "fixed" in done.output
    assert run("fix", "--check", str(p)).exit_code == 0
    assert "EML301" not in run("lint", str(p)).output


def test_select_ignore_and_stdin():
    assert "volumes:" not in run("fix", "--ignore", "EML301", "-", input=BAD301.read_text()).output
    out = run("fix", "--select", "EML301", "-", input=BAD301.read_text())
    assert out.exit_code == 0 and out.output.startswith(BAD301.read_text()) and "sizeLimit: 40Gi" in out.output


def test_unsafe_fixes_flag(tmp_path):
    bad = ROOT / "fixtures" / "rules" / "EML101-efa-multi-az" / "bad.yaml"
    p = tmp_path / "pool.yaml"
    p.write_text(bad.read_text())
    safe = run("fix", "--select", "EML101", str(p))
    assert safe.exit_code == 0 and "available with --unsafe-fixes" in safe.output
    assert p.read_text() == bad.read_text()
    unsafe = run("fix", "--select", "EML101", "--unsafe-fixes", str(p))
    assert unsafe.exit_code == 0 and p.read_text() != bad.read_text()


def test_usage_errors(tmp_path):
    assert run("fix").exit_code == 2
    assert run("fix", str(tmp_path / "missing.yaml")).exit_code == 2


def test_fix_then_lint(tmp_path):
    p = tmp_path / "job.yaml"
    p.write_text(BAD301.read_text())
    lines: list[str] = []
    result = fix_then_lint([str(p)], Config(), default_registry(), echo=lines.append)
    assert "EML301" not in [f.code for f in result.active]
    assert any(line.startswith("fixed") for line in lines) and "volumes:" in p.read_text()


# -- JSON Patch ---------------------------------------------------------------------------------
def test_json_patch_ops_and_escaping():
    doc = {"spec": {"containers": [{"name": "a", "resources": {"limits": {}}}]}, "metadata": {"annotations": None}}
    f = Fix(
        "t",
        (
            AppendItem(("spec", "volumes"), {"name": "dshm"}),
            AppendItem(("spec", "volumes"), {"name": "x"}),
            SetValue(("spec", "containers", 0, "resources", "limits", "nvidia.com/gpu"), 4),
            SetValue(("metadata", "annotations", "a~b"), "1"),
            SetValue(("spec", "containers", 0, "name"), "b"),
            RemovePath(("spec", "nothing")),
        ),
    )
    patch = to_json_patch(f, doc)
    assert patch == [
        {"op": "add", "path": "/spec/volumes", "value": [{"name": "dshm"}]},
        {"op": "add", "path": "/spec/volumes/-", "value": {"name": "x"}},
        {"op": "add", "path": "/spec/containers/0/resources/limits/nvidia.com~1gpu", "value": 4},
        {"op": "replace", "path": "/metadata/annotations", "value": {"a~b": "1"}},
        {"op": "replace", "path": "/spec/containers/0/name", "value": "b"},
    ]
    assert pointer(("a~/b",)) == "/a~0~1b"
    assert apply_json_patch(doc, patch) == apply_ops(doc, f.ops)


# -- rule fixtures: fixing bad.yaml gives fixed.yaml byte for byte ------------------------------
# (cross-file cases: fixing all files of bad/ together gives fixed/, file for file). Write or
# update them with `python -m eksmllint.fix.goldens --write CODE` and review the diff.
FIXABLE = fixable_cases()


def test_every_fixable_rule_has_a_fixed_example():
    missing = [
        f"{c.code} ({golden_path(c, p)})" for c in FIXABLE for p in case_files(c.bad) if not golden_path(c, p).is_file()
    ]
    assert not missing, f"fixable rules without a fixed example: {missing}"


@pytest.mark.parametrize("case", FIXABLE, ids=lambda c: c.code)
def test_fixing_bad_gives_fixed(case):
    expected = {
        p: golden_path(case, p).read_text(encoding="utf-8")
        for p in case_files(case.bad)
        if golden_path(case, p).is_file()
    }
    if not expected:
        pytest.skip("no fixed example yet")
    for path, out in fix_case(case).items():
        assert out.error is None and not out.failed, (path, out.error, out.failed)
        assert out.fixed == expected[path], f"{path}: fixing gives other bytes than {golden_path(case, path)}"
    for path, out in fix_case(case, texts=expected).items():
        assert out.fixed == expected[path], f"{path}: fixing the fixed example changed it again"
        assert not [f for f in out.remaining if f.code == case.code], f"{path}: {case.code} still offers a fix"
