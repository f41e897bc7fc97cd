"""GitLab Code Quality report (JSON array) with stable fingerprints."""

from __future__ import annotations

import json

from eksmllint.core.finding import Severity
from eksmllint.formatters.sarif import fingerprint

_SEVERITY = {Severity.ERROR: "critical", Severity.WARNING: "major", Severity.INFO: "info"}


def render(result, registry, options) -> str:
    issues = []
    for f in result.active:
        issues.append({
            "type": "issue",
            "check_name": f"{f.code} {f.slug}",
            "description": f"{f.code} {f.message}" + (f" ({f.resource.display()})" if f.resource else ""),
            "categories": ["Bug Risk"],
            "severity": _SEVERITY[f.severity],
            "fingerprint": fingerprint(f),
            "location": {"path": f.location.file, "lines": {"begin": max(f.location.line, 1)}},
        })
    return json.dumps(issues, indent=2) + "\n"
