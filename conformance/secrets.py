"""Secret scrubbing: the API key never reaches a file or the terminal, whatever a server echoes.

Every live exchange is masked as it is recorded (``client.record``), before anything judges, prints or
writes it, so the verdicts, the reports, the wire log and ``rejudge`` all see the same masked bytes.
Masking keeps the length, so byte offsets in a masked body still point where they did.

A key is recognised in every form the suite itself decodes:

- as it is, and JSON-escaped in whole or in part (``\\u0073\\u006B-...``, ``\\/``), in bodies, headers and text;
- its distinctive part without its public prefix (``sk-``, ``sk-proj-``, ...), wherever it stands;
- split across JSON strings that a client joins: the text values of one field (``content``,
  ``arguments``, ``reasoning_content``, ``response``, ...) taken in order across the events of an SSE
  stream, the frames of an NDJSON stream or a JSON body; the bytes each character of the echo came
  from are masked.

Not recognised (the honest limit, stated in docs/concepts/bounds.md): forms the suite never decodes, such as
base64, reversed or interleaved text, or a key split across two different fields.
"""

from __future__ import annotations

import functools
import json
import mmap
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.wire.body import Body, SpooledBody
from conformance.wire.sse import copies

if TYPE_CHECKING:
    from conformance.exchange import Exchange

# a spooled body is masked this much at a time (``Scrubber.file``): a run of identical events (a flood) is read again
# for a few dozen copies at the start of each window, so 2 MiB windows mask a 64 MiB flood in ~0.14 s, 1 MiB in ~0.21 s
WINDOW = 2 * 1024 * 1024
MAX_LINE_WINDOW = 8 * 1024 * 1024  # a line longer than this is cut (the forms still found, with an overlap)
APART_KEPT = 4096  # distinct pieces remembered as no part of a form
MIN_SECRET = 4  # shorter values would mask ordinary text
MIN_DISTINCT = 8  # the part after a public prefix is masked alone when at least this long
# public prefixes of API keys: the part after one is what makes the key secret
PREFIX = re.compile(r"(?:sk|pk|rk)-(?:proj|svcacct|admin|ant-api\d\d|or-v1|live|test)-|(?:sk|pk|rk|gsk|xai|hf)[-_]")
# one JSON string literal (never spans a line), and whether it is a member name
_LITERAL = re.compile(rb'"([^"\\\r\n]*(?:\\.[^"\\\r\n]*)*)"(\s*:)?')  # (unrolled: 3x as fast on a long body)


def spellings(secret: str) -> tuple[str, ...]:
    """How one secret may stand in text the suite writes: as it is; without the spaces and line breaks around it (a
    pasted key's trailing newline); and, where it holds a character a traceback or a log escapes, escaped as Python's
    ``repr`` of the text and of its bytes writes it (``b'Bearer sk-...\\n'`` in an error message) and as the terminal
    shows it (``printable``)."""
    from conformance.wire.untrusted import one_line

    out = [secret, secret.strip()]
    if not secret.isprintable() or not secret.isascii():
        out += [repr(secret)[1:-1], repr(secret.encode("utf-8", "surrogateescape"))[2:-1], one_line(secret)]
    return tuple(dict.fromkeys(s for s in out if len(s) >= MIN_SECRET))


def forms(secret: str) -> tuple[str, ...]:
    """The texts masked for one secret: each of its spellings and, after a public prefix, its distinctive part."""
    out = []
    for text in spellings(secret):
        out.append(text)
        match = PREFIX.match(text)
        if match and len(text) - match.end() >= MIN_DISTINCT:
            out.append(text[match.end():])
    return tuple(dict.fromkeys(out))


def _char_pattern(char: str) -> str:
    """A character as it may stand in JSON text: itself, or a \\u escape in either case (``\\/`` for ``/``)."""
    options = [re.escape(char)]
    if ord(char) < 0x10000:
        options.append("\\\\u" + "".join(f"[{d.lower()}{d.upper()}]" if d.isalpha() else d
                                          for d in f"{ord(char):04x}"))
    if char == "/":
        options.append(r"\\/")
    return f"(?:{'|'.join(options)})"


@functools.lru_cache(maxsize=16)
def _patterns(texts: tuple[str, ...]) -> tuple[re.Pattern[str], re.Pattern[bytes]] | None:
    if not texts:
        return None
    alternatives = "|".join("".join(_char_pattern(c) for c in t) for t in texts)
    return re.compile(alternatives), re.compile(alternatives.encode("utf-8"))


