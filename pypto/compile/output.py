"""The output directory of `ir.compile`: claimed, staged, published — never anyone else's files.

A compile works in a private staging directory inside the output directory and, once everything
is written (and built), publishes it: under a lock, the files the previous compile recorded in
the manifest are removed, the staged files moved in, and the manifest rewritten. So

- a compile only ever replaces files that an earlier compile recorded as its own
  (`.pypto-output.json`); a non-empty directory with no manifest is refused untouched;
- two processes compiling into one directory never read each other's half-written files (each
  builds and caches from its own staging directory); the directory ends up holding one of them,
  whole;
- files a run adds later (its trace) are recorded too, so the next compile replaces them.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

from pypto.errors import Error
from pypto.support.files import FileWriteError, atomic_write, describe, make_dirs, private_dir

MANIFEST = ".pypto-output.json"
_LEGACY_MARKER = ".pypto-output"  # written by earlier versions (no file list)
_LOCK = ".pypto-output.lock"
_STAGE = ".pypto-stage-"
# what earlier versions wrote, for directories that carry only the legacy marker
_LEGACY_OUTPUTS = {"kernels": ("*.pto", "*.cpp"), "orchestration": ("*.pto",), "passes_dump": ("[0-9][0-9]_*.py",),
                   "report": ("*.json",), "native": ("*.cpp",)}
_LEGACY_FILES = ("signature.json", "lowered.py", "compile_report.json", "trace.json")


class OutputDirError(Error, ValueError):
    """An output directory that a compile may not use (or could not write)."""


def _ours(name: str) -> bool:
    return name in (MANIFEST, _LEGACY_MARKER, _LOCK) or name.startswith(_STAGE)


@contextlib.contextmanager
def _locked(out: Path) -> Iterator[None]:
    """An exclusive lock on the directory between processes (flock where the OS has it)."""
    try:
        import fcntl
    except ImportError:  # (not POSIX: the staging still keeps each compile's own files apart)
        yield
        return
    try:
        fd = os.open(out / _LOCK, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as e:
        raise OutputDirError(describe(e, out / _LOCK, "create the lock file")) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # (closing releases the lock)


def _read_manifest(out: Path) -> list[str] | None:
    """The files recorded as a compile's own, or None when the directory has no manifest."""
    path = out / MANIFEST
    if path.exists():
        try:
            data = json.loads(path.read_text())
            files = data["files"]
            if isinstance(files, list) and all(isinstance(f, str) for f in files):
                return files
        except (OSError, ValueError, KeyError, TypeError):
            pass
        return []  # a damaged manifest: the directory is still ours, but nothing is known to be
    if (out / _LEGACY_MARKER).exists():
        found = [f for f in _LEGACY_FILES if (out / f).is_file()]
        for d, patterns in _LEGACY_OUTPUTS.items():
            for pat in patterns:
                found += [str(p.relative_to(out)) for p in (out / d).glob(pat) if p.is_file()]
        return found
    return None


def _write_manifest(out: Path, files: list[str], program: str) -> None:
    data = {"written_by": "pypto ir.compile: these files are replaced by the next compile into this directory",
            "program": program, "files": sorted(files)}
    atomic_write(out / MANIFEST, json.dumps(data, indent=1) + "\n")
    if (out / _LEGACY_MARKER).exists():  # (its files are in the manifest now)
        (out / _LEGACY_MARKER).unlink()


def _inside(out: Path, rel: str) -> Path | None:
    """`out / rel` when `rel` is a plain relative path that stays inside `out` (a tampered manifest
    cannot make a compile delete anything else)."""
    p = Path(rel)
    if p.is_absolute() or ".." in p.parts or not p.parts:
        return None
    return out / p


def claim(out: Path, program: str) -> None:
    """Make sure `out` exists and is ours; refuse (changing nothing) a non-empty directory that no
    compile recorded as its own."""
    if out.exists() and not out.is_dir():
        raise OutputDirError(f"output_dir {str(out)!r} is a file, not a directory")
    try:
        make_dirs(out)
    except FileWriteError as e:
        raise OutputDirError(f"output_dir {str(out)!r}: {e}") from None
    _refuse_foreign(out)  # (before the lock file: a refused directory is left exactly as it was)
    with _locked(out):
        _refuse_foreign(out)
        if _read_manifest(out) is None:
            _write_manifest(out, [], program)


