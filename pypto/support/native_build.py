"""Build C++ into shared objects with the system compiler, cached by content hash.

- The key covers the source, every header it is built with, the flags, the compiler's version and
  the vector features `-march=native` resolves to on this machine, so a cache shared between
  machines never hands one a binary for another's CPU.
- Entries are written atomically (temporary file + rename), so concurrent processes never see half
  a file. Each `.so` has a `.sha256` sidecar; an entry whose bytes do not match is rebuilt.
- Entries are readable by every user who can read the cache. A user who cannot write there (a
  cache another user made) still uses its entries and builds new ones in a private directory
  (`$TMPDIR/pypto-cache-<uid>`).
- Builds of different sources run in parallel (one lock per entry, not one for all).
- A missing compiler is reported with what to install.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from pypto.config import config
from pypto.errors import Error
from pypto.support.files import FileWriteError, atomic_write, describe, is_writable_dir, make_dirs, safe_stem


class NativeBuildError(Error, RuntimeError):
    """The C++ compiler rejected generated or library code."""


class CompilerNotFoundError(NativeBuildError):
    pass


@dataclass(frozen=True)
class Toolchain:
    cxx: str
    version: str
    isa: str  # "avx512", "avx2", "neon", "generic"
    features: frozenset[str]
    march_native: bool

    @property
    def base_flags(self) -> tuple[str, ...]:
        flags = ["-O3", "-std=c++17", "-fPIC", "-shared", "-fno-math-errno", "-fno-trapping-math",
                 "-fvisibility=hidden", "-pthread"]
        if self.march_native:
            flags.append("-march=native")
        return tuple(flags)


_INSTALL_HINT = ("PyPTO compiles kernels with a C++17 compiler. Install one (Debian/Ubuntu: "
                 "`apt-get install g++`; Fedora: `dnf install gcc-c++`; macOS: `xcode-select --install`) "
                 "or point pypto.config.cxx / $CXX at it.")


def _find_cxx() -> str:
    cands = [config.cxx] if config.cxx else ["g++", "c++", "clang++"]
    for c in cands:
        if c and shutil.which(c):
            return shutil.which(c)  # type: ignore[return-value]
    raise CompilerNotFoundError(f"no C++ compiler found (tried {', '.join(c for c in cands if c)}). {_INSTALL_HINT}")


@functools.lru_cache(maxsize=4)
def _detect(cxx: str) -> Toolchain:
    try:
        ver = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=30).stdout.splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError) as e:
        raise CompilerNotFoundError(f"cannot run the C++ compiler {cxx!r}: {e}. {_INSTALL_HINT}") from e
    march = True
    macros = _predefined(cxx, ["-march=native"])
    if macros is None:
        march = False
        macros = _predefined(cxx, []) or ""
    feats = frozenset(line.split()[1] for line in macros.splitlines() if line.startswith("#define __")
                      and any(k in line for k in ("AVX", "SSE", "FMA", "F16C", "ARM_NEON", "ARM_FEATURE", "AMX")))
    if "__AVX512F__" in feats:
        isa = "avx512"
    elif "__AVX2__" in feats:
        isa = "avx2"
    elif "__ARM_NEON" in feats or "__ARM_NEON__" in feats:
        isa = "neon"
    else:
        isa = "generic"
    return Toolchain(cxx, ver, isa, feats, march)


def _predefined(cxx: str, flags: list[str]) -> str | None:
    try:
        r = subprocess.run([cxx, *flags, "-dM", "-E", "-x", "c++", "-"], input="", capture_output=True,
                           text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout if r.returncode == 0 else None


def toolchain() -> Toolchain:
    return _detect(_find_cxx())


def toolchain_fingerprint() -> str:
    """What a built library depends on besides its source: the compiler and the CPU features it
    targets (`-march=native` here). "no-compiler" where there is none (PTO-only compiles)."""
    try:
        tc = toolchain()
    except NativeBuildError:
        return "no-compiler"
    return hashlib.sha256("\0".join([tc.cxx, tc.version, str(tc.march_native), *sorted(tc.features)])
                          .encode()).hexdigest()


def _private_cache_dir() -> Path:
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return Path(tempfile.gettempdir()) / f"pypto-cache-{uid}" / "native"


def cache_dir() -> Path:
    """Where new libraries are written: the configured cache, or a private one if that is not
    writable by this user."""
    d = Path(config.cache_dir) / "native"
    try:
        make_dirs(d)
        if is_writable_dir(d):
            return d
    except OSError:
        pass
    p = _private_cache_dir()
    try:
        return make_dirs(p)
    except OSError as e:
        raise NativeBuildError(f"cannot use the cache directory {d} nor {p} ({e.strerror or e}); set "
                               f"pypto.config.cache_dir or PYPTO_CACHE_DIR to a writable directory") from None


def _cached(name: str) -> Path | None:
    """A valid entry named `name` in the configured cache or the private one."""
    for d in (Path(config.cache_dir) / "native", _private_cache_dir()):
        so, side = d / name, d / (name + ".sha256")
        try:
            if so.exists() and side.exists() and side.read_text().strip() == file_sha(so):
                return so
        except OSError:
            continue
    return None


def _hash_inputs(source: str, headers: list[Path], flags: tuple[str, ...], tc: Toolchain) -> str:
    h = hashlib.sha256()
    h.update(b"pypto-native-v1\0")
    h.update(source.encode())
    for p in sorted(headers):
        h.update(str(p.name).encode())
        h.update(p.read_bytes())
    h.update("\0".join(flags).encode())
    h.update(tc.version.encode())
    h.update(",".join(sorted(tc.features)).encode())
    return h.hexdigest()


def file_sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    try:
        atomic_write(path, data)
    except FileWriteError as e:
        raise NativeBuildError(str(e)) from None


class _suppress:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return True


def _header_files(include_dirs: tuple[Path, ...]) -> list[Path]:
    out: list[Path] = []
    for d in include_dirs:
        for p in sorted(Path(d).rglob("*")):
            if p.suffix in (".h", ".hpp", ".inc") and p.is_file():
                out.append(p)
    return out


_LOCK = threading.Lock()  # guards _ENTRY_LOCKS
_ENTRY_LOCKS: dict[str, threading.Lock] = {}


def _entry_lock(key: str) -> threading.Lock:
    with _LOCK:
        return _ENTRY_LOCKS.setdefault(key, threading.Lock())


def _after_fork_in_child() -> None:
    global _LOCK, _ENTRY_LOCKS
    _LOCK = threading.Lock()  # a thread that held it (compiling) does not exist in the child
    _ENTRY_LOCKS = {}


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


@dataclass
class BuildResult:
    path: Path
    cached: bool
    seconds: float
    key: str


def build_shared(source: str, name: str, *, include_dirs: tuple[Path | str, ...] = (),
                 extra_flags: tuple[str, ...] = (), keep_source_in: Path | None = None) -> BuildResult:
    """Compile `source` into a shared object (or reuse the cached one) and return its path."""
    tc = toolchain()
    incs = tuple(Path(d) for d in include_dirs)
    flags = (*tc.base_flags, *extra_flags, *(f"-I{d}" for d in incs))
    key = _hash_inputs(source, _header_files(incs), flags, tc)
    file_name = f"{safe_stem(name, 64)}-{key[:20]}.so"
    if keep_source_in is not None:
        make_dirs(keep_source_in)
        _atomic_write_bytes(keep_source_in / f"{safe_stem(name)}.cpp", source.encode())
    t0 = time.perf_counter()
    with _entry_lock(file_name):
        hit = _cached(file_name)
        if hit is not None:
            return BuildResult(hit, True, time.perf_counter() - t0, key)
        so = cache_dir() / file_name
        side = so.with_suffix(".so.sha256")
        _compile(tc, source, so, flags, name)
        _atomic_write_bytes(side, file_sha(so).encode())
    return BuildResult(so, False, time.perf_counter() - t0, key)


def _compile(tc: Toolchain, source: str, so: Path, flags: tuple[str, ...], name: str) -> None:
    with tempfile.TemporaryDirectory(prefix="pypto-build-") as tmp:
        src = Path(tmp) / f"{safe_stem(name)}.cpp"
        try:
            src.write_text(source)
        except OSError as e:
            raise NativeBuildError(describe(e, src)) from None
        obj = Path(tmp) / f"{safe_stem(name)}.so"
        cmd = [tc.cxx, *flags, str(src), "-o", str(obj)]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        except FileNotFoundError as e:
            raise CompilerNotFoundError(f"C++ compiler {tc.cxx!r} disappeared: {e}. {_INSTALL_HINT}") from e
        except subprocess.TimeoutExpired as e:
            raise NativeBuildError(f"compiling {name} took longer than 600 s") from e
        if r.returncode != 0:
            keep = cache_dir() / "failed" / f"{safe_stem(name)}.cpp"
            with _suppress():
                make_dirs(keep.parent)
                _atomic_write_bytes(keep, source.encode())
            raise NativeBuildError(f"C++ compilation of {name} failed (source kept at {keep}):\n"
                                   f"$ {' '.join(cmd[:1] + ['...', str(src.name)])}\n{_trim(r.stderr)}")
        _atomic_write_bytes(so, obj.read_bytes())


def _trim(text: str, limit: int = 6000) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n... ({len(text) - limit} more characters)"


def load_library(path: Path) -> ctypes.CDLL:
    """dlopen a built library; a corrupt cached file is removed so the next build replaces it."""
    try:
        return ctypes.CDLL(str(path), mode=getattr(os, "RTLD_LOCAL", 0) | getattr(os, "RTLD_NOW", 2))
    except OSError as e:
        with _suppress():
            path.unlink()
            path.with_suffix(".so.sha256").unlink()
        raise NativeBuildError(f"cannot load {path}: {e} (the cache entry was removed; build again)") from e


def build_and_load(source: str, name: str, **kw) -> tuple[ctypes.CDLL, BuildResult]:
    res = build_shared(source, name, **kw)
    try:
        return load_library(res.path), res
    except NativeBuildError:
        res = build_shared(source, name, **kw)
        return load_library(res.path), res


__all__ = ["BuildResult", "CompilerNotFoundError", "NativeBuildError", "Toolchain", "build_and_load", "file_sha",
           "build_shared", "cache_dir", "load_library", "toolchain", "toolchain_fingerprint"]
