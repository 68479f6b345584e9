"""The OpenAI Responses API: ``POST /v1/responses``, its semantic events over SSE and its response object.

Sources: OpenAI API reference, "Responses" and "Responses streaming events"; the Open Responses
specification (openresponses.org). The order of the events is three transition tables in
``assembler``; the rules that read them are in ``conformance.protocols.responses.checks``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from conformance.protocols import Protocol
from conformance.protocols.event_assembler import analyze_events, tokens_of
from conformance.protocols.responses.assembler import Answer, Assembler, Item, Violation, decode_and_assemble, from_response
from conformance.protocols.responses.payloads import DONE, Event, answers, classify

if TYPE_CHECKING:
    from conformance.exchange import Analysis

NAME = "responses"


def analyze(a: Analysis, pieces: Iterable[bytes]) -> None:
    analyze_events(a, pieces, decode_and_assemble, from_response)


def finished(a: Analysis) -> bool:
    answer = a.answer
    return isinstance(answer, Answer) and (answer.terminal is not None or bool(answer.errors))


def tokens_used(a: Analysis) -> tuple[int, int]:
    return tokens_of(a.answer if isinstance(a.answer, Answer) else Answer(), "output_tokens")


def client_view(a: Analysis) -> dict[str, Any]:
    """What a correct Responses client makes of an answer: the text, reasoning and calls of the output items,
    the status as its finish, usage in chat's names, and complete when a completed or incomplete response ended it."""
    answer = a.answer if isinstance(a.answer, Answer) else Answer()
    usage = answer.usage if isinstance(answer.usage, dict) else None
    return {"content": answer.text, "reasoning": answer.reasoning, "refusal": None,
            "tool_calls": [{"id": c.call_id, "name": c.name, "arguments": c.arguments} for c in answer.calls],
            "finish_reason": answer.status, "error": answer.error,
            "usage": None if usage is None else {"prompt_tokens": usage.get("input_tokens"),
                                                 "completion_tokens": usage.get("output_tokens"),
                                                 "total_tokens": usage.get("total_tokens")},
            "complete": answer.status in ("completed", "incomplete") and not answer.errors and a.wire_error is None}


def sniff(head: bytes) -> bool:
    """A Responses event stream (``"type": "response.``) or a response object (``"object": "response"``)."""
    compact = head.replace(b" ", b"")
    return b'"type":"response.' in compact or b'"object":"response"' in compact


PROTOCOL = Protocol(
    pinned=("status", "text", "items"),
    name=NAME, summary="the OpenAI Responses API's events on /v1/responses",
    routes=(("/responses", "responses"),), framing="sse", streams_by_default=False,
    analyze=analyze, finished=finished, tokens_used=tokens_used, answers=answers,
    sniff=sniff, path="/v1/responses", client_view=client_view, cap_field="max_output_tokens",
    probe="responses-stream",
)

__all__ = ["DONE", "NAME", "PROTOCOL", "Answer", "Assembler", "Event", "Item", "Violation", "answers", "classify",
           "from_response"]
