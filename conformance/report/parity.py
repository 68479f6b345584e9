"""Chat's rules, one by one, and their equivalents on the Responses and Messages APIs (issue 59): the rule ids that
judge the same fact there, or why there is none. The docs' "Every API judged as deeply as chat" page is generated
from it, and tests/test_parity.py holds it to the rulebook: every chat rule has a row, every id named exists.

A cell is either rule ids (``RSP-017``, ``MSG-017``: the fact judged there) or a sentence that starts with "none:"
(the API has no such thing) or "not judged:" (a gap, said as one)."""

from __future__ import annotations

from pathlib import Path

from conformance.rules import read_toml


def _table() -> dict[str, tuple[str, str]]:
    """conformance/report/parity.toml: chat rule -> (Responses API, Messages API)."""
    doc = read_toml(Path(__file__).with_name("parity.toml"))
    return {rule: (row["responses"], row["messages"]) for rule, row in doc.items()}


# chat rule -> (Responses API, Messages API)
PARITY: dict[str, tuple[str, str]] = _table()

# the rules every protocol shares, which need no twin: the registry runs them on every exchange (http) or on every
# event stream (sse); said once on the page
SHARED = ("http", "sse")
