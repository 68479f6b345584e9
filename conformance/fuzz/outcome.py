"""What ending a Hypothesis search may raise when the search itself is the result.

A property raises on purpose (a ``Violation`` per rule, an ``AssertionError`` for a client that
assembled wrongly), and Hypothesis may report several at once in an exception group, or give up
(``Unsatisfiable``) or see a flaky failure. Those end the search; the records the property kept
are its result. Anything else is a bug in our own code and must surface, not shrink the count.
"""

from __future__ import annotations

import sys

from hypothesis.errors import Flaky, Unsatisfiable, UnsatisfiedAssumption

if sys.version_info >= (3, 11):  # pragma: no cover - the builtin on 3.11+
    from builtins import BaseExceptionGroup
else:  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup


def expected_end(exc: BaseException, expected: tuple[type[BaseException], ...]) -> bool:
    """Whether ``exc`` is how a search ends by design (``expected``, Flaky, Unsatisfiable, a rejected example,
    or a group of them)."""
    if isinstance(exc, BaseExceptionGroup):
        return all(expected_end(inner, expected) for inner in exc.exceptions)
    return isinstance(exc, (*expected, Flaky, Unsatisfiable, UnsatisfiedAssumption))
