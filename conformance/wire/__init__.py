"""The sans-I/O wire layer: bytes in, events out. No httpx, no asyncio, no clocks, and no knowledge of
what the payloads mean (that is ``conformance.protocols``). Its modules are imported by name (``wire.sse``,
``wire.ndjson``, ``wire.untrusted``, ...): the package imports none of them, so escaping a line of text does not
load the decoders."""
