"""Write fixed files safely: atomically, keeping the mode, never over a file that changed.

A crash (or a full disk) in the middle of a write must leave the original intact: the new bytes
go to a temporary file in the same folder (same file system, so the rename is atomic), are
flushed and fsync'ed, get the original's permission bits, and only then replace the original
with ``os.replace``. Just before the rename the file is read again: if it no longer holds the
bytes the fix started from (an editor saved it meanwhile), nothing is written.
"""

from __future__ import annotations

import os
import stat
import tempfile

from eksmllint.fix.engine import FileOutcome

BOM = b"\xef\xbb\xbf"


class WriteError(Exception):
    """The file was not written; the message says why and what to do."""


def encode(text: str, original: bytes) -> bytes:
    """``text`` as bytes, with the original's UTF-8 byte-order mark if it had one."""
    data = text.encode("utf-8", "surrogatepass")
    return BOM + data if original.startswith(BOM) else data


def refusal(path: str, outcome: FileOutcome | None = None) -> str | None:
    """Why ``path`` must not be rewritten in place (None: it may be)."""
    if os.path.islink(path):
        return "is a symlink; not written (run the fix on the file it points to)"
    if outcome is not None and outcome.helm:
        return ("is rendered Helm output ('# Source:' headers); not written, fix the chart's "
                "templates or values instead (--diff shows the changes)")
    try:
        st = os.stat(path)
    except OSError as err:
        return f"cannot be examined: {err.strerror or err}"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file; not written"
    if not os.access(path, os.W_OK) or not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        return "is read-only; not written"
    return None


def atomic_write(path: str, data: bytes, expected: bytes | None = None) -> None:
    """Replace ``path`` with ``data`` atomically; ``expected``: the bytes it must still hold."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = None
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".eksmllint-tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        if expected is not None:
            try:
                with open(path, "rb") as fh:
                    current = fh.read()
            except OSError as err:
                raise WriteError(f"cannot re-read before writing: {err.strerror or err}") from None
            if current != expected:
                raise WriteError("changed on disk since it was read; not written (run the fix again)")
        os.replace(tmp, path)
    except BaseException as err:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(err, WriteError):
            raise
        if isinstance(err, OSError):
            raise WriteError(f"could not be written: {err.strerror or err}") from None
        raise
    _fsync_dir(folder)


def _fsync_dir(folder: str) -> None:
    """Make the rename itself durable (best effort: not every platform can open a directory)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
