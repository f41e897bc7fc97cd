"""What writing a report costs, counted (never timed): the output path of ``lint`` (issue 23)."""

from __future__ import annotations

import gc

from click.testing import CliRunner
from repository import ROOT

import eksmllint.formatters as formatters
from eksmllint.cli import cli

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
