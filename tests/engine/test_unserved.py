"""A route the server does not serve (its probe answered 404, 405 or 501): the scenarios that need it are not sent,
and are listed as not sent with the probe's evidence (issue 44: each request to an unserved route is a failure a
proxy counts, and the LiteLLM proxy cools its only deployment down on each 404). --expect sends them all."""

from __future__ import annotations

import socket
from dataclasses import replace

import pytest

from conformance.capabilities import ROUTE_CAPABILITIES
from conformance.engine.run import execute
from conformance.engine.runner import Runner
from conformance.exchange import Exchange
from conformance.protocols import REGISTRY
from conformance.scenarios import BY_NAME, SCENARIOS, protocol_of
from conformance.settings import build_settings
from tests.hostile.servers import HostileServer, Req, answer, send


def probed(status: int | None, body: bytes = b"") -> Exchange:
    """The probe's first exchange: its request answered ``status`` (None: no answer)."""
    return Exchange(request={}, body=body, status=status, headers=(), path="/v1/messages")


def test_the_routes_are_the_protocols() -> None:
    assert ROUTE_CAPABILITIES == set(REGISTRY)  # chat's route included: a server may serve another protocol alone


def test_a_scenario_is_sent_when_its_probe_is_not_in_the_run_and_a_probe_always() -> None:
    runner = Runner(build_settings(base_url="http://127.0.0.1:9"))
    for name in ("tools-auto", "tools-none", "stream-plain", "json-schema-strict", "messages-stream"):
        assert runner.unserved(BY_NAME[name]) is None  # no probe answered yet, or the route's own probe


@pytest.mark.parametrize("status", [404, 405, 501, 400, 500, None])
def test_a_dependent_is_unsent_only_when_the_route_is_not_served(status: int | None) -> None:
    runner = Runner(build_settings(base_url="http://127.0.0.1:9"))
    runner.routes = {"messages-stream": probed(status)}
    got = runner.unserved(BY_NAME["messages-thinking"])
    if status in (404, 405, 501):
        assert got == (f"not sent: capability messages unsupported (messages-stream answered {status}: "
                       "the route is not served)")
    else:
        assert got is None  # a refusal of the probe's request, or no answer, says nothing of the route


def test_a_404_that_names_the_model_is_no_route_not_served() -> None:
    runner = Runner(build_settings(base_url="http://127.0.0.1:9", model="m"))
    runner.routes = {"messages-stream": probed(404, b'{"type": "error", "error": {"type": "not_found_error", '
                                                      b'"message": "model: m"}}')}
    assert runner.unserved(BY_NAME["messages-json"]) is None


def test_every_chat_scenario_needs_the_chat_route() -> None:
    runner = Runner(build_settings(base_url="http://127.0.0.1:9"))
    runner.routes = {"stream-plain": replace(probed(404), path="/v1/chat/completions")}
    chat = [sc for sc in SCENARIOS if sc.name != "stream-plain" and protocol_of(sc) == "chat"]
    assert len(chat) > 50 and all(runner.unserved(sc) for sc in chat)
    assert runner.unserved(BY_NAME["cancel-unknown"])  # the cancel endpoint is chat's


def test_expect_sends_a_dependent_whatever_the_probe_said() -> None:
    runner = Runner(build_settings(base_url="http://127.0.0.1:9", expect="messages"))
    runner.routes = {"messages-stream": probed(404)}
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
