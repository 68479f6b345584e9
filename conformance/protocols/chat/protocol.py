"""The OpenAI Chat Completions protocol over SSE: payload kinds, the assembler, the chunk order."""

from __future__ import annotations

from conformance.protocols import Protocol
from conformance.protocols.chat.analysis import analyze, finished, tokens_used
from conformance.protocols.chat.assembler import (
    Assembled,
    Assembler,
    Choice,
    ThinkSplitter,
    ToolCall,
    assemble_body,
    assemble_events,
    decode_and_assemble,
)
from conformance.protocols.chat.payloads import (
    DONE,
    THINK_CLOSE,
    THINK_OPEN,
    Payload,
    answers,
    classify,
    loads_strict,
)

NAME = "chat"

PROTOCOL = Protocol(
    name=NAME, summary="OpenAI Chat Completions streams on /v1/chat/completions",
    routes=(("/chat/completions", "chat"),), framing="sse", streams_by_default=False,
    analyze=analyze, finished=finished, tokens_used=tokens_used, answers=answers, probe="stream-plain",
)

__all__ = [
    "DONE", "NAME", "PROTOCOL", "THINK_CLOSE", "THINK_OPEN", "Assembled", "Assembler", "Choice", "Payload",
    "ThinkSplitter", "ToolCall", "assemble_body", "assemble_events", "classify", "decode_and_assemble", "loads_strict",
]
