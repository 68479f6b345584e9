"""Strict JSON: what every protocol's payload decoder parses with (no NaN, no Infinity; orjson first, the stdlib
for what orjson refuses, so both give the same verdict on every input)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)

fast_loads: Callable[[bytes], Any] | None
try:  # orjson parses a typical chunk about four times faster; the stdlib decides what it refuses
    from orjson import loads as fast_loads
except ImportError:  # pragma: no cover - orjson is a dependency, but the wire layer works without it
    fast_loads = None


def loads_strict(text: str) -> Any:
    """Parse JSON text without the NaN and Infinity extensions; raises ``ValueError``.

    orjson answers first; what it refuses (integers beyond 64 bits, lone surrogate escapes) is
    parsed again by the stdlib decoder, so both give the same verdict on every input.
    """
    if fast_loads is not None:
        try:
            return fast_loads(text.encode("utf-8", "surrogatepass"))
        except ValueError:
            pass
    try:
        return _DECODER.decode(text)
    except RecursionError as exc:
        raise ValueError("JSON nested too deeply") from exc


def data_value(data: str) -> Any:
    """An event's data as JSON, or None where it is not JSON (the stream's ``[DONE]`` among them): what a protocol's
    ``answers`` reads, where data that is not a JSON object shows the generation under way or over."""
    try:
        return loads_strict(data)
    except ValueError:
        return None
