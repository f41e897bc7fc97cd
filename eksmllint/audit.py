"""``eksmllint audit``: lint what a live cluster holds, as ``lint`` lints files.

The objects are read through the Kubernetes API (kubeconfig, else the in-cluster service
account) with read-only verbs: the training kinds the webhook judges
(:data:`eksmllint.server.manifests.WEBHOOK_RESOURCES`) and the context kinds its watcher reads
(:data:`eksmllint.server.cluster.CLUSTER_KINDS`), in pages. Each object is exported as it is
stored (without ``managedFields``) to one YAML document named ``Kind/namespace/name.yaml``, and
that set of documents goes through the same loader and :class:`~eksmllint.core.engine.Linter` as
``eksmllint lint``: the findings are the ones ``lint`` reports on the exported files (``audit
--export DIR`` writes them; a test compares the two), the file names the object and the finding's
``path`` the field.

Selection: ``--namespace`` and ``--selector`` choose the objects judged; the context kinds are then
still read in full (a Pod in ``ml`` lands on cluster-wide NodePools) but only as context. Objects a
judged controller created (a PyTorchJob's Pods, a CronJob's Jobs) are left out, as the webhook
leaves them: their owner carries the finding. A kind the cluster does not serve (404) is noted; a
kind the credentials may not list (403) is an error on stderr, never a silent gap.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

from eksmllint.loader import LoadResult
from eksmllint.resource import SourceFile

PAGE_SIZE = 500


@dataclass(frozen=True)
class AuditKind:
    group: str  # "" = core
    versions: tuple[str, ...]  # tried in order; the first one served is read
    plural: str
    subject: bool  # judged (selection applies); False: read as context when a selection is given


def audit_kinds() -> tuple[AuditKind, ...]:
    """The training kinds the webhook judges, then the context kinds its watcher reads."""
    from eksmllint.server.cluster import CLUSTER_KINDS
    from eksmllint.server.manifests import WEBHOOK_RESOURCES

    out: list[AuditKind] = []
    seen: set[tuple[str, str]] = set()
    for group, versions, plurals in WEBHOOK_RESOURCES:
        for plural in plurals:
            seen.add((group, plural))
            out.append(AuditKind(group, versions, plural, subject=True))
    for spec in CLUSTER_KINDS:
        if (spec.group, spec.plural) not in seen:
            seen.add((spec.group, spec.plural))
            out.append(AuditKind(spec.group, (spec.version,), spec.plural, subject=False))
    return tuple(out)


class ClusterError(Exception):
    """An API answer that ends the audit (no credentials, the API server unreachable)."""


class ListError(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(f"HTTP {status}: {reason}")
        self.status = status


class ClusterReader:
    """Paged lists over the official client (kubeconfig, else in-cluster config)."""

    def __init__(self, kubeconfig: str | None = None, context: str | None = None) -> None:
        try:
            from kubernetes import client, config
        except ImportError as err:  # pragma: no cover - depends on the installed extras
            raise ClusterError("audit needs the kubernetes client: pip install 'eksmllint[cluster]'") from err
        try:
            if kubeconfig or context:
                self.api = config.new_client_from_config(config_file=kubeconfig, context=context)
            else:
                try:
                    config.load_incluster_config()
                    self.api = client.ApiClient()
                except config.ConfigException:
                    self.api = config.new_client_from_config()
        except (config.ConfigException, OSError) as err:
            raise ClusterError(f"no cluster credentials: {err}") from None

    def list_page(self, kind: AuditKind, version: str, selector: str | None, token: str | None) -> dict:
        """One page of ``kind`` across all namespaces (a List object)."""
        from kubernetes import client
        from kubernetes.client.exceptions import ApiException

        kw: dict[str, Any] = {"limit": PAGE_SIZE, "_preload_content": False, "_request_timeout": 60}
        if selector:
            kw["label_selector"] = selector
        if token:
            kw["_continue"] = token
        resp: Any  # the raw urllib3 response (_preload_content=False)
        try:
            if kind.group:  # the generic /apis/GROUP/VERSION/PLURAL path, built-in groups included
                resp = client.CustomObjectsApi(self.api).list_cluster_custom_object(
                    kind.group, version, kind.plural, **kw
                )
            else:
                resp = getattr(client.CoreV1Api(self.api), _CORE_LISTS[kind.plural])(**kw)
        except ApiException as err:
            raise ListError(err.status or 0, err.reason or "") from None
        except Exception as err:  # unreachable, TLS: the whole audit cannot go on
            raise ClusterError(f"cannot reach the API server: {err}") from None
        return json.loads(resp.data)


#: Core (``/api/v1``) kinds the audit reads, and the client's all-namespaces list for each.
_CORE_LISTS = {
    "pods": "list_pod_for_all_namespaces",
    "persistentvolumeclaims": "list_persistent_volume_claim_for_all_namespaces",
}


@dataclass
class Snapshot:
    """What the audit read: one exported document per object, and what it could not read."""

    documents: dict[str, tuple[str, bool]] = field(default_factory=dict)  # name -> (YAML text, context only)
    notes: list[str] = field(default_factory=list)  # kinds not served (informational)
    errors: list[str] = field(default_factory=list)  # kinds that could not be read (forbidden...)
    owned: int = 0  # objects left out because a judged controller owns them

    def load_result(self) -> LoadResult:
        """The documents as the loader would have read them from ``--export``'s files."""
        from eksmllint.loader.files import parse_source

        out = LoadResult()
        for name, (text, context_only) in self.documents.items():
            src = SourceFile(name, text, "yaml", context_only=context_only)
            resources, problems = parse_source(src)
            out.files.append(src)
            out.resources += resources
            out.problems += problems
        return out


