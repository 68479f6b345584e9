"""Cancellation: a disconnect frees the work; AFM's cancel endpoint, as ../shared/seeds/000 says."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from conformance.checks.registry import Finding, check, finding, short
from conformance.exchange import Analysis
from conformance.model import Intent
from conformance.model.observations import Disconnect

SLOW_FACTOR = 3.0
SLOW_MARGIN_S = 1.0


def _disconnect(a: Analysis) -> Disconnect:
    return a.exchange.observations.disconnect or Disconnect()


@check("CAN-001", when=(lambda a: a.exchange.observations.disconnect not in (None, Disconnect()),))
def work_freed(a: Analysis) -> Iterator[Finding]:
    obs = _disconnect(a)
    if obs.running_after is not None:
        if obs.running_after != 0:
            yield finding(a, "CAN-001", f"{obs.running_after} generation(s) still running after the disconnect "
                          f"({obs.signal or 'server counter'})", "0 within the grace period")
        elif obs.cancelled_delta == 0:
            yield finding(a, "CAN-001", "the server's cancelled counter did not move: the generation ran to its end",
                          "the abandoned generation stopped early")
        return
    follow, base = obs.followup_ttfb_s, obs.baseline_ttfb_s
    if isinstance(follow, (int, float)) and isinstance(base, (int, float)) \
            and follow > base * SLOW_FACTOR + SLOW_MARGIN_S:
        yield finding(a, "CAN-001", f"a follow-up waited {follow:.2f}s for its first byte (baseline {base:.2f}s)",
                      "the abandoned generation stopped, so no wait")


@check("CAN-005", when=(lambda a: _disconnect(a).other_stream_done is not None,))
def isolation(a: Analysis) -> Iterator[Finding]:
    if _disconnect(a).other_stream_done is not True:
        yield finding(a, "CAN-005", "another client's stream did not complete",
                      "it completes (a finish_reason on every choice, or [DONE])")


def _cancel_body(a: Analysis) -> Any:
    return a.json_body.get("cancelled") if isinstance(a.json_body, dict) else None


@check("CAN-002", when=(lambda a: a.exchange.endpoint == "cancel" and a.intent == Intent.CANCEL,))
def cancel_live(a: Analysis) -> Iterator[Finding]:
    if a.exchange.status != 200 or _cancel_body(a) is not True:
        yield finding(a, "CAN-002", f"status {a.exchange.status} cancelled {short(_cancel_body(a))}",
                      "200 with cancelled: true")


@check("CAN-004", when=(lambda a: a.exchange.endpoint == "cancel"
                        and a.intent in (Intent.CANCEL_UNKNOWN, Intent.CANCEL_COMPLETED),))
def cancel_unknown(a: Analysis) -> Iterator[Finding]:
    if a.exchange.status != 404 or _cancel_body(a) is not False:
        yield finding(a, "CAN-004", f"status {a.exchange.status} cancelled {short(_cancel_body(a))}",
                      "404 with cancelled: false")


@check("CAN-003", when=(lambda a: a.intent == Intent.CANCELLED_STREAM and a.format == "sse",))
def cancelled_stream(a: Analysis) -> Iterator[Finding]:
    reasons = [c.finish_reason for c in a.assembled.choices.values()]
    if reasons != ["cancelled"] or not a.assembled.done:
        yield finding(a, "CAN-003", f"finish_reason {reasons} and [DONE] {'seen' if a.assembled.done else 'missing'}",
                      "finish_reason cancelled, then [DONE]")
