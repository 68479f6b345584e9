"""The reference server under hostile input: every bad request is a 4xx in the envelope, values it
cannot run are refused up front, the key guards every route, idle and partial clients time out."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from conformance.engine.servers import ServerProcess
from reference_server.engine import MODEL_ID
from tests.reference.conftest import reference

HELLO = [{"role": "user", "content": "Say hello."}]
WEATHER = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}


def nested(depth: int, open_: str = "[", close: str = "]") -> str:
    return open_ * depth + close * depth


RAW = [  # (id, body text, path)
    ("arrays-100000", '{"model": "m", "messages": ' + nested(100_000) + "}", "/v1/chat/completions"),
    ("arrays-100000-ollama", '{"model": "m", "messages": ' + nested(100_000) + "}", "/api/chat"),
    ("objects-2000", '{"model": "m", "messages": [], "metadata": ' + ('{"a": ' * 2000) + "1" + "}" * 2000 + "}",
     "/v1/chat/completions"),
]
def _deep_schema(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}}
    return schema


BODIES: list[tuple[str, dict[str, Any]]] = [
    ("schema-400-deep", {"messages": HELLO, "response_format": {"type": "json_schema", "json_schema": {
        "name": "s", "schema": _deep_schema(400)}}}),
    ("tool-calls-string", {"messages": [*HELLO, {"role": "assistant", "tool_calls": "x"}]}),
    ("tool-calls-function-int", {"messages": [*HELLO, {"role": "assistant", "tool_calls": [{"function": 5}]}]}),
    ("tool-choice-function-string", {"messages": HELLO, "tools": [WEATHER],
                                     "tool_choice": {"type": "function", "function": "f"}}),
    ("seed-2-64", {"messages": HELLO, "seed": 2**64}),
    ("top-k-2-63", {"messages": HELLO, "top_k": 2**63}),
]


@pytest.mark.parametrize(("text", "path"), [c[1:] for c in RAW], ids=[c[0] for c in RAW])
def test_deep_nesting_is_a_400(server: ServerProcess, text: str, path: str) -> None:
    response = httpx.post(server.base_url + path, content=text, headers={"Content-Type": "application/json"},
                          timeout=30)
    assert response.status_code == 400, response.text[:200]
    assert "error" in response.json()


@pytest.mark.parametrize("body", [c[1] for c in BODIES], ids=[c[0] for c in BODIES])
def test_bad_values_are_4xx_in_the_envelope(server: ServerProcess, body: dict[str, Any]) -> None:
    for stream in (False, True):
        response = httpx.post(server.base_url + "/v1/chat/completions", timeout=30,
                              json={"model": MODEL_ID, "stream": stream, **body})
        assert 400 <= response.status_code < 500, (stream, response.status_code, response.text[:200])
        error = response.json()["error"]
        assert error["message"] and error["code"] and "param" in error


def test_the_key_guards_every_route(model_dir: Path) -> None:
    with reference(model_dir, "--api-key", "k-123") as locked:
        base = locked.base_url
        for method, path, body in [("POST", "/v1/chat/completions", {"model": MODEL_ID, "messages": HELLO}),
                                   ("POST", "/api/chat", {"model": MODEL_ID, "messages": HELLO}),
                                   ("POST", "/api/generate", {"model": MODEL_ID, "prompt": "hi"}),
                                   ("GET", "/api/tags", None), ("GET", "/v1/models", None),
                                   ("POST", "/v1/chat/completions/someone-else/cancel", {})]:
            denied = httpx.request(method, base + path, json=body, timeout=30)
            assert denied.status_code == 401, (path, denied.status_code)
        allowed = httpx.post(base + "/v1/chat/completions/someone-else/cancel", json={},
                             headers={"Authorization": "Bearer k-123"}, timeout=30)
        assert allowed.status_code == 404 and allowed.json()["cancelled"] is False


PARTIAL = 2_100  # more than a default limit of 1,024 open files


def test_partial_and_idle_requests_time_out(model_dir: Path) -> None:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < PARTIAL + 512:  # this test's own sockets need room too
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, PARTIAL + 512), hard))
        except ValueError:
            pytest.skip("this process may not open enough files for the test")
    with reference(model_dir, "--request-timeout", "1") as srv:
        port = int(srv.base_url.rsplit(":", 1)[1])
        clients = []
        for _ in range(PARTIAL):  # half a request head each, then silence
            sock = socket.create_connection(("127.0.0.1", port))
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")
            clients.append(sock)
        time.sleep(3)
        closed = 0
        for sock in clients:
            sock.settimeout(1)
            try:
                closed += sock.recv(1) == b""
            except OSError:
                closed += 1
            sock.close()
        assert closed == len(clients)
        assert httpx.get(srv.base_url + "/health", timeout=5).status_code == 200  # and it still serves
        assert "Traceback" not in srv.log_tail(200)
