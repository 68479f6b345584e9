"""The one capability table: each feature a server may lack, the scenario that probes it, and the
rule that fails when the user expects it (``--expect``), each protocol's from its package
(``conformance/protocols/<name>/capabilities.py``), in registry order. Everything else derives from it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Capability:
    """A feature a server may lack: the scenario that probes it and the rule that fails when --expect names it."""

    name: str
    probe: str
    rule: str
    # a protocol's route (/api/chat, /v1/responses, /v1/messages): a probe answered 404, 405 or 501 says the route is
    # not served, and the scenarios that need it are not sent (Runner.unserved), unless --expect names it
    route: bool = False
    protocol: str = "chat"  # the protocol whose package brings it (its probe is that protocol's scenario)


def _protocol_capabilities() -> tuple[Capability, ...]:
    """The capabilities a protocol package brings (``conformance/protocols/<name>/capabilities.py``: CAPABILITIES,
    rows of (name, probe scenario, rule[, route])), found by the registry."""
    from conformance.protocols import brought

    return tuple(Capability(*row, protocol=module.__name__.split(".")[-2])  # type: ignore[misc]
                 for module in brought("conformance.protocols.{name}.capabilities") for row in module.CAPABILITIES)


CAPABILITY_TABLE: tuple[Capability, ...] = _protocol_capabilities()
CAPABILITIES = tuple(c.name for c in CAPABILITY_TABLE)
CAPABILITY_SCENARIOS = {c.name: c.probe for c in CAPABILITY_TABLE}
CAPABILITY_RULES = {c.name: c.rule for c in CAPABILITY_TABLE}
ROUTE_CAPABILITIES = frozenset(c.name for c in CAPABILITY_TABLE if c.route)
UNSERVED = frozenset({404, 405, 501})  # a route's probe answered so: the route is not served
