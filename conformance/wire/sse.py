"""A strict, sans-I/O decoder for ``text/event-stream`` bodies.

Invariant: any sequence of bytes, fed in any chunking, yields ``SSEEvent`` objects or raises
``WireError``; never another exception. The events, and the ``SSEStats`` the decoder records,
do not depend on where the bytes were cut.

Theory of operation. This is the WHATWG HTML "parse an event stream" algorithm
(https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation):

- "The stream must then be parsed by reading everything line by line, with a U+000D CARRIAGE
  RETURN U+000A LINE FEED (CRLF) character pair, a single U+000A LINE FEED (LF) character not
  preceded by a U+000D CARRIAGE RETURN (CR) character, and a single U+000D CARRIAGE RETURN (CR)
  character not followed by a U+000A LINE FEED (LF) character being the ways in which a line can
  end." Lines are split on bytes, so U+2028 and other Unicode separators are ordinary text. A line
  ended by a CR at the very end of a feed is held back until the next byte (or the end of the
  stream) shows whether an LF follows, so a CRLF split across feeds is one line end, one offset.
- "Streams must be decoded using the UTF-8 decode algorithm": one leading BOM is stripped at byte
  0 only; invalid sequences become U+FFFD and their offsets are recorded. CR and LF are ASCII, so
  a complete line is complete UTF-8 text and each line is decoded on its own.
- "If the line is empty (a blank line): dispatch the event"; "If the line starts with a U+003A
  COLON character (:): ignore the line" (a comment); "If the line contains a U+003A COLON
  character: collect the characters on the line before the first U+003A COLON character, and let
  field be that string. Collect the characters on the line after the first U+003A COLON
  character, and let value be that string. If value starts with a U+0020 SPACE character, remove
  it from value."; "Otherwise, the string is not empty but does not contain a U+003A COLON
  character: process the field using the whole line as the field name, and the empty string as
  the field value."
- Fields: ``event`` sets the type; ``data`` appends the value and a LF; ``id`` sets the last
  event id "if the field value does not contain U+0000 NULL"; ``retry`` is used "if the field
  value consists of only ASCII digits"; "Otherwise: the field is ignored."
- Dispatch: "If the data buffer is an empty string, set the data buffer and the event type buffer
  to the empty string and return." Otherwise one trailing LF is removed from the data.
- "Once the end of the file is reached, any pending data must be discarded. (If the file ends in
  the middle of an event, before the final empty line, the incomplete event is not dispatched.)"
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from conformance.wire.errors import WireError
from conformance.wire.pending import Pending

BOM = b"\xef\xbb\xbf"
DEFAULT_MAX_LINE = 16 * 1024 * 1024
_KEEP = 64  # offsets kept per kind of observation; counts are always exact


def _carries_payload(name: str, value: str) -> bool:
    """An unknown-field line that carries a payload: JSON or [DONE] as its value, or as the whole line (a line with
    no colon is a field of that name, and a JSON payload without ``data:`` is read so)."""
    text = value.strip()
    return name.lstrip()[:1] in ("{", "[") or text[:1] in ("{", "[") or "[DONE]" in (name.strip(), text)

_EOL = re.compile(rb"\r\n|\r|\n")
_COMMENT_LINE = re.compile(rb"\n:")  # three times faster than `b"\n:" in buf` on a long buffer
COMMENT_RUN = 64  # identical comment lines in a row that the decoder counts at once
_COMMENT_RUNS = re.compile(rb"(?m)^(:[^\n]*\n)(?:\1){%d,}" % (COMMENT_RUN - 1))


class SSEEvent(NamedTuple):
    """One dispatched event: its type, data, last event id and where its block lies in the body.

    A NamedTuple rather than a frozen dataclass: it is as immutable and six times cheaper to make,
    which matters at one event per token.
    """

    index: int  # type: ignore[assignment]  # the field shadows tuple.index on purpose
    type: str
    data: str
    last_event_id: str
    offset: int
    end: int
    data_lines: int = 1


@dataclass(slots=True)
class SSEStats:
    """What the decoder saw besides the events; the framing rules judge these."""

    bom: bool = False
    lf: int = 0
    crlf: int = 0
    cr: int = 0
    comments: int = 0
    comment_offsets: list[int] = field(default_factory=list)
    unknown_fields: list[tuple[int, str]] = field(default_factory=list)
    unknown_field_count: int = 0
    # the unknown-field lines that carry what a client needs (a JSON payload, [DONE]): a parser ignores them, so it
    # is lost; the others carry nothing a client reads
    payload_fields: list[tuple[int, str]] = field(default_factory=list)
    payload_field_count: int = 0
    data_without_space: int = 0
    data_without_space_offset: int | None = None
    id_fields: int = 0
    retry_fields: int = 0
    invalid_retry: int = 0
    invalid_utf8: list[int] = field(default_factory=list)
    invalid_utf8_count: int = 0
    undispatched_blocks: int = 0
    tail_offset: int | None = None
    tail_has_data: bool = False
    total_bytes: int = 0

    @property
    def line_ending_styles(self) -> list[str]:
        """The styles in use, in a fixed order."""
        return [name for name in ("lf", "crlf", "cr") if getattr(self, name)]


class SSERun(NamedTuple):
    """``copies`` more copies of ``event``'s block, byte for byte, right after it (``SSEDecoder(runs=True)``): copy j
    (1..copies) is the event with index ``event.index + j``, its block ``step * j`` bytes further on."""

    event: SSEEvent
    copies: int
    step: int
    # the run goes on from the last event of the batch before (``event`` is that event; the decoder dispatched nothing
    # between them): a flood or a stuck model split across reads comes as one run per read
    continued: bool = False

    def events(self, first: int = 1, last: int | None = None) -> list[SSEEvent]:
        """Copies ``first`` to ``last`` (to the end of the run), as the decoder would have dispatched them."""
        e, step = self.event, self.step
        return [e._replace(index=e.index + j, offset=e.offset + j * step, end=e.end + j * step)
                for j in range(first, (self.copies if last is None else last) + 1)]


FOLD_AT = 256  # data lines of one open event after which they are joined (SSEDecoder._fold)
RUN_MIN = 4  # copies of an event after it that the decoder reports as a run (fewer are dispatched one by one)


class SSEDecoder(Pending):
    """Feed bytes with ``feed``; call ``close`` at end of stream. Both return dispatched events.

    With ``runs``, identical events one after another (a block that is one ``data:`` line and a blank line, repeated
    byte for byte, as a flood or a model stuck on one token sends them) come as the first event and an ``SSERun`` of
    the copies after it, which the line loop does not dispatch one by one; the stats are those of every copy."""

    def __init__(self, max_line: int = DEFAULT_MAX_LINE, runs: bool = False) -> None:
        self._runs = runs
        self.stats = SSEStats()
        self._max_line = max_line
        self._buf = b""
        self._buf_start = 0  # absolute offset of _buf[0]
        self._more: list[bytes] = []  # pieces fed after _buf with no line end in them: joined once a line ends
        self._more_len = 0
        self._bom_pending = True
        self._closed = False
        self._events = 0
        self._data: list[str] = []
        self._folded = 0  # data lines of the open event joined into _data[0] (an event of many short lines)
        self._type = ""
        self._last_id = ""
        self._block_start: int | None = None
        self._block_fields = False
        # (runs) the last lines the line loop read were a one-line event, or a run of it: its data line, the event
        # (the run's last copy) and its block's length; a run that goes on in the next lines is reported as continued
        self._last_one: tuple[bytes, SSEEvent, int] | None = None

    def feed(self, data: bytes) -> list[SSEEvent]:
        """Decode more bytes; returns the events completed by them."""
        if self._closed:
            raise WireError("bytes fed after the end of the stream", self.stats.total_bytes)
        if not data:
            return []
        self.stats.total_bytes += len(data)
        if self._buf and not self._bom_pending and self._buf[-1:] != b"\r" and b"\n" not in data and b"\r" not in data:
            self._hold(data, self._buf_start)
            return []
        buf = self._joined(data)
        if self._bom_pending:
            if len(buf) < 3 and BOM.startswith(buf):
                self._buf = buf
                return []
            self._bom_pending = False
            if buf.startswith(BOM):
                self.stats.bom = True
                buf = buf[3:]
                self._buf_start += 3
        out: list[SSEEvent] = []
        rest = self._split_lines(buf, out)
        if len(rest) > self._max_line:
            raise WireError(f"a line longer than {self._max_line} bytes", self._buf_start)
        self._buf = rest
        if len(self._data) > FOLD_AT:
            self._fold()
        return out

    def _fold(self) -> None:
        """An event still open after many data lines is joined into one string, and held to the line cap: a server
        that sends one short data line after another for ever grows one event, which is bounded as one long line is
        (its data kept as one string, not a list of a string per line)."""
        joined = "\n".join(self._data)
        if len(joined) > self._max_line:
            where = self._block_start if self._block_start is not None else self._buf_start
            raise WireError(f"an event's data longer than {self._max_line} bytes", where)
        self._folded += len(self._data) - 1
        self._data = [joined]

    def close(self) -> list[SSEEvent]:
        """End of stream: an unterminated last event is discarded, and recorded in the stats."""
        if self._closed:
            return []
        self._closed = True
        self._buf = self._joined()
        self._bom_pending = False
        out: list[SSEEvent] = []
        if self._buf.endswith(b"\r"):  # a CR held back in case an LF followed: it was a line end
            self._buf = self._split_lines(self._buf, out, final=True)
        if self._buf:
            if self._block_start is None:
                self._block_start = self._buf_start
            self.stats.tail_has_data = self.stats.tail_has_data or self._buf.startswith(b"data")
        if self._block_start is not None:
            self.stats.tail_offset = self._block_start
            self.stats.tail_has_data = self.stats.tail_has_data or bool(self._data)
        self._buf = b""
        return out

    def _split_lines(self, buf: bytes, out: list[SSEEvent], final: bool = False) -> bytes:
        if self._last_one is not None:
            buf = self._run_goes_on(buf, out, self._last_one)
        if b"\r" in buf:
            self._last_one = None  # the CR loop reads the lines: not the runs loop
        elif buf[:1] == b":" or _COMMENT_LINE.search(buf):
            self._last_one = None
            return self._split_comment_runs(buf, out)
        return self._split_some(buf, out, final)

    def _run_goes_on(self, buf: bytes, out: list[Any], last: tuple[bytes, SSEEvent, int]) -> bytes:
        """(runs) When ``buf`` starts with at least RUN_MIN more copies of the one-line event the last lines ended
        with (``last``), byte for byte (a flood, or a stuck model, read a piece at a time), they are counted by
        comparing slices before the piece is split into lines: the same continued ``SSERun`` and stats the line loop
        gives, without a line each. The rest of ``buf`` is returned for the line loop."""
        line, event, step = last
        unit = buf[:step]
        if unit[:-2] != line or unit[-2:] != b"\n\n":
            return buf
        count = copies(buf, unit)
        if count < RUN_MIN:
            return buf
        out.append(SSERun(event, count, step, continued=True))
        self._events += count
        self.stats.lf += 2 * count
        self._buf_start += count * step
        self._last_one = (line, _copy(event, count, step), step)
        return buf[count * step:]

    def _split_comment_runs(self, buf: bytes, out: list[SSEEvent]) -> bytes:
        """The LF line loop, with each run of at least ``COMMENT_RUN`` identical comment lines (a keep-alive flood)
        read as its first line and counted, not split into a line each: the same stats, the same events."""
        start = 0
        for match in _COMMENT_RUNS.finditer(buf):
            line = match.group(1)
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:  # each copy's invalid bytes are counted where they are: line by line
                continue
            if match.start() > start:
                rest = self._split_some(buf[start:match.start()], out)  # whole lines: ends with LF
                assert not rest
            step = len(line)
            self._split_some(line, out)  # the first copy, as any comment line
            copies = (match.end() - match.start()) // step - 1
            stats = self.stats
            stats.lf += copies
            stats.comments += copies
            pos = self._buf_start
            keep = min(copies, _KEEP - len(stats.comment_offsets))
            stats.comment_offsets += [pos + j * step for j in range(max(keep, 0))]
            self._buf_start = pos + copies * step
            start = match.end()
        return self._split_some(buf[start:], out)

    def _split_some(self, buf: bytes, out: list[SSEEvent], final: bool = False) -> bytes:
        pos = self._buf_start
        if b"\r" not in buf:
            lines = buf.split(b"\n")
            rest = lines.pop()
            self.stats.lf += len(lines)
            if self._runs:
                self._buf_start = self._lines_with_runs(lines, pos, out)
                return rest
            for line in lines:  # the same loop as _lines_with_runs, without runs: a for loop is ~9% faster here
                end = pos + len(line) + 1
                if not line:
                    self._dispatch(end, out)
                elif line[:6] == b"data: ":  # the hot path; anything unusual takes _line
                    try:
                        self._data.append(line[6:].decode("utf-8"))
                    except UnicodeDecodeError:
                        self._line(line, pos, end, out)
                    else:
                        if self._block_start is None:
                            self._block_start = pos
                            self._block_fields = True
                else:
                    self._line(line, pos, end, out)
                pos = end
            self._buf_start = pos
            return rest
        start = 0
        for match in _EOL.finditer(buf):
            eol = match.group()
            if eol == b"\r" and match.end() == len(buf) and not final:
                break  # hold the line back: the next feed may start with the LF of a CRLF
            line = buf[start : match.start()]
            if eol == b"\n":
                self.stats.lf += 1
            elif eol == b"\r\n":
                self.stats.crlf += 1
            else:
                self.stats.cr += 1
            self._line(line, pos + start, pos + match.end(), out)
            start = match.end()
        self._buf_start = pos + start
        return buf[start:]

    def _lines_with_runs(self, lines: list[bytes], pos: int, out: list[Any]) -> int:
        """The LF line loop of ``_split_lines``, which reports a run of identical one-line events as an ``SSERun``."""
        i, n = 0, len(lines)
        if not n:
            return pos  # no line read: the last lines read still end with the event they ended with
        last = self._last_one
        self._last_one = None
        if last is not None and n > 1 and lines[0] == last[0]:  # the run of the lines before goes on?
            line, event, step = last
            j = _pairs(lines, 0, line)
            count = j // 2
            if count >= RUN_MIN:
                out.append(SSERun(event, count, step, continued=True))
                self._events += count
                pos += count * step
                i = j
                if i == n:
                    self._last_one = (line, _copy(event, count, step), step)
                    return pos
        last_id = self._last_id
        while i < n:
            line = lines[i]
            if (line[:6] == b"data: " or line == b"data:") and i + 1 < n and not lines[i + 1] \
                    and self._block_start is None:
                # the commonest block, one data line and a blank line with nothing before it: dispatched here, and
                # the copies of it that follow are a run (a block with invalid UTF-8 takes the general path; an
                # empty data line is a run too: a flood of empty events is judged at the pace of one)
                try:
                    value = line[6:].decode("utf-8")
                except UnicodeDecodeError:
                    pass
                else:
                    step = len(line) + 2
                    event = SSEEvent(self._events, "message", value, last_id, pos, pos + step, 1)
                    out.append(event)
                    self._events += 1
                    pos += step
                    i += 2
                    if i + 1 < n and lines[i] == line:
                        j = _pairs(lines, i, line)
                        count = (j - i) // 2
                        if count >= RUN_MIN:
                            out.append(SSERun(event, count, step))
                            self._events += count
                            pos += count * step
                            i = j
                            event = _copy(event, count, step)
                    if i == n:
                        self._last_one = (line, event, step)
                    continue
            end = pos + len(line) + 1
            if not line:
                self._dispatch(end, out)
            elif line[:6] == b"data: ":
                try:
                    self._data.append(line[6:].decode("utf-8"))
                except UnicodeDecodeError:
                    self._line(line, pos, end, out)
                else:
                    if self._block_start is None:
                        self._block_start = pos
                        self._block_fields = True
            else:
                self._line(line, pos, end, out)
                last_id = self._last_id
            pos, i = end, i + 1
        return pos

    def _decode(self, line: bytes, offset: int) -> str:
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError as exc:
            stats = self.stats
            text = line.decode("utf-8", errors="replace")
            bad = offset + exc.start
            stats.invalid_utf8_count += text.count("\ufffd") - line.count(b"\xef\xbf\xbd")
            if len(stats.invalid_utf8) < _KEEP:
                stats.invalid_utf8.append(bad)
            return text

    def _line(self, raw: bytes, offset: int, end: int, out: list[SSEEvent]) -> None:
        if not raw:
            self._dispatch(end, out)
            return
        if self._block_start is None:
            self._block_start = offset
        line = self._decode(raw, offset)
        if line[0] == ":":
            self.stats.comments += 1
            if len(self.stats.comment_offsets) < _KEEP:
                self.stats.comment_offsets.append(offset)
            return
        self._block_fields = True
        name, colon, value = line.partition(":")
        if value[:1] == " ":
            value = value[1:]
        elif name == "data" and colon and value:
            self.stats.data_without_space += 1
            if self.stats.data_without_space_offset is None:
                self.stats.data_without_space_offset = offset
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._type = value
        elif name == "id":
            self.stats.id_fields += 1
            if "\x00" not in value:
                self._last_id = value
        elif name == "retry":
            self.stats.retry_fields += 1
            if not (value.isascii() and value.isdigit()):
                self.stats.invalid_retry += 1
        else:
            self.stats.unknown_field_count += 1
            if len(self.stats.unknown_fields) < _KEEP:
                self.stats.unknown_fields.append((offset, name[:80]))
            if _carries_payload(name, value):
                self.stats.payload_field_count += 1
                if len(self.stats.payload_fields) < _KEEP:
                    self.stats.payload_fields.append((offset, name[:80]))

    def _dispatch(self, end: int, out: list[SSEEvent]) -> None:
        start = self._block_start
        self._block_start = None
        if not self._data:
            if self._block_fields:
                self.stats.undispatched_blocks += 1
            self._block_fields = False
            self._type = ""
            return
        parts = self._data
        data = parts[0] if len(parts) == 1 else "\n".join(parts)
        out.append(SSEEvent(self._events, self._type or "message", data, self._last_id,
                            end if start is None else start, end, len(parts) + self._folded))
        self._folded = 0
        self._events += 1
        self._block_fields = False
        self._data = []
        self._type = ""


def _copy(event: SSEEvent, j: int, step: int) -> SSEEvent:
    """Copy ``j`` of a one-line event repeated every ``step`` bytes."""
    return event._replace(index=event.index + j, offset=event.offset + j * step, end=event.end + j * step)


def _pairs(lines: list[bytes], i: int, data: bytes) -> int:
    """Where the pairs of ``data`` and a blank line that start at ``lines[i]`` end (``i`` when none does): compared a
    slice at a time, the slices doubling while they match and halving once one does not."""
    n = len(lines)
    pair = [data, b""]
    size, grow = 1, True
    while True:
        m = min(size, (n - i) // 2)
        if m == 0:
            return i
        if lines[i : i + 2 * m] == pair * m:
            i += 2 * m
            if grow:
                size *= 2
        elif m == 1:
            return i
        else:
            size, grow = m // 2, False


def copies(data: bytes, unit: bytes, at: int = 0) -> int:
    """How many copies of ``unit`` follow one another from ``at``: found by doubling, then halving (a few comparisons
    of slices, in C). The SSE decoder counts a flood's events with it, the key masking a run of identical units."""
    step = len(unit)
    if not step or not data.startswith(unit, at):
        return 0
    count = 1  # copies known to follow; the next ``count`` are compared with them at once
    while data[at + count * step:at + 2 * count * step] == data[at:at + count * step]:
        count *= 2
    span = count  # at least ``count`` copies, fewer than 2 * count
    while span > 1:
        span //= 2
        if data[at + count * step:at + (count + span) * step] == data[at:at + span * step]:
            count += span
    return count


def pieces(body: bytes, cuts: list[int] | None = None) -> list[bytes]:
    """The pieces of ``body`` between sorted cut points (the whole body when there are none)."""
    bounds = [0, *(cuts or ()), len(body)]
    return [body[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]


def fed(decoder: Any, body: bytes, cuts: list[int] | None = None) -> list[Any]:
    """What ``decoder`` (SSE's or NDJSON's) reads of a whole body fed in pieces cut at the given offsets, and closed."""
    out: list[Any] = []
    for piece in pieces(body, cuts):
        out += decoder.feed(piece)
    out += decoder.close()
    return out


def decode_sse(body: bytes, cuts: list[int] | None = None) -> tuple[list[SSEEvent], SSEStats]:
    """Decode a whole body, optionally fed in pieces cut at the given offsets."""
    decoder = SSEDecoder()
    return fed(decoder, body, cuts), decoder.stats
