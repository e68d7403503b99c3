"""The IR verifier: a walk over a Program, Function, Stmt or Expr that reports broken invariants.

Each rule has a name and numeric codes (tests and passes select rules by name):

- SSAVerify: 1 a Var object defined at two binding sites; 2 name shadowing (reserved, never
  reported: names are only hints); 3 missing yield (a loop with iter_args whose body does not end
  in a yield; an if with return_vars whose branches do not both end in one); 4 iter_args and
  return_vars counts differ; 5 a yield carries the wrong number of values (or yields outside any
  loop/if); 6 scope violation (a variable used outside the loop or if that scopes it).
- TypeCheck: 101 kind mismatch (or an op rejecting its operands), 102 dtype, 103 rank,
  104 dimension, 105 other type attribute or count (memory space, layout, view, arity),
  106 if/while condition not a scalar, 107 for-loop start/stop/step not a scalar, 108 a for-loop
  step that is the constant 0.
- UseAfterDef: 401 a variable (or an unbound dynamic dimension, or a MemRef before its alloc)
  used where it is not yet defined.
- NoNestedCall (off by default): 501 a Call inside another Call's arguments, an if/while
  condition, a for-loop bound, or a scalar binary/unary expression.
- BreakContinue: 601 break/continue outside a loop (or in a parallel/unrolled one).
- SupportedTypes: 701 an element type no target stores (`pypto.ir.limits`), 702 a dimension
  outside [1, 2**63 - 1] or a size in bytes beyond int64 — on parameters, return types, every
  bound variable and every call's result.

The rules are grouped by area: `scoping` (SSAVerify, UseAfterDef), `type_rules` (TypeCheck,
SupportedTypes), `form_rules` (BreakContinue, NoNestedCall); `context` holds the frame they share
and `report` the diagnostics and their rendering.
"""

from __future__ import annotations

from typing import Any

from pypto.errors import InvalidType, InvalidValue

from .context import Context, Rule
from .form_rules import BreakContinue, NoNestedCall
from .report import Diagnostic, VerificationError, excerpt, render_diagnostics
from .scoping import SSAVerify, UseAfterDef
from .type_rules import SupportedTypes, TypeCheck, type_diff

RULES: dict[str, type[Rule]] = {r.name: r for r in (SSAVerify, TypeCheck, UseAfterDef, NoNestedCall, BreakContinue,
                                                    SupportedTypes)}
DEFAULT_RULES: tuple[str, ...] = tuple(n for n, r in RULES.items() if r.default)


def _rules(rules: Any) -> list[Rule]:
    if rules is None:
        return [RULES[n]() for n in DEFAULT_RULES]
    if isinstance(rules, (str, Rule)) or (isinstance(rules, type) and issubclass(rules, Rule)):
        rules = [rules]
    out: list[Rule] = []
    for r in rules:
        if isinstance(r, str):
            if r not in RULES:
                raise InvalidValue(f"unknown verifier rule {r!r}; rules: {', '.join(RULES)}")
            out.append(RULES[r]())
        elif isinstance(r, type) and issubclass(r, Rule):
            out.append(r())
        elif isinstance(r, Rule):
            out.append(r)
        else:
            raise InvalidType(f"a verifier rule is a name, a Rule class or a Rule, got {r!r}")
    return out


def verify(node: Any, rules: Any = None) -> list[Diagnostic]:
    """Every fault the selected rules (default: all but NoNestedCall) find in `node`."""
    ctx = Context(node)
    for rule in _rules(rules):
        rule.check(ctx)
    return ctx.diagnostics


def verify_or_raise(node: Any, rules: Any = None) -> None:
    diags = verify(node, rules)
    if diags:
        raise VerificationError(diags, node)


__all__ = [
    "DEFAULT_RULES", "RULES", "BreakContinue", "Diagnostic", "NoNestedCall", "Rule", "SSAVerify", "SupportedTypes",
    "TypeCheck", "UseAfterDef", "VerificationError", "excerpt", "render_diagnostics", "type_diff", "verify",
    "verify_or_raise",
]
