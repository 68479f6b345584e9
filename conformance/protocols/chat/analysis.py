"""How the chat protocol fills an analysis: one pass of decoding and assembling, under the run's profile."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

from conformance.protocols.chat.assembler import assemble_body, decode_and_assemble
from conformance.protocols.chat.watch import ChatWatch
from conformance.wire.body import whole

if TYPE_CHECKING:
    from conformance.exchange import Analysis


def analyze(a: Analysis, pieces: Iterable[bytes]) -> None:
    """Decode and assemble an SSE body, or assemble a JSON body, into ``a`` (an ``exchange.Analysis``)."""
    fmt = a.request.get("response_format")
    structured = isinstance(fmt, dict) and fmt.get("type") in ("json_object", "json_schema")
    if a.format == "sse":
        # the streaming judge: every event, to the end of the body, judged in this one pass by the watch; no event or
        # payload is kept (a.events and a.payloads stay empty), so memory does not grow with the stream (issue 25)
        a.watch = ChatWatch()
        a.events, a.stats, a.payloads, a.assembled = decode_and_assemble(pieces, structured=structured, watch=a.watch)
        if "first-name-kept" in a.profile.allows:  # seed 000: the first non-null name, not the pieces appended
            for choice in a.assembled.choices.values():
                for call in choice.tool_calls.values():
                    call.name = call.first_name
        if a.stats.total_bytes < len(a.exchange.body):
            a.judged_bytes = a.stats.total_bytes
    elif a.format == "json":
        a.json_body = json.loads(whole(a.exchange.body).decode("utf-8"))
        a.assembled = assemble_body(a.json_body, structured)
    a.answer = a.assembled


def finished(a: Analysis) -> bool:
    """A stream that ended with an error or with a choice's finish_reason."""
    return a.assembled.error is not None or any(c.finish_reason for c in a.assembled.choices.values())


def tokens_used(a: Analysis) -> tuple[int, int]:
    usage = a.assembled.usage
    if isinstance(usage, dict) and isinstance(usage.get("completion_tokens"), int):
        return usage["completion_tokens"], 0
    return (a.watch.output_chunks if a.watch is not None else 0), 1
