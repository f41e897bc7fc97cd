"""JUnit XML for GitLab/Jenkins: one testcase per resource (or file), one failure per finding."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict



def render(result, registry, options) -> str:
    cases: dict[tuple[str, str], list] = defaultdict(list)
    for r in result.run.resources:
        if not r.doc.file.context_only:
            cases[(r.doc.file.path, r.ref.display())]
    for f in result.active:
        name = f.resource.display() if f.resource else f.location.file
        cases[(f.location.file, name)].append(f)
    suite = ET.Element("testsuite", name="eksmllint", tests=str(len(cases)),
                       failures=str(sum(1 for v in cases.values() if v)), errors="0", skipped="0")
    for (file, name), findings in sorted(cases.items()):
        case = ET.SubElement(suite, "testcase", classname=file, name=name, file=file)
        for f in findings:
            failure = ET.SubElement(case, "failure", type=f"{f.code} {f.slug}",
                                    message=f"{f.code} [{f.severity}] {f.message}")
            failure.text = f"{f.location.file}:{f.location.line}:{f.location.col}: {f.message}"
    root = ET.Element("testsuites", name="eksmllint", tests=suite.get("tests"), failures=suite.get("failures"))
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
