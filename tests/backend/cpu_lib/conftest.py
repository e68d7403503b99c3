import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _special_values_are_the_point():
    """These tests feed inf, NaN and out-of-range values to the tile library on purpose; the NumPy
    references that compute the expected results overflow and meet NaNs as intended."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        yield
