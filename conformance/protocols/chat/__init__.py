"""The OpenAI Chat Completions protocol over SSE: payload kinds, the assembler, the chunk order."""

from __future__ import annotations

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
from conformance.protocols.chat.payloads import DONE, THINK_CLOSE, THINK_OPEN, Payload, classify, loads_strict

NAME = "chat"

__all__ = [
    "DONE", "NAME", "THINK_CLOSE", "THINK_OPEN", "Assembled", "Assembler", "Choice", "Payload", "ThinkSplitter",
    "ToolCall", "assemble_body", "assemble_events", "classify", "decode_and_assemble", "loads_strict",
]
