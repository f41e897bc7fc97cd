"""Live cluster context through the official ``kubernetes`` client: list, then watch, per kind.

Optional (``pip install eksmllint[cluster]``) and imported only when ``--cluster-context`` is
given. Only the kinds rules read are watched, which is exactly what the ClusterRole in ``deploy/``
grants (get/list/watch, nothing else; no Secrets, no ConfigMaps). A kind whose CRD is not
installed (404) or not granted (403) is logged once and retried slowly; it never blocks the
webhook. The watch restarts from a fresh list when its resourceVersion expired (410).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from eksmllint.apigroups import KARPENTER_AWS_GROUP, KARPENTER_GROUP, KUEUE_GROUP, VOLCANO_SCHEDULING_GROUP
from eksmllint.loader import LoadResult
from eksmllint.resource import Document, Resource, SourceFile

log = logging.getLogger("eksmllint.server.cluster")


@dataclass(frozen=True)
class KindSpec:
    kind: str
    group: str  # "" = core
    version: str
    plural: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


#: What context-dependent rules read (and what the ClusterRole in deploy/ allows).
CLUSTER_KINDS: tuple[KindSpec, ...] = (
    KindSpec("NodePool", KARPENTER_GROUP, "v1", "nodepools"),
    KindSpec("EC2NodeClass", KARPENTER_AWS_GROUP, "v1", "ec2nodeclasses"),
    KindSpec("Queue", VOLCANO_SCHEDULING_GROUP, "v1beta1", "queues"),
    KindSpec("ClusterQueue", KUEUE_GROUP, "v1beta1", "clusterqueues"),
    KindSpec("LocalQueue", KUEUE_GROUP, "v1beta1", "localqueues"),
    KindSpec("DaemonSet", "apps", "v1", "daemonsets"),
    KindSpec("PersistentVolumeClaim", "", "v1", "persistentvolumeclaims"),
    KindSpec("StorageClass", "storage.k8s.io", "v1", "storageclasses"),
    KindSpec("PriorityClass", "scheduling.k8s.io", "v1", "priorityclasses"),
)

WATCH_TIMEOUT_S = 300
SLOW_RETRY_S = 60.0
MAX_BACKOFF_S = 30.0


class ApiStatusError(Exception):
    """An API error with its HTTP status (404 no such kind, 403 forbidden, 410 expired)."""

    def __init__(self, status: int, message: str = "") -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status


class Transport(Protocol):
    def list(self, spec: KindSpec) -> dict:
        """The List object (``items``, ``metadata.resourceVersion``)."""

    def watch(self, spec: KindSpec, resource_version: str, timeout: int) -> Iterator[dict]:
        """Watch events (``type``, ``object``) after ``resource_version``, until ``timeout``."""


class KubernetesTransport:
    """:class:`Transport` over the official client (in-cluster config, else kubeconfig)."""

    def __init__(self, kubeconfig: str | None = None) -> None:
        try:
            from kubernetes import client, config
        except ImportError as err:  # pragma: no cover - depends on the installed extras
            raise RuntimeError(
                "--cluster-context needs the kubernetes client: pip install 'eksmllint[cluster]'"
            ) from err
        if kubeconfig:
            config.load_kube_config(config_file=kubeconfig)
        else:
            try:
                config.load_incluster_config()
            except config.ConfigException:
                config.load_kube_config()
        self._client = client
        self._custom = client.CustomObjectsApi()
        self._core = client.CoreV1Api()

    def _call(self, spec: KindSpec, **kw: Any):
        from kubernetes.client.exceptions import ApiException

        try:
            if spec.group == "" and spec.plural == "persistentvolumeclaims":
                return self._core.list_persistent_volume_claim_for_all_namespaces(_preload_content=False, **kw)
            return self._custom.list_cluster_custom_object(
                spec.group, spec.version, spec.plural, _preload_content=False, **kw
            )
        except ApiException as err:
            raise ApiStatusError(err.status or 0, err.reason or "") from None

    def list(self, spec: KindSpec) -> dict:
        resp = self._call(spec, _request_timeout=30)
        return json.loads(resp.data)

    def watch(self, spec: KindSpec, resource_version: str, timeout: int) -> Iterator[dict]:
        from kubernetes.watch.watch import iter_resp_lines

        resp = self._call(
            spec,
            watch=True,
            resource_version=resource_version,
            timeout_seconds=timeout,
            allow_watch_bookmarks=True,
            _request_timeout=timeout + 30,
        )
        try:
            for line in iter_resp_lines(resp):
                if line:
                    yield json.loads(line)
        finally:
            resp.close()
            resp.release_conn()


def _slim(obj: dict, spec: KindSpec) -> dict:
    """What rules need: drop managedFields (large, never read); set apiVersion/kind (list items
    from the API server come without them)."""
    out = dict(obj)
    out["apiVersion"], out["kind"] = spec.api_version, spec.kind
    meta = out.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        meta = dict(meta)
        meta.pop("managedFields", None)
        out["metadata"] = meta
    return out


def _mapping(value: Any) -> dict:
    """``value`` when it is a JSON object, else an empty one (API answers are data, not trusted)."""
    return value if isinstance(value, dict) else {}


class _KindWatcher:
    def __init__(self, spec: KindSpec, transport: Transport, on_change, stop: threading.Event) -> None:
        self.spec = spec
        self.transport = transport
        self.on_change = on_change
        self.stop = stop
        self.objects: dict[tuple[str, str], dict] = {}
        self.attempted = False  # a first list finished (or failed): readiness does not wait longer
        self.available = False
        self.lock = threading.Lock()

    def _key(self, obj: dict) -> tuple[str, str]:
        meta = _mapping(obj.get("metadata"))
        return (str(meta.get("namespace") or ""), str(meta.get("name") or ""))

    def _relist(self) -> str:
        data = self.transport.list(self.spec)
        raw_items = data.get("items")
        items = raw_items if isinstance(raw_items, list) else []
        objects = {self._key(o): _slim(o, self.spec) for o in items if isinstance(o, dict)}
        with self.lock:
            self.objects = objects
        self.available = True
        self.on_change()
        return str((data.get("metadata") or {}).get("resourceVersion") or "")

    def run(self) -> None:
        backoff = 1.0
        warned = False
        while not self.stop.is_set():
            try:
                rv = self._relist()
                self.attempted = True
                backoff = 1.0
                while not self.stop.is_set():
                    rv = self._watch(rv)
            except ApiStatusError as err:
                self.attempted = True
                if err.status == 410:  # resourceVersion too old: list again
                    continue
                if err.status in (403, 404):
                    if not warned:
                        log.warning(
                            "cluster context: cannot list %s (%s); retrying every %ds",
                            self.spec.kind,
                            err,
                            SLOW_RETRY_S,
                        )
                        warned = True
                    self.stop.wait(SLOW_RETRY_S)
                    continue
                log.warning("cluster context: %s: %s", self.spec.kind, err)
            except Exception as err:  # network and decoding errors: back off and relist
                self.attempted = True
                log.warning("cluster context: %s watch failed: %s", self.spec.kind, err)
            self.stop.wait(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF_S)

    def _watch(self, rv: str) -> str:
        for event in self.transport.watch(self.spec, rv, WATCH_TIMEOUT_S):
            if self.stop.is_set():
                break
            etype = event.get("type")
            obj = _mapping(event.get("object"))
            if etype == "ERROR":
                raise ApiStatusError(int(obj.get("code") or 0), str(obj.get("message") or ""))
            meta = _mapping(obj.get("metadata"))
            rv = str(meta.get("resourceVersion") or rv)
            if etype == "BOOKMARK":
                continue
            with self.lock:
                if etype == "DELETED":
                    self.objects.pop(self._key(obj), None)
                elif etype in ("ADDED", "MODIFIED"):
                    self.objects[self._key(obj)] = _slim(obj, self.spec)
                else:
                    continue
            self.on_change()
        return rv


class ClusterContext:
    """A :class:`~eksmllint.server.context.ContextSource` fed by list+watch threads."""

    name = "cluster"

    def __init__(self, transport: Transport, kinds: tuple[KindSpec, ...] = CLUSTER_KINDS) -> None:
        self._stop = threading.Event()
        self._version = 0
        self._built = -1
        self._vlock = threading.Lock()
        self.watchers = [_KindWatcher(k, transport, self._changed, self._stop) for k in kinds]
        self._threads: list[threading.Thread] = []

    def _changed(self) -> None:
        with self._vlock:
            self._version += 1

    def start(self) -> None:
        for w in self.watchers:
            t = threading.Thread(target=w.run, name=f"eksmllint-watch-{w.spec.plural}", daemon=True)
            t.start()
            self._threads.append(t)

    def ready(self) -> bool:
        return all(w.attempted for w in self.watchers)

    def poll(self) -> LoadResult | None:
        from eksmllint.server.linting import to_ymap

        with self._vlock:
            version = self._version
        if version == self._built:
            return None
        result = LoadResult()
        for w in self.watchers:
            with w.lock:
                objects = list(w.objects.values())
            src = SourceFile(f"<cluster:{w.spec.plural}>", "", "json", context_only=True)
            for i, obj in enumerate(objects):
                data = to_ymap(obj)
                doc = Document(src, i, data, 1)
                src.documents.append(doc)
                result.resources.append(Resource(doc, data))
            result.files.append(src)
        self._built = version
        return result

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=1.0)


def wait_ready(ctx: ClusterContext, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not ctx.ready():
        time.sleep(0.05)
    return ctx.ready()
