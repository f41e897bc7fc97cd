"""GitLab Code Quality report (JSON array): repository-relative paths, and fingerprints unique per
file, rule, resource and document path (GitLab shows one issue per fingerprint)."""

from __future__ import annotations

from eksmllint.core.finding import Severity
from eksmllint.formatters.indented import indented_json
from eksmllint.formatters.places import ReportPaths, fingerprints

_SEVERITY = {Severity.ERROR: "critical", Severity.WARNING: "major", Severity.INFO: "info"}


def render(result, registry, options) -> str:
    paths = ReportPaths(result.run.files)
    issues = []
    for f, fp in zip(result.findings, fingerprints(result.findings, paths)):
        if f.suppressed_by:
            continue
        place = paths.place(f.location)
        description = f"{f.code} {f.message}" + (f" ({f.resource.display()})" if f.resource else "")
        if place.note:
            description += f" [{place.note}]"
        issues.append(
            {
                "type": "issue",
                "check_name": f"{f.code} {f.slug}",
                "description": description,
                "categories": ["Bug Risk"],
                "severity": _SEVERITY[f.severity],
                "fingerprint": fp,
                **({"content": {"body": f.detail}} if f.detail else {}),
                "location": {"path": place.path, "lines": {"begin": max(place.line, 1)}},
            }
        )
    return indented_json(issues) + "\n"
