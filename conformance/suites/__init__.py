"""The live suites: one pytest module per category, one test per rule (see conformance.pytest_plugin)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from conformance.pytest_plugin import ConformanceState, rule_verdict
from conformance.rules import RULES


def rule_test(*categories: str) -> Callable[[str, ConformanceState], None]:
    """A test parametrized over the rules of ``categories``; each judges its rule across all scenarios."""
    params = [pytest.param(r.id, id=r.id, marks=[pytest.mark.conformance_rule(r.id), getattr(pytest.mark, r.level)])
              for r in RULES if r.category in categories]  # -m must, -m "should or must": the rules of those levels

    @pytest.mark.parametrize("rule_id", params)
    def test_rule(rule_id: str, conformance_state: ConformanceState) -> None:
        rule_verdict(conformance_state, rule_id)

    test_rule.__doc__ = f"Every {', '.join(categories)} rule, judged across every scenario of the live run."
    return test_rule
