"""Documented dialects: a variant refused as seed 001 documents it is unsupported (not failed), and model
discovery passes over ids that name embedding or other non-chat models (seed 003 §6)."""

from __future__ import annotations

import json
import socket

from conformance.engine.judge import refused_variant
from conformance.engine.runner import Runner
from conformance.exchange import Exchange
from conformance.settings import build_settings
from tests.hostile.servers import HostileServer, Req, answer, send


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
