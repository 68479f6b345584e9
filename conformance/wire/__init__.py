"""The sans-I/O wire layer: bytes in, events out. No httpx, no asyncio, no clocks."""

from __future__ import annotations

from conformance.wire.chat import Assembled, Assembler, Payload, assemble_body, assemble_events, classify
from conformance.wire.errors import WireError
from conformance.wire.ndjson import NDJSONDecoder, NDJSONLine, decode_ndjson
from conformance.wire.sse import SSEDecoder, SSEEvent, SSEStats, decode_sse

__all__ = [
    "Assembled", "Assembler", "NDJSONDecoder", "NDJSONLine", "Payload", "SSEDecoder", "SSEEvent",
    "SSEStats", "WireError", "assemble_body", "assemble_events", "classify", "decode_ndjson", "decode_sse",
]
