"""The PTO text format: the boundary between the compiler and the targets (docs/pto_format.md)."""

from .model import *  # noqa: F403
