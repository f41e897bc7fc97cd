"""Server TLS that follows certificate rotation without a restart.

cert-manager renews the serving certificate by rewriting the Secret, which the kubelet swaps into
the mounted volume (an atomic symlink flip). The listening socket keeps the :class:`ssl.SSLContext`
it was created with, so instead of mutating that context in place (a half-written key/cert pair
would break every new handshake) each new pair is loaded into a *fresh* context, and only once it
loaded cleanly is it swapped in: the listening context's SNI callback, which OpenSSL calls for
every ClientHello (with ``server_name=None`` when the client sends no SNI), moves each new
connection onto the current context. A pair that fails to load is logged and retried on the next
poll; the old certificate keeps serving meanwhile.
"""

from __future__ import annotations

import hashlib
import logging
import os
import ssl
import stat
import threading
from dataclasses import dataclass

log = logging.getLogger("eksmllint.server.tls")


def make_context(certfile: str, keyfile: str) -> ssl.SSLContext:
    """A server context: TLS 1.2 minimum, HTTP/1.1 only, the library's default cipher suites."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.options |= ssl.OP_NO_COMPRESSION | ssl.OP_CIPHER_SERVER_PREFERENCE
    ctx.set_alpn_protocols(["http/1.1"])
    ctx.load_cert_chain(certfile, keyfile)
    return ctx


#: A certificate chain and its key are a few KiB; anything far larger is not one.
MAX_TLS_FILE = 1024 * 1024


def _read_regular(path: str) -> bytes:
    """The file's bytes; a FIFO, device or directory (which could block or never end) or a file
    over :data:`MAX_TLS_FILE` raises ``OSError`` instead."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # opening a FIFO does not wait for a writer
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{path}: not a regular file")
        if st.st_size > MAX_TLS_FILE:
            raise OSError(f"{path}: {st.st_size} bytes, more than a certificate ({MAX_TLS_FILE})")
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read(MAX_TLS_FILE + 1)
    finally:
        os.close(fd)


def _digest(*paths: str) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(_read_regular(p))
        h.update(b"\0")
    return h.hexdigest()


@dataclass
class ReloadResult:
    changed: bool
    error: str | None = None


class ReloadingTLS:
    """Owns the listening context and the current serving context."""

    def __init__(self, certfile: str, keyfile: str) -> None:
        self.certfile = certfile
        self.keyfile = keyfile
        self._lock = threading.Lock()
        self._digest = _digest(certfile, keyfile)  # refuses a FIFO or device before ssl opens it
        self._current = make_context(certfile, keyfile)  # fails loudly at startup: no silent default
        self._failed_digest: str | None = None
        self.reloads = 0
        self.failures = 0
        self.listening = make_context(certfile, keyfile)
        self.listening.sni_callback = self._select

    def _select(self, sslobj: ssl.SSLObject, server_name: str | None, _ctx: ssl.SSLContext) -> None:
        current = self._current
        if sslobj.context is not current:
            sslobj.context = current
        return None

    @property
    def current(self) -> ssl.SSLContext:
        return self._current

    def reload_if_changed(self) -> ReloadResult:
        """Re-read the files (at most :data:`MAX_TLS_FILE` each); swap in a new context when their
        content changed and loads. Blocking file I/O: the runner calls it on a thread of its own."""
        try:
            digest = _digest(self.certfile, self.keyfile)
        except OSError as err:
            self.failures += 1
            log.warning("cannot read TLS files (keeping the current certificate): %s", err)
            return ReloadResult(False, str(err))
        if digest in (self._digest, self._failed_digest):  # unchanged, or known not to load
            return ReloadResult(False)
        try:
            fresh = make_context(self.certfile, self.keyfile)
        except (ssl.SSLError, OSError, ValueError) as err:
            # Often transient: the kubelet swaps both files at once, but a poll between writing a
            # new certificate and its key sees a mismatched pair. Retried when the files change.
            self.failures += 1
            self._failed_digest = digest
            log.warning("new TLS certificate/key do not load (keeping the current one): %s", err)
            return ReloadResult(False, str(err))
        with self._lock:
            self._current = fresh
            self._digest = digest
            self.reloads += 1
        log.info("TLS certificate reloaded from %s", self.certfile)
        return ReloadResult(True)
