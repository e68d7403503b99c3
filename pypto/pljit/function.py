"""`JITFunction`: a `@pl.jit` function (or one of its family), specialised and compiled per call
signature, then dispatched.

A call: bind the arguments (`config=` never reaches the function), classify them (tensor metas,
scalar literals, Python constants), build the cache key, compile on a miss (`_jit_<name>` via
`ir.compile`, kept in `kernel._cache`), dispatch the compiled program in place, return None.

Warm calls skip all of that: a *call plan* per argument signature (each tensor's shape, dtype and
contiguity, each scalar's type and value, the config's compile-relevant fields) remembers the
compiled program and which arguments it takes. A plan is valid while `_cache` is unchanged since
it was made (`JitCache.generation`), so `kernel._cache.clear()` forces the next call to compile.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import sys
from dataclasses import dataclass
from typing import Any

from pypto.errors import InvalidType
from pypto.ir.expr import DynVar

from .meta import ParamSpec, param_spec

ENTRY_KINDS = ("orchestration", "host")
# what a caller's body may call, per caller kind (a .host entry may also call plain @pl.jit entries)
_DEP_KINDS = ("incore", "inline", "opaque", "extern")


class JitCache(dict):
    """`kernel._cache`: a plain dict `CacheKey -> CompiledProgram` that counts its changes, so call
    plans made before a change (`clear()`, `del`, ...) are not used after it."""

    generation = 0

    def _bump(self) -> None:
        self.generation += 1

    def __setitem__(self, k: Any, v: Any) -> None:
        super().__setitem__(k, v)
        self._bump()

    def __delitem__(self, k: Any) -> None:
        super().__delitem__(k)
        self._bump()

    def clear(self) -> None:
        super().clear()
        self._bump()

    def pop(self, *a: Any) -> Any:
        self._bump()
        return super().pop(*a)

    def popitem(self) -> Any:
        self._bump()
        return super().popitem()

    def update(self, *a: Any, **k: Any) -> None:
        super().update(*a, **k)
        self._bump()

    def setdefault(self, k: Any, v: Any = None) -> Any:
        self._bump()
        return super().setdefault(k, v)


@dataclass(frozen=True, eq=False)
class CacheKey:
    """One specialisation: source hash, parameter names, per-tensor (shape with dynamic dims as
    None, dtype, layout), scalar literals, Python constants and the compile-relevant config."""

    source_hash: str
    params: tuple[str, ...]
    call: tuple
    config: tuple

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.source_hash, self.params, self.call, self.config)))

    def __hash__(self) -> int:
        return self._hash  # type: ignore[attr-defined,no-any-return]

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, CacheKey) and self._hash == other._hash  # type: ignore[attr-defined]
                                 and (self.source_hash, self.params, self.call, self.config)
                                 == (other.source_hash, other.params, other.call, other.config))


@dataclass(frozen=True)
class _Plan:
    generation: int
    compiled: Any
    pick: tuple[int, ...]  # indices into args + defaults: what the compiled program takes, in order
    defaults: tuple[Any, ...]
    fast: Any = None  # fast_path.native_runner(...) or None


class JITFunction:
    """A `@pl.jit` function; see the module docstring and docs/pl_jit.md."""

    def __init__(self, fn: Any, kind: str, *, auto_scope: bool = True, level: Any = None,
                 extern: dict[str, Any] | None = None, frame_locals: dict[str, Any] | None = None):
        self.fn = fn
        self.kind = kind
        self.auto_scope = auto_scope
        self.level = level
        self.extern = extern
        self._frame_locals = frame_locals
        self._cache = JitCache()
        self._plans: dict[Any, _Plan] = {}
        self._parsed: tuple | None = None
        self._specs: dict[str, ParamSpec] | None = None
        self._dyn: dict[str, dict[int, DynVar]] | None = None
        self._deps: tuple[JITFunction, ...] | None = None
        self._hash: str | None = None
        self._pysig = inspect.signature(fn)
        functools.update_wrapper(self, fn)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        return f"JITFunction({self.__name__!r}, func_type={self.kind!r})"

    # ---- what the source says (computed once) ------------------------------------------------

    def parsed_source(self) -> tuple[Any, Any, Any]:
        """(Source, the function's AST, its Python environment)."""
        if self._parsed is None:
            from ..language.decorators import _env_of, _source_of

            src, node = _source_of(self.fn)
            self._parsed = (src, node, _env_of(self.fn, self._frame_locals))
        return self._parsed

    def _eval(self, node: Any) -> Any:
        from ..language.decorators import _py_eval

        src, _, env = self.parsed_source()
        return _py_eval(node, env, src)

    def param_specs(self) -> dict[str, ParamSpec]:
        if self._specs is None:
            _, node, _ = self.parsed_source()
            a = node.args
            if a.vararg or a.kwarg:
                raise InvalidType(f"{self.__name__}: @pl.jit functions take named parameters (no *args / **kwargs)")
            specs = {}
            for p in (*a.posonlyargs, *a.args, *a.kwonlyargs):
                ann = self._eval(p.annotation) if p.annotation is not None else None
                if isinstance(ann, str):
                    ann = self._eval(_parse_expr(ann, p.annotation))
                specs[p.arg] = param_spec(p.arg, ann, self.__name__)
            self._specs = specs
        return self._specs

    def deps(self) -> tuple[JITFunction, ...]:
        """The jit functions the body calls by bare name, transitively, leaf first."""
        if self._deps is None:
            self._deps = ()  # (a recursive call graph ends here)
            out: dict[int, JITFunction] = {}
            for d in self._direct_deps():
                for dd in d.deps():
                    out.setdefault(id(dd), dd)
                out.setdefault(id(d), d)
            self._deps = tuple(v for v in out.values() if v is not self)
        return self._deps

    def _direct_deps(self) -> list[JITFunction]:
        from .rewrite import called_names

        _, node, env = self.parsed_source()
        kinds = _DEP_KINDS + (("orchestration",) if self.kind == "host" else ())
        found = []
        for name in called_names(node):
            v = env.lookup(name)
            if isinstance(v, JITFunction) and v.kind in kinds:
                found.append(v)
        return found

    def declared_dynamic(self) -> dict[str, dict[int, DynVar]]:
        """param -> {dim: DynVar}: annotations, `x.bind_dynamic(...)`, and the dynamic dims of the
        dependencies this function passes its parameters to (they cascade up to the entry)."""
        if self._dyn is None:
            from .rewrite import call_sites, dyn_dims_of

            self._dyn = {}
            _, node, _ = self.parsed_source()
            out: dict[str, dict[int, DynVar]] = {}
            for name, spec in self.param_specs().items():
                for i, d in enumerate(spec.dims or ()):
                    if isinstance(d, DynVar):
                        out.setdefault(name, {})[i] = d
            for name, dims in dyn_dims_of(node, None, self._eval).items():
                out.setdefault(name, {}).update(dims)
            for dep in self._direct_deps():
                if dep.kind == "extern":
                    continue
                dep_dyn = dep.declared_dynamic()
                dep_params = list(dep.param_specs())
                for call in call_sites(node, dep.__name__):
                    for i, arg in enumerate(call.args):
                        if i < len(dep_params) and arg.__class__.__name__ == "Name" and arg.id in self.param_specs():
                            for dim, dv in dep_dyn.get(dep_params[i], {}).items():
                                out.setdefault(arg.id, {}).setdefault(dim, dv)
            self._dyn = out
        return self._dyn

    def source_hash(self) -> str:
        """SHA-256 of the pypto version, this function's source and every dependency's."""
        if self._hash is None:
            import pypto

            h = hashlib.sha256(pypto.__version__.encode())
            for f in (self, *self.deps()):
                src, node, _ = f.parsed_source()
                h.update(f"{f.kind}:{src.filename}:{node.lineno}\n".encode())
                h.update(inspect.getsource(f.fn).encode())
            self._hash = h.hexdigest()
        return self._hash

    # ---- binding -----------------------------------------------------------------------------

    def bind_python(self, args: tuple | list, kwargs: dict[str, Any]) -> dict[str, Any]:
        """Bind arguments to the Python signature (defaults applied)."""
        b = self._pysig.bind(*args, **kwargs)
        b.apply_defaults()
        return dict(b.arguments)

    # ---- specialise, compile, lower ----------------------------------------------------------

    def _entry_check(self, what: str) -> None:
        if self.kind not in ENTRY_KINDS:
            raise InvalidType(f"{self.__name__} is a @pl.jit.{self.kind} function: it is specialised where a @pl.jit "
                            f"function calls it; {what} the @pl.jit entry instead")

    def _specialised(self, args: tuple, kwargs: dict[str, Any], cfg: Any, *, signature_mode: bool = False) -> Any:
        from .specialize import classify

        if any(v is _RUNTIME_MARK() for v in args) and not signature_mode:
            raise InvalidType(f"{self.__name__}(): pl.RUNTIME is only meaningful in a signature-mode "
                            "kernel.compile(...)/lower(...); pass a value")
        bound = self._bind_for(args, kwargs, signature_mode)
        call = classify(self, bound, signature_mode=signature_mode)
        key = CacheKey(self.source_hash(), tuple(self.param_specs()), call.key(), config_key(cfg))
        return call, key

    def _bind_for(self, args: tuple, kwargs: dict[str, Any], signature_mode: bool) -> dict[str, Any]:
        if not signature_mode:
            try:
                return self.bind_python(args, kwargs)
            except TypeError as e:
                raise InvalidType(f"{self.__name__}(): {e}") from None
        b = self._pysig.bind_partial(*args, **kwargs)
        b.apply_defaults()
        return dict(b.arguments)

    def _compile(self, call: Any, key: CacheKey, cfg: Any) -> Any:
        from pypto.compile import compile as ir_compile

        from .out_params import check_out_writes
        from .run_script import write_run_script
        from .specialize import build_program

        program = build_program(self, call)
        check_out_writes(self.__name__, program)
        compiled = ir_compile(program, **compile_options(cfg))
        compiled.source_program = program  # the specialised program before the passes
        write_run_script(compiled, call)
        self._cache[key] = compiled
        return compiled

    def compile(self, *args: Any, config: Any = None, **kwargs: Any) -> Any:
        """Specialise and compile for these sample arguments (contents are not read) and return the
        `CompiledProgram` held in `_cache`. With no tensor argument at all, shapes come from the
        annotations (signature mode; scalars by keyword or default, `pl.RUNTIME` keeps one a runtime
        parameter). Compile options travel in `config=` only."""
        self._entry_check("compile")
        cfg = _config(config)
        sig_mode = self._signature_mode(args, kwargs)
        call, key = self._specialised(args, kwargs, cfg, signature_mode=sig_mode)
        hit = self._cache.get(key)
        return hit if hit is not None else self._compile(call, key, cfg)

    def lower(self, *args: Any, config: Any = None, **kwargs: Any) -> Any:
        """The specialised program after the pass pipeline (`ir.Program`); no codegen, no files, no
        `_cache`."""
        self._entry_check("lower")
        from pypto.language import parse as pl_parse
        from pypto.passes.base import PassContext
        from pypto.passes.pass_manager import PassManager
        from pypto.target import target_for

        from .specialize import build_program

        cfg = _config(config)
        call, _ = self._specialised(args, kwargs, cfg, signature_mode=self._signature_mode(args, kwargs))
        program = build_program(self, call)
        from pypto.compile.options import backend_for_platform
        from pypto.compile.request import _parse_strategy
        from pypto.target import BackendType

        backend = backend_for_platform(cfg.platform, BackendType.PTO)
        pm = PassManager.get_strategy(_parse_strategy(cfg.strategy), reparse=pl_parse)
        return pm.run_passes(program, ctx=PassContext(target=target_for(backend), backend_type=backend))

    def _signature_mode(self, args: tuple, kwargs: dict[str, Any]) -> bool:
        import numpy as np

        from .meta import is_torch_tensor

        vals = (*args, *kwargs.values())
        return not any(is_torch_tensor(v) or isinstance(v, np.ndarray) for v in vals)

    # ---- calling -----------------------------------------------------------------------------

    def __call__(self, *args: Any, config: Any = None, **kwargs: Any) -> None:
        if self.kind not in ENTRY_KINDS:
            raise InvalidType(f"{self.__name__} is a @pl.jit.{self.kind} function: call it inside a @pl.jit function")
        fsig = None if kwargs else _fast_sig(args)
        if fsig is not None:
            pkey = (fsig, _plan_config_key(config) if config is not None else None)
            plan = self._plans.get(pkey)
            if plan is not None and plan.generation == self._cache.generation:
                full = args + plan.defaults
                picked = [full[i] for i in plan.pick]
                if plan.fast is None or not plan.fast(picked):
                    plan.compiled(*picked, config=config)
                return None
        cfg = _config(config)
        call, key = self._specialised(args, kwargs, cfg)
        compiled = self._cache.get(key)
        if compiled is None:
            compiled = self._compile(call, key, cfg)
        bound = self.bind_python(args, kwargs)
        specs = self.param_specs()
        ordered = [bound[n] for n, s in specs.items() if s.kind != "const"]
        if fsig is not None:
            names = list(self._pysig.parameters)
            pick = tuple(i for i, n in enumerate(names) if specs[n].kind != "const")
            defaults = tuple(bound[n] for n in names[len(args):])
        compiled(*ordered, config=config)
        if fsig is not None:  # (after the full call: its binding checked these arguments)
            from .fast_path import native_runner

            self._plans[pkey] = _Plan(self._cache.generation, compiled, pick, defaults, native_runner(compiled, cfg))
        return None

    # the parser calls this when a kernel body calls a dependency (see specialize.specialise_dep)
    def __pl_specialise__(self, args: list[Any], kwargs: dict[str, Any], where: Any) -> tuple[Any, list[Any]]:
        from .specialize import specialise_dep

        return specialise_dep(self, args, kwargs, where)

    def refuse_extern(self, where: Any = None) -> None:
        raise ExternKernelError(
            f"@pl.jit.extern kernel '{self.__name__}': its C++ source is an Ascend AIC/AIV kernel (PTO-ISA "
            "intrinsics and the Ascend kernel ABI); the CPU backend compiles kernels from PyPTO IR only and cannot "
            "build or call a hand-written device kernel", where,
            hint="write the kernel as a @pl.jit.incore function")


def _extern_error_base() -> type:
    from ..language.errors import ParserError

    return ParserError


class ExternKernelError(_extern_error_base(), NotImplementedError):  # type: ignore[misc]
    """A call of a `@pl.jit.extern` kernel: refused on the CPU (the error names the call site)."""


def _RUNTIME_MARK() -> Any:
    from .meta import RUNTIME

    return RUNTIME


def _parse_expr(text: str, where: Any) -> Any:
    import ast

    return ast.copy_location(ast.parse(text, mode="eval").body, where)


def _fast_sig(args: tuple) -> tuple | None:
    """The call plan key of positional arguments, or None when some argument has no cheap key."""
    torch = sys.modules.get("torch")
    tt = torch.Tensor if torch is not None else None
    out = []
    for a in args:
        t = type(a)
        if t is tt:
            out.append((a.shape, a.dtype, a.is_contiguous()))
        elif t is int or t is float or t is bool:
            out.append((t, a))
        else:
            import numpy as np

            if t is np.ndarray:
                out.append((a.shape, a.dtype.str, a.flags.c_contiguous))
            else:
                return None
    return tuple(out)


def _config(config: Any) -> Any:
    from pypto.runtime import RunConfig

    if config is None:
        return RunConfig()
    if not isinstance(config, RunConfig):
        raise InvalidType(f"config must be a pypto.runtime.RunConfig, got {type(config).__name__}")
    return config


# RunConfig fields that change what a compile produces (the rest drives dispatch)
_KEY_FIELDS = ("platform", "strategy", "distributed_config", "analyze_auto_scopes_for_deps", "dump_ptoas_passes",
               "memory_planner")


def config_key(cfg: Any) -> tuple:
    if cfg is None:
        return ("<default>",)
    out = []
    for f in _KEY_FIELDS:
        v = getattr(cfg, f, None)
        out.append(getattr(v, "name", v) if not isinstance(v, (str, int, float, bool, type(None))) else v)
    return tuple(out)


def _plan_config_key(cfg: Any) -> tuple:
    """What a call plan depends on in a config: the compile key and how the run is dispatched."""
    return (config_key(cfg), cfg.workers, cfg.sched_mode, cfg.enable_trace, cfg.trace_path, cfg.warmup, cfg.repeat)


def compile_options(cfg: Any) -> dict[str, Any]:
    """`ir.compile` keywords from a RunConfig (§ "config=RunConfig(...)" in docs/pl_jit.md)."""
    opts: dict[str, Any] = {
        "strategy": cfg.strategy,
        "dump_passes": cfg.dump_passes,
        "platform": cfg.platform,
        "profiling": cfg.compile_profiling,
        "diagnostic_phase": cfg.diagnostic_phase,
        "disabled_diagnostics": cfg.disabled_diagnostics,
        "analyze_auto_scopes_for_deps": cfg.analyze_auto_scopes_for_deps,
        "dump_ptoas_passes": cfg.dump_ptoas_passes,
    }
    if cfg.platform == "interp":
        opts["skip_ptoas"] = True  # (the interpreter runs the PTO text: no C++ until a native call needs it)
    if cfg.save_kernels_dir:
        opts["output_dir"] = cfg.save_kernels_dir
    if cfg.distributed_config is not None:
        opts["distributed_config"] = cfg.distributed_config
    if cfg.memory_planner is not None:
        opts["memory_planner"] = cfg.memory_planner
    return opts


__all__ = ["CacheKey", "JITFunction", "JitCache", "compile_options", "config_key"]
