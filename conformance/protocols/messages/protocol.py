"""The Anthropic Messages API: ``POST /v1/messages``, its named events over SSE and its message object.

Sources: Anthropic API reference, "Messages" (the request, the message object, content blocks, ``stop_reason``,
usage), "Streaming Messages" (the event flow and delta types), "Errors" and "Versions" (``x-api-key``,
``anthropic-version: 2023-06-01``). The order of the events is two transition tables in ``assembler``; the rules that
read them are in ``conformance.protocols.messages.checks``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from conformance.protocols import Protocol
from conformance.protocols.event_assembler import analyze_events, tokens_of
from conformance.protocols.messages.assembler import Answer, Assembler, Block, Violation, decode_and_assemble, from_message
from conformance.protocols.messages.payloads import Event, answers, classify

if TYPE_CHECKING:
    from conformance.exchange import Analysis

NAME = "messages"
VERSION = "2023-06-01"  # the anthropic-version every request carries (Anthropic's SDKs send it; the API requires it)


def analyze(a: Analysis, pieces: Iterable[bytes]) -> None:
    analyze_events(a, pieces, decode_and_assemble, from_message)


def finished(a: Analysis) -> bool:
    answer = a.answer
    return isinstance(answer, Answer) and (answer.stopped or bool(answer.errors))


def tokens_used(a: Analysis) -> tuple[int, int]:
    return tokens_of(a.answer if isinstance(a.answer, Answer) else Answer(), "output_tokens")


def client_view(a: Analysis) -> dict[str, Any]:
    """What a correct Messages client makes of an answer: the text and thinking of its blocks, its tool_use blocks as
    calls (the input as JSON text), the stop_reason as its finish, usage in chat's names, and complete when
    message_stop ended it (or a whole message object came)."""
    answer = a.answer if isinstance(a.answer, Answer) else Answer()
    usage = answer.usage
    calls = []
    for block in answer.calls:
        value = block.input
        calls.append({"id": block.id, "name": block.name,
                      "arguments": json.dumps(value) if isinstance(value, dict) else block.text})
    prompt = usage.get("input_tokens") if usage else None
    completion = usage.get("output_tokens") if usage else None
    return {"content": answer.text, "reasoning": answer.thinking, "refusal": None, "tool_calls": calls,
            "finish_reason": answer.stop_reason, "error": answer.error,
            "usage": None if usage is None else {
                "prompt_tokens": prompt, "completion_tokens": completion,
                "total_tokens": prompt + completion if isinstance(prompt, int) and isinstance(completion, int) else None},
            "complete": answer.complete and a.wire_error is None}


def sniff(head: bytes) -> bool:
    """A Messages event stream (``"type": "message_start"``) or a message object (``"type": "message"``)."""
    compact = head.replace(b" ", b"")
    return b'"type":"message_start"' in compact or b"event:message_start" in compact or (
        b'"type":"message"' in compact and b'"role":"assistant"' in compact)


def shows(capability: str, a: Analysis) -> tuple[bool, str] | None:
    """messages-thinking is shown by a thinking block in the answer (a server may accept thinking and ignore it)."""
    if capability != "messages-thinking":
        return None
    answer = a.answer if isinstance(a.answer, Answer) else Answer()
    found = any(b.type in ("thinking", "redacted_thinking") for b in answer.blocks.values())
    return found, "a thinking block" if found else "thinking accepted, no thinking block in the answer"


def headers(api_key: str | None) -> dict[str, str]:
    """The key in x-api-key (as Anthropic's SDKs and Claude Code send ANTHROPIC_API_KEY) and the API version."""
    return {"anthropic-version": VERSION, **({"x-api-key": api_key} if api_key else {})}


PROTOCOL = Protocol(
    pinned=("stop_reason", "stop_sequence", "text", "content"),
    name=NAME, summary="the Anthropic Messages API's events on /v1/messages",
    routes=(("/messages/count_tokens", "messages-count-tokens"), ("/messages", "messages")), framing="sse",
    streams_by_default=False, analyze=analyze, finished=finished, tokens_used=tokens_used, answers=answers,
    sniff=sniff, path="/v1/messages", client_view=client_view, openai=False, headers=headers, shows=shows,
    # Anthropic's SDKs and Claude Code take the root (they add /v1/messages) and the key in ANTHROPIC_API_KEY
    client_env=lambda base_url, host_url: {"ANTHROPIC_BASE_URL": host_url, "ANTHROPIC_API_KEY": "replay"},
    probe="messages-stream",
)

__all__ = ["NAME", "PROTOCOL", "VERSION", "Answer", "Assembler", "Block", "Event", "Violation", "answers",
           "classify", "from_message"]
