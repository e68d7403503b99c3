"""The output directory of a compile: it only ever replaces files a compile recorded as its own,
refuses directories it does not own, keeps names inside it, and names the path when a write
fails."""

from __future__ import annotations

import errno
import json
import os

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.compile.output import MANIFEST, OutputDirError
from pypto.ir.diagnostics import CompileError
from pypto.ir.function import Program
from pypto.runtime import RunConfig

SRC = '''
import pypto.language as pl

@pl.program
class PROG:
    @pl.function
    def FUNC(self, a: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        return pl.add(a, 1.0)
'''


def _add_one(tmp_path):
    @pl.function
    def add_one(a: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        return pl.add(a, 1.0)

    return add_one


def test_empty_string_output_dir_is_the_current_directory_and_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my_code.py").write_text("print('mine')\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.npy").write_bytes(b"123")
    for _ in range(2):  # the first compile refused it; a second must not find it "claimed"
        with pytest.raises(OutputDirError, match="is not empty and no compile wrote it"):
            ir.compile(_add_one(tmp_path), output_dir="")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "my_code.py"]
    assert (tmp_path / "my_code.py").read_text() == "print('mine')\n"


def test_an_output_dir_that_is_a_file_is_refused(tmp_path):
    f = tmp_path / "f"
    f.write_text("x")
    with pytest.raises(OutputDirError, match="is a file"):
        ir.compile(_add_one(tmp_path), output_dir=f)
    assert f.read_text() == "x"


@pytest.mark.native
def test_the_manifest_lists_exactly_the_compiles_files(tmp_path):
    out = tmp_path / "o"
    ir.compile(_add_one(tmp_path), output_dir=out, dump_passes=True)
    files = json.loads((out / MANIFEST).read_text())["files"]
    on_disk = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and not p.name.startswith("."))
    assert files == on_disk and any(f.startswith("passes_dump/") for f in files)
    assert not [p for p in out.iterdir() if p.name.startswith(".pypto-stage-")]  # (staging removed)


@pytest.mark.native
def test_a_tampered_manifest_cannot_delete_outside_the_directory(tmp_path):
    out = tmp_path / "o"
    ir.compile(_add_one(tmp_path), output_dir=out)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    data = json.loads((out / MANIFEST).read_text())
    data["files"] += ["../victim.txt", str(victim)]
    (out / MANIFEST).write_text(json.dumps(data))
    ir.compile(_add_one(tmp_path), output_dir=out)
    assert victim.read_text() == "keep me"


@pytest.mark.native
def test_a_users_file_where_a_compile_would_write_is_refused(tmp_path):
    out = tmp_path / "o"
    c = ir.compile(_add_one(tmp_path), output_dir=out)
    (out / "lowered.py").unlink()
    (out / "lowered.py").write_text("my own notes")  # the user's now: not in ...
    data = json.loads((out / MANIFEST).read_text())
    data["files"].remove("lowered.py")  # ... the manifest
    (out / MANIFEST).write_text(json.dumps(data))
    with pytest.raises(OutputDirError, match="lowered.py exists and was not written by a compile"):
        ir.compile(_add_one(tmp_path), output_dir=out)
    assert (out / "lowered.py").read_text() == "my own notes"
    x = np.zeros((16, 16), np.float32)
    np.testing.assert_array_equal(c(x), x + 1)


@pytest.mark.native
def test_a_trace_written_by_a_run_is_replaced_by_the_next_compile(tmp_path):
    out = tmp_path / "o"
    c = ir.compile(_add_one(tmp_path), output_dir=out)
    c(np.zeros((16, 16), np.float32), config=RunConfig(enable_trace=True))
    assert (out / "trace.json").exists()
    assert "trace.json" in json.loads((out / MANIFEST).read_text())["files"]
    ir.compile(_add_one(tmp_path), output_dir=out)
    assert not (out / "trace.json").exists()


def test_program_names_that_are_not_identifiers_are_refused(tmp_path):
    """A name built through the IR API becomes a file name and a symbol: "../../X" must not write
    outside the output directory."""
    prog = pl.parse(SRC.replace("PROG", "Prog").replace("FUNC", "main"))
    for bad in ("../../X", "a/b", "x y"):
        with pytest.raises(CompileError, match="program name .* is not an identifier"):
            ir.compile(Program(bad, prog.functions, span=prog.span), output_dir=tmp_path / "o")
    renamed = Program("Prog", (_renamed(prog.functions[0], "../evil"),), span=prog.span)
    with pytest.raises(CompileError, match="function name '../evil' is not an identifier"):
        ir.compile(renamed, output_dir=tmp_path / "o")
    assert not (tmp_path / "X").exists() and not (tmp_path.parent / "X").exists()


def _renamed(fn, name):
    import dataclasses

    return dataclasses.replace(fn, name=name)


@pytest.mark.native
@pytest.mark.parametrize("name", ["σ_kernel", "k" * 300, "名前"])
@pytest.mark.parametrize("platform", ["cpu", "interp"])
def test_unicode_and_long_names_compile_and_run(tmp_path, name, platform):
    prog = pl.parse(SRC.replace("PROG", "P" + name[:200]).replace("FUNC", name))
    c = ir.compile(prog, output_dir=tmp_path / "o")
    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    np.testing.assert_array_equal(c(x, config=RunConfig(platform=platform)), x + 1)
    assert all(len(p.name.encode()) < 200 for p in (tmp_path / "o").rglob("*"))


@pytest.mark.native
def test_default_output_dirs_go_under_config_output_root(tmp_path, monkeypatch):
    from pypto.config import config

    monkeypatch.setattr(config, "output_root", tmp_path / "root")
    c = ir.compile(_add_one(tmp_path))
    assert c.output_dir.parent == tmp_path / "root" and c.output_dir.name.startswith("add_one_")


def test_a_full_disk_names_the_path(tmp_path, monkeypatch):
    """A write that fails (ENOSPC) says which file and what to do, not a bare OSError."""
    import pypto.support.files as files

    real = os.fdopen

    class Full:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *a):
            self.f.close()

        def write(self, data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(files.os, "fdopen", lambda fd, mode="r": Full(real(fd, mode)))
    with pytest.raises(OutputDirError) as e:
        ir.compile(_add_one(tmp_path), output_dir=tmp_path / "o")
    msg = str(e.value)
    assert "No space left on device" in msg and str(tmp_path / "o") in msg and "free some disk space" in msg
    monkeypatch.undo()
    leftovers = [p for p in (tmp_path / "o").rglob("*") if p.name.endswith(".tmp")]
    assert not leftovers
