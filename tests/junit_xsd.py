"""The constraints of Jenkins xunit's JUnit schema that a report can break, as data, and a checker.

Source: jenkinsci/xunit-plugin, src/main/resources/org/jenkinsci/plugins/xunit/types/model/xsd/
junit-10.xsd (commit 0c3752259ca17669b739481b2785a3e4cea1cc0f, MIT licence), the schema xunit
validates "JUnit" reports against. Written from it by hand, not copied: for each element, the
attributes it may carry, those it must carry, and the child elements it may contain. On top of the
schema we check that the document is well-formed XML 1.0 (no control characters) and we exclude
``testcase/@file``, which older schema versions and other readers reject.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

_RESULT = {"attrs": {"type", "message"}, "required": set(), "children": set()}

ELEMENTS: dict[str, dict[str, set[str]]] = {
    "testsuites": {
        "attrs": {"name", "time", "tests", "failures", "disabled", "errors"},
        "required": set(),
        "children": {"testsuite"},
    },
    "testsuite": {
        "attrs": {
            "name",
            "tests",
            "failures",
            "errors",
            "time",
            "disabled",
            "skipped",
            "skips",
            "timestamp",
            "hostname",
            "id",
            "package",
            "assertions",
            "file",
            "skip",
            "log",
            "url",
        },
        "required": {"tests"},
        "children": {"testsuite", "properties", "testcase", "system-out", "system-err"},
    },
    "testcase": {
        "attrs": {
            "name",
            "assertions",
            "time",
            "timestamp",
            "classname",
            "status",
            "class",
            "line",
            "log",
            "group",
            "url",
        },  # the xsd also allows "file": see above
        "required": {"name"},
        "children": {"skipped", "error", "failure", "rerunFailure", "rerunError", "system-out", "system-err"},
    },
    "failure": _RESULT,
    "error": _RESULT,
    "skipped": _RESULT,
    "properties": {"attrs": set(), "required": set(), "children": {"property"}},
    "property": {"attrs": {"name", "value"}, "required": {"name", "value"}, "children": set()},
    "system-out": {"attrs": set(), "required": set(), "children": set()},
    "system-err": {"attrs": set(), "required": set(), "children": set()},
}


def violations(xml_text: str) -> list[str]:
    """Every way ``xml_text`` breaks the constraints above; empty when it is valid."""
    try:
        root = ET.fromstring(xml_text.encode("utf-8"))
    except ET.ParseError as err:
        return [f"not well-formed XML: {err}"]
    if root.tag not in ("testsuites", "testsuite"):
        return [f"root element is <{root.tag}>, not <testsuites> or <testsuite>"]
    out = []
    for el in root.iter():
        spec = ELEMENTS.get(el.tag)
        if spec is None:
            out.append(f"element <{el.tag}> is not in the schema")
            continue
        out += [f"<{el.tag}> has attribute {a!r} the schema does not allow" for a in set(el.attrib) - spec["attrs"]]
        out += [f"<{el.tag}> lacks required attribute {a!r}" for a in spec["required"] - set(el.attrib)]
        out += [f"<{el.tag}> contains <{c.tag}>" for c in el if c.tag not in spec["children"]]
    return out
