"""Suite-wide settings: the test cache, hypothesis profiles, the `native` tier and its safety net,
and `--cpu-durations` (the slowest items by CPU time, the C++ compiler's included).

Tiers: `pytest -n 2` runs everything; `pytest -m "not native"` skips every test that builds C++
(a program compiled for the CPU backend, the tile or runtime library) — the inner loop. A test
that builds C++ is marked `native`: `pytestmark = pytest.mark.native` for a whole module,
`@pytest.mark.native` per test, `pytest.param(..., marks=pytest.mark.native)` per case. In a run
whose `-m` expression leaves native tests out, a build (`native_build.build_shared`) or a load of a
built library (`load_library`, a warm cache's way in) fails the test that asked for it ("this test
builds C++: mark it native"), so a missing mark shows up in the inner loop. (A build in a child
process the test starts is not seen; mark those by hand.)
"""

import os
import resource
import tempfile

import pytest

# keep compiled-kernel caches inside the test run (CI starts clean; local runs stay reproducible)
os.environ.setdefault("PYPTO_CACHE_DIR", os.path.join(tempfile.gettempdir(), "pypto-test-cache"))


# Property tests draw the same examples on every run (and keep no example database), so a run
# is reproducible and CI cannot fail on a case nobody saw; `HYPOTHESIS_PROFILE=explore` searches
# afresh (random seeds, more examples) when looking for new bugs.
from hypothesis import settings  # noqa: E402

settings.register_profile("ci", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False, max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


_OUTPUT_ROOT = None


def pytest_addoption(parser):
    parser.addoption("--cpu-durations", type=int, default=None, metavar="N",
                     help="show the N slowest test items by CPU time (setup + call + teardown, this process "
                          "and the children it waited for, e.g. g++; N = 0: all)")


def pytest_configure(config):
    import pypto

    global _OUTPUT_ROOT
    pypto.config.verify_every_pass = True
    # compiles that name no output_dir go here, not into the checkout's build_output/
    _OUTPUT_ROOT = tempfile.mkdtemp(prefix="pypto-test-outputs-")
    pypto.config.output_root = _OUTPUT_ROOT


def pytest_unconfigure(config):
    import shutil

    if _OUTPUT_ROOT:
        shutil.rmtree(_OUTPUT_ROOT, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# the native tier's safety net


def _deselects_native(config) -> bool:
    """Whether the mark expression (`-m`) leaves out a test marked only `native`."""
    expr = config.getoption("markexpr") or ""
    if "native" not in expr:
        return False
    try:
        from _pytest.mark.expression import Expression  # (how pytest evaluates -m; not public API)

        return not Expression.compile(expr).evaluate(lambda name, **kwargs: name == "native")
    except Exception:  # another pytest: the usual spelling
        return "not native" in expr


def _builds_cpp(*args, **kwargs):
    pytest.fail("this test builds C++: mark it native (pytest.mark.native; the run deselects native tests, "
                "and pypto.support.native_build was asked to build or load a library)")


@pytest.fixture(scope="session", autouse=True)
def _native_builds_are_marked(request):
    """Session-scoped and autouse, so it is in place before any module or session fixture builds."""
    if not _deselects_native(request.config):
        yield
        return
    import pypto.support.native_build as nb

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(nb, "build_shared", _builds_cpp)
        mp.setattr(nb, "load_library", _builds_cpp)
        yield


# ---------------------------------------------------------------------------------------------
# --cpu-durations


def _cpu_seconds() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    # each phase's report carries its CPU time (user_properties travel from xdist workers)
    outcome = yield
    if item.config.getoption("cpu_durations") is not None:
        start = item.stash.get(_PHASE_START, None)
        if start is not None:
            outcome.get_result().user_properties.append(("cpu_s", _cpu_seconds() - start))


_PHASE_START = pytest.StashKey[float]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    item.stash[_PHASE_START] = _cpu_seconds()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    item.stash[_PHASE_START] = _cpu_seconds()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item):
    item.stash[_PHASE_START] = _cpu_seconds()
    yield


def pytest_terminal_summary(terminalreporter, config):
    ran = {rep.nodeid.split("::")[0] for reports in terminalreporter.stats.values() for rep in reports
           if hasattr(rep, "nodeid")}
    if "tests/test_module_budget.py" in ran:
        from tests.programs import module_sizes

        terminalreporter.write_sep("=", f"lines per package (module budget {module_sizes.MAX_LINES})")
        for line in module_sizes.table():
            terminalreporter.write_line(line)
    _cpu_durations(terminalreporter, config)


def _cpu_durations(terminalreporter, config):
    n = config.getoption("cpu_durations")
    if n is None:
        return
    per_item: dict[str, float] = {}
    for reports in terminalreporter.stats.values():
        for rep in reports:
            for key, value in getattr(rep, "user_properties", ()):
                if key == "cpu_s":
                    per_item[rep.nodeid] = per_item.get(rep.nodeid, 0.0) + value
    rows = sorted(per_item.items(), key=lambda kv: -kv[1])
    terminalreporter.write_sep("=", f"slowest {n or 'all'} items by CPU time ({sum(per_item.values()):.1f} s "
                                    f"over {len(rows)} items)")
    for nodeid, s in rows[:n or None]:
        terminalreporter.write_line(f"{s:8.2f}s  {nodeid}")
