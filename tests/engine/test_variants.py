"""Documented dialects: a variant refused as seed 001 documents it is unsupported (not failed), and model
discovery passes over ids that name embedding or other non-chat models (seed 003 §6)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from conformance.engine.client import Limits, Request
from conformance.engine.judge import refused_variant
from conformance.engine.runner import Runner
from conformance.engine.servers import ServerProcess
from conformance.exchange import Exchange
from conformance.settings import build_settings
from tests.hostile.servers import HostileServer, Req, answer, chunk, send, sse_head


def refusal(status: int, error: dict[str, object], request: dict[str, object]) -> Exchange:
    return Exchange(request=request, body=json.dumps({"error": error}).encode(), status=status,
                    headers=(("content-type", "application/json"),))


def test_a_documented_refusal_names_the_variant() -> None:
    ex = refusal(400, {"message": "no", "type": "invalid_request_error", "param": "tool_choice",
                       "code": "unsupported_value"}, {"tool_choice": "required"})
    assert refused_variant(ex) == 'tool_choice="required" refused: 400 unsupported_value'


def test_other_refusals_are_not_variants() -> None:
    base = {"message": "no", "type": "invalid_request_error", "param": "tool_choice", "code": "unsupported_value"}
    assert refused_variant(refusal(400, {**base, "code": "invalid_json"}, {})) is None  # another reason
    assert refused_variant(refusal(400, {**base, "param": "messages"}, {})) is None  # another field
    assert refused_variant(refusal(500, base, {})) is None  # not a refusal
    assert refused_variant(refusal(429, base, {})) is None
    assert refused_variant(Exchange(request={}, body=b"Bad Request", status=400)) is None


def embedding_first(conn: socket.socket, req: Req) -> None:
    if req.path.endswith("/v1/models"):
        send(conn, 200, {"Content-Type": "application/json"}, json.dumps({"object": "list", "data": [
            {"id": "text-embedding-nomic-embed-text-v1.5", "object": "model"},
            {"id": "bge-reranker-base", "object": "model"}, {"id": "qwen3-4b", "object": "model"}]}).encode())
        return
    answer(conn, req)


def test_discovery_passes_over_embedding_models() -> None:
    with HostileServer(embedding_first) as server:
        assert Runner(build_settings(base_url=server.base_url)).discover() == "qwen3-4b"


def _verdicts(base_url: str, profile: str, scenarios: str) -> dict[str, set[str]]:
    from conformance.engine.run import execute

    result = execute(build_settings(base_url=base_url, profile=profile, scenarios=scenarios, timeout=30))
    out: dict[str, set[str]] = {}
    for c in result.checks:
        out.setdefault(c.rule, set()).add(str(c.outcome))
    return out


def test_the_strict_profile_judges_what_seed_001_promises(ref_server: ServerProcess) -> None:
    chosen = "prompt-reuse,tools-schema-union,image-data-url,image-wrong-role,image-detail-high,image-remote-url," \
             "models,health"
    strict = _verdicts(ref_server.base_url, "strict", chosen)
    for rule in ("USG-012", "TOOL-019", "IMG-001", "IMG-002", "MOD-007", "MOD-008"):
        assert strict.get(rule) == {"passed"}, (rule, strict.get(rule))
    plain = _verdicts(ref_server.base_url, "openai", chosen)
    assert "passed" not in plain.get("USG-012", set())  # prompt reuse is seed 001's promise, not every server's


def test_scenarios_for_a_dialect_run_only_under_its_profile() -> None:
    from conformance.engine.judge import scenarios_for

    assert "image-detail-high" not in scenarios_for(None) and "image-detail-high" in scenarios_for(None, profile="strict")
    assert "ollama-pull" not in scenarios_for(None, profile="strict")  # opt-in: a real Ollama may download
    assert "ollama-pull" in scenarios_for(None, frozenset({"ollama-pull"}))  # chosen by name, it runs


def test_each_feature_variant_is_reported_supported_unsupported_or_failed() -> None:
    from conformance.engine.run import execute
    from conformance.engine.servers import reference

    chosen = "tools-auto,tools-required,tools-named,tools-none,tools-parallel-false,json-object,prompt-reuse," \
             "stream-usage"
    with reference(extra=["--fault", "strict-variants"]) as server:
        result = execute(build_settings(base_url=server.base_url, scenarios=chosen, timeout=30))
    states = {name: f["state"] for name, f in result.target["features"].items()}
    assert states == {"usage (include_usage)": "supported", "tool_choice: auto": "supported",
                      "tool_choice: required": "unsupported", "tool_choice: named": "unsupported",
                      "tool_choice: none": "supported", "parallel_tool_calls: false": "unsupported",
                      "response_format: json_object": "unsupported", "prompt reuse (cached_tokens)": "supported",
                      "response_format: json_schema strict": "unsupported",  # the structured probe, added
                      "Chat Completions": "supported"}  # the chat route's probe, added
    evidence = result.target["features"]["tool_choice: required"]["evidence"]
    assert "unsupported_value" in evidence, evidence


def test_a_429_with_retry_after_is_waited_out_and_reported() -> None:
    seen = {"chat": 0}

    def cooldown(conn: socket.socket, req: Req) -> None:  # a proxy's cooldown: the first chat request gets 429
        if req.path.endswith("/chat/completions"):
            seen["chat"] += 1
            if seen["chat"] == 1:
                send(conn, 429, {"Content-Type": "application/json", "Retry-After": "1"},
                     b'{"error": {"message": "in cooldown", "type": "rate_limit", "param": null, "code": "429"}}')
                return
        answer(conn, req)

    with HostileServer(cooldown) as server:
        runner = Runner(build_settings(base_url=server.base_url, timeout=30))
        ex = runner.send(Request(body={"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}))
    assert ex.status == 200 and seen["chat"] == 2
    assert ex.observations.retried == "429 with Retry-After: waited 1 s and sent again once"


def test_a_429_without_retry_after_is_backed_off_as_the_sdks_do() -> None:
    """The LiteLLM proxy's /v1/messages answers its cooldown with 429 and no Retry-After; its capability probe was
    reported unsupported on that 429. The SDKs retry it with a doubling delay, and so does the suite now."""
    seen = {"messages": 0}

    def cooldown(conn: socket.socket, req: Req) -> None:
        if req.path.endswith("/messages"):
            seen["messages"] += 1
            if seen["messages"] <= 2:
                send(conn, 429, {"Content-Type": "application/json"},
                     b'{"type":"error","error":{"type":"rate_limit_error","message":"Try again in 5 seconds"}}')
                return
            send(conn, 200, {"Content-Type": "application/json"}, b'{"type": "message"}')
            return
        answer(conn, req)

    body = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}
    with HostileServer(cooldown) as server:
        runner = Runner(build_settings(base_url=server.base_url, timeout=30))
        ex = runner.send(Request(body=body, path="/v1/messages"))
    assert ex.status == 200 and seen["messages"] == 3
    assert ex.observations.retried == "429 without Retry-After (backed off as the SDKs do): waited 3 s and sent again " \
        "2 times"


def test_a_cooldown_that_goes_on_is_waited_out_while_the_time_limit_allows() -> None:
    seen = {"chat": 0}

    def cooldowns(conn: socket.socket, req: Req) -> None:  # LiteLLM: new upstream errors, a new cooldown each time
        if req.path.endswith("/chat/completions"):
            seen["chat"] += 1
            if seen["chat"] <= 3:
                send(conn, 429, {"Content-Type": "application/json", "Retry-After": "1"},
                     b'{"error": {"message": "in cooldown", "type": "rate_limit", "param": null, "code": "429"}}')
                return
        answer(conn, req)

    with HostileServer(cooldowns) as server:
        runner = Runner(build_settings(base_url=server.base_url, timeout=30))
        ex = runner.send(Request(body={"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}))
    assert ex.status == 200 and seen["chat"] == 4
    assert ex.observations.retried == "429 with Retry-After: waited 3 s and sent again 3 times"


def test_cooldowns_end_within_the_time_limit() -> None:
    def forever(conn: socket.socket, req: Req) -> None:
        send(conn, 429, {"Content-Type": "application/json", "Retry-After": "2"},
             b'{"error": {"message": "in cooldown", "type": "rate_limit", "param": null, "code": "429"}}')

    with HostileServer(forever) as server:
        start = time.monotonic()
        ex = Runner(build_settings(base_url=server.base_url, timeout=8)).send(
            Request(body={"model": "m", "messages": [{"role": "user", "content": "hi"}]}))
        took = time.monotonic() - start
    assert ex.status == 429 and ex.observations.retried is not None
    assert took < 8 + 1, took  # T (8 s) bounds the request and all its retries


def test_a_429_asking_for_a_long_wait_stands() -> None:
    def busy(conn: socket.socket, req: Req) -> None:
        send(conn, 429, {"Content-Type": "application/json", "Retry-After": "60"},
             b'{"error": {"message": "busy", "type": "rate_limit", "param": null, "code": "rate_limited"}}')

    with HostileServer(busy) as server:
        ex = Runner(build_settings(base_url=server.base_url, timeout=30)).send(
            Request(body={"model": "m", "messages": [{"role": "user", "content": "hi"}]}))
    assert ex.status == 429 and ex.observations.retried is None


# one event, no choice finished, then [DONE]: how llama-cpp-python 0.3.36 ends a stream it interrupts
INTERRUPTED = (b'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,'
               b'"delta":{"role":"assistant"},"finish_reason":null}]}\n\ndata: [DONE]\n\n')


def _cut_chunked(conn: socket.socket) -> None:
    """The interrupted stream, then a close without the chunked body's last chunk."""
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                 + f"{len(INTERRUPTED):x}\r\n".encode() + INTERRUPTED + b"\r\n")


