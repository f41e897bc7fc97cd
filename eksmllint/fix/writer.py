"""Write fixed files safely: atomically, keeping mode and owner, never over a file that changed.

A crash (or a full disk) in the middle of a write must leave the original intact: the new bytes
go to a temporary file in the same folder (same file system, so the rename is atomic), are
flushed and fsync'ed, get the original's owner and permission bits, and only then replace the
original with ``os.replace``. Just before the rename the file is read again: if it no longer
holds the bytes the fix started from (an editor saved it meanwhile), nothing is written.

What a rename cannot keep is refused with a message rather than changed behind the user's back:
a file with several hard links (the rename would split them), and a file whose owner or group
this user cannot give to the new file.

Temporary files: removed when the write fails, when SIGTERM/SIGHUP/SIGINT arrive during the
writes (:func:`signals_interrupt`), and, for a kill nothing can catch (SIGKILL, power loss), by
the next write to the same file: their names carry the writer's process id
(``.NAME.PID.RANDOM.eksmllint-tmp``) and those of processes that no longer exist are stale.
"""

from __future__ import annotations

import os
import re
import signal
import stat
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager

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
        return (
            "is rendered Helm output ('# Source:' headers); not written, fix the chart's "
            "templates or values instead (--diff shows the changes)"
        )
    try:
        st = os.stat(path)
    except OSError as err:
        return f"cannot be examined: {err.strerror or err}"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file; not written"
    if st.st_nlink > 1:
        return (
            f"has {st.st_nlink} hard links; not written (replacing it would split them: "
            "fix the file without the other links, or apply --diff to it)"
        )
    if not os.access(path, os.W_OK) or not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        return "is read-only; not written"
    return None


TMP_SUFFIX = ".eksmllint-tmp"


def atomic_write(path: str, data: bytes, expected: bytes | None = None) -> None:
    """Replace ``path`` with ``data`` atomically; ``expected``: the bytes it must still hold."""
    folder = os.path.dirname(os.path.abspath(path))
    name = os.path.basename(path)
    try:
        original = os.stat(path)
    except FileNotFoundError:
        original = None
    remove_stale_temps(folder, name)
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.{os.getpid()}.", suffix=TMP_SUFFIX)
    except OSError as err:  # e.g. a read-only folder
        raise WriteError(f"could not be written (no temporary file in its folder: {err.strerror or err})") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if original is not None:
            _copy_owner_and_mode(tmp, original)
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


def _copy_owner_and_mode(tmp: str, original: os.stat_result) -> None:
    """Give the new file the original's owner, group and permission bits (in that order: a
    change of owner clears set-user-ID bits); refuse when the owner cannot be kept."""
    mine = os.stat(tmp)
    if (mine.st_uid, mine.st_gid) != (original.st_uid, original.st_gid):
        try:
            os.chown(tmp, original.st_uid, original.st_gid)
        except OSError:
            raise WriteError(
                f"belongs to another owner or group (uid {original.st_uid}, gid {original.st_gid}) "
                "that this user cannot give to the rewritten file; not written"
            ) from None
    os.chmod(tmp, stat.S_IMODE(original.st_mode))


def remove_stale_temps(folder: str, name: str) -> list[str]:
    """Delete temporary files of ``name`` left by writers that were killed (their process is
    gone); returns what was removed."""
    pattern = re.compile(rf"\.{re.escape(name)}\.(\d+)\.[^.]+{re.escape(TMP_SUFFIX)}")
    removed: list[str] = []
    try:
        entries = os.listdir(folder)
    except OSError:
        return removed
    for entry in entries:
        m = pattern.fullmatch(entry)
        if m and not _process_alive(int(m.group(1))):
            try:
                os.unlink(os.path.join(folder, entry))
                removed.append(entry)
            except OSError:
                pass
    return removed


def _process_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True  # ours: another thread of this process may be writing it
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True  # another user's process, or not a pid: leave it alone
    return True


class Interrupted(BaseException):
    """A termination signal arrived during :func:`signals_interrupt` (a BaseException, like
    KeyboardInterrupt, so the write in progress removes its temporary file and nothing
    catches it on the way out)."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by signal {signum}")
        self.signum = signum


@contextmanager
def signals_interrupt() -> Iterator[None]:
    """While files are written, SIGTERM and SIGHUP raise :class:`Interrupted` (SIGINT already
    raises KeyboardInterrupt) instead of ending the process on the spot, so no temporary file is
    left behind. Only in the main thread (elsewhere signals cannot be handled)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    wanted = [s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None]
    previous = {}

    def interrupt(signum, _frame):
        raise Interrupted(signum)

    for signum in wanted:
        previous[signum] = signal.signal(signum, interrupt)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


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
