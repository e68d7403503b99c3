"""One error hierarchy: every exception class PyPTO defines (but private control-flow ones) is a
`pypto.Error`, no module raises a bare built-in error on purpose, and located errors of `pl`
source and PTO text share one rendering."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import pypto
import pypto.language as pl
from pypto.errors import Error, render_located

ROOT = Path(pypto.__file__).parent
# what `raise <builtin>(` may still raise: abstract methods, and invariants that are bugs if broken
# (and AttributeError, which a module's or namespace's __getattr__ must raise for hasattr to work)
ALLOWED_BUILTINS = {"NotImplementedError", "AssertionError", "AttributeError"}


def _modules():
    for info in pkgutil.walk_packages([str(ROOT)], "pypto."):
        yield importlib.import_module(info.name)


def test_every_public_exception_class_is_a_pypto_error():
    stray = []
    for mod in _modules():
        for name, obj in vars(mod).items():
            if (inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == mod.__name__
                    and not name.startswith("_") and not issubclass(obj, Error)):
                stray.append(f"{mod.__name__}.{name}")
    assert not stray, f"exception classes outside the pypto.Error hierarchy: {stray}"


def test_no_bare_builtin_errors_are_raised():
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and isinstance(node.exc.func, ast.Name):
                name = node.exc.func.id
                if name in dir(__builtins__) if isinstance(__builtins__, dict) is False else name in __builtins__:
                    if name.endswith(("Error", "Exception")) and name not in ALLOWED_BUILTINS:
                        found.append(f"{path.relative_to(ROOT.parent)}:{node.lineno} raises {name}")
    assert not found, "raise a pypto error (pypto/errors.py) instead:\n" + "\n".join(found)


@pytest.mark.native
def test_one_catch_for_parse_compile_and_call_errors(tmp_path):
    from pypto import ir

    with pytest.raises(Error):
        pl.parse("import pypto.language as pl\n@pl.function\ndef f(x: pl.Tensor[[4], pl.FP32]):\n    return y\n")

    @pl.function
    def f(x: pl.Tensor[[16], pl.FP32]) -> pl.Tensor[[16], pl.FP32]:
        return pl.add(x, 1.0)

    c = ir.compile(f, output_dir=tmp_path / "o")
    import numpy as np

    with pytest.raises(Error, match="expects dtype FP32"):
        c(np.zeros(16, np.int32))
    with pytest.raises(Error, match="not empty"):
        (tmp_path / "full").mkdir()
        (tmp_path / "full" / "mine.txt").write_text("x")
        ir.compile(f, output_dir=tmp_path / "full")


def test_pl_and_pto_errors_render_alike():
    from pypto.pto.errors import PtoParseError

    pto = str(PtoParseError("use of undefined value %x", "k.pto", 3, 18, "    pto.tadd ins(%x, %y) outs(%z)",
                            hint="define %x first"))
    assert pto == render_located("use of undefined value %x", "k.pto:3:18",
                                 [(3, "    pto.tadd ins(%x, %y) outs(%z)")], (3, 17, 1), "define %x first")
    assert pto.splitlines()[4].index("^") == pto.splitlines()[3].index("%x")
    src = "import pypto.language as pl\n@pl.function\ndef f(x: pl.Tensor[[4], pl.FP32]):\n    return yy\n"
    with pytest.raises(pl.ParserError) as e:
        pl.parse(src, filename="prog.py")
    text = str(e.value)
    assert re.search(r"--> prog\.py:4:\d+", text)
    lines = text.splitlines()
    caret = next(i for i, line in enumerate(lines) if "^" in line)
    assert lines[caret].index("^") == lines[caret - 1].index("yy")


def test_long_lines_are_cut_around_the_caret():
    line = "x = " + "a + " * 100 + "bad + " + "b + " * 100
    at = line.index("bad")
    text = render_located("here", "f.py:1:1", [(1, line)], (1, at, 3))
    shown, caret = text.splitlines()[3:5]
    assert len(shown) < 200 and caret.index("^^^") == shown.index("bad")
