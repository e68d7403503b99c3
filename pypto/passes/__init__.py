"""`pypto.passes`: the compiler pipeline (see pass_manager.pipeline)."""

from .base import FunctionPass, IRProperty, Pass, PassContext, PassError
from .pass_manager import OptimizationStrategy, PassManager, VerificationLevel, pipeline

__all__ = ["FunctionPass", "IRProperty", "OptimizationStrategy", "Pass", "PassContext", "PassError",
           "PassManager", "VerificationLevel", "pipeline"]
