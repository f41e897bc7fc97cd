"""Baselines: record today's findings, then report only new ones.

Entries are keyed on the fingerprint CI reports use (:mod:`eksmllint.formatters.places`): file
(repository-relative), rule, resource identity and document path, never the line, so moving a
resource within its file or editing another one keeps the baseline valid, and the same resource
copied into a new file is a new finding. Version 1 baselines (no file in the key) are still read.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from eksmllint.core.finding import Finding
from eksmllint.formatters.indented import indented_json
from eksmllint.formatters.places import ReportPaths, fingerprints

VERSION = 2
READABLE = (1, 2)


class BaselineError(Exception):
    pass


@dataclass
class Baseline:
    version: int
    entries: list[dict]


@dataclass
class BaselineResult:
    new: list[Finding]
    known: list[Finding]
    stale: list[dict]  # entries whose finding no longer appears


def write_baseline(path: str, findings: list[Finding], paths: ReportPaths) -> int:
    """Record the active ones among ``findings`` (every finding of the run, for stable numbering)."""
    entries = sorted(
        (
            {
                "fingerprint": fp,
                "code": f.code,
                "file": paths.place(f.location).path,
                "resource": f.resource.display() if f.resource else None,
                "message": f.message,
            }
            for f, fp in zip(findings, fingerprints(findings, paths))
            if not f.suppressed_by
        ),
        key=lambda e: (e["file"], e["code"], e["fingerprint"]),
    )
    doc = {"version": VERSION, "tool": "eksmllint", "findings": entries}
    Path(path).write_text(indented_json(doc) + "\n", encoding="utf-8")
    return len(entries)


def load_baseline(path: str) -> Baseline:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise BaselineError(f"{path}: cannot read baseline: {err.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise BaselineError(f"{path}: invalid baseline JSON: {err}") from None
    if not isinstance(doc, dict) or doc.get("version") not in READABLE or not isinstance(doc.get("findings"), list):
        raise BaselineError(f"{path}: not an eksmllint baseline (version {' or '.join(map(str, READABLE))})")
    entries = [e for e in doc["findings"] if isinstance(e, dict) and isinstance(e.get("fingerprint"), str)]
    return Baseline(doc["version"], entries)


def compare(findings: list[Finding], baseline: Baseline, paths: ReportPaths) -> BaselineResult:
    """Split the active ones among ``findings`` into new and known; a fingerprint recorded N times
    absorbs N findings."""
    budget = Counter(e["fingerprint"] for e in baseline.entries)
    new, known = [], []
    for f, fp in zip(findings, fingerprints(findings, paths, legacy=baseline.version == 1)):
        if f.suppressed_by:
            continue
        if budget[fp] > 0:
            budget[fp] -= 1
            known.append(f)
        else:
            new.append(f)
    stale, left = [], dict(budget)
    for e in baseline.entries:
        if left.get(e["fingerprint"], 0) > 0:
            left[e["fingerprint"]] -= 1
            stale.append(e)
    return BaselineResult(new, known, stale)
