"""Writes that happen whole or not at all: a file, or a folder of files, appears complete or not at all.

Every file the package writes goes through this module.  A file is written to a temporary file in the
same folder, flushed to disk (``fsync``) and renamed over the target with :func:`os.replace`, which is
atomic on POSIX and Windows: a reader, or a process killed at any instant (``kill -9``, a full disk, a
crash), sees either the previous file or the new one, never a truncated mix.  A folder of results is
written aside and swapped in whole (:func:`atomic_folder`).  When the write fails the temporary is
removed and the previous file or folder is left exactly as it was.

The temporaries are hidden siblings of the target, named ``.<name>.<pid>.<random>.tmp``; those left by
a process that was killed are removed by the next write of the same target.

>>> import pathlib, tempfile
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> write_text(folder / "a.txt", "first")
>>> try:
...     with atomic_path(folder / "a.txt") as tmp:
...         _ = tmp.write_text("half of the seco")
...         raise OSError(28, "No space left on device")
... except OSError as exc:
...     print(exc)
[Errno 28] No space left on device
>>> (folder / "a.txt").read_text(), sorted(p.name for p in folder.iterdir())
('first', ['a.txt'])
>>> with atomic_folder(folder / "results") as tmp:
...     _ = (tmp / "trials.csv").write_text("x\\n1\\n")
>>> sorted(p.name for p in folder.iterdir()), (folder / "results" / "trials.csv").read_text()
(['a.txt', 'results'], 'x\\n1\\n')
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import secrets
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

from cocoviz.errors import ParameterError

__all__ = ["atomic_path", "atomic_folder", "write_bytes", "write_text", "check_writable_folder"]

_SUFFIX = ".tmp"
_OLD = ".old"  # a previous folder moved aside while the new one is renamed in (no atomic exchange)


def _as_path(path) -> Path:
    if not isinstance(path, (str, os.PathLike)):
        raise ParameterError(f"a path must be a str or os.PathLike, got {type(path).__name__}")
    path = Path(os.fspath(path))
    if not path.name:
        raise ParameterError(f"{os.fspath(path)!r} names a folder, not a file")
    return path


def _temp_name(target: Path, suffix: str = _SUFFIX) -> Path:
    return target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}{suffix}")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _remove_stale(target: Path) -> None:
    """Remove the temporaries of ``target`` left by processes that no longer run (killed mid-write);
    a previous folder such a process had moved aside is put back if nothing took its place."""
    prefix = f".{target.name}."
    with contextlib.suppress(OSError):
        for sibling in sorted(target.parent.iterdir()):
            name = sibling.name
            if not (name.startswith(prefix) and name.endswith((_SUFFIX, _OLD))):
                continue
            pid = name[len(prefix) :].split(".")[0]
            if not pid.isdigit() or int(pid) == os.getpid() or _alive(int(pid)):
                continue
            if name.endswith(_OLD) and not os.path.lexists(target):
                os.replace(sibling, target)
            else:
                _remove(sibling)


def _fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (POSIX; Windows has no directory handles to sync)."""
    if sys.platform == "win32":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary path beside ``path``; when the block ends without error it replaces ``path`` whole.

    For writers that want a path (``DataFrame.to_parquet``, ``pyarrow.parquet.write_table``, plotly):
    write to the yielded path.  On any exception (a full disk, a bug, KeyboardInterrupt) the temporary
    is removed, ``path`` keeps its previous content (or stays absent) and the exception propagates.
    An open binary file object (a download buffer) is yielded as it is: its owner decides what a
    failure leaves in it.
    """
    if hasattr(path, "write") and not isinstance(path, (str, os.PathLike)):
        yield path
        return
    target = _as_path(path)
    if not target.parent.is_dir():  # named here: the temporary's name would only confuse
        raise FileNotFoundError(errno.ENOENT, "the folder does not exist", os.fspath(target.parent))
    _remove_stale(target)
    tmp = _temp_name(target)
    try:
        yield tmp
        _fsync_file(tmp)
        os.replace(tmp, target)
    except BaseException:
        _remove(tmp)
        raise
    _fsync_folder(target.parent)


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (the previous file, if any, survives a failure)."""
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        f.write(data)


def write_text(path: str | os.PathLike, text: str, encoding: str = "utf-8") -> None:
    """Write ``text`` to ``path`` atomically (the previous file, if any, survives a failure)."""
    write_bytes(path, text.encode(encoding))


def _exchange(a: Path, b: Path) -> bool:
    """Swap ``a`` and ``b`` in one atomic step (Linux ``renameat2(RENAME_EXCHANGE)``); False if unsupported."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):  # a file system or kernel without it
        return False
    raise OSError(code, os.strerror(code), os.fspath(b))


def _swap_in(tmp: Path, target: Path) -> None:
    """Put the folder ``tmp`` at ``target``, removing what was there, with no instant where a reader
    could see a mix of both."""
    if not os.path.lexists(target):
        os.replace(tmp, target)
        return
    if target.is_dir() and not target.is_symlink() and _exchange(tmp, target):
        _remove(tmp)  # now holds the previous folder
        return
    # No atomic exchange: move the old folder aside, then rename the new one in.  A kill between the two
    # renames leaves the target absent and the old folder complete beside it, which the next write of
    # the target puts back first; the folder is never a mix.
    old = _temp_name(target, _OLD)
    os.replace(target, old)
    try:
        os.replace(tmp, target)
    except BaseException:
        os.replace(old, target)
        raise
    _remove(old)


@contextlib.contextmanager
def atomic_folder(path: str | os.PathLike) -> Iterator[Path]:
    """A new empty folder beside ``path``; when the block ends without error it replaces ``path`` whole.

    Readers, and a process killed at any instant, see the previous folder complete or the new one
    complete, never new files beside old ones.  On any exception the new folder is removed and the
    previous one is untouched.
    """
    target = _as_path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale(target)
    tmp = _temp_name(target)
    tmp.mkdir()
    try:
        yield tmp
        for file in tmp.rglob("*"):
            if file.is_file():
                _fsync_file(file)
        _fsync_folder(tmp)
        _swap_in(tmp, target)
    except BaseException:
        _remove(tmp)
        raise
    _fsync_folder(target.parent)


def check_writable_folder(folder: str | os.PathLike, option: str = "output folder") -> Path:
    """Create ``folder`` if needed and prove that files can be created in it, before any work is done.

    Raises :class:`~cocoviz.errors.ParameterError` naming the folder and the reason (read-only,
    not a folder, permission denied) otherwise.  The probe creates and removes a hidden file, so it
    answers for the process as it runs (``os.access`` is wrong for root and for read-only mounts).
    """
    folder = Path(os.fspath(folder))
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = _temp_name(folder / ".write-probe")
        fd = os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ParameterError(f"{option} {os.fspath(folder)} is not writable: {reason}") from None
    return folder
