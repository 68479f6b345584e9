"""A route the server does not serve (its probe answered 404, 405 or 501): the scenarios that need it are not sent,
and are listed as not sent with the probe's evidence (issue 44: each request to an unserved route is a failure a
proxy counts, and the LiteLLM proxy cools its only deployment down on each 404). --expect sends them all."""

from __future__ import annotations

import socket
import threading
from concurrent.futures import Future

import pytest

from conformance.engine.run import execute
from conformance.engine.runner import Outcome, Runner
from conformance.exchange import Exchange
from conformance.model.capabilities import CAPABILITY_SCENARIOS, ROUTE_CAPABILITIES
from conformance.scenarios import BY_NAME, SCENARIOS
from conformance.settings import build_settings
from tests.hostile.servers import HostileServer, Req, answer, send


def probed(status: int | None) -> Outcome:
    """The probe's outcome: its request answered ``status`` (None: no answer)."""
    return Outcome(BY_NAME["messages-stream"], [Exchange(request={}, body=b"", status=status, headers=())], "", 0.0)


def test_the_routes_are_the_protocols() -> None:
    assert ROUTE_CAPABILITIES == {"ollama", "responses", "messages"}


def test_a_scenario_needing_no_route_is_sent_and_a_probe_needing_itself_ends() -> None:
    runner = Runner(build_settings(base_url="http://127.0.0.1:9"))
    runner._probes = {CAPABILITY_SCENARIOS[c]: Future() for c in ROUTE_CAPABILITIES}  # never done: never waited for
    for name in ("tools-auto", "tools-none", "stream-plain", "json-schema-strict", "messages-stream"):
        assert runner.unserved(BY_NAME[name]) is None  # nothing waited for: no route, or the route's own probe


@pytest.mark.parametrize("status", [404, 405, 501, 400, 500, None])
def test_a_dependent_waits_for_its_probe_and_is_unsent_only_when_the_route_is_not_served(status: int | None) -> None:
    runner = Runner(build_settings(base_url="http://127.0.0.1:9"))
    runner._probes = {"messages-stream": Future()}
    got: list[str | None] = []
    waiting = threading.Thread(target=lambda: got.append(runner.unserved(BY_NAME["messages-thinking"])))
    waiting.start()
    waiting.join(0.2)
    assert waiting.is_alive()  # the probe has not been recorded yet
    runner._probes["messages-stream"].set_result(probed(status))
    waiting.join(5)
    if status in (404, 405, 501):
        assert got == [f"not sent: capability messages unsupported (messages-stream answered {status}: "
                       "the route is not served)"]
    else:
        assert got == [None]  # a refusal of the probe's request, or no answer, says nothing of the route


def test_expect_sends_a_dependent_whatever_the_probe_said() -> None:
    runner = Runner(build_settings(base_url="http://127.0.0.1:9", expect="messages"))
    runner._probes = {"messages-stream": Future()}
    runner._probes["messages-stream"].set_result(probed(404))
    assert runner.unserved(BY_NAME["messages-json"]) is None


def only_chat(conn: socket.socket, req: Req) -> None:
    if req.path.endswith("/responses"):
        send(conn, 405, {"Content-Type": "text/plain"}, b"method not allowed")
        return
    answer(conn, req)


@pytest.mark.parametrize("expect", ["", "responses"])
def test_a_live_run_sends_one_request_to_an_unserved_route(expect: str) -> None:
    with HostileServer(only_chat) as server:
        result = execute(build_settings(base_url=server.base_url, model="m", categories="responses", expect=expect,
                                        timeout=10, wire_log=False))
    sent = [r.path for r in server.requests if r.path.endswith("/responses")]
    responses = [sc.name for sc in SCENARIOS if sc.category == "responses"]
    unsent = {s["name"]: s["not_sent"] for s in result.scenarios if s.get("not_sent")}
    if expect:
        assert not unsent and len(sent) >= len(responses) - 1
        return
    assert sent == ["/v1/responses"], sent
    ran = [s["name"] for s in result.scenarios if s["category"] == "responses"]
    assert sorted(unsent) == sorted(n for n in ran if n != "responses-stream") and len(unsent) >= 10
    assert set(unsent.values()) == {"not sent: capability responses unsupported (responses-stream answered 405: "
                                    "the route is not served)"}
    caps = result.target["capabilities"]
    assert caps["responses"]["supported"] is False and caps["responses-state"]["supported"] is False
    assert caps["responses-state"]["evidence"].startswith("not sent: capability responses unsupported")
    checks = [c for c in result.checks if c.scenario in unsent]
    assert checks and {c.outcome for c in checks} == {"skipped"} and {c.category for c in checks} == {"responses"}
    assert not [c for c in result.checks if c.outcome == "failed"]
