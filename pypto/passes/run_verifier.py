"""RunVerifier: check the IR with the verifier and stop the pipeline on the first broken invariant."""

from __future__ import annotations

from dataclasses import dataclass

from pypto.errors import InvalidValue
from pypto.ir.function import Program
from pypto.ir.verifier import render_diagnostics, verify

from .base import Pass, PassContext, PassError


@dataclass(frozen=True)
class RunVerifierOptions:
    # verifier rule names (see pypto.ir.verifier.RULES); None: the default rules (all but NoNestedCall)
    rules: tuple[str, ...] | None = None


class RunVerifier(Pass):
    """Run `pypto.ir.verifier.verify` over the whole program.

    Pre: none (it checks whatever the rules check). Post: the program is returned unchanged.
    Error: a PassError whose message is the verifier's rendering of every diagnostic (rule, code,
    message, location and the IR around each fault), located at the first fault.
    """

    name = "RunVerifier"

    def __init__(self, options: RunVerifierOptions | None = None, *, rules: tuple[str, ...] | None = None) -> None:
        if options is not None and rules is not None:
            raise InvalidValue("give RunVerifier either options or rules, not both")
        self.options = options or RunVerifierOptions(tuple(rules) if rules is not None else None)

    def run(self, program: Program, ctx: PassContext) -> Program:
        rules = list(self.options.rules) if self.options.rules is not None else None
        diags = verify(program, rules)
        if diags:
            raise PassError(f"the IR is invalid ({len(diags)} problem(s)):\n{render_diagnostics(diags, program)}",
                            diags[0].span)
        return program


__all__ = ["RunVerifier", "RunVerifierOptions"]
