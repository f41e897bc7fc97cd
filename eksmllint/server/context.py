"""Cluster context for admission requests: NodePools, EC2NodeClasses, queues, DaemonSets, PVCs...

An admission request carries one object, but many rules judge it against others (the NodePools it
can land on, the Queue it is submitted to, the device-plugin DaemonSets). Two sources feed a
:class:`ContextSnapshot`:

- a directory of manifests (``--context-dir``, typically a mounted ConfigMap), re-read when a
  file's identity or content changes;
- optionally the live cluster (:mod:`eksmllint.server.cluster`), through list+watch.

Requests read the *current* snapshot, an immutable value replaced by a single reference
assignment, so a reload never exposes a half-built context to a request in flight. Without any
context the snapshot is empty and the rules that need context stay silent.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from eksmllint.core.context import NO_SHARED_VIEWS, LintRun, SharedViews
from eksmllint.core.engine import build_workloads
from eksmllint.loader import LoadProblem, LoadResult, discover, load
from eksmllint.resource import Resource, SourceFile
from eksmllint.server.logtext import escape_log

if TYPE_CHECKING:
    from eksmllint.scheduling import NodePoolView

log = logging.getLogger("eksmllint.server.context")

#: Kubernetes' ConfigMap/Secret volumes keep the real files in ``..<timestamp>/`` and expose them
#: through ``..data`` symlinks; walking both would load every manifest twice.
CONFIGMAP_EXCLUDES = ("..*",)


@dataclass(frozen=True)
class ContextSnapshot:
    """The context objects with the views every request's run would otherwise derive from them
    (:class:`~eksmllint.core.context.SharedViews`: workloads, per-kind index, NodePool views).
    All of it is read-only once built, so requests share it across threads."""

    views: SharedViews = NO_SHARED_VIEWS
    generation: int = 0
    counts: dict[str, int] = field(default_factory=dict)  # resources per kind (metrics, /readyz)
    problems: int = 0  # context files (or parts) that could not be loaded (metric)

    @property
    def files(self) -> list[SourceFile]:
        return self.views.files

    @property
    def resources(self) -> list[Resource]:
        return self.views.resources

    @property
    def nodepool_views(self) -> list[NodePoolView]:
        return self.views.nodepools

    @classmethod
    def build(cls, parts: list[LoadResult], generation: int) -> ContextSnapshot:
        files = [f for p in parts for f in p.files]
        for f in files:
            f.context_only = True
        # The same object from two sources (a manifest in the directory and the live cluster):
        # the later source (the cluster) wins.
        by_key: dict[tuple, Resource] = {}
        unnamed: list[Resource] = []
        for p in parts:
            for r in p.resources:
                if r.name is None:
                    unnamed.append(r)
                else:
                    by_key.pop(r.key, None)
                    by_key[r.key] = r
        run = LintRun(list(by_key.values()) + unnamed, files)
        for crash in build_workloads(run):  # left out of the context, as a lint run leaves it out
            log.warning("context: %s", escape_log(crash.message))
        views = SharedViews.of(run)
        counts = {k: len(v) for k, v in views.by_kind.items()}
        return cls(views, generation, counts, sum(len(p.problems) for p in parts))


class ContextSource(Protocol):
    name: str

    def poll(self) -> LoadResult | None:
        """A new LoadResult when the source changed since the last call, else None."""

    def ready(self) -> bool: ...

    def stop(self) -> None: ...


class DirectoryContext:
    """Manifests under a directory; re-read when the set of files or any file's content changes."""

    def __init__(self, path: str, max_bytes: int = 5 * 1024 * 1024) -> None:
        self.name = f"directory:{path}"  # the store keys sources by name: one per directory
        self.path = path
        self.max_bytes = max_bytes
        self._signature: tuple | None = None
        self._loaded = False

    def signature(self) -> tuple:
        files, _missing = discover([self.path], CONFIGMAP_EXCLUDES)
        sig = []
        for f in files:
            try:
                st = os.stat(f)  # follows the ConfigMap symlinks: a flip changes inode and mtime
            except OSError:
                continue
            sig.append((f, st.st_ino, st.st_mtime_ns, st.st_size))
        return tuple(sig)

    def poll(self) -> LoadResult | None:
        sig = self.signature()
        if sig == self._signature:
            return None
        loaded = self._load()
        for p in loaded.problems:
            log.warning("context %s:%s: %s", escape_log(p.file), p.line, escape_log(p.message))
        if loaded.missing:
            log.warning("context directory %s does not exist (yet)", self.path)
        self._signature = sig
        self._loaded = True
        return loaded

    def _load(self) -> LoadResult:
        """The directory's manifests; a file the loader cannot take at all (it raised instead of
        reporting a problem) is left out and reported, never the whole directory: one broken
        file must not keep the webhook unready (or without its other context) forever."""
        try:
            return load([self.path], exclude=CONFIGMAP_EXCLUDES, max_bytes=self.max_bytes, context_only=True)
        except Exception:
            log.exception("context %s: the loader failed; loading file by file", self.path)
        files, missing = discover([self.path], CONFIGMAP_EXCLUDES)
        out = LoadResult(missing=missing)
        for f in files:
            try:
                part = load([f], max_bytes=self.max_bytes, context_only=True)
            except Exception as err:
                out.problems.append(
                    LoadProblem(f, f"cannot be loaded, left out of the context: {type(err).__name__}: {err}")
                )
                continue
            out.files += part.files
            out.resources += part.resources
            out.problems += part.problems
        return out

    def ready(self) -> bool:
        return self._loaded

    def stop(self) -> None:
        return None


class ContextStore:
    """Combines the sources and polls them from one background thread."""

    def __init__(
        self,
        sources: list[ContextSource],
        interval: float = 5.0,
        on_reload: Callable[[ContextSnapshot], None] | None = None,
    ) -> None:
        self.sources = sources
        self.interval = interval
        self.on_reload = on_reload
        self._parts: dict[str, LoadResult] = {}
        self._snapshot = ContextSnapshot()
        self._generation = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def snapshot(self) -> ContextSnapshot:
        return self._snapshot

    def refresh(self) -> bool:
        """Poll every source once; rebuild and swap the snapshot if any changed."""
        with self._lock:
            changed = False
            for src in self.sources:
                try:
                    fresh = src.poll()
                except Exception:  # a broken source must not stop the others or the server
                    log.exception("context source %s failed to refresh", src.name)
                    continue
                if fresh is not None:
                    self._parts[src.name] = fresh
                    changed = True
            if not changed:
                return False
            self._generation += 1
            snap = ContextSnapshot.build(list(self._parts.values()), self._generation)
            self._snapshot = snap  # one reference assignment: requests see old or new, never half
        log.info(
            "context reloaded (generation %d): %s%s",
            snap.generation,
            ", ".join(f"{n} {k}" for k, n in sorted(snap.counts.items())) or "empty",
            f"; {snap.problems} problem(s) (logged above)" if snap.problems else "",
        )
        if self.on_reload:
            self.on_reload(snap)
        return True

    def ready(self) -> bool:
        return all(src.ready() for src in self.sources)

    def start(self) -> None:
        self.refresh()
        if not self.sources or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._loop, name="eksmllint-context", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.refresh()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        for src in self.sources:
            try:
                src.stop()
            except Exception:
                log.exception("context source %s failed to stop", src.name)
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None


def wait_until(predicate: Callable[[], bool], timeout: float, step: float = 0.05) -> bool:
    """Poll ``predicate`` until true or ``timeout`` seconds passed (bounded; tests and startup)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()
