"""What the reference server claims from seed 001 and seed 002, checked on a real process: prompt reuse with
cached_tokens, repetition_penalty, the image rules, invalid_tool_schema, /health and capabilities, /api/pull,
X-Request-ID on the Ollama routes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from conformance.engine.servers import ServerProcess
from reference_server.engine import MODEL_ID
from tests.reference.conftest import reference

HELLO = [{"role": "user", "content": "Say hello."}]
PIXEL = "data:image/png;base64,iVBORw0KGgo="


def chat(server: ServerProcess, **body: Any) -> httpx.Response:
    return httpx.post(server.base_url + "/v1/chat/completions", json={"model": MODEL_ID, **body}, timeout=30)


def cached(response: httpx.Response) -> int:
    return int(response.json()["usage"]["prompt_tokens_details"]["cached_tokens"])


def test_the_same_history_again_reuses_the_prompt(model_dir: Path) -> None:
    with reference(model_dir) as server:
        first = chat(server, messages=HELLO, max_tokens=8)
        again = chat(server, messages=HELLO, max_tokens=8)
        longer = chat(server, messages=[*HELLO, {"role": "assistant", "content": "Hi"},
                                        {"role": "user", "content": "More."}], max_tokens=8)
        other = chat(server, messages=[{"role": "user", "content": "Something else entirely."}], max_tokens=8)
    prompt = again.json()["usage"]["prompt_tokens"]
    assert cached(first) == 0 and cached(again) == prompt - 1  # all but the last token, which must be fed
    assert first.json()["choices"][0]["message"] == again.json()["choices"][0]["message"]  # the same answer
    assert 0 < cached(longer) < longer.json()["usage"]["prompt_tokens"]  # the shared prefix
    assert cached(other) < cached(longer)  # a different history keeps only the template's shared first tokens


def test_prompt_cache_mode_off_reuses_nothing(model_dir: Path) -> None:
    with reference(model_dir, "--prompt-cache-mode", "off") as server:
        chat(server, messages=HELLO, max_tokens=8)
        assert cached(chat(server, messages=HELLO, max_tokens=8)) == 0


def test_repetition_penalty_is_taken_and_checked(server: ServerProcess) -> None:
    assert chat(server, messages=HELLO, max_tokens=8, repetition_penalty=1.3).status_code == 200
    bad = chat(server, messages=HELLO, repetition_penalty="high")
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "repetition_penalty"


def test_images_follow_seed_001(server: ServerProcess) -> None:
    def image(role: str = "user", url: str = PIXEL, **extra: Any) -> httpx.Response:
        part = {"type": "image_url", "image_url": {"url": url, **extra}}
        return chat(server, messages=[{"role": role, "content": [{"type": "text", "text": "What?"}, part]}])

    codes = {name: (r.status_code, r.json()["error"]["code"]) for name, r in {
        "user": image(), "system": image("system"), "remote": image(url="https://example.invalid/a.png"),
        "detail": image(detail="high")}.items()}
    assert codes == {"user": (400, "unsupported_value"), "system": (400, "invalid_value"),
                     "remote": (400, "invalid_value"), "detail": (400, "invalid_value")}
    assert image(detail="auto").json()["error"]["code"] == "unsupported_value"  # well-formed: no vision pack
    models = httpx.get(server.base_url + "/v1/models").json()
    health = httpx.get(server.base_url + "/health").json()
    assert models["data"][0]["capabilities"] == ["text"] and health["vision"] == "missing"


def test_union_tool_schemas_are_refused_as_invalid_tool_schema(server: ServerProcess) -> None:
    def tool(schema: dict[str, Any]) -> httpx.Response:
        return chat(server, messages=HELLO, tools=[{"type": "function", "function": {
            "name": "f", "parameters": {"type": "object", "properties": {"x": schema}}}}])

    refused = [tool({"anyOf": [{"type": "string"}, {"type": "object"}]}), tool({"allOf": [{"type": "string"}]}),
               tool({"oneOf": [{"type": "string"}, {"type": "string", "maxLength": 3}]})]
    assert [(r.status_code, r.json()["error"]["code"]) for r in refused] == [(400, "invalid_tool_schema")] * 3
    taken = [tool({"anyOf": [{"type": "string"}, {"type": "null"}]}), tool({"oneOf": [{"const": "a"}, {"const": "b"}]}),
             tool({"type": "object", "properties": {"allOf": {"type": "string"}}})]  # a property named allOf
    assert [r.status_code for r in taken] == [200, 200, 200]


def test_api_pull_streams_status_frames(server: ServerProcess) -> None:
    response = httpx.post(server.base_url + "/api/pull", json={"model": MODEL_ID}, headers={"X-Request-ID": "p-1"})
    frames = [json.loads(line) for line in response.text.splitlines()]
    assert response.headers["content-type"] == "application/x-ndjson" and response.headers["x-request-id"] == "p-1"
    assert frames[0] == {"status": "pulling manifest"} and frames[-1] == {"status": "success"}
    progress = [f for f in frames if "digest" in f]
    assert progress and all(f["digest"].startswith("sha256:") and 0 <= f["completed"] <= f["total"] for f in progress)
    missing = [json.loads(line) for line in httpx.post(server.base_url + "/api/pull",
                                                       json={"model": "nope"}).text.splitlines()]
    assert "error" in missing[-1] and not any(f.get("status") == "success" for f in missing)


def test_ollama_routes_echo_x_request_id(server: ServerProcess) -> None:
    response = httpx.post(server.base_url + "/api/chat", headers={"X-Request-ID": "o-1"}, json={
        "model": MODEL_ID, "messages": HELLO, "options": {"num_predict": 3}})
    assert response.headers["x-request-id"] == "o-1"
    assert json.loads(response.text.splitlines()[-1])["done_reason"] == "length"
