"""SARIF 2.1.0 as GitHub code scanning reads it, built from plain dicts (no optional deps).

Paths are repository-relative (:mod:`eksmllint.formatters.places`) and every result carries a
``partialFingerprints`` entry unique within the run. Suppressed and baselined findings are left
out, so ``--baseline`` and suppressions work on GitHub too; with ``--show-suppressed`` they are
written with a SARIF ``suppressions`` entry (``inSource`` for annotations and comments,
``external`` for the config and baselines), which GitHub shows as dismissed rather than open.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from urllib.parse import quote

from eksmllint import __version__
from eksmllint.core.finding import Severity
from eksmllint.formatters.indented import indented_json
from eksmllint.formatters.places import Place, ReportPaths, fingerprints

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
FINGERPRINT_KEY = "eksmllint/v2"
IN_SOURCE = ("annotation", "inline comment")


def _rule(rule) -> dict:
    from eksmllint.docs import rule_markdown

    s = rule.spec
    return {
        "id": rule.code,
        "name": "".join(w.capitalize() for w in rule.slug.split("-")),
        "shortDescription": {"text": s.summary},
        "fullDescription": {"text": s.description.strip()},
        "help": {"text": s.rationale.strip(), "markdown": rule_markdown(rule)},
        "defaultConfiguration": {"level": LEVEL[rule.severity]},
        "properties": {"slug": rule.slug, "family": rule.family, "fix": s.fix, "tags": [rule.family]},
    }


def _location(place: Place) -> dict:
    physical: dict = {"artifactLocation": {"uri": _uri(place.path)}}
    # GitHub needs a region; a file-level finding points at the file's first line.
    region = {"startLine": max(place.line, 1)}
    if place.line and place.col:
        region["startColumn"] = place.col
    physical["region"] = region
    return {"physicalLocation": physical}


@lru_cache(maxsize=4096)  # a report names a file once per finding: pathlib's parse once per file
def _uri(path: str) -> str:
    """A URI reference: repository-relative paths percent-encoded (a ``:`` in the first segment
    would read as a scheme), paths outside the repository as ``file://`` URIs."""
    if path.startswith("/"):
        return Path(path).as_uri()
    return quote(path, safe="/")


def _suppression(by: str) -> dict:
    kind = "inSource" if by.startswith(IN_SOURCE) else "external"
    return {"kind": kind, "status": "accepted", "justification": by}


def render(result, registry, options) -> str:
    rules = list(registry)
    index = {r.code: i for i, r in enumerate(rules)}
    paths = ReportPaths(result.run.files)
    results = []
    for f, fp in zip(result.findings, fingerprints(result.findings, paths)):
        if f.suppressed_by and not options.show_suppressed:
            continue
        place = paths.place(f.location)
        text = f.message + (f" ({f.resource.display()})" if f.resource else "")
        if place.note:
            text += f" [{place.note}]"
        item = {
            "ruleId": f.code,
            "level": LEVEL[f.severity],
            "message": {"text": text},
            "locations": [_location(place)],
            "partialFingerprints": {FINGERPRINT_KEY: fp},
        }
        if f.code in index:
            item["ruleIndex"] = index[f.code]
        if f.related:
            item["relatedLocations"] = [dict(_location(paths.place(loc)), id=i) for i, loc in enumerate(f.related)]
        if f.detail:  # the one-line message stays short; why and how are the rule's help and this
            item["properties"] = {"detail": f.detail}
        if f.suppressed_by:
            item["suppressions"] = [_suppression(f.suppressed_by)]
        results.append(item)
    doc = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "eksmllint", "version": __version__, "rules": [_rule(r) for r in rules]}},
                "results": results,
            }
        ],
    }
    return indented_json(doc) + "\n"
