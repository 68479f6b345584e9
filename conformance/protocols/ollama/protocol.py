"""Ollama's native protocol: NDJSON frames on /api/chat and /api/generate (../shared/seeds/002 §2)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

from conformance.protocols import Protocol
from conformance.protocols.ollama.assembler import assemble_frames
from conformance.protocols.ollama.watch import FrameWatch, quiet
from conformance.wire.body import whole

if TYPE_CHECKING:
    from conformance.exchange import Analysis

NAME = "ollama"


def analyze(a: Analysis, pieces: Iterable[bytes]) -> None:
    if a.format == "ndjson":  # judged to its end, a line at a time: no line is kept (the streaming judge)
        from conformance.wire.ndjson import NDJSONDecoder, NDJSONRun

        decoder = NDJSONDecoder(runs=True)
        watch = FrameWatch(chat=a.exchange.endpoint == "ollama-chat")
        last: str | None = None  # the text of the line just fed, when its copies move only counters
        for piece in pieces:
            for line in decoder.feed(piece):
                if isinstance(line, NDJSONRun):  # copies of the line before: counted at once when quiet
                    if line.line.text == last:
                        watch.again(line.lines(1, 1)[0], line.copies, line.step)
                    else:
                        for copy in line.lines():
                            watch.line(copy)
                        last = line.line.text if quiet(line.line) else None
                    continue
                if line.text == last:
                    watch.again(line)
                    continue
                watch.line(line)
                last = line.text if quiet(line) else None
        for line in decoder.close():
            watch.line(line)
        a.ndjson, a.frames, a.answer = decoder, watch, watch.assembled.answer()
    elif a.format == "json":
        a.json_body = json.loads(whole(a.exchange.body).decode("utf-8"))
        a.answer = assemble_frames([a.json_body])


def finished(a: Analysis) -> bool:
    answer = a.answer if isinstance(a.answer, dict) else {}
    return answer.get("finish_reason") is not None or answer.get("error") is not None


def tokens_used(a: Analysis) -> tuple[int, int]:
    watch = a.frames
    if watch is not None and watch.lines:
        if watch.eval_count is not None:  # the done frame's eval_count
            return watch.eval_count, 0
        return watch.undone, 1
    frame = a.json_body
    if isinstance(frame, dict) and isinstance(frame.get("eval_count"), int):
        return frame["eval_count"], 0
    return int(isinstance(frame, dict) and frame.get("done") is False), 1


def answers(data: str) -> bool:
    return True  # NDJSON frames are not waited on


PROTOCOL = Protocol(
    name=NAME, summary="Ollama's NDJSON on /api/chat and /api/generate",
    framing="ndjson", streams_by_default=True,
    routes=(("/api/chat", "ollama-chat"), ("/api/generate", "ollama-generate"), ("/api/pull", "ollama-pull"),
            ("/api/tags", "ollama-tags")),
    analyze=analyze, finished=finished, tokens_used=tokens_used, answers=answers, openai=False,
    client_env=lambda base_url, host_url: {"OLLAMA_HOST": host_url},  # the ollama libraries take the root
    cap_field="options.num_predict", probe="ollama-chat",
    models_path="/api/tags",
)

__all__ = ["NAME", "PROTOCOL", "assemble_frames"]
