"""Ollama's native protocol: NDJSON frames on /api/chat and /api/generate (../shared/seeds/002 §2)."""

from __future__ import annotations

import json
from typing import Any

from conformance.protocols import MAX_JUDGED_BYTES, Protocol
from conformance.protocols.ollama.assembler import assemble_frames
from conformance.wire.ndjson import decode_ndjson

NAME = "ollama"


def analyze(a: Any, pieces: Any) -> None:
    body = a.exchange.body
    if a.format == "ndjson":
        if len(body) > MAX_JUDGED_BYTES:
            body = body[: body.rfind(b"\n", 0, MAX_JUDGED_BYTES) + 1]
            a.judged_bytes = len(body)
        a.lines, a.ndjson = decode_ndjson(body, a.cuts)
        a.answer = assemble_frames(a.lines)
    elif a.format == "json":
        a.json_body = json.loads(body.decode("utf-8"))
        a.answer = assemble_frames([]) if not isinstance(a.json_body, dict) else _one(a.json_body)


def _one(frame: dict[str, Any]) -> dict[str, Any]:
    from types import SimpleNamespace

    return assemble_frames([SimpleNamespace(value=frame)])  # type: ignore[list-item]


def finished(a: Any) -> bool:
    answer = a.answer if isinstance(a.answer, dict) else {}
    return answer.get("finish_reason") is not None or answer.get("error") is not None


def tokens_used(a: Any) -> tuple[int, int]:
    frames = [line.value for line in a.lines] if a.lines else [a.json_body]
    for frame in reversed(frames):  # the done frame's eval_count
        if isinstance(frame, dict) and isinstance(frame.get("eval_count"), int):
            return frame["eval_count"], 0
    return sum(1 for f in frames if isinstance(f, dict) and f.get("done") is False), 1


def answers(data: str) -> bool:
    return True  # NDJSON frames are not waited on


PROTOCOL = Protocol(
    name=NAME, framing="ndjson", streams_by_default=True,
    routes=(("/api/chat", "ollama-chat"), ("/api/generate", "ollama-generate"), ("/api/pull", "ollama-pull"),
            ("/api/tags", "ollama-tags")),
    analyze=analyze, finished=finished, tokens_used=tokens_used, answers=answers,
)

__all__ = ["NAME", "PROTOCOL", "assemble_frames"]
