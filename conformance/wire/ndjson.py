"""A sans-I/O decoder for newline-delimited JSON (Ollama's ``application/x-ndjson``).

Invariant: any sequence of bytes, fed in any chunking, yields ``NDJSONLine`` objects or raises
``WireError``; never another exception.

Theory of operation: a line ends at LF (a CR before it is dropped and counted). Each non-blank
line is one JSON value; a line that is not valid UTF-8 or not valid JSON is still an event, with
``error`` set, so the rules can judge it. A last line with no LF is reported in ``tail``; the
Ollama reader of ../shared/seeds/002 parses it anyway, so it is also decoded, marked partial.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from conformance.wire.errors import WireError
from conformance.wire.pending import Pending
from conformance.wire.sse import DEFAULT_MAX_LINE, fed

_fast: Any
try:
    from orjson import loads as _fast
except ImportError:  # pragma: no cover - orjson is a dependency
    _fast = None
_SHARED_LINE = 4096  # a line up to this long whose next line is a copy of it is decoded once
_KEEP = 64  # the offsets of invalid UTF-8 kept (the count of lines is the decoder's own)


class _Missing:
    """Sentinel for "no JSON value": the line was not valid JSON."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
RUN_MIN = 4  # copies of a line after it that a decoder with runs reports as an NDJSONRun


@dataclass(frozen=True, slots=True)
class NDJSONLine:
    """One line: its JSON value (or ``MISSING`` with ``error`` set) and where it lies."""

    index: int
    offset: int
    end: int
    text: str
    value: Any
    error: str | None = None
    partial: bool = False


@dataclass(frozen=True, slots=True)
class NDJSONRun:
    """``copies`` more lines byte for byte the same as ``line``, each ``step`` bytes after the one before
    (``NDJSONDecoder(runs=True)``): a flood, decoded once."""

    line: NDJSONLine
    copies: int
    step: int

    def lines(self, first: int = 1, last: int | None = None) -> list[NDJSONLine]:
        """Copies ``first`` to ``last`` (to the end of the run), as the decoder would have returned them."""
        ln, step = self.line, self.step
        return [replace(ln, index=ln.index + j, offset=ln.offset + j * step, end=ln.end + j * step)
                for j in range(first, (self.copies if last is None else last) + 1)]


class NDJSONDecoder(Pending):
    """Feed bytes with ``feed``; call ``close`` at end of stream. Both return complete lines."""

    def __init__(self, max_line: int = DEFAULT_MAX_LINE, runs: bool = False) -> None:
        self._max_line = max_line
        self._runs = runs  # copies of a line after it come as one NDJSONRun (the streaming judge counts them)
        self._buf = b""
        self._more: list[bytes] = []  # pieces fed after _buf with no LF in them: joined once the line ends
        self._more_len = 0
        self._start = 0
        self._count = 0
        self._closed = False
        self.crlf = 0
        self.blank_lines = 0
        self.invalid_utf8: list[int] = []
        self.tail_offset: int | None = None
        self.total_bytes = 0
        self._prev_raw: bytes | None = None  # the last short line decoded, and its line: its copies share it
        self._prev: NDJSONLine | None = None

    def feed(self, data: bytes) -> list[NDJSONLine]:
        """Decode more bytes; returns the lines completed by them."""
        if self._closed:
            raise WireError("bytes fed after the end of the stream", self.total_bytes)
        self.total_bytes += len(data)
        if self._buf and b"\n" not in data:
            self._hold(data, self._start)
            return []
        buf = self._joined(data)
        parts = buf.split(b"\n")
        rest = parts.pop()
        out: list[Any] = []
        pos = self._start
        if not self._runs:
            for raw in parts:
                out += self._line(raw, pos, pos + len(raw) + 1, partial=False)
                pos += len(raw) + 1
        else:
            i, n = 0, len(parts)
            while i < n:
                raw = parts[i]
                got = self._line(raw, pos, pos + len(raw) + 1, partial=False)
                out += got
                step = len(raw) + 1
                pos += step
                i += 1
                if got and i + RUN_MIN <= n and parts[i] == raw and len(raw) <= _SHARED_LINE:
                    j = i + 1
                    while j < n and parts[j] == raw:
                        j += 1
                    copies = j - i
                    if copies >= RUN_MIN:
                        out.append(NDJSONRun(got[0], copies, step))
                        if raw.endswith(b"\r"):
                            self.crlf += copies
                        self._count += copies
                        pos += copies * step
                        i = j
        if len(rest) > self._max_line:
            raise WireError(f"a line longer than {self._max_line} bytes", pos)
        self._start = pos
        self._buf = rest
        return out

    def close(self) -> list[NDJSONLine]:
        """End of stream: a last line without LF is reported as partial."""
        if self._closed:
            return []
        self._closed = True
        rest, self._buf = self._joined(), b""
        if not rest:
            return []
        self.tail_offset = self._start
        return self._line(rest, self._start, self._start + len(rest), partial=True)

    def _line(self, raw: bytes, offset: int, end: int, partial: bool) -> list[NDJSONLine]:
        if raw.endswith(b"\r"):
            self.crlf += 1
            raw = raw[:-1]
        if not raw.strip():
            self.blank_lines += 1
            return []
        prev = self._prev
        if prev is not None and raw == self._prev_raw and not partial:  # a copy of the line before: decoded once
            line = NDJSONLine(self._count, offset, end, prev.text, prev.value, prev.error, False)
            self._count += 1
            return [line]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            if len(self.invalid_utf8) < _KEEP:  # a flood of invalid lines keeps the first offsets, not all
                self.invalid_utf8.append(offset + exc.start)
            text = raw.decode("utf-8", errors="replace")
        value: Any = MISSING
        error: str | None = None
        try:  # orjson first (about four times faster on a short frame); what it refuses the stdlib decides
            value = _fast(text) if _fast is not None else json.loads(text)
        except ValueError:
            try:
                value = json.loads(text)
            except (ValueError, RecursionError) as exc:
                error = f"not JSON: {exc}"[:200]
        line = NDJSONLine(self._count, offset, end, text, value, error, partial)
        self._count += 1
        if len(raw) <= _SHARED_LINE:
            self._prev_raw, self._prev = raw, line
        return [line]


def decode_ndjson(body: bytes, cuts: list[int] | None = None) -> tuple[list[NDJSONLine], NDJSONDecoder]:
    """Decode a whole body, optionally fed in pieces cut at the given offsets."""
    decoder = NDJSONDecoder()
    return fed(decoder, body, cuts), decoder
