"""Baselines: record today's findings, then report only new ones.

Entries are keyed on a fingerprint of rule, resource identity and document path (never the line),
so moving a resource within its file or editing an unrelated one keeps the baseline valid.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from eksmllint.core.finding import Finding
from eksmllint.formatters.sarif import fingerprint

VERSION = 1


class BaselineError(Exception):
    pass


@dataclass
class BaselineResult:
    new: list[Finding]
    known: list[Finding]
    stale: list[dict]  # entries whose finding no longer appears


def write_baseline(path: str, findings: list[Finding]) -> int:
    entries = sorted(
        ({"fingerprint": fingerprint(f), "code": f.code, "file": f.location.file,
          "resource": f.resource.display() if f.resource else None, "message": f.message} for f in findings),
        key=lambda e: (e["file"], e["code"], e["fingerprint"]),
    )
    doc = {"version": VERSION, "tool": "eksmllint", "findings": entries}
    Path(path).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return len(entries)


def load_baseline(path: str) -> list[dict]:
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise BaselineError(f"{path}: cannot read baseline: {err.strerror}") from None
    except json.JSONDecodeError as err:
        raise BaselineError(f"{path}: invalid baseline JSON: {err.msg} at line {err.lineno}") from None
    if not isinstance(doc, dict) or doc.get("version") != VERSION or not isinstance(doc.get("findings"), list):
        raise BaselineError(f"{path}: not an eksmllint baseline (version {VERSION})")
    return [e for e in doc["findings"] if isinstance(e, dict) and isinstance(e.get("fingerprint"), str)]


def compare(findings: list[Finding], entries: list[dict]) -> BaselineResult:
    """Split findings into new and known; a fingerprint recorded N times absorbs N findings."""
    budget = Counter(e["fingerprint"] for e in entries)
    new, known = [], []
    for f in findings:
        fp = fingerprint(f)
        if budget[fp] > 0:
            budget[fp] -= 1
            known.append(f)
        else:
            new.append(f)
    stale, left = [], dict(budget)
    for e in entries:
        if left.get(e["fingerprint"], 0) > 0:
            left[e["fingerprint"]] -= 1
            stale.append(e)
    return BaselineResult(new, known, stale)
