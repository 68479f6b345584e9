"""Ollama's native protocol: NDJSON frames on /api/chat and /api/generate (../shared/seeds/002 §2)."""

from __future__ import annotations

import json
from typing import Any

from conformance.body import whole
from conformance.protocols import Protocol, decode_ndjson_capped
from conformance.protocols.ollama.assembler import assemble_frames

NAME = "ollama"


def analyze(a: Any, pieces: Any) -> None:
    if a.format == "ndjson":
        a.lines, a.ndjson, a.judged_bytes = decode_ndjson_capped(a.exchange.body, a.cuts)
        a.answer = assemble_frames(line.value for line in a.lines)
    elif a.format == "json":
        a.json_body = json.loads(whole(a.exchange.body).decode("utf-8"))
        a.answer = assemble_frames([a.json_body])


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
    analyze=analyze, finished=finished, tokens_used=tokens_used, answers=answers, openai=False,
)

__all__ = ["NAME", "PROTOCOL", "assemble_frames"]
