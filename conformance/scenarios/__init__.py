"""What the live suite does to a server: the registry of every scenario, each protocol's from its package
(``conformance/protocols/<name>/scenarios.py``) in registry order, then the agents' recorded requests.

The ``Scenario`` record and what every protocol's scenarios share are in ``conformance.model.scenario``; how each
kind of scenario is sent is ``conformance.engine.kinds``.
"""

from __future__ import annotations

import functools
import json

from conformance.capabilities import CAPABILITIES, CAPABILITY_SCENARIOS, ROUTE_CAPABILITIES
from conformance.model.scenario import (  # noqa: F401 (the names scenarios and tests read from here)
    ANSWER,
    ASK_WEATHER,
    CALL,
    DEFAULT_CONTEXT,
    HELLO,
    LONG,
    MAX_OVERFLOW_WORDS,
    PERSON,
    TIME,
    WEATHER,
    Context,
    Scenario,
    context_tokens,
    overflow_words,
    tool_name,
)

__all__ = ["BY_NAME", "CAPABILITIES", "CAPABILITY_SCENARIOS", "SCENARIOS", "Context", "Scenario", "route_needed",
           "sends"]


def sends(sc: Scenario) -> str:
    """What a scenario sends, in a line: method, path and the fields that make it what it is."""
    req = sc.build(Context(model="MODEL"))
    if req.content is not None:
        ctype = req.headers.get("Content-Type", "application/json")
        return f"{req.method} {req.path} {len(req.content)} raw bytes ({ctype}): {req.content[:40]!r}"
    body = req.body if isinstance(req.body, dict) else {}
    fields = []
    for key, value in body.items():
        if key in ("model", "messages", "input"):
            continue
        if key == "tools":
            value = "[" + ", ".join(tool_name(t) for t in value) + "]"
        text = value if isinstance(value, str) else json.dumps(value)
        fields.append(f"{key}={text if len(text) <= 40 else text[:37] + '...'}")
    size = len(json.dumps(body.get("messages", []))) if "messages" in body else 0
    extra = f" messages of {size} bytes" if size > 200 else ""
    via = " over HTTP/1.0" if sc.kind == "http10" else ""
    heads = "".join(f" [{k}: {v}]" for k, v in req.headers.items() if k.lower() != "content-type")
    return f"{req.method} {req.path}{via}{heads} {' '.join(fields)}{extra}".rstrip()


def _protocol_scenarios() -> list[Scenario]:
    """The scenarios each protocol package brings, found by the registry, in its order."""
    from conformance.protocols import brought

    return [sc for module in brought("conformance.protocols.{name}.scenarios") for sc in module.scenarios()]


def _agent_scenarios() -> list[Scenario]:
    """The requests real agents sent (conformance/agents/corpus), one scenario each (category agents)."""
    from conformance.scenarios import agents

    return agents.scenarios()


SCENARIOS: tuple[Scenario, ...] = tuple(_protocol_scenarios()) + tuple(_agent_scenarios())
BY_NAME = {sc.name: sc for sc in SCENARIOS}


def route_needed(sc: Scenario) -> str | None:
    """The protocol route (``Capability.route``) a scenario needs: its capability, or the one the probe of its
    capability needs (messages-thinking's probe needs messages), else the route of the protocol its request speaks
    (every chat scenario needs chat's route, the cancel calls included); None when it needs no route (the model list,
    /health)."""
    needs, seen = sc.needs, set()
    while needs is not None and needs not in seen:  # a probe may need its own capability (tools-auto)
        if needs in ROUTE_CAPABILITIES:
            return needs
        seen.add(needs)
        needs = BY_NAME[CAPABILITY_SCENARIOS[needs]].needs
    protocol = protocol_of(sc)
    return protocol if protocol in ROUTE_CAPABILITIES else None


@functools.cache
def _protocol_of(name: str) -> str | None:
    from conformance.protocols import endpoint_of, protocol_for

    endpoint = endpoint_of(BY_NAME[name].build(Context(model="MODEL", context_tokens=1024)).path)
    if endpoint == "cancel":  # the cancel endpoint is chat's (seed 000: /v1/chat/completions/{id}/cancel)
        endpoint = "chat"
    protocol = protocol_for(endpoint)
    return protocol.name if protocol is not None else None


def protocol_of(sc: Scenario) -> str | None:
    """The protocol a scenario's request speaks (by its route), None for a plain route (the model list, /health)."""
    return _protocol_of(sc.name)
