"""Errors of the task runtime."""

from __future__ import annotations

from pypto.errors import Error


class TaskGraphError(Error, RuntimeError):
    """A run failed: malformed task or arguments, a cycle, a deadlock, or an orchestration error.

    The message is the runtime's description of the first error of the run.
    """


__all__ = ["TaskGraphError"]
