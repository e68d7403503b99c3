import os
import tempfile

# keep compiled-kernel caches inside the test run (CI starts clean; local runs stay reproducible)
os.environ.setdefault("PYPTO_CACHE_DIR", os.path.join(tempfile.gettempdir(), "pypto-test-cache"))


def pytest_configure(config):
    import pypto

    pypto.config.verify_every_pass = True
