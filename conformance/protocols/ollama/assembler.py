"""Ollama frames assembled into the shape of a chat message (../shared/seeds/002 §2).

``/api/chat`` frames carry ``message.content`` (and ``message.thinking``), ``/api/generate`` frames
``response`` (and ``thinking``); the last success frame has ``done: true`` and ``done_reason``; a
failure is a terminal frame with an ``error`` key.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class FrameAnswer:
    """Content, reasoning, finish reason, usage and error of Ollama frames, added one at a time."""

    def __init__(self) -> None:
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.finish: Any = None
        self.error: dict[str, str] | None = None
        self.usage: dict[str, Any] | None = None

    def add(self, frame: Any) -> None:
        if not isinstance(frame, dict):
            return
        if "error" in frame:
            self.error = {"message": str(frame["error"])}
            return
        raw_message = frame.get("message")
        message: dict[str, Any] = raw_message if isinstance(raw_message, dict) else {}
        for parts, text in ((self.content, message.get("content", frame.get("response"))),
                            (self.reasoning, message.get("thinking", frame.get("thinking")))):
            if isinstance(text, str) and text:
                parts.append(text)
                if len(parts) > 512:  # a string per frame costs ~60 bytes beside its text: join as they come
                    parts[:] = ["".join(parts)]
        if frame.get("done") is True:
            self.finish = frame.get("done_reason")
            if "eval_count" in frame:
                self.usage = {"prompt_tokens": frame.get("prompt_eval_count"), "completion_tokens": frame.get("eval_count")}

    def answer(self) -> dict[str, Any]:
        return {"content": "".join(self.content), "reasoning": "".join(self.reasoning), "refusal": None,
                "tool_calls": [], "finish_reason": self.finish, "usage": self.usage, "error": self.error}


def assemble_frames(frames: Iterable[Any]) -> dict[str, Any]:
    """Content, reasoning, finish reason, usage and error of an Ollama NDJSON stream's frames (or one JSON body)."""
    answer = FrameAnswer()
    for frame in frames:
        answer.add(frame)
    return answer.answer()
