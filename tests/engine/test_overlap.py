"""A scenario's outcome (its reproducer, its exchanges judged, its wire log files) is made while the next scenario
sends, where the run's order allows it: the first scenario's while the concurrent ones send (it is sent alone, so
that a 401 ends the run before anything else is sent), and each scenario of the one-at-a-time phase while the next
one sends. With -x each of those outcomes is made before the next scenario is sent (a gating failure stops
there). The outcomes stay in run order whatever order they are made in."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from conformance.engine.run import execute
from conformance.engine.runner import Runner
from conformance.engine.servers import ServerProcess
from conformance.settings import build_settings

# the first scenario, two concurrent ones, then disconnect and queue-full one at a time
CHOSEN = "stream-plain,non-stream,request-id,disconnect,queue-full"
ALONE = ["disconnect", "queue-full"]
WAIT_S = 20.0  # what a finish waits for the next scenario's send: a run that does not overlap them waits it out


def _watch(monkeypatch: pytest.MonkeyPatch, hold: dict[str, str], slow: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Record when each scenario is sent and its outcome made; the finish of each key of ``hold`` waits until the
    scenario named by its value has begun to send (and says whether it had); the finish of each of ``slow`` takes
    half a second more (a run that sends meanwhile shows it)."""
    begun = {name: threading.Event() for name in hold.values()}
    seen: dict[str, Any] = {"sent": {}, "made": {}, "overlapped": {}, "order": []}
    send, finish = Runner.send_scenario, Runner.finish

    def sending(self: Runner, sc: Any) -> Any:
        if sc.name in begun:
            begun[sc.name].set()
        started = time.monotonic()
        sent = send(self, sc)
        seen["sent"][sc.name] = (started, time.monotonic(), threading.current_thread().name)
        return sent

    def finishing(self: Runner, sent: Any) -> Any:
        name = sent.scenario.name
        started = time.monotonic()
        if name in hold:
            seen["overlapped"][name] = begun[hold[name]].wait(WAIT_S)
        if name in slow:
            time.sleep(0.5)
        outcome = finish(self, sent)
        seen["made"][name] = (started, time.monotonic(), threading.current_thread().name)
        return outcome

    monkeypatch.setattr(Runner, "send_scenario", sending)
    monkeypatch.setattr(Runner, "finish", finishing)
    return seen


def test_outcomes_are_made_while_the_next_scenarios_send(ref_server: ServerProcess,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _watch(monkeypatch, {"stream-plain": "request-id", "disconnect": "queue-full"})
    result = execute(build_settings(base_url=ref_server.base_url, scenarios=CHOSEN, timeout=30))
    assert seen["overlapped"] == {"stream-plain": True, "disconnect": True}
    names = [s["name"] for s in result.scenarios]
    assert names[0] == "stream-plain" and names[-2:] == ALONE  # run order, though stream-plain's was made late
    assert set(names) == set(CHOSEN.split(","))
    # each one-at-a-time scenario is sent on the run's thread, its outcome made on another
    assert seen["made"]["disconnect"][2] != seen["sent"]["queue-full"][2]
    assert result.checks and not [c for c in result.checks if c.outcome in ("failed", "error")]


def test_with_exitfirst_each_outcome_is_made_before_the_next_is_sent(ref_server: ServerProcess,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _watch(monkeypatch, {}, slow=frozenset({"stream-plain", "disconnect"}))
    result = execute(build_settings(base_url=ref_server.base_url, scenarios=CHOSEN, timeout=30, exitfirst=True))
    assert [s["name"] for s in result.scenarios][-2:] == ALONE
    assert seen["made"]["disconnect"][1] <= seen["sent"]["queue-full"][0]
    assert seen["made"]["stream-plain"][1] <= min(seen["sent"][n][0] for n in ("non-stream", "request-id"))
