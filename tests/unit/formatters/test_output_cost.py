"""What writing a report costs, counted (never timed): the output path of ``lint`` (issue 23)."""

from __future__ import annotations

import gc
import json
import sys

from click.testing import CliRunner
from repository import ROOT

import eksmllint.formatters as formatters
from eksmllint.cli import cli
from eksmllint.core.engine import lint_text
from eksmllint.core.finding import Severity
from eksmllint.core.registry import default_registry
from eksmllint.formatters import RenderOptions

BAD = ROOT / "fixtures" / "rules" / "EML301-shm-missing" / "bad.yaml"


def test_reports_are_written_with_the_collector_paused(monkeypatch, tmp_path):
    """A report of thousands of findings allocates enough containers to start a full collection of
    the whole run (0.75 s at 10,000 documents), which finds nothing: none may run while writing."""
    enabled: list[bool] = []
    get_renderer = formatters.get_renderer

    def watched(name):
        render = get_renderer(name)

        def renders(*args):
            enabled.append(gc.isenabled())
            return render(*args)

        return renders

    monkeypatch.setattr(formatters, "get_renderer", watched)
    out = tmp_path / "report.sarif"
    args = ["lint", "--jobs", "1", "--format", "json", "--format", f"sarif:{out}", str(BAD)]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 1
    assert enabled == [False, False]
    assert gc.isenabled()  # and on again once the reports are written


VALUES = [
    {},
    [],
    (),
    "",
    0,
    None,
    {"a": [], "b": {}, "c": [[]], "d": [{}], "e": ({"x": (1, 2)},)},
    {"text": 'quote " back \\ nl \n tab \t ctrl \x01 é ☃ 𝄞', "n": -3, "t": True, "f": False, "x": None},
    {"floats": [1.5, 1e300, float("inf"), float("-inf"), float("nan"), -0.0, 2.0]},
    [[[1, [2, [3, {"deep": {"er": ["est"]}}]]]]],
    {"severity": Severity.ERROR},  # an int subclass
    {"s": type("Named", (str,), {})("a str subclass"), "empty": type("E", (str,), {})("")},
]


def test_indented_json_is_json_dumps_byte_for_byte():
    from eksmllint.formatters.indented import indented_json

    for value in VALUES:
        for indent in (2, 4):
            assert indented_json(value, indent) == json.dumps(value, indent=indent)


def test_a_report_is_written_without_a_call_per_item(monkeypatch):
    """The standard library's indented encoder resumes a generator per container level for every
    item it writes (520 Python calls a finding of six containers); this writer makes two a
    non-empty container, none per item."""
    from eksmllint.formatters.indented import indented_json
    from eksmllint.formatters.json import finding_dict

    findings = lint_text(BAD.read_text(), name=str(BAD)).findings
    doc = {"findings": [finding_dict(f) for f in findings] * 50}
    calls = 0

    def count(frame, event, arg):
        nonlocal calls
        calls += event == "call"

    sys.setprofile(count)
    try:
        text = indented_json(doc)
    finally:
        sys.setprofile(None)
    assert text == json.dumps(doc, indent=2)
    containers = text.count("[\n") + text.count("{\n")  # the non-empty ones
    assert calls == 1 + 2 * containers  # json.dumps: 520 a finding


def test_sarif_makes_a_uri_once_per_file(monkeypatch, tmp_path):
    """Each result names its file as a URI: pathlib parsed the same path once per finding."""
    from eksmllint.formatters import sarif
    from eksmllint.formatters.places import ReportPaths

    docs = [BAD.read_text().replace("llama-pretrain", f"job-{i}") for i in range(30)]
    result = lint_text("---\n".join(docs), name=str(tmp_path / "jobs.yaml"))  # absolute: a file:// URI
    made = []

    class Counted(type(tmp_path)):
        def as_uri(self):
            made.append(self)
            return super().as_uri()

    sarif._uri.cache_clear()  # earlier tests may have made it
    monkeypatch.setattr(sarif, "Path", Counted)
    monkeypatch.setattr(sarif, "ReportPaths", lambda files: ReportPaths(files, root=str(ROOT)))
    doc = json.loads(sarif.render(result, default_registry(), RenderOptions()))
    assert len(doc["runs"][0]["results"]) >= 30
    assert len(made) == 1
