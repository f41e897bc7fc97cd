"""admission.k8s.io/v1 AdmissionReview: strict request parsing and response building.

Everything wrong with a request body is an :class:`AdmissionError` carrying the HTTP status and a
message for the caller (400 malformed, 413 too large, 415 not JSON): the server turns it into a
plain-text answer, never a traceback.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from eksmllint.core.finding import Finding, Severity, format_path
from eksmllint.server.logtext import escape_log

API_VERSION = "admission.k8s.io/v1"
KIND = "AdmissionReview"
OPERATIONS = ("CREATE", "UPDATE", "DELETE", "CONNECT")

# The API server truncates each warning to 256 characters and all of them to 4096 in total
# (k8s.io/apiserver warning recorder); the API docs ask for 120 where possible.
WARNING_MAX = 256
WARNINGS_TOTAL = 4096
DENY_LIST_MAX = 20  # findings spelled out in a denial message; the rest are counted
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


class AdmissionError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class AdmissionRequest:
    uid: str
    operation: str
    object: dict | None
    old_object: dict | None
    namespace: str | None
    kind: dict
    sub_resource: str | None
    dry_run: bool
    api_version: str  # echoed back: the response uses the request's AdmissionReview version
    username: str | None = None  # request.userInfo.username: who sent the object

    @property
    def subject(self) -> str:
        obj = self.object or self.old_object or {}
        raw_meta = obj.get("metadata")
        meta = raw_meta if isinstance(raw_meta, dict) else {}
        # Any field may hold any JSON type in a hostile review: only strings name the object.
        name = _text(meta.get("name")) or _text(meta.get("generateName")) or "<unnamed>"
        ns = _text(meta.get("namespace")) or self.namespace
        kind = _text(obj.get("kind")) or _text(self.kind.get("kind")) or "<kind>"
        # In log lines and denial messages: escaped, so a name cannot forge a line of its own.
        return escape_log(f"{kind} {ns + '/' if ns else ''}{name}")


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _loads(body: bytes) -> Any:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise AdmissionError(400, "request body is not UTF-8") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise AdmissionError(
            400, f"request body is not valid JSON: {err.msg} at line {err.lineno} column {err.colno}"
        ) from None
    except RecursionError:
        raise AdmissionError(400, "request body is nested too deeply") from None
    except ValueError as err:  # e.g. integer strings longer than Python's limit
        raise AdmissionError(400, f"request body is not valid JSON: {err}") from None


def parse_review(body: bytes) -> AdmissionRequest:
    """Parse and check an AdmissionReview request; raises :class:`AdmissionError`."""
    if not body:
        raise AdmissionError(400, "empty request body: expected an admission.k8s.io/v1 AdmissionReview")
    data = _loads(body)
    if not isinstance(data, dict):
        raise AdmissionError(400, "request body must be a JSON object (an AdmissionReview)")
    api, kind = data.get("apiVersion"), data.get("kind")
    if kind != KIND:
        raise AdmissionError(400, f"expected kind AdmissionReview, got {kind!r}")
    if api != API_VERSION:
        raise AdmissionError(
            400, f"unsupported apiVersion {api!r}: only {API_VERSION} is served (set admissionReviewVersions: [v1])"
        )
    req = data.get("request")
    if not isinstance(req, dict):
        raise AdmissionError(400, "AdmissionReview has no 'request' object")
    uid = req.get("uid")
    if not isinstance(uid, str) or not uid:
        raise AdmissionError(400, "request.uid must be a non-empty string")
    op = req.get("operation")
    if op not in OPERATIONS:
        raise AdmissionError(400, f"request.operation must be one of {', '.join(OPERATIONS)}, got {op!r}")
    obj, old = req.get("object"), req.get("oldObject")
    if obj is not None and not isinstance(obj, dict):
        raise AdmissionError(400, "request.object must be a JSON object or null")
    if old is not None and not isinstance(old, dict):
        raise AdmissionError(400, "request.oldObject must be a JSON object or null")
    if op in ("CREATE", "UPDATE") and obj is None:
        raise AdmissionError(400, f"request.object is required for {op}")
    ns = req.get("namespace")
    raw_kind = req.get("kind")
    kind_field = raw_kind if isinstance(raw_kind, dict) else {}
    sub = req.get("subResource")
    dry = req.get("dryRun")
    if dry is not None and not isinstance(dry, bool):
        raise AdmissionError(400, "request.dryRun must be a boolean")
    raw_user = req.get("userInfo")
    user = raw_user.get("username") if isinstance(raw_user, dict) else None
    return AdmissionRequest(
        uid,
        op,
        obj,
        old,
        ns if isinstance(ns, str) and ns else None,
        kind_field,
        sub if isinstance(sub, str) and sub else None,
        bool(dry),
        api,
        user if isinstance(user, str) and user else None,
    )


def review(request: AdmissionRequest, response: dict) -> dict:
    response = {"uid": request.uid, **response}
    return {"apiVersion": request.api_version, "kind": KIND, "response": response}


def allow(warnings: list[str] | None = None, patch: list[dict] | None = None) -> dict:
    out: dict[str, Any] = {"allowed": True}
    if warnings:
        out["warnings"] = warnings
    if patch:
        out["patchType"] = "JSONPatch"
        out["patch"] = base64.b64encode(json.dumps(patch, separators=(",", ":")).encode()).decode("ascii")
    return out


def deny(message: str, warnings: list[str] | None = None, code: int = 403, reason: str = "Forbidden") -> dict:
    out: dict[str, Any] = {"allowed": False, "status": {"code": code, "reason": reason, "message": message}}
    if warnings:
        out["warnings"] = warnings
    return out


def clean(text: str) -> str:
    return _CONTROL.sub(" ", text).strip()


def truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def finding_line(f: Finding) -> str:
    where = format_path(f.location.path)
    return clean(f"{f.code} {f.slug} at {where}: {f.message}")


def warnings_for(findings: Iterable[Finding], extra: Iterable[str] = ()) -> list[str]:
    """One short warning per finding, within the API server's per-item and total limits; when
    they do not all fit, the last says how many were left out."""
    items = [truncate(clean(e), WARNING_MAX) for e in extra]
    items += [truncate(finding_line(f), WARNING_MAX) for f in findings]
    out: list[str] = []
    total = 0
    reserve = 64  # room for the "more not shown" line
    for i, w in enumerate(items):
        budget = WARNINGS_TOTAL - (0 if i == len(items) - 1 else reserve)
        if total + len(w) > budget:
            out.append(f"eksmllint: {len(items) - i} more finding(s) not shown")
            break
        out.append(w)
        total += len(w)
    return out


def denial_message(subject: str, findings: list[Finding], threshold: Severity) -> str:
    lines = [f"eksmllint: {subject} has {len(findings)} finding(s) at or above {threshold}:"]
    for f in findings[:DENY_LIST_MAX]:
        lines.append(f"- {finding_line(f)}")
    if len(findings) > DENY_LIST_MAX:
        lines.append(f"- ... and {len(findings) - DENY_LIST_MAX} more")
    lines.append("(see `eksmllint explain CODE`; exempt one rule with the eksmllint.io/ignore annotation)")
    return "\n".join(lines)
