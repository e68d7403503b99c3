"""The compile cache: repeated compiles of the same program text and options skip the pipeline.

Key: SHA-256 of the printed program (the printer is complete — its output parses back to the same
IR), the strategy and backend type, and a fingerprint of the compiler itself (every source file of
the `pypto` package), so editing the compiler invalidates old entries. An entry is a copy of the
output directory (PTO files, signature, reports, lowered IR, generated C++) plus `native.json`
naming the built shared object in the native build cache. Entries are written to a temporary
directory and renamed into place, so concurrent processes never see half an entry; an entry that
fails to restore is ignored (and the compile simply runs).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pypto.config import config

_SUFFIXES = (".py", ".hpp", ".h", ".cpp")


@functools.lru_cache(maxsize=1)
def compiler_fingerprint() -> str:
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for f in sorted(filenames):
            if f.endswith(_SUFFIXES):
                p = Path(dirpath) / f
                h.update(str(p.relative_to(root)).encode())
                h.update(p.read_bytes())
    return h.hexdigest()


def cache_key(program_text: str, strategy: str, backend: str) -> str:
    h = hashlib.sha256()
    for part in ("pypto-compile-v1", compiler_fingerprint(), strategy, backend, program_text):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _entry_dir(key: str) -> Path:
    return Path(config.cache_dir) / "compiled" / key[:2] / key


@dataclass
class Hit:
    entry: str
    native: Any  # an object with `.handle` (pypto.runtime.ProgramHandle), or None


class _Native:
    def __init__(self, handle: Any, path: Path):
        self.handle = handle
        self.path = path


def _digest(entry: Path) -> str:
    """A hash of every file of an entry but native.json (which records it): a damaged or edited
    file makes the entry a miss, and the compile rewrites it."""
    h = hashlib.sha256()
    for p in sorted(q for q in entry.rglob("*") if q.is_file() and q.name != "native.json"):
        h.update(str(p.relative_to(entry)).encode())
        h.update(b"\0")
        h.update(p.read_bytes())
    return h.hexdigest()


def restore(key: str, out: Path, load_native: bool = True) -> Hit | None:
    entry = _entry_dir(key)
    meta_path = entry / "native.json"
    try:
        meta = json.loads(meta_path.read_text())
        if not isinstance(meta, dict) or not all(isinstance(meta.get(k), str) for k in ("entry", "so", "sha", "digest")):
            return None  # a corrupt entry is a miss; the compile rebuilds and rewrites it
        if _digest(entry) != meta["digest"]:
            return None
    except (OSError, ValueError):
        return None
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
    if out.resolve() != entry.resolve():
        # Without the native step (skip_ptoas) the output holds only what the compiler wrote.
        skip = ("native.json",) if load_native else ("native.json", "native")
        shutil.copytree(entry, out, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*skip))
    return Hit(meta["entry"], native)


def store(key: str, out: Path, entry_name: str, native: Any) -> None:
    """Copy a finished compile's output directory into the cache (best effort: errors are ignored)."""
    dest = _entry_dir(key)
    if native is None:
        return
    so = getattr(getattr(native, "build", None), "path", None) or getattr(native, "path", None)
    if so is None:
        return
    try:
        from pypto.support.native_build import file_sha

        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{key[:8]}-", dir=dest.parent))
        for sub in ("kernels", "orchestration", "report", "native"):
            if (out / sub).is_dir():
                shutil.copytree(out / sub, tmp / sub)
        for f in ("signature.json", "lowered.py", "compile_report.json"):
            if (out / f).exists():
                shutil.copy2(out / f, tmp / f)
        (tmp / "native.json").write_text(json.dumps({"entry": entry_name, "so": str(so), "sha": file_sha(Path(so)),
                                                      "digest": _digest(tmp)}))
        if dest.exists():  # a damaged entry (this compile missed it): move it aside, then replace it
            old = Path(tempfile.mkdtemp(prefix=f".{key[:8]}-old-", dir=dest.parent))
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


__all__ = ["Hit", "cache_key", "compiler_fingerprint", "restore", "store"]
