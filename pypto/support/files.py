"""Writing files PyPTO owns: atomically, readable by whoever may read the directory, and with
errors that name the path.

- `atomic_write(path, data)`: a temporary file in the same directory, then `os.replace`, so another
  process sees the old file or the new one, never half of one.
- Modes follow the umask like any `open()` would (0644 / 0755 under the usual umask 022): files
  in a cache shared by several users are readable by all of them. A directory made inside a
  group- or world-writable directory (a shared cache root, chmod 2775 or 1777) inherits its write
  bits, so the other users can add entries too.
- `FileWriteError` wraps an `OSError` (a full disk, a read-only mount, a permission) with the path
  and what to do, instead of a bare `[Errno 28] No space left on device`.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import tempfile
import threading
from pathlib import Path

from pypto.errors import Error


class FileWriteError(Error, OSError):
    """A file PyPTO had to write could not be written; the message names the path."""


_UMASK: int | None = None
_UMASK_LOCK = threading.Lock()


def umask() -> int:
    """The process umask (read once: reading it means setting it, which is not thread-safe)."""
    global _UMASK
    if _UMASK is None:
        with _UMASK_LOCK:
            if _UMASK is None:
                old = os.umask(0o022)
                os.umask(old)
                _UMASK = old
    return _UMASK


def file_mode() -> int:
    return 0o666 & ~umask()


def _dir_mode(parent: Path) -> int:
    mode = 0o777 & ~umask()
    try:
        pm = parent.stat().st_mode
    except OSError:
        return mode
    return mode | (pm & (stat.S_IWGRP | stat.S_IWOTH | stat.S_ISGID))


def describe(e: OSError, path: Path | str, action: str = "write") -> str:
    """`cannot write PATH: No space left on device` plus a hint for the common causes."""
    reason = e.strerror or str(e)
    hint = {errno.ENOSPC: "free some disk space or choose another directory",
            errno.EDQUOT: "free some disk space or choose another directory",
            errno.EROFS: "the file system is read-only; choose another directory",
            errno.EACCES: "you lack permission there; choose another directory",
            errno.EPERM: "you lack permission there; choose another directory",
            errno.ENAMETOOLONG: "the name is too long for the file system"}.get(e.errno or 0)
    return f"cannot {action} {path}: {reason}" + (f" ({hint})" if hint else "")


def make_dirs(path: Path) -> Path:
    """`mkdir -p` that gives each new directory the mode described in the module docstring."""
    path = Path(path)
    missing = []
    p = path
    while not p.exists():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    for d in reversed(missing):
        try:
            d.mkdir(mode=_dir_mode(d.parent))
        except FileExistsError:
            if not d.is_dir():
                raise FileWriteError(errno.EEXIST, f"cannot create the directory {d}: a file of that name exists") \
                    from None
            continue
        except OSError as e:
            raise FileWriteError(e.errno, describe(e, d, "create the directory")) from None
        try:
            os.chmod(d, _dir_mode(d.parent))  # mkdir's mode is filtered by the umask; the group bits are not
        except OSError:
            pass
    return path


def private_dir(parent: Path, prefix: str) -> Path:
    """A fresh directory only this process writes to, with the shared mode (unlike mkdtemp's 0700)."""
    try:
        d = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
        os.chmod(d, _dir_mode(parent))
    except OSError as e:
        raise FileWriteError(e.errno, describe(e, parent, "create a directory in")) from None
    return d


def atomic_write(path: Path, data: bytes | str) -> Path:
    """Write `data` to `path` through a temporary file and a rename; errors name `path`."""
    path = Path(path)
    payload = data.encode() if isinstance(data, str) else data
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:40]}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
        os.chmod(tmp, file_mode())
        os.replace(tmp, path)
        tmp = None
    except OSError as e:
        raise FileWriteError(e.errno, describe(e, path)) from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    return path


def is_writable_dir(path: Path) -> bool:
    return path.is_dir() and os.access(path, os.W_OK | os.X_OK)


_STEM_OK = re.compile(r"[A-Za-z0-9_.\-]+")


def safe_stem(name: str, limit: int = 96) -> str:
    """A file name for an IR name: the name itself when it is short plain ASCII, else a readable
    prefix plus a hash of the whole (unicode names and 300-character names both give valid,
    distinct file names; none can leave its directory)."""
    if _STEM_OK.fullmatch(name) and len(name) <= limit and not name.startswith("."):
        return name
    import hashlib

    keep = "".join(c if c.isascii() and (c.isalnum() or c in "_-") else "_" for c in name)[: limit - 13]
    return f"{keep or 'x'}_{hashlib.sha256(name.encode()).hexdigest()[:12]}"


__all__ = ["FileWriteError", "atomic_write", "describe", "file_mode", "is_writable_dir", "make_dirs", "private_dir",
           "safe_stem", "umask"]