def _plain_spans(pattern: re.Pattern[bytes], literals: tuple[bytes, ...], data: bytes, base: int = 0
                 ) -> list[tuple[int, int]]:
    """The byte spans ``pattern`` finds, left to right, each the longest form at the leftmost place. Without a
    backslash in ``data`` no form can stand JSON-escaped, so the forms are looked for as they are (``bytes.find``, many
    times as fast as the pattern's alternatives of each character), with the same result."""
    if b"\\" in data:
        return [(base + m.start(), base + m.end()) for m in pattern.finditer(data)]
    spans: list[tuple[int, int]] = []
    at = 0
    following = [data.find(lit) for lit in literals]  # each form's next place at or after ``at``
    while True:
        places = [f for f in following if f >= 0]
        if not places:
            return spans
        start = min(places)
        longest = max(len(lit) for lit, f in zip(literals, following, strict=True) if f == start)
        spans.append((base + start, base + start + longest))
        at = start + longest
        following = [f if f < 0 or f >= at else data.find(lit, at) for lit, f in zip(literals, following, strict=True)]


def _stars(match: re.Match[str]) -> str:
    return "*" * len(match.group())


def _char_spans(raw: bytes) -> list[tuple[int, int]]:
    """The byte span, within a JSON string literal's content, of each character it decodes to."""
    spans = []
    at = 0
    while at < len(raw):
        byte = raw[at]
        if byte == 0x5C:  # a backslash escape
            if raw[at + 1:at + 2] == b"u":
                end = at + 6
                code = int(raw[at + 2:end], 16)
                if 0xD800 <= code < 0xDC00 and raw[end:end + 2] == b"\\u":  # a surrogate pair is one character
                    low = int(raw[end + 2:end + 6] or b"0", 16)
                    if 0xDC00 <= low < 0xE000:
                        end += 6
            else:
                end = at + 2
        else:
            end = at + (1 if byte < 0x80 else 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4)
        spans.append((at, end))
        at = end
    return spans


REDACTED = "Bearer <redacted>"
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "x-api-key", "api-key"})


def redact_headers(headers: dict[str, str] | tuple[tuple[str, str], ...]) -> list[tuple[str, str]]:
    """Headers with every secret value replaced."""
    items = headers.items() if isinstance(headers, dict) else headers
    return [(k, REDACTED if k.lower() == "authorization" else ("<redacted>" if k.lower() in SECRET_HEADERS else v))
            for k, v in items]


