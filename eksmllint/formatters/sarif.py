"""SARIF 2.1.0 as GitHub code scanning reads it, built from plain dicts (no optional deps)."""

from __future__ import annotations

import hashlib
import json

from eksmllint import __version__
from eksmllint.core.finding import Finding, Severity

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def fingerprint(f: Finding) -> str:
    """Stable across unrelated edits: rule, resource identity and document path, not the line."""
    r = f.resource
    ident = (r.api_version, r.kind, r.namespace or "", r.name or "") if r else (f.location.file,)
    key = "|".join((f.code, *ident, "/".join(map(str, f.location.path)), "" if r else str(f.location.line)))
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _rule(rule) -> dict:
    s = rule.spec
    return {
        "id": rule.code,
        "name": "".join(w.capitalize() for w in rule.slug.split("-")),
        "shortDescription": {"text": s.summary},
        "fullDescription": {"text": s.description.strip()},
        "help": {"text": s.rationale.strip(), "markdown": s.rationale.strip()},
        "helpUri": rule.help_uri,
        "defaultConfiguration": {"level": LEVEL[rule.severity]},
        "properties": {"slug": rule.slug, "family": rule.family, "fix": s.fix, "tags": [rule.family]},
    }


def _location(loc) -> dict:
    region = {"startLine": max(loc.line, 1)}
    if loc.col:
        region["startColumn"] = loc.col
    return {"physicalLocation": {"artifactLocation": {"uri": loc.file}, "region": region}}


def render(result, registry, options) -> str:
    rules = list(registry)
    index = {r.code: i for i, r in enumerate(rules)}
    results = []
    for f in result.findings:
        item = {
            "ruleId": f.code,
            "level": LEVEL[f.severity],
            "message": {"text": f.message + (f" ({f.resource.display()})" if f.resource else "")},
            "locations": [_location(f.location)],
            "partialFingerprints": {"eksmllint/v1": fingerprint(f)},
        }
        if f.code in index:
            item["ruleIndex"] = index[f.code]
        if f.related:
            item["relatedLocations"] = [dict(_location(loc), id=i) for i, loc in enumerate(f.related)]
        if f.suppressed_by:
            item["suppressions"] = [{"kind": "inSource" if "config" not in f.suppressed_by else "external",
                                     "justification": f.suppressed_by}]
        results.append(item)
    doc = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "eksmllint", "version": __version__,
                                "informationUri": "https://eksmllint.dev", "rules": [_rule(r) for r in rules]}},
            "results": results,
        }],
    }
    return json.dumps(doc, indent=2) + "\n"
