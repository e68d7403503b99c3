"""The compile cache: repeated compiles of the same program text and options skip the pipeline.

Key: SHA-256 of the printed program (the printer is complete — its output parses back to the same
IR), the strategy and backend type, a fingerprint of the compiler itself (every source file of
the `pypto` package), so editing the compiler invalidates old entries, and of the C++ toolchain
(compiler version and the CPU features it targets), so a cache shared between machines never
serves one a library built for another's CPU, and the ops defined with `pypto.extend` (their C++). An entry is a copy of the
output directory (PTO files, signature, reports, lowered IR, generated C++) plus `native.json`
naming the built shared object in the native build cache. Entries are written to a temporary
directory and renamed into place, so concurrent processes never see half an entry; an entry that
fails to restore is ignored (and the compile simply runs). Entries are readable by every user
who can read the cache; one that cannot write there (a cache shared read-only) still reads it and
simply does not store.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pypto.config import config
from pypto.support.files import atomic_write, make_dirs, private_dir

_SUFFIXES = (".py", ".hpp", ".h", ".cpp")


@functools.lru_cache(maxsize=1)
def compiler_fingerprint() -> str:
    root = Path(__file__).resolve().parents[1]  # the whole `pypto` package
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for f in sorted(filenames):
            if f.endswith(_SUFFIXES):
                p = Path(dirpath) / f
                h.update(str(p.relative_to(root)).encode())
                h.update(p.read_bytes())
    return h.hexdigest()


def cache_key(program_text: str, strategy: str, backend: str, target: str = "") -> str:
    from pypto.ops.registry import extension_fingerprint
    from pypto.support.native_build import toolchain_fingerprint

    h = hashlib.sha256()
    for part in ("pypto-compile-v2", compiler_fingerprint(), toolchain_fingerprint(), extension_fingerprint(),
                 strategy, backend, target, program_text):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _entry_dir(key: str) -> Path:
    return Path(config.cache_dir) / "compiled" / key[:2] / key


@dataclass(frozen=True)
class Hit:
    entry: str
    native: Any  # an object with `.handle` (pypto.runtime.ProgramHandle), or None


class _Native:
    def __init__(self, handle: Any, path: Path):
        self.handle = handle
        self.path = path


def _read_entry(entry: Path) -> dict[str, bytes]:
    """Every file of an entry (relative path -> bytes), read once: what is checked is what is used,
    even if another process replaces the entry meanwhile."""
    return {str(p.relative_to(entry)): p.read_bytes() for p in sorted(entry.rglob("*")) if p.is_file()}


def _digest(files: dict[str, bytes]) -> str:
    """A hash of every file of an entry but native.json (which records it): a damaged or edited
    file makes the entry a miss, and the compile rewrites it."""
    h = hashlib.sha256()
    for rel in sorted(files):
        if rel != "native.json":
            h.update(rel.encode())
            h.update(b"\0")
            h.update(files[rel])
    return h.hexdigest()


def _valid(files: dict[str, bytes]) -> dict | None:
    """The entry's native.json if the entry is whole and undamaged."""
    try:
        meta = json.loads(files["native.json"])
    except (KeyError, ValueError):
        return None
    if not isinstance(meta, dict) or not all(isinstance(meta.get(k), str) for k in ("entry", "so", "sha", "digest")):
        return None
    return meta if _digest(files) == meta["digest"] else None


def restore(key: str, out: Path, load_native: bool = True) -> Hit | None:
    """Copy a cached compile into `out` (a compile's private staging directory) and load its
    library; None (a miss) when there is no whole, undamaged entry."""
    try:
        files = _read_entry(_entry_dir(key))
    except OSError:
        return None
    meta = _valid(files)
    if meta is None:
        return None  # a corrupt entry is a miss; the compile rebuilds and rewrites it
    native = None
    if load_native:
        from pypto.support.native_build import NativeBuildError, file_sha, load_library

        so = Path(meta["so"])
        try:
            if not so.exists() or file_sha(so) != meta["sha"]:
                return None
            from pypto.runtime import ProgramHandle

            native = _Native(ProgramHandle(load_library(so)), so)
        except (OSError, NativeBuildError, TypeError):
            return None
    for rel, data in files.items():
        # Without the native step (skip_ptoas) the output holds only what the compiler wrote.
        if rel == "native.json" or (not load_native and rel.startswith("native/")):
            continue
        make_dirs((out / rel).parent)
        atomic_write(out / rel, data)
    return Hit(meta["entry"], native)


def store(key: str, out: Path, entry_name: str, native: Any) -> None:
    """Copy a finished compile's (private, staged) output into the cache (best effort: a cache it
    cannot write to is skipped)."""
    dest = _entry_dir(key)
    if native is None:
        return
    so = getattr(getattr(native, "build", None), "path", None) or getattr(native, "path", None)
    if so is None:
        return
    try:
        from pypto.support.native_build import file_sha

        make_dirs(dest.parent)
        tmp = private_dir(dest.parent, f".{key[:8]}-")
        for sub in ("kernels", "orchestration", "report", "native"):
            if (out / sub).is_dir():
                shutil.copytree(out / sub, tmp / sub)
        for f in ("signature.json", "kernel_config.py", "lowered.py", "compile_report.json"):
            if (out / f).exists():
                shutil.copy2(out / f, tmp / f)
        atomic_write(tmp / "native.json", json.dumps({"entry": entry_name, "so": str(so), "sha": file_sha(Path(so)),
                                                     "digest": _digest(_read_entry(tmp))}))
        if dest.exists() and _is_whole(dest):  # another process stored it meanwhile: keep theirs
            shutil.rmtree(tmp, ignore_errors=True)
            return
        if dest.exists():  # a damaged entry (this compile missed it): move it aside, then replace it
            old = private_dir(dest.parent, f".{key[:8]}-old-")
            try:
                os.replace(dest, old / "entry")
            except OSError:
                pass
            shutil.rmtree(old, ignore_errors=True)
        try:
            os.replace(tmp, dest)
        except OSError:  # another process stored it first
            shutil.rmtree(tmp, ignore_errors=True)
    except OSError:
        pass


def _is_whole(entry: Path) -> bool:
    try:
        return _valid(_read_entry(entry)) is not None
    except OSError:
        return False


__all__ = ["Hit", "cache_key", "compiler_fingerprint", "restore", "store"]