def _refuse_foreign(out: Path) -> None:
    if _read_manifest(out) is not None:
        return
    foreign = sorted(p.name for p in out.iterdir() if not _ours(p.name))
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise OutputDirError(
            f"output_dir {str(out)!r} is not empty and no compile wrote it (it holds {shown}); "
            f"ir.compile never replaces files it did not write: pass a new or empty directory "
            f"(nothing was changed)")


@contextlib.contextmanager
def staging(out: Path, program: str) -> Iterator[Path]:
    """Claim `out` and give the body a private staging directory in it; publish the staged files
    when the body succeeds, and remove the staging directory in any case."""
    claim(out, program)
    staged = stage(out)
    try:
        yield staged
        publish(out, staged, program)
    finally:
        discard(staged)


def stage(out: Path) -> Path:
    """A private directory inside `out` for one compile to write into."""
    try:
        return private_dir(out, f"{_STAGE}{os.getpid()}-")
    except FileWriteError as e:
        raise OutputDirError(str(e)) from None


def discard(staged: Path) -> None:
    shutil.rmtree(staged, ignore_errors=True)


def publish(out: Path, staged: Path, program: str) -> None:
    """Replace the previous compile's files in `out` by the staged ones (see the module docstring)."""
    new = sorted(str(p.relative_to(staged)) for p in staged.rglob("*") if p.is_file())
    with _locked(out):
        old = _read_manifest(out) or []
        old_set = set(old)
        for rel in new:  # a file of the user's where ours would go: refuse before changing anything
            dest = out / rel
            if rel not in old_set and (dest.exists() or dest.is_symlink()):
                raise OutputDirError(f"{dest} exists and was not written by a compile; ir.compile does not "
                                     f"replace it: move it away or choose another output_dir")
        try:
            emptied: set[Path] = set()
            for rel in old:
                p = _inside(out, rel)
                if p is not None and (p.is_file() or p.is_symlink()):
                    p.unlink()
                    emptied.update(q for q in p.parents if q != out and out in q.parents)
            if not old and not any((out / top.name).exists() for top in staged.iterdir()):
                for top in list(staged.iterdir()):  # a fresh directory: move whole subtrees (fewer dir ops)
                    os.replace(top, out / top.name)
            else:
                for rel in new:
                    dest = out / rel
                    make_dirs(dest.parent)
                    os.replace(staged / rel, dest)
            for d in sorted(emptied, key=lambda q: len(q.parts), reverse=True):
                if d.is_dir() and not any(d.iterdir()):
                    d.rmdir()
            _write_manifest(out, new, program)
        except FileWriteError as e:
            raise OutputDirError(f"output_dir {str(out)!r}: {e}") from None
        except OSError as e:
            raise OutputDirError(f"output_dir {str(out)!r}: {describe(e, getattr(e, 'filename', None) or out)}") \
                from None
        _sweep_stale_stages(out)


def record(out: Path, path: Path) -> None:
    """Note a file a run wrote into `out` (a trace) as the compile's own."""
    try:
        rel = str(Path(path).resolve().relative_to(out.resolve()))
    except ValueError:
        return  # written elsewhere, where the user asked: not ours to replace later
    with _locked(out):
        files = _read_manifest(out)
        if files is None or rel in files:
            return
        try:
            data = json.loads((out / MANIFEST).read_text())
        except (OSError, ValueError):
            data = {}
        _write_manifest(out, [*files, rel], str(data.get("program", "")))


def _sweep_stale_stages(out: Path, min_age_s: float = 3600.0) -> None:
    """Remove staging directories left by compiles that died (their process is gone)."""
    now = time.time()
    for d in out.glob(f"{_STAGE}*"):
        try:
            pid = int(d.name[len(_STAGE):].split("-", 1)[0])
            if now - d.stat().st_mtime < min_age_s:
                continue
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(d, ignore_errors=True)
        except (ValueError, OSError):
            continue


__all__ = ["MANIFEST", "OutputDirError", "claim", "discard", "publish", "record", "stage", "staging"]
