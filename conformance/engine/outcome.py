"""What a scenario left: its exchanges (``Sent``, before judging; ``Outcome``, with its reproducer), and when a
stream first showed the generation under way. A leaf of the engine: the runner makes them, the judge and the wire
log read them, and none of those imports another for them."""

from __future__ import annotations

from dataclasses import dataclass

from conformance.exchange import Exchange
from conformance.model.request import Request
from conformance.model.scenario import Scenario
from conformance.protocols import answers_for
from conformance.wire.errors import WireError
from conformance.wire.sse import SSEDecoder


@dataclass
class Outcome:
    """A scenario's exchanges (the first is the one the scenario is about) and its reproducer."""

    scenario: Scenario
    exchanges: list[Exchange]
    reproducer: str
    elapsed_s: float


@dataclass(frozen=True)
class Sent:
    """A scenario whose requests are done (``Runner.send_scenario``), before its outcome is made (``Runner.finish``)."""

    scenario: Scenario
    request: Request
    exchanges: list[Exchange]
    elapsed_s: float


def first_output_s(ex: Exchange) -> float | None:
    """When the first event that shows the generation under way arrived (None: no such event)."""
    try:
        events = SSEDecoder().feed(ex.body[:256 * 1024])
    except WireError:
        return None
    answers = answers_for(ex.path)
    end = next((e.end for e in events if answers(e.data)), None)
    if end is None:
        return None
    return next((t for t, total in ex.arrivals if total >= end), None)
