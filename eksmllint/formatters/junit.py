"""JUnit XML for Jenkins (xunit), GitLab and other test-report readers.

One testcase per finding, named by the finding's identity (never its line: see :func:`_case_name`),
each with exactly one ``<failure>`` (readers that show one failure per
testcase lose nothing), and one passing testcase per linted file without findings, so the totals
mean something. Only elements and attributes of Jenkins xunit's JUnit schema (junit-10.xsd) are
written; the file is in ``classname`` (``testcase/@file`` is not accepted by every reader).
Text is escaped to one line and to characters XML 1.0 allows.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter

from eksmllint.core.finding import Finding, format_path
from eksmllint.formatters.places import Place, ReportPaths
from eksmllint.formatters.safe import one_line


def _case_name(f: Finding, place: Place, seen: Counter[str]) -> str:
    """The finding's identity as the fingerprint sees it (rule, resource, document path; the line
    only for a finding without a resource), never its line otherwise: a finding that moves keeps
    its test history instead of reading as fixed plus new. Repeats are numbered in report order."""
    if f.resource is not None:
        name = f"{f.code} {f.slug}: {f.resource.display()} {format_path(f.location.path)}"
    else:
        name = f"{f.code} {f.slug}: " + (f"line {place.line}" if place.line else place.note or "whole file")
    seen[name] += 1
    return name if seen[name] == 1 else f"{name} #{seen[name]}"


def render(result, registry, options) -> str:
    paths = ReportPaths(result.run.files)
    suite = ET.Element("testsuite", name="eksmllint")
    has_case: set[str] = set()  # files that already have a testcase
    seen: Counter[str] = Counter()  # testcase names so far: the same identity twice is numbered
    cases: list[tuple[str, str, dict[str, str] | None, str | None]] = []
    for f in result.active:
        place = paths.place(f.location)
        has_case.add(place.path)
        text = f"{place.path}:{place.line}:{place.col}: {f.code} [{f.severity}] {f.message}"
        if f.resource:
            text += f" ({f.resource.display()})"
        if place.note:
            text += f" [{place.note}]"
        cases.append(
            (
                place.path,
                _case_name(f, place, seen),
                {"type": f"{f.code} {f.slug}", "message": f"[{f.severity}] {f.message}"},
                text,
            )
        )
    for src in result.run.files:
        path = paths.path(src.path)
        if not src.context_only and path not in has_case:
            cases.append((path, "no findings", None, None))
            has_case.add(path)
    for classname, name, failure, detail in cases:
        case = ET.SubElement(suite, "testcase", classname=one_line(classname), name=one_line(name), time="0")
        if failure is not None:
            node = ET.SubElement(case, "failure", {k: one_line(v) for k, v in failure.items()})
            node.text = one_line(detail or "")
    failures = str(len(result.active))
    suite.attrib.update(tests=str(len(cases)), failures=failures, errors="0", skipped="0", time="0")
    root = ET.Element("testsuites", name="eksmllint", tests=str(len(cases)), failures=failures, errors="0", time="0")
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
