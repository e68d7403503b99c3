import os
import tempfile

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
