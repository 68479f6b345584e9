"""Capabilities the user said the server must have (``--expect``): each missing one is a failure."""

from __future__ import annotations

from collections.abc import Iterator

from conformance.capabilities import CAPABILITY_RULES
from conformance.checks.registry import Finding, check, finding
from conformance.exchange import Analysis


def _register(name: str, rule_id: str) -> None:
    def shown(a: Analysis) -> bool:
        cap = a.exchange.observations.capability
        return cap is not None and cap.name == name

    @check(rule_id, when=(shown,))
    def expected_capability(a: Analysis) -> Iterator[Finding]:
        cap = a.exchange.observations.capability
        if cap is not None and not cap.supported:
            yield finding(a, rule_id, f"capability {name} missing: {cap.evidence or 'no evidence'}",
                          f"{name} supported, as --expect says")

    expected_capability.__name__ = f"expected_{name.replace('-', '_')}"


for _name, _rule in CAPABILITY_RULES.items():
    _register(_name, _rule)

