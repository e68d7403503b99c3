"""The compile cache: a second compile of the same program is served from it; a damaged entry
(any file of it) is a miss that the next compile rebuilds and rewrites."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.config import config


@pl.function
def twice_plus_one(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
    return pl.add(pl.mul(x, 2.0), 1.0)


@pytest.fixture()
def fresh_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "cache_dir", tmp_path / "cache")
    monkeypatch.setattr(config, "compile_cache", True)
    return tmp_path / "cache"


def _entries(cache: Path) -> list[Path]:
    return [p.parent for p in (cache / "compiled").rglob("native.json")]


def _run(c) -> None:
    x = np.arange(64, dtype=np.float32)
    np.testing.assert_array_equal(c(x), x * 2 + 1)


@pytest.mark.native
def test_second_compile_is_a_hit(fresh_cache, tmp_path):
    a = ir.compile(twice_plus_one, output_dir=tmp_path / "a")
    assert not a.timings.get("cached")
    b = ir.compile(twice_plus_one, output_dir=tmp_path / "b")
    assert b.timings.get("cached")
    assert (tmp_path / "b" / "signature.json").exists() and list((tmp_path / "b" / "kernels").glob("*.pto"))
    _run(a)
    _run(b)


@pytest.mark.native
@pytest.mark.parametrize("victim", ["signature.json", "lowered.py", "kernels", "native.json"])
def test_damaged_entry_is_rebuilt(fresh_cache, tmp_path, victim):
    ir.compile(twice_plus_one, output_dir=tmp_path / "a")
    (entry,) = _entries(fresh_cache)
    target = next((entry / "kernels").glob("*.pto")) if victim == "kernels" else entry / victim
    target.write_text("garbage {" if victim != "signature.json" else json.dumps({}))
    c = ir.compile(twice_plus_one, output_dir=tmp_path / "b")
    assert not c.timings.get("cached")  # detected: compiled again
    _run(c)
    d = ir.compile(twice_plus_one, output_dir=tmp_path / "c")
    assert d.timings.get("cached")  # and the entry was rewritten
    _run(d)
    assert ir.python_print(d.program)  # lowered.py reads back


def test_bad_output_dir_and_backend_type(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ValueError, match="cannot create the directory"):
        ir.compile(twice_plus_one, output_dir=f / "sub")
    with pytest.raises(TypeError, match="backend_type must be"):
        ir.compile(twice_plus_one, output_dir=tmp_path / "o", backend_type=3)


@pytest.mark.native
def test_the_key_covers_the_toolchain(fresh_cache, tmp_path, monkeypatch):
    """A cache shared by a machine without AVX-512 (or with another compiler) must not serve it an
    entry built here: the toolchain and CPU features are part of the key."""
    import pypto.support.native_build as nb

    a = ir.compile(twice_plus_one, output_dir=tmp_path / "a")
    assert not a.timings.get("cached")
    here = nb.toolchain()
    elsewhere = nb.Toolchain(here.cxx, here.version, "avx2", frozenset(f for f in here.features if "512" not in f),
                             here.march_native)
    with monkeypatch.context() as m:  # (undoing only this patch: fresh_cache's stay)
        m.setattr(nb, "toolchain", lambda: elsewhere)
        b = ir.compile(twice_plus_one, output_dir=tmp_path / "b")
        assert not b.timings.get("cached") or here.features == elsewhere.features
    c = ir.compile(twice_plus_one, output_dir=tmp_path / "c")
    assert c.timings.get("cached")
    _run(c)


SHARED_USER = '''
import numpy as np, sys
import pypto.language as pl
from pypto import ir

@pl.function
def twice_plus_one(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
    return pl.add(pl.mul(x, 2.0), 1.0)

@pl.function
def other(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
    return pl.sub(x, 5.0)

out = sys.argv[1]
x = np.arange(64, dtype=np.float32)
a = ir.compile(twice_plus_one, output_dir=out + "/a")
assert a.timings.get("cached"), "the other user's entry was not used"
np.testing.assert_array_equal(a(x), x * 2 + 1)
b = ir.compile(other, output_dir=out + "/b")  # new: built in a private cache, the shared one is read-only
np.testing.assert_array_equal(b(x), x - 5)
print("ok")
'''


def _usable_by_others(path: Path) -> bool:
    """Can a user other than the owner run this file (every directory above it searchable)?"""
    real = Path(os.path.realpath(path))
    return all(p.stat().st_mode & 0o001 for p in real.parents) and bool(real.stat().st_mode & 0o005)


@pytest.mark.native
def test_cache_entries_are_readable_by_other_users(fresh_cache, tmp_path):
    """Private files (0600 / 0700, what mkstemp and mkdtemp make) gave a second user of a shared
    cache a bare PermissionError; entries follow the umask like any other file."""
    from pypto.support.files import umask

    ir.compile(twice_plus_one, output_dir=tmp_path / "a")
    mask = umask()
    paths = [p for p in fresh_cache.rglob("*")]
    assert paths
    for p in paths:
        mode = p.stat().st_mode & 0o777
        want = (0o777 if p.is_dir() else 0o666) & ~mask
        if p.suffix == ".so":
            want |= mode & 0o111  # (the linker makes libraries executable)
        assert mode == want, f"{p}: {oct(mode)} != {oct(want)}"


@pytest.mark.native
def test_a_cache_this_user_cannot_write_is_read_and_new_builds_go_elsewhere(fresh_cache, tmp_path, monkeypatch):
    """What a second user sees: the shared cache is readable but not writable."""
    import pypto.compile.cache as dc
    import pypto.support.files as files
    import pypto.support.native_build as nb

    ir.compile(twice_plus_one, output_dir=tmp_path / "a")  # the first user fills the cache
    private = tmp_path / "private"
    monkeypatch.setattr(nb, "_private_cache_dir", lambda: private / "native")
    real_access, real_write = os.access, files.atomic_write

    def access(path, mode, **kw):
        inside = str(path).startswith(str(fresh_cache))
        return False if inside and mode & os.W_OK else real_access(path, mode, **kw)

    def write(path, data):
        if str(path).startswith(str(fresh_cache)):
            raise files.FileWriteError(13, f"cannot write {path}: Permission denied")
        return real_write(path, data)

    monkeypatch.setattr(files.os, "access", access)
    monkeypatch.setattr(dc, "atomic_write", write)
    monkeypatch.setattr(nb, "atomic_write", write)
    real_dirs = dc.make_dirs

    def dirs(path):
        if str(path).startswith(str(fresh_cache)):
            raise files.FileWriteError(13, f"cannot create the directory {path}: Permission denied")
        return real_dirs(path)

    monkeypatch.setattr(dc, "make_dirs", dirs)
    b = ir.compile(twice_plus_one, output_dir=tmp_path / "b")
    assert b.timings.get("cached")  # read the other user's entry
    _run(b)

    @pl.function
    def other(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
        return pl.sub(x, 5.0)

    c = ir.compile(other, output_dir=tmp_path / "c")  # new: built privately, not stored
    x = np.arange(64, dtype=np.float32)
    np.testing.assert_array_equal(c(x), x - 5)
    assert list((private / "native").glob("pto_other-*.so"))


@pytest.mark.native
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0 or not _usable_by_others(Path(sys.executable)),
                    reason="needs root, and a Python that another user can run, to run as a second user")
def test_a_shared_cache_works_for_a_second_user(tmp_path):
    """One user fills the cache; another (who cannot write there) reads it and builds elsewhere."""
    import stat
    import subprocess
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="pypto-shared-"))  # (pytest's tmp_path is private to root)
    try:
        os.chmod(base, 0o755)
        cache = base / "cache"
        env_root = {**os.environ, "PYPTO_CACHE_DIR": str(cache)}
        first = base / "first_user.py"
        first.write_text(SHARED_USER.split("out = sys.argv[1]")[0] + "ir.compile(twice_plus_one, output_dir=sys.argv[1])\n")
        subprocess.run([sys.executable, str(first), str(base / "root_out")], env=env_root, check=True,
                       cwd=Path(__file__).resolve().parents[1], capture_output=True, timeout=300)
        work = base / "work"
        work.mkdir()
        os.chown(work, 65534, 65534)
        script = base / "user.py"
        script.write_text(SHARED_USER)
        os.chmod(script, 0o644)
        env = {"PATH": os.environ.get("PATH", ""), "PYPTO_CACHE_DIR": str(cache), "HOME": str(work),
               "PYTHONPATH": str(Path(__file__).resolve().parents[1]), "TMPDIR": str(work)}
        r = subprocess.run([sys.executable, str(script), str(work)], env=env, user=65534, group=65534,
                           cwd=work, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr
        assert not (cache.stat().st_mode & stat.S_IWOTH)  # (it really could not write there)
    finally:
        import shutil

        shutil.rmtree(base, ignore_errors=True)


CROSS_PROCESS = '''
import sys
import numpy as np
import pypto.language as pl
from pypto import ir
from pypto.config import config

config.cache_dir = sys.argv[1]
prog = pl.parse("""
import pypto.language as pl

@pl.function
def twice_plus_one(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
    return pl.add(pl.mul(x, 2.0), 1.0)
""")
c = ir.compile(prog, output_dir=sys.argv[2])
x = np.arange(64, dtype=np.float32)
np.testing.assert_array_equal(c(x), x * 2 + 1)
print("cached" if c.timings.get("cached") else "compiled")
'''


def _python(code: str, *args: str, seed: str) -> str:
    import subprocess

    root = Path(__file__).resolve().parents[1]
    r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PYTHONPATH": str(root), "PYTHONHASHSEED": seed})
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_the_target_fingerprint_does_not_depend_on_the_hash_seed():
    """(repr of the target's frozenset of data paths changes with PYTHONHASHSEED; the cache key must not)"""
    code = "from pypto.target import cpu\nprint(cpu().fingerprint())"
    assert _python(code, seed="1") == _python(code, seed="2")


@pytest.mark.native
def test_a_second_process_hits_the_cache(tmp_path):
    cache = str(tmp_path / "cache")
    assert _python(CROSS_PROCESS, cache, str(tmp_path / "a"), seed="1") == "compiled"
    assert _python(CROSS_PROCESS, cache, str(tmp_path / "b"), seed="2") == "cached"
