"""The reference server as a real process: queue limit, cancel endpoint, validation, constrained output."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest

from conformance.engine.servers import ServerProcess
from conformance.exchange import Exchange, analyze
from conformance.results import schema
from reference_server.engine import MODEL_ID
from tests.reference.conftest import reference

HELLO = [{"role": "user", "content": "Say hello."}]
LONG = [{"role": "user", "content": "a long story"}]


def chat(server: ServerProcess, **body: Any) -> httpx.Response:
    return httpx.post(server.base_url + "/v1/chat/completions", json={"model": MODEL_ID, **body}, timeout=30)


def first_event_then(server: ServerProcess, headers: dict[str, str], action: Any) -> bytes:
    """Open a long stream, run ``action`` after its first event, then read the rest."""
    with httpx.stream("POST", server.base_url + "/v1/chat/completions", headers=headers, timeout=30,
                      json={"model": MODEL_ID, "messages": LONG, "stream": True, "max_tokens": 3000}) as response:
        chunks = response.iter_bytes()
        body = next(chunks)
        action()
        return body + b"".join(chunks)


def test_cancel_endpoint_ends_the_stream_with_cancelled(server: ServerProcess) -> None:
    answers: list[httpx.Response] = []

    def cancel() -> None:
        answers.append(httpx.post(server.base_url + "/v1/chat/completions/rid-7/cancel"))

    body = first_event_then(server, {"X-Request-ID": "rid-7"}, cancel)
    assert answers[0].status_code == 200 and answers[0].json()["cancelled"] is True
    a = analyze(Exchange(request={"stream": True}, body=body, headers=(("content-type", "text/event-stream"),)))
    assert a.assembled.choice(0).finish_reason == "cancelled" and a.assembled.done
    again = httpx.post(server.base_url + "/v1/chat/completions/rid-7/cancel")
    assert again.status_code == 404 and again.json()["cancelled"] is False


def test_queue_full_answers_429_with_retry_after(model_dir: Path) -> None:
    with reference(model_dir, "--queue-limit", "1", "--max-context", "200000") as small:
        def hold(_: int) -> int:  # 150,000 tokens: the stream outlives the test's three seconds
            with httpx.stream("POST", small.base_url + "/v1/chat/completions", timeout=30, json={
                    "model": MODEL_ID, "messages": LONG, "stream": True, "max_tokens": 150000}) as response:
                if response.status_code == 200:
                    chunks = response.iter_bytes()  # kept: a discarded iterator closes the stream
                    next(chunks)
                    time.sleep(3.0)
                return response.status_code

        with ThreadPoolExecutor(4) as pool:
            statuses = list(pool.map(hold, range(4)))
        assert statuses.count(200) == 2 and statuses.count(429) == 2
        refused = chat(small, messages=HELLO)
        assert refused.status_code in (200, 429)


def test_queue_full_error_shape(model_dir: Path) -> None:
    with reference(model_dir, "--queue-limit", "0", "--max-context", "200000") as tiny:
        with httpx.stream("POST", tiny.base_url + "/v1/chat/completions", timeout=30, json={
                "model": MODEL_ID, "messages": LONG, "stream": True, "max_tokens": 150000}) as response:
            chunks = response.iter_bytes()  # kept: a discarded iterator closes the stream
            next(chunks)
            refused = chat(tiny, messages=HELLO)
        assert refused.status_code == 429 and refused.headers["retry-after"] == "1"
        assert refused.json()["error"]["code"] == "queue_full"


CASES = [
    ("unknown-parameter", {"messages": HELLO, "temperatur": 1}, 400, "unknown_parameter", "temperatur"),
    ("bad-value", {"messages": HELLO, "temperature": 9}, 400, "invalid_value", "temperature"),
    ("n-two", {"messages": HELLO, "n": 2}, 400, "unsupported_value", "n"),
    ("bad-tool-schema", {"messages": HELLO, "tools": [{"type": "function", "function": {
        "name": "f", "parameters": {"type": "string"}}}]}, 400, "invalid_tool_schema", "tools[0].function.parameters"),
    ("unknown-model", {"model": "nope", "messages": HELLO}, 404, "model_not_found", "model"),
    ("context", {"messages": [{"role": "user", "content": "hi " * 70000}]}, 400, "context_length_exceeded", "messages"),
]


@pytest.mark.parametrize(("body", "status", "code", "param"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_validation(server: ServerProcess, body: dict[str, Any], status: int, code: str, param: str) -> None:
    response = httpx.post(server.base_url + "/v1/chat/completions", json={"model": MODEL_ID, **body}, timeout=30)
    assert response.status_code == status
    error = response.json()["error"]
    assert (error["code"], error["param"]) == (code, param) and error["message"] and "type" in error


def test_oversized_body_is_413(server: ServerProcess) -> None:
    response = chat(server, messages=[{"role": "user", "content": "x" * (9 * 1024 * 1024)}])
    assert response.status_code == 413 and response.json()["error"]["code"] == "request_too_large"


def test_named_tool_arguments_match_its_schema(server: ServerProcess) -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer", "maximum": 99},
                                               "tags": {"type": "array", "items": {"type": "string"}}},
              "required": ["name", "age"]}
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}},
             {"type": "function", "function": {"name": "add_person", "parameters": schema}}]
    response = chat(server, messages=HELLO, tools=tools, max_tokens=400,
                    tool_choice={"type": "function", "function": {"name": "add_person"}})
    call = response.json()["choices"][0]["message"]["tool_calls"][0]
    assert call["function"]["name"] == "add_person"
    jsonschema.validate(json.loads(call["function"]["arguments"]), schema)
    assert response.json()["choices"][0]["finish_reason"] == "tool_calls"


def test_json_schema_output_matches(server: ServerProcess) -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}, "n": {"type": "number"}},
              "required": ["city", "n"], "additionalProperties": False}
    response = chat(server, messages=HELLO, max_tokens=300, response_format={
        "type": "json_schema", "json_schema": {"name": "out", "schema": schema, "strict": True}})
    jsonschema.validate(json.loads(response.json()["choices"][0]["message"]["content"]), schema)


def test_same_seed_same_output(server: ServerProcess) -> None:
    outs = {chat(server, messages=HELLO, seed=7, temperature=1.5).json()["choices"][0]["message"]["content"]
            for _ in range(2)}
    assert len(outs) == 1


def test_api_key_required_when_set(model_dir: Path) -> None:
    with reference(model_dir, "--api-key", "k-123") as locked:
        denied = httpx.post(locked.base_url + "/v1/chat/completions", json={"model": MODEL_ID, "messages": HELLO})
        assert denied.status_code == 401 and denied.json()["error"]["code"] == "invalid_api_key"
        allowed = httpx.post(locked.base_url + "/v1/chat/completions", headers={"Authorization": "Bearer k-123"},
                             json={"model": MODEL_ID, "messages": HELLO}, timeout=30)
        assert allowed.status_code == 200


def test_conformance_run_without_a_url_passes(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "conformance", "run", "--report-dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    doc = json.loads((tmp_path / "results.json").read_text())
    jsonschema.validate(doc, schema())
    assert doc["summary"]["failed_by_level"] == {"must": 0, "should": 0, "advisory": 0}
    caps = doc["target"]["capabilities"]
    assert all(cap["supported"] for name, cap in caps.items() if name != "images")
    assert caps["images"]["supported"] is False  # the bundled model has no vision tower (seed 001: no vision pack)
    assert {"report.html", "report.md", "junit.xml"} <= {p.name for p in tmp_path.iterdir()}