class Scrubber:
    """Masks every occurrence of the given secrets, in each form above, with ``*``."""

    def __init__(self, secrets: Iterable[str | None]) -> None:
        self.secrets = tuple(sorted({s for s in secrets if s and len(s) >= MIN_SECRET}, key=len, reverse=True))
        self.forms = tuple(sorted({f for s in self.secrets for f in forms(s)}, key=len, reverse=True))
        self._patterns = _patterns(self.forms)
        self._literals = tuple(f.encode("utf-8") for f in self.forms)

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def text(self, value: str) -> str:
        """Text with each form masked, as it is and JSON-escaped."""
        if self._patterns is None:
            return value
        if not any(form in value for form in self.forms) and "\\u" not in value and "\\/" not in value:
            # no form as it is, and none escaped: an escaped form holds a \u escape or \/ (``in`` is many times the
            # pattern's speed; a JSON text with other escapes, such as \n, takes this path too)
            return value
        return self._patterns[0].sub(_stars, value)

    def data(self, value: Body) -> Body:
        """Bytes with each form masked, as it is, JSON-escaped, and split across the JSON strings of one field. A
        spooled body is masked in its file, in place (``file``), and returned as it was."""
        if self._patterns is None:
            return value
        if isinstance(value, SpooledBody):
            if set(self.forms) <= set(value.masked):  # masked as it was recorded: the file is not read twice
                return value
            self.file(value.path)
            value.head = value.read(0, len(value.head))
            value.masked = tuple(sorted({*value.masked, *self.forms}))
            return value
        spans = _Channels(self.forms).feed(value, 0) if b'"' in value else []  # on the bytes as they came
        spans += _plain_spans(self._patterns[1], self._literals, value)
        if not spans:
            return value
        out = bytearray(value)
        for start, end in spans:
            out[start:end] = b"*" * (end - start)
        return bytes(out)

    def file(self, path: Path) -> None:
        """Mask a file in place, reading it a window of whole lines at a time (no form and no JSON string spans a
        line), the split echoes followed across windows: memory bounded by the window, not the file. The file is
        mapped, not read: each window is one slice of the map (reading into a buffer, joining what was left of the
        last window and cutting at the last line copied each window three times)."""
        if self._patterns is None:
            return
        pattern = self._patterns[1]
        channels = _Channels(self.forms)
        spans: list[tuple[int, int]] = []
        overlap = 6 * len(self.forms[0])  # the longest form, every character \u-escaped
        with path.open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            if not size:  # (an empty file cannot be mapped)
                return
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as view:
                base = stop = released = 0  # the window is view[base:stop]: what came before base is done
                while base < size:
                    more = stop < size
                    stop = min(stop + WINDOW, size)
                    cut = view.rfind(b"\n", base, stop) + 1 if more else stop  # whole lines; all that is left at the end
                    forced = cut <= base and stop - base >= MAX_LINE_WINDOW  # one giant line: cut, the overlap read twice
                    if forced:
                        cut = stop - overlap
                    if cut <= base:  # no whole line yet: the window grows
                        continue
                    part = view[base:cut]
                    spans += _plain_spans(pattern, self._literals, view[base:stop] if forced else part, base)
                    if b'"' in part:
                        spans += channels.feed(part, base)  # absolute offsets: a split echo spans windows
                    base = cut
                    done = base - base % mmap.PAGESIZE
                    if done > released and hasattr(view, "madvise"):  # the pages read count in the process's RSS
                        view.madvise(mmap.MADV_DONTNEED, released, done - released)  # until given back (the file stays)
                        released = done
        if not spans:
            return
        with path.open("r+b") as f:
            for start, end in sorted(spans):
                f.seek(start)
                f.write(b"*" * (end - start))

    def headers(self, headers: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
        return tuple((k, self.text(v)) for k, v in redact_headers(tuple(headers)))

    def exchange(self, ex: Exchange) -> Exchange:
        """The exchange as the suite keeps it: body, response headers and request masked (offsets unchanged)."""
        if self._patterns is None:
            return ex
        request = ex.request
        if request is not None:
            text = json.dumps(request)
            masked = self.text(text)
            request = json.loads(masked) if masked != text else request
        return replace(ex, body=self.data(ex.body), request=request,
                       headers=tuple((k, self.text(v)) for k, v in ex.headers))


class _Channels:
    """The text values of each JSON field, joined in order as a client joins them, fed a block of whole lines at a
    time: the byte spans of each form found across two or more of them. Only the last characters a form could still
    be completed from are kept, with the bytes each came from (bounded by the longest form, not the body)."""

    def __init__(self, forms: tuple[str, ...]) -> None:
        self.forms = forms
        self.keep = max(len(f) for f in forms) - 1
        self.tails: dict[bytes, list[tuple[str, int, int]]] = {}  # per field: (character, byte start, byte end)
        self.name = b""
        chars = {c for f in forms for c in f}
        # the ASCII bytes no form holds: a piece that begins and ends with one can be no part of a split echo
        self.foreign = bytes(b for b in range(128) if chr(b) not in chars and b != 0x5C)
        self.apart: set[bytes] = set()  # pieces found to be no part of any form (a chunk's id, its object name)
        # for each character: the lengths of the form prefixes it ends, the offsets of the form suffixes it begins
        self.ends: dict[str, list[str]] = {}
        self.begins: dict[str, list[str]] = {}
        for form in forms:
            for k in range(1, len(form)):
                self.ends.setdefault(form[k - 1], []).append(form[:k])
                self.begins.setdefault(form[k], []).append(form[k:])

    def _relevant(self, text: str) -> bool:
        """Whether a piece can be part of an echo split across pieces: it ends with a form's beginning, begins with
        a form's end, or lies inside a form."""
        return (any(text.endswith(p) for p in self.ends.get(text[-1], ()))
                or any(text.startswith(p) or p.startswith(text) for p in self.begins.get(text[0], ()))
                or any(text in form for form in self.forms))

    def feed(self, data: bytes, base: int) -> list[tuple[int, int]]:
        """The spans of the split echoes in ``data`` (whole lines, at ``base`` in the body). A run of identical units
        (a line and the blank lines after it: an SSE event, an NDJSON frame), as a flood or a model stuck on one token
        sends, is read a unit at a time until one finds nothing and leaves the characters kept as they were (at most
        ``keep + 1`` units: each adds the same text to a chain): from then on every unit does the same, so the units
        between are skipped and the last ``keep`` read, which puts back the bytes the kept characters came from."""
        spans: list[tuple[int, int]] = []
        at, size, pending = 0, len(data), 0  # data[pending:at] is still to be read
        while at < size:
            end = _unit_end(data, at)
            step = end - at
            count = copies(data, data[at:end], end)  # identical units after this one
            if count <= self.keep + 2:
                at = end + count * step
                continue
            spans += self._literals(data[pending:end], base + pending)  # what came before, and the run's first unit
            last = end + count * step
            state, read = self._state(), 0  # copies read one at a time until one leaves what it found
            while read < min(count, self.keep + 2):
                found = self._literals(data[end + read * step:end + (read + 1) * step], base + end + read * step)
                spans += found
                read += 1
                state, before = self._state(), state
                if not found and state == before:  # stable: every copy from here finds nothing, keeps the same
                    read = max(read, count - self.keep)  # the last ``keep`` copies read: the kept bytes are theirs
                    break
            spans += self._literals(data[end + read * step:last], base + end + read * step)
            at = pending = last
        if pending < size:
            spans += self._literals(data[pending:], base + pending)
        return spans

    def _state(self) -> tuple[bytes, tuple[tuple[bytes, str], ...]]:
        """What the next piece is read against: the field it falls in and each field's kept characters."""
        return self.name, tuple(sorted((k, "".join(c for c, _, _ in v)) for k, v in self.tails.items()))

    def _literals(self, data: bytes, base: int) -> list[tuple[int, int]]:
        spans: list[tuple[int, int]] = []
        apart, foreign, tails = self.apart, self.foreign, self.tails
        for match in _LITERAL.finditer(data):
            raw, colon = match.groups()
            if colon is not None:
                self.name = raw
                continue
            if not raw:
                continue  # an empty piece joins nothing
            if raw in apart or (raw[0] in foreign and raw[-1] in foreign):
                # an echo split across pieces begins in one (its end is the form's start), ends in one (its start is
                # the form's end) or holds one whole: any other piece ends every chain of its field (the fast path:
                # most pieces of a long answer, and the ids and names every chunk repeats)
                if tails:
                    tails.pop(self.name, None)
                continue
            try:
                decoded = json.loads(b'"' + raw + b'"') if b"\\" in raw else raw.decode("utf-8")
            except ValueError:  # invalid UTF-8 or a bad escape: a client could not join it either
                continue
            if not decoded:
                continue
            if not self._relevant(decoded):
                if len(apart) < APART_KEPT:
                    apart.add(raw)
                tails.pop(self.name, None)
                continue
            span = _piece_spans(raw, decoded, base + match.start(1))
            tail = tails.get(self.name, [])
            if tail:  # a form that ends in this piece and begins in an earlier one
                joined = "".join(c for c, _, _ in tail) + decoded
                for form in self.forms:
                    at = joined.find(form, max(len(tail) - len(form) + 1, 0))
                    while 0 <= at < len(tail):
                        for i in range(at, at + len(form)):
                            spans.append(tail[i][1:] if i < len(tail) else span(i - len(tail)))
                        at = joined.find(form, at + 1)
            if self.keep:
                first = max(len(decoded) - self.keep, 0)
                tail = tail + [(decoded[i], *span(i)) for i in range(first, len(decoded))]
                tails[self.name] = tail[-self.keep:]
        return spans


def _unit_end(data: bytes, at: int) -> int:
    """The end of the line that starts at ``at`` and of the blank lines after it."""
    end = data.find(b"\n", at)
    if end < 0:
        return len(data)
    end += 1
    while data.startswith(b"\n", end) or data.startswith(b"\r\n", end):
        end = data.find(b"\n", end) + 1
    return end


def _piece_spans(raw: bytes, decoded: str, lo: int) -> Callable[[int], tuple[int, int]]:
    """The byte span of the i-th character of a JSON string literal's content that starts at ``lo``."""
    if b"\\" not in raw and raw.isascii():
        return lambda i: (lo + i, lo + i + 1)
    if b"\\" not in raw:
        def utf8(i: int) -> tuple[int, int]:
            at = lo + len(decoded[:i].encode("utf-8"))
            return at, at + len(decoded[i].encode("utf-8"))
        return utf8
    chars = _char_spans(raw)
    if len(chars) != len(decoded):  # not decodable as the literal said: the whole literal stands for each character
        return lambda i: (lo, lo + len(raw))
    return lambda i: (lo + chars[i][0], lo + chars[i][1])
