"""Ollama frames assembled into the shape of a chat message (../shared/seeds/002 §2).

``/api/chat`` frames carry ``message.content`` (and ``message.thinking``), ``/api/generate`` frames
``response`` (and ``thinking``); the last success frame has ``done: true`` and ``done_reason``; a
failure is a terminal frame with an ``error`` key.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def assemble_frames(frames: Iterable[Any]) -> dict[str, Any]:
    """Content, reasoning, finish reason, usage and error of an Ollama NDJSON stream's frames (or one JSON body)."""
    content, reasoning, finish, error, usage = "", "", None, None, None
    for frame in frames:
        if not isinstance(frame, dict):
            continue
        if "error" in frame:
            error = {"message": str(frame["error"])}
            continue
        raw_message = frame.get("message")
        message: dict[str, Any] = raw_message if isinstance(raw_message, dict) else {}
        text = message.get("content", frame.get("response"))
        content += text if isinstance(text, str) else ""
        thinking = message.get("thinking", frame.get("thinking"))
        reasoning += thinking if isinstance(thinking, str) else ""
        if frame.get("done") is True:
            finish = frame.get("done_reason")
            if "eval_count" in frame:
                usage = {"prompt_tokens": frame.get("prompt_eval_count"), "completion_tokens": frame.get("eval_count")}
    return {"content": content, "reasoning": reasoning, "refusal": None, "tool_calls": [], "finish_reason": finish,
            "usage": usage, "error": error}