def test_a_lost_connection_is_sent_again_alone_and_reported() -> None:
    seen = {"chat": 0}

    def interrupted_once(conn: socket.socket, req: Req) -> None:
        if req.path.endswith("/chat/completions"):
            seen["chat"] += 1
            if seen["chat"] == 1:
                _cut_chunked(conn)
                return
        answer(conn, req)

    with HostileServer(interrupted_once) as server:
        runner = Runner(build_settings(base_url=server.base_url, timeout=30))
        ex = runner.send(Request(body={"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}))
    assert ex.status == 200 and ex.observations.aborted is None and seen["chat"] == 2
    assert ex.observations.retried is not None and "incomplete chunked read" in ex.observations.retried
    assert b"Hello" in ex.body


def test_a_loss_that_happens_again_alone_is_judged() -> None:
    def always(conn: socket.socket, req: Req) -> None:
        if req.path.endswith("/chat/completions"):
            _cut_chunked(conn)
            return
        answer(conn, req)

    with HostileServer(always) as server:
        ex = Runner(build_settings(base_url=server.base_url, timeout=30)).send(
            Request(body={"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}))
    assert ex.observations.aborted == "protocol error" and ex.observations.retried is not None


def test_a_stream_whose_loss_is_the_point_is_not_sent_again() -> None:
    with HostileServer(lambda conn, req: _cut_chunked(conn) if req.path.endswith("/chat/completions")
                       else answer(conn, req)) as server:
        ex = Runner(build_settings(base_url=server.base_url, timeout=30)).send(
            Request(body={"model": "m", "messages": [], "stream": True}, retry_lost=False))
    assert ex.observations.aborted == "protocol error" and ex.observations.retried is None


def test_the_gate_runs_a_resend_with_nothing_else_in_flight() -> None:
    import threading

    from conformance.engine.runner import Gate

    gate, order = Gate(), []
    release = threading.Event()

    def reader() -> None:
        with gate.shared():
            order.append("reader in")
            release.wait(5)
            order.append("reader out")

    t = threading.Thread(target=reader)
    t.start()
    while not order:
        time.sleep(0.01)
    threading.Timer(0.3, release.set).start()
    with gate.alone(timeout=5) as got:
        order.append("alone")
    t.join()
    assert got and order == ["reader in", "reader out", "alone"]
    with gate.alone(timeout=0.2) as got_again:  # nothing in flight: at once
        assert got_again


def test_a_stream_cut_short_is_sent_again_alone() -> None:
    seen = {"chat": 0}

    def interrupting(conn: socket.socket, req: Req) -> None:  # llama-cpp-python's interrupt_requests
        if req.path.endswith("/chat/completions"):
            seen["chat"] += 1
            if seen["chat"] == 1:
                conn.sendall(sse_head() + INTERRUPTED)
                return
        answer(conn, req)

    with HostileServer(interrupting) as server:
        ex = Runner(build_settings(base_url=server.base_url, timeout=30)).send(
            Request(body={"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}))
    assert seen["chat"] == 2 and b'"finish_reason": "stop"' in ex.body
    assert ex.observations.retried is not None and "before any choice finished" in ex.observations.retried


def _slow_refusal_once(seen: dict[str, int]):  # type: ignore[no-untyped-def]
    """A refusal late the first time (as under the suite's own load: issue 27), prompt after."""
    def behaviour(conn: socket.socket, req: Req) -> None:
        if req.path.endswith("/chat/completions") and req.json() is None:
            seen["bad"] += 1
            if seen["bad"] == 1:
                time.sleep(1.5)
            send(conn, 400, {"Content-Type": "application/json"},
                 b'{"error":{"message":"bad json","type":"invalid_request_error","code":"invalid_json"}}')
            return
        answer(conn, req)
    return behaviour


@contextmanager
def another_request_in_flight(runner: Runner, seconds: float = 3.0) -> Iterator[None]:
    """Another request of the run in flight (a worker holding the gate's shared side) while the test's one is sent:
    the suite's own load, which is what a resend alone is for (issue 44: only then)."""
    entered = threading.Event()

    def hold() -> None:
        with runner.gate.shared():
            entered.set()
            time.sleep(seconds)

    worker = threading.Thread(target=hold, daemon=True)
    worker.start()
    entered.wait(5)
    try:
        yield
    finally:
        worker.join()


def test_a_refusal_late_under_the_runs_load_is_timed_again_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance import settings
    from conformance.model import Intent

    monkeypatch.setattr(settings, "REFUSAL_S", 1.0)  # the refusal deadline, 10 s in a run
    bad = Request(content=b"{", intent=Intent.MALFORMED_JSON, headers={"Content-Type": "application/json"})
    seen = {"bad": 0}
    with HostileServer(_slow_refusal_once(seen)) as server:
        runner = Runner(build_settings(base_url=server.base_url, timeout=20, workers=4))
        with another_request_in_flight(runner):
            ex = runner.send(bad)
    assert ex.status == 400 and ex.observations.aborted is None and seen["bad"] == 2
    assert ex.observations.retried is not None and "refusal deadline" in ex.observations.retried
    seen = {"bad": 0}
    with HostileServer(_slow_refusal_once(seen)) as server:  # nothing else was in flight: it stands
        ex = Runner(build_settings(base_url=server.base_url, timeout=20, workers=1)).send(bad)
    assert ex.observations.aborted == "refusal deadline" and seen["bad"] == 1


def _role_then_prefill(conn: socket.socket, req: Req) -> None:
    """Bad input worked on: 200 and a role-only chunk at once, as transformers serve sends one before its prefill,
    then the prefill (nothing more for 30 s)."""
    if req.path.endswith("/chat/completions") and req.json() is None:
        conn.sendall(sse_head() + chunk({"role": "assistant", "content": ""}))
        time.sleep(30)
        return
    answer(conn, req)


def test_a_role_only_chunk_is_no_answer_under_the_refusal_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 44: the refusal deadline waits for an event that shows the generation under way (the protocol's
    `answers`), not any event: a server that sends a role-only chunk and then prefills is cut at the deadline."""
    from conformance import settings
    from conformance.model import Intent

    monkeypatch.setattr(settings, "REFUSAL_S", 1.0)  # the refusal deadline, 10 s in a run
    bad = Request(content=b"{", intent=Intent.MALFORMED_JSON, headers={"Content-Type": "application/json"})
    with HostileServer(_role_then_prefill) as server:
        started = time.monotonic()
        ex = Runner(build_settings(base_url=server.base_url, timeout=20, workers=1)).send(bad)
        elapsed = time.monotonic() - started
    assert ex.status == 200 and ex.observations.aborted == "refusal deadline", ex.observations
    assert elapsed < 5, elapsed


class _UnreadOnce:
    """The first connection's request is never read (the server busy on its event loop); the next is answered."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.connections = 0
        threading.Thread(target=self.serve, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self.answer, args=(conn, self.connections), daemon=True).start()

    def answer(self, conn: socket.socket, number: int) -> None:
        with conn:
            if number == 1:
                time.sleep(4)  # reads nothing: the sender's idle limit (1.5 s) runs out
                return
            got = b""
            while b"\r\n\r\n" not in got:
                got += conn.recv(65536)
            head, rest = got.split(b"\r\n\r\n", 1)
            length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length")))
            while len(rest) < length:
                rest += conn.recv(1 << 20)
            conn.sendall(b"HTTP/1.1 413 Payload Too Large\r\nContent-Type: application/json\r\nContent-Length: 57"
                         b"\r\nConnection: close\r\n\r\n"
                         b'{"error":{"message":"too large","type":"invalid_request"}}')


def test_a_body_the_server_stopped_reading_under_the_runs_load_is_sent_again_alone() -> None:
    big = Request(content=b"{" + b" " * (8 << 20) + b"}", headers={"Content-Type": "application/json"})
    limits = Limits(total=20, idle=1.5)  # a run's: between reads (and sends) less than the total
    server = _UnreadOnce()
    runner = Runner(build_settings(base_url=server.base_url, timeout=20, workers=4))
    with another_request_in_flight(runner):
        ex = runner.send(big, limits)
    server.sock.close()
    assert ex.status == 413 and ex.observations.aborted is None and server.connections == 2
    assert ex.observations.retried is not None and "stopped reading the request body" in ex.observations.retried
    server = _UnreadOnce()
    ex = Runner(build_settings(base_url=server.base_url, timeout=20, workers=1)).send(big, limits)  # alone: it stands
    server.sock.close()
    assert ex.observations.aborted == "send timeout" and server.connections == 1


def test_a_bursts_queued_requests_do_not_count_toward_the_limit_streak() -> None:
    """Three requests in a row cut at a limit stop the run (issue 44); a burst's queued requests, which wait for a
    slot and are left by design, are not in that streak. Against transformers serve (one slot) the queue-full
    burst's queued streams, cut at the idle timeout, stopped the run before the overflow scenarios."""
    def queued(conn: socket.socket, req: Req) -> None:  # the stream's head at once, its events never
        if not req.path.endswith("/chat/completions"):
            return answer(conn, req)
        conn.sendall(sse_head())
        time.sleep(10)

    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    limits = Limits(connect=2, first_byte=1, idle=0.5, total=1)
    with HostileServer(queued) as server:
        burst = Runner(build_settings(base_url=server.base_url, timeout=10))
        for _ in range(4):
            ex = burst.send(Request(body=body, abandon=threading.Event()), limits)
            assert ex.observations.aborted == "idle timeout", ex.observations
        assert burst.stopped is None
        plain = Runner(build_settings(base_url=server.base_url, timeout=10))
        for _ in range(3):
            plain.send(Request(body=body), limits)
        assert plain.stopped is not None and "3 requests in a row were cut at a limit" in plain.stopped
