"""Matching findings to suppressions, counted (never timed): issue 23."""

from __future__ import annotations

import sys

from repository import ROOT

from eksmllint.core import suppression
from eksmllint.core.engine import lint_text

BAD = (ROOT / "fixtures" / "rules" / "EML301-shm-missing" / "bad.yaml").read_text()
ANNOTATED = 200


def _job(i: int) -> str:
    """An EML301 finding on every job; every other one suppresses it, the others name EML101."""
    code = "EML301" if i % 2 == 0 else "EML101"
    annotation = f'metadata:\n  annotations:\n    eksmllint.io/ignore: "{code} # reviewed"\n'
    return BAD.replace("llama-pretrain", f"job-{i}").replace("metadata:\n", annotation, 1)


def test_a_finding_reads_only_its_own_documents_annotations():
    """Each finding looked through every annotated resource of the run: findings x annotations
    (2,000 of each: 0.10 s of CPU, 0.005 s now). Counted in lines of the suppression module run
    while linting."""
    lines = 0

    def trace(frame, event, arg):
        if frame.f_code.co_filename != suppression.__file__:
            return None

        def local(frame, event, arg):
            nonlocal lines
            lines += event == "line"
            return local

        return local

    text = "---\n".join(_job(i) for i in range(ANNOTATED))
    sys.settrace(trace)
    try:
        findings = lint_text(text, name="jobs.yaml").findings
    finally:
        sys.settrace(None)
    assert sum(f.code == "EML301" and f.suppressed_by is not None for f in findings) == ANNOTATED // 2
    assert sum(f.code == "EML006" for f in findings) == ANNOTATED // 2  # the EML101 ones: unused
    assert lines < 60 * ANNOTATED  # 9,419; the scan of every annotation: 68,619 (and x4 for 2x the jobs)
