"""The one capability table: each feature a server may lack, the scenario that probes it, and the
rule that fails when the user expects it (``--expect``). Everything else derives from it."""

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


CAPABILITY_TABLE: tuple[Capability, ...] = (
    Capability("tools", "tools-auto", "TOOL-018"),  # seed 001 takes auto and none, and may refuse the rest
    Capability("reasoning", "reasoning", "RSN-008"),
    Capability("structured", "json-schema-strict", "STR-006"),
    Capability("usage", "stream-usage", "USG-011"),
    Capability("ollama", "ollama-chat", "OLL-010", route=True),  # seed 002 names /api/chat, /api/generate, /api/pull
    Capability("cancel-endpoint", "cancel-unknown", "CAN-006"),
    Capability("request-id", "request-id", "TRN-013"),
    Capability("images", "image-data-url", "IMG-003"),  # seed 001: only with a vision pack
    Capability("responses", "responses-stream", "RSP-021", route=True),  # the OpenAI Responses API (Ollama, LM Studio, vLLM...)
    Capability("responses-state", "responses-chain", "RSP-027"),  # previous_response_id (Ollama's is stateless)
)


def _protocol_capabilities() -> tuple[Capability, ...]:
    """The capabilities a protocol package brings (``conformance/protocols/<name>/capabilities.py``: CAPABILITIES,
    rows of (name, probe scenario, rule[, route])), found by the registry."""
    from conformance.protocols import brought

    return tuple(Capability(*row) for module in brought("conformance.protocols.{name}.capabilities")
                 for row in module.CAPABILITIES)


CAPABILITY_TABLE += _protocol_capabilities()
CAPABILITIES = tuple(c.name for c in CAPABILITY_TABLE)
CAPABILITY_SCENARIOS = {c.name: c.probe for c in CAPABILITY_TABLE}
CAPABILITY_RULES = {c.name: c.rule for c in CAPABILITY_TABLE}
ROUTE_CAPABILITIES = frozenset(c.name for c in CAPABILITY_TABLE if c.route)
UNSERVED = frozenset({404, 405, 501})  # a route's probe answered so: the route is not served
