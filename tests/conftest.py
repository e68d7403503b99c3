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


def pytest_configure(config):
    import pypto

    pypto.config.verify_every_pass = True
