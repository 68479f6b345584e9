"""The sans-I/O wire layer: bytes in, events out. No httpx, no asyncio, no clocks, and no knowledge of
what the payloads mean (that is ``conformance.protocols``)."""

from __future__ import annotations

from conformance.wire.errors import WireError
from conformance.wire.ndjson import NDJSONDecoder, NDJSONLine, decode_ndjson
from conformance.wire.sse import SSEDecoder, SSEEvent, SSEStats, decode_sse

__all__ = ["NDJSONDecoder", "NDJSONLine", "SSEDecoder", "SSEEvent", "SSEStats", "WireError", "decode_ndjson",
           "decode_sse"]
