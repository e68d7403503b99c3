"""One test per diagnostic kind: class, location (file:line:col), message, caret, hint."""

import inspect
import textwrap

import pytest

import pypto.language as pl
from pypto import ir

HERE = __file__


def _line_of(fn, needle: str) -> int:
    lines, start = inspect.getsourcelines(fn)
    for i, ln in enumerate(lines):
        if needle in ln:
            return start + i
    raise AssertionError(needle)


def _check(err: pl.ParserError, line: int, needle: str, col_text: str | None = None):
    text = str(err)
    assert err.span is not None and err.span.filename == HERE
    assert err.lineno == line, (err.lineno, line, text)
    src_line = open(HERE).read().splitlines()[line - 1]
    assert needle in src_line
    if col_text is not None:
        assert err.col == src_line.index(col_text) + 1, (err.col, text)
    assert text.startswith("Error: ")
    assert f"{HERE}:{line}:{err.col}" in text
    assert src_line.strip() in text  # the source line is quoted
    assert "^" in text  # with a caret under the fault
    return text


def test_syntax_error_python_range():
    def body():
        @pl.function
        def f(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            for i in range(4):  # MARK-range
                x = pl.add(x, x)
            return x

    with pytest.raises(pl.ParserSyntaxError) as ei:
        body()
    text = _check(ei.value, _line_of(body, "MARK-range"), "MARK-range", "range(4)")
    assert "pl.range" in text and "help:" in text


def test_type_error_tensor_plus_tile():
    def body():
        @pl.function(type=pl.FunctionType.InCore)
        def f(x: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
            t = pl.load(x, [0, 0], [64, 64])
            y = pl.block.add(t, x)  # MARK-mix
            return x

    with pytest.raises(pl.ParserTypeError) as ei:
        body()
    text = _check(ei.value, _line_of(body, "MARK-mix"), "MARK-mix", "pl.block.add")
    assert "must be a Tile" in text


def test_type_error_missing_annotation():
    def body():
        @pl.function
        def f(x) -> pl.Tensor[[64], pl.FP32]:  # MARK-ann
            return x

    with pytest.raises(pl.ParserTypeError) as ei:
        body()
    text = _check(ei.value, _line_of(body, "MARK-ann"), "MARK-ann", "x)")
    assert "needs a type annotation" in text


def test_type_error_shape_mismatch_in_annotation():
    def body():
        @pl.function
        def f(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            y: pl.Tensor[[32], pl.FP32] = pl.add(x, x)  # MARK-shape
            return x

    with pytest.raises(pl.ParserTypeError) as ei:
        body()
    text = _check(ei.value, _line_of(body, "MARK-shape"), "MARK-shape", "y:")
    assert "dimension 0 differs" in text


def test_undefined_variable():
    def body():
        @pl.function
        def f(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            total = pl.add(x, x)
            z = pl.add(x, totl)  # noqa: F821  MARK-undef
            return z

    with pytest.raises(pl.UndefinedVariableError) as ei:
        body()
    text = _check(ei.value, _line_of(body, "MARK-undef"), "MARK-undef", "totl)")
    assert "undefined variable 'totl'" in text
    assert "did you mean 'total'" in text


def test_ssa_violation():
    def body():
        @pl.function(strict_ssa=True)
        def f(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            r = pl.add(x, x)  # MARK-first
            r = pl.add(r, x)  # MARK-second
            return r

    with pytest.raises(pl.SSAViolationError) as ei:
        body()
    err = ei.value
    text = _check(err, _line_of(body, "MARK-second"), "MARK-second", "r = pl.add(r")
    assert err.previous_span.begin_line == _line_of(body, "MARK-first")
    assert "Previous definition was here" in text


def test_unsupported_feature():
    def body():
        @pl.function
        def f(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            try:  # MARK-try
                x = pl.add(x, x)
            except ValueError:
                pass
            return x

    with pytest.raises(pl.UnsupportedFeatureError) as ei:
        body()
    text = _check(ei.value, _line_of(body, "MARK-try"), "MARK-try", "try:")
    assert "Only assignments, for loops" in text


def test_invalid_operation_yield_outside_loop():
    def body():
        @pl.function
        def f(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            y = pl.yield_(x)  # MARK-yield
            return x

    with pytest.raises(pl.InvalidOperationError) as ei:
        body()
    text = _check(ei.value, _line_of(body, "MARK-yield"), "MARK-yield", "pl.yield_")
    assert "outside a loop" in text


def test_invalid_operation_cond_not_first():
    def body():
        @pl.function
        def f(n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
            for (x,) in pl.while_(init_values=(0,)):
                y = x + 1
                pl.cond(x < n)  # MARK-cond
                out = pl.yield_(y)
            return out

    with pytest.raises(pl.InvalidOperationError) as ei:
        body()
    assert "first statement" in str(ei.value)


def test_errors_are_parser_errors():
    for cls in (pl.ParserSyntaxError, pl.ParserTypeError, pl.UndefinedVariableError, pl.SSAViolationError,
                pl.UnsupportedFeatureError, pl.InvalidOperationError):
        assert issubclass(cls, pl.ParserError)


BAD_PROGRAMS = [
    "def f(x): return x",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    return y\n",
    "@pl.function\ndef f(x: pl.Tensor[[64]]):\n    return x\n",
    "@pl.function\ndef f(x: pl.Tensor[64, pl.FP32]):\n    return x\n",
    "@pl.function\ndef f(x: pl.Tensor[[0], pl.FP32]):\n    return x\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    x.foo = 1\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    import os\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    y = x[1:2:3]\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    y = pl.add(x)\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    y = pl.add(x, x, x)\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    y = pl.add(x, foo=1)\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    y = pl.cast(x, 3)\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    y = pl.reshape(x, [65])\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    y = pl.matmul(x, x)\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    for i in pl.range(1, 2, 3, 4):\n        pass\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    for i in pl.range(0, 4, 0):\n        pass\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    for i, (a,) in pl.range(4):\n        pass\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    for i, (a, b) in pl.range(4, init_values=(x,)):\n        pass\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    for i, (a,) in pl.range(4, init_values=(x,)):\n        b = a\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    for i in pl.unroll(x):\n        pass\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    if x:\n        pass\n",
    "@pl.function\ndef f(n: pl.Scalar[pl.INDEX]):\n    if n > 0:\n        y = pl.yield_(n)\n",
    "@pl.function\ndef f(n: pl.Scalar[pl.INDEX]):\n    while True:\n        pass\n",
    "@pl.function\ndef f(n: pl.Scalar[pl.INDEX]):\n    with open('x'):\n        pass\n",
    "@pl.function\ndef f(n: pl.Scalar[pl.INDEX]):\n    break\n",
    "@pl.function\ndef f(n: pl.Scalar[pl.INDEX]):\n    return n\n    n = 1\n",
    "@pl.function\ndef f(n: pl.InOut[pl.Scalar[pl.INDEX]]):\n    pass\n",
    "@pl.function\ndef f(n: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX]):\n    pass\n",
    "@pl.function\ndef f(*n):\n    pass\n",
    "@pl.function\ndef f(n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:\n    pass\n",
    "@pl.function\ndef f(n: pl.Scalar[pl.INDEX]):\n    x = lambda: n\n",
    "@pl.function\ndef f(n: pl.Scalar[pl.INDEX]):\n    x = [i for i in n]\n",
    "@pl.function\ndef f(n: pl.Scalar[pl.INDEX]):\n    x = n if n else 1\n",
    "@pl.function\ndef f(n: pl.Scalar[pl.INDEX]):\n    x = 1 / 0\n",
    "@pl.function\ndef f(n: pl.Scalar[pl.INDEX]):\n    x = pl.range(3)\n",
    "@pl.function\ndef f(n: pl.Scalar[pl.INDEX]):\n    x = undefined_fn(n)\n",
    "@pl.function\ndef f(n: pl.Scalar[pl.INDEX]):\n    x = len(n)\n",
    "@pl.function\ndef f(n: pl.Scalar[pl.INDEX]):\n    a, b = n\n",
    "@pl.function\ndef f(n: pl.Scalar[pl.INDEX]):\n    a = b = n\n",
    "@pl.function\ndef f(n: pl.Scalar[pl.INDEX]):\n    n[0] = 1\n",
    "@pl.program\nclass P:\n    def f(self):\n        pass\n",
    "@pl.program\nclass P:\n    @pl.function\n    def f(x: pl.Scalar[pl.INDEX]):\n        pass\n",
    "@pl.program\nclass P:\n    @pl.function\n    def f(self, x: pl.Scalar[pl.INDEX]):\n        y = self.g(x)\n",
    "@pl.program\nclass P:\n    @pl.function\n    def f(self, x: pl.Scalar[pl.INDEX]):\n        y = self.f(x, x)\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    y = pl.store(x, [0], x)\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    y = pl.block.load(x, [0], [128])\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    y = pl.block.load(x, [0], [64], target_memory=pl.MemorySpace.DDR)\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    y = pl.block.load(x, [0], [64], target_memory=7)\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    y = pl.view(x, [64, 1], [0])\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    y = pl.const(1.5, 3)\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    y = x @ 3\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    y = 2.0 - x\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    y = x < x\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    y = x.shape.foo\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    y = pl.add(x, 'a')\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    y = pl.exp(pl.cast(x, pl.INT32))\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    y: pl.Tile[[64], pl.FP32] = x\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    y: pl.Scalar = x\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    y: pl.Out[pl.Scalar[pl.INDEX]] = 1\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    y: 3 = 1\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    y: pl.MemRefType = pl.add(x, x)\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    y = pl.system.sync_src(set_pipe=pl.PipeType.V, wait_pipe=pl.PipeType.M, event_id=99)\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    for i in pl.range(4, chunk=2):\n        pass\n",
    "@pl.function(type=3)\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    pass\n",
    "x = = 1",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    async def g(): pass\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    yield x\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    y = pl.tensor.read(x, 0, 1)\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    y = x[0, 0]\n",
    "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]):\n    y = pl.block.foo(x)\n",
]


@pytest.mark.parametrize("text", BAD_PROGRAMS)
def test_bad_input_gives_parser_errors_only(text):
    src = "import pypto.language as pl\n" + text
    with pytest.raises(pl.ParserError) as ei:
        pl.parse(src)
    msg = str(ei.value)
    assert msg.startswith("Error: ")
    if ei.value.span is not None and ei.value.span.is_known:
        assert "-->" in msg


def test_parse_text_error_quotes_source():
    src = textwrap.dedent("""
        import pypto.language as pl

        @pl.function
        def f(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:
            y = pl.add(x, zz)
            return y
    """)
    with pytest.raises(pl.UndefinedVariableError) as ei:
        pl.parse(src, filename="kernel.pl")
    text = str(ei.value)
    assert "kernel.pl:6:19" in text
    assert "y = pl.add(x, zz)" in text


def test_direct_call_outside_kernel_explains():
    with pytest.raises(RuntimeError, match="inside a @pl.function"):
        pl.add(1, 2)
    with pytest.raises(RuntimeError, match="pl language"):
        pl.range(3)


def test_ir_compile_is_lazy_attribute():
    assert callable(ir.python_print)
    with pytest.raises(AttributeError):
        ir.not_a_thing  # noqa: B018
