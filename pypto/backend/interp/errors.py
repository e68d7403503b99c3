"""Errors of the interpreter: malformed modules (`InterpError`) and unsynchronized pipes (`HazardError`)."""

from __future__ import annotations

from pypto.errors import Error


class InterpError(Error, RuntimeError):
    """A module the interpreter cannot execute: an unknown instruction, operands of the wrong kind or
    type, a window out of range, an undefined value.

    `func` is the function and `where` the op (short text and index) the fault was found at; both are
    filled in by the executor as the error passes through it, so handlers raise with the message only.
    """

    def __init__(self, message: str, *, func: str | None = None, where: str | None = None,
                 hint: str | None = None):
        self.message = message
        self.func = func
        self.where = where
        self.hint = hint
        self.callers: list[str] = []  # where the failing kernel was submitted from, innermost first
        super().__init__(self.render())

    def locate(self, func: str, where: str) -> InterpError:
        if self.func is None:
            self.func, self.where = func, where
            self.args = (self.render(),)
        return self

    def called_from(self, where: str) -> None:
        self.callers.append(where)
        self.args = (self.render(),)

    def _tail(self) -> str:
        text = "".join(f"\n  called from {c}" for c in self.callers)
        return text + (f"\n  = help: {self.hint}" if self.hint else "")

    def render(self) -> str:
        head = f"interp: {self.message}"
        if self.func is not None:
            head = f"interp: in @{self.func}, {self.where}: {self.message}"
        return head + self._tail()

    def __str__(self) -> str:
        return self.render()


class HazardError(InterpError):
    """Two conflicting accesses (RAW / WAR / WAW) that no barrier or flag orders, or a `wait_flag`
    that no `set_flag` matches (`kind == "deadlock"`).

    `first` / `second` describe the two instruction instances (op text, pipe, op index, loop
    iteration); `buffer` names the memory both touch.
    """

    def __init__(self, kind: str, kernel: str, first: str | None, second: str, buffer: str | None,
                 hint: str | None = None):
        self.kind = kind
        self.kernel = kernel
        self.first = first
        self.second = second
        self.buffer = buffer
        if kind == "deadlock":
            msg = f"deadlock in kernel @{kernel}: {second} waits for a flag that no earlier set_flag raised"
        else:
            msg = (f"{kind} hazard in kernel @{kernel} on {buffer}:\n"
                   f"    first:  {first}\n    second: {second}\n  are not ordered by any barrier or flag")
        super().__init__(msg, hint=hint)

    def render(self) -> str:  # located by construction: never re-prefixed
        return f"interp: {self.message}" + self._tail()

    def locate(self, func: str, where: str) -> InterpError:
        return self


__all__ = ["HazardError", "InterpError"]
