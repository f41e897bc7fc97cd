"""Stable JSON output (schema version 1). See README "JSON output"."""

from __future__ import annotations

from eksmllint import __version__
from eksmllint.core.finding import Finding
from eksmllint.formatters.indented import indented_json

SCHEMA_VERSION = 1


def finding_dict(f: Finding) -> dict:
    loc = f.location
    return {
        "code": f.code,
        "slug": f.slug,
        "severity": str(f.severity),
        "message": f.message,
        "detail": f.detail,
        "file": loc.file,
        "line": loc.line,
        "column": loc.col,
        "document": loc.doc_index,
        "path": list(loc.path),
        "template": loc.template,
        "resource": None
        if f.resource is None
        else {
            "apiVersion": f.resource.api_version,
            "kind": f.resource.kind,
            "namespace": f.resource.namespace,
            "name": f.resource.name,
        },
        "fix": None if f.fix is None else {"title": f.fix.title, "applicability": f.fix.applicability.value},
        "suppressed": f.suppressed_by,
        "workload_class": None
        if f.workload_class is None
        else {"class": f.workload_class, "evidence": list(f.workload_evidence)},
    }


def render(result, registry, options) -> str:
    from collections import Counter

    active = result.active
    counts = Counter(str(f.severity) for f in active)
    doc = {
        "version": SCHEMA_VERSION,
        "tool": {"name": "eksmllint", "version": __version__},
        "summary": {
            "total": len(active),
            "error": counts.get("error", 0),
            "warning": counts.get("warning", 0),
            "info": counts.get("info", 0),
            "suppressed": len(result.suppressed),
            "skipped": len(result.skipped),
        },
        # files the run found but did not lint (shell scripts without #SBATCH, chart templates ...)
        "skipped": [{"file": s.file, "reason": s.reason} for s in result.skipped],
        "findings": [finding_dict(f) for f in result.findings],
    }
    return indented_json(doc) + "\n"