def export_name(obj: dict) -> str:
    """``Kind/namespace/name.yaml`` (``Kind/name.yaml`` for a cluster-scoped object)."""
    meta = obj.get("metadata") or {}
    parts = [str(obj.get("kind")), *([meta["namespace"]] if meta.get("namespace") else []), str(meta.get("name"))]
    return "/".join(parts) + ".yaml"


def exported(obj: dict, api_version: str, kind: str) -> dict:
    """The object as stored, minus what no rule reads and no reader wants (managedFields)."""
    out = {"apiVersion": obj.get("apiVersion") or api_version, "kind": obj.get("kind") or kind}
    out.update((k, v) for k, v in obj.items() if k not in ("apiVersion", "kind"))
    meta = out.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        out["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
    return out


def _objects(
    reader: ClusterReader, kind: AuditKind, selector: str | None, counter: Callable[[int, int], None]
) -> Iterator[dict]:
    """Every object of the first served version of ``kind``, page by page (exported form)."""
    last: ListError | None = None
    for version in kind.versions:
        api_version = f"{kind.group}/{version}" if kind.group else version
        token: str | None = None
        try:
            while True:
                page = reader.list_page(kind, version, selector, token)
                list_kind = str(page.get("kind") or "")
                item_kind = list_kind[: -len("List")] if list_kind.endswith("List") else list_kind
                items = [i for i in page.get("items") or [] if isinstance(i, dict)]
                counter(len(items), int((page.get("metadata") or {}).get("remainingItemCount") or 0))
                for item in items:
                    yield exported(item, api_version, item_kind)
                token = (page.get("metadata") or {}).get("continue") or None
                if not token:
                    return
        except ListError as err:
            if err.status != 404 or token:
                raise
            last = err
    if last is not None:
        raise last


def _key(obj: dict) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return (str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def read_cluster(
    reader: ClusterReader,
    namespace: str | None = None,
    selector: str | None = None,
    progress: Callable[[int, int], None] | None = None,
    kinds: tuple[AuditKind, ...] | None = None,
) -> Snapshot:
    """Every object of the audited kinds; ``progress(done, total)`` as pages arrive (the total is
    the API server's estimate: what was read plus ``remainingItemCount``).

    Everything is listed across namespaces and unfiltered, so that what is not judged is still
    there as context (a judged Pod lands on NodePools no selector matches); with ``--selector`` the
    judged kinds are listed once more with it, to know which objects it selects."""
    from eksmllint.server.linting import judged_owner

    snap = Snapshot()
    selecting = bool(namespace or selector)
    done = 0

    def counter(read: int, remaining: int) -> None:
        nonlocal done
        done += read
        if progress is not None:
            progress(done, done + remaining)

    for kind in kinds or audit_kinds():
        label = f"{kind.plural}.{kind.group}" if kind.group else kind.plural
        judged_kind = kind.subject or not selecting
        try:
            chosen = (
                {_key(o) for o in _objects(reader, kind, selector, lambda *_: None)}
                if selector and judged_kind
                else None
            )
            for obj in _objects(reader, kind, None, counter):
                if judged_owner(obj):
                    snap.owned += 1
                    continue
                ns, _ = _key(obj)
                judged = judged_kind and (not namespace or ns == namespace) and (chosen is None or _key(obj) in chosen)
                snap.documents[export_name(obj)] = (yaml.safe_dump(obj, sort_keys=False), not judged)
        except ListError as err:
            if err.status == 404:
                snap.notes.append(f"{label}: not served by this cluster (CRD not installed)")
            else:
                snap.errors.append(f"cannot list {label}: {err}")
    return snap


def write_export(snap: Snapshot, directory: str) -> int:
    """Write the judged documents under ``directory/objects/`` (``Kind/namespace/name.yaml``) and
    the context ones under ``directory/context/``: ``lint DIR/objects --context DIR/context``
    reports what the audit reported."""
    import os

    count = 0
    for name, (text, context_only) in snap.documents.items():
        path = os.path.join(directory, "context" if context_only else "objects", name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        count += 1
    return count
