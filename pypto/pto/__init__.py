"""The PTO text format: the boundary between the compiler and the targets (docs/pto_format.md).

`model` holds the objects, `printer` / `parser` turn them into canonical text and back, `verify`
checks their structure and `compare` decides structural equivalence (for tests).
"""

from .compare import assert_equivalent, equivalent, first_difference
from .errors import PtoParseError, PtoVerifyError
from .model import *  # noqa: F403
from .model import __all__ as _model_all
from .parser import parse_module, parse_type
from .printer import print_attr, print_func, print_module, print_op, print_type
from .verify import module_issues, verify_module

__all__ = [
    *_model_all,
    "PtoParseError", "PtoVerifyError", "assert_equivalent", "equivalent", "first_difference", "module_issues",
    "parse_module", "parse_type", "print_attr", "print_func", "print_module", "print_op", "print_type",
    "verify_module",
]
