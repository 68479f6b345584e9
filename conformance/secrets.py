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

Not recognised (the honest limit, stated in the README): forms the suite never decodes, such as
base64, reversed or interleaved text, or a key split across two different fields.
"""

from __future__ import annotations

import bisect
import functools
import json
import re
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conformance.exchange import Exchange

MIN_SECRET = 4  # shorter values would mask ordinary text
MIN_DISTINCT = 8  # the part after a public prefix is masked alone when at least this long
# public prefixes of API keys: the part after one is what makes the key secret
PREFIX = re.compile(r"(?:sk|pk|rk)-(?:proj|svcacct|admin|ant-api\d\d|or-v1|live|test)-|(?:sk|pk|rk|gsk|xai|hf)[-_]")
# one JSON string literal (never spans a line), and whether it is a member name
_LITERAL = re.compile(rb'"((?:[^"\\\r\n]|\\.)*)"(\s*:)?')


def forms(secret: str) -> tuple[str, ...]:
    """The texts masked for one secret: itself and, after a public prefix, its distinctive part."""
    out = [secret]
    match = PREFIX.match(secret)
    if match and len(secret) - match.end() >= MIN_DISTINCT:
        out.append(secret[match.end():])
    return tuple(out)


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


def _stars(match: re.Match[str]) -> str:
    return "*" * len(match.group())


def _star_bytes(match: re.Match[bytes]) -> bytes:
    return b"*" * len(match.group())


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


class Scrubber:
    """Masks every occurrence of the given secrets, in each form above, with ``*``."""

    def __init__(self, secrets: Iterable[str | None]) -> None:
        self.secrets = tuple(sorted({s for s in secrets if s and len(s) >= MIN_SECRET}, key=len, reverse=True))
        self.forms = tuple(sorted({f for s in self.secrets for f in forms(s)}, key=len, reverse=True))
        self._patterns = _patterns(self.forms)

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def text(self, value: str) -> str:
        """Text with each form masked, as it is and JSON-escaped."""
        if self._patterns is None:
            return value
        return self._patterns[0].sub(_stars, value)

    def data(self, value: bytes) -> bytes:
        """Bytes with each form masked, as it is, JSON-escaped, and split across the JSON strings of one field."""
        if self._patterns is None:
            return value
        spans = self._split(value) if b'"' in value else []  # on the bytes as they came, before any form is masked
        value = self._patterns[1].sub(_star_bytes, value)
        if not spans:
            return value
        out = bytearray(value)
        for start, end in spans:
            out[start:end] = b"*" * (end - start)
        return bytes(out)

    def headers(self, headers: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
        from conformance.repro import redact_headers

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

    def _split(self, data: bytes) -> list[tuple[int, int]]:
        """The bytes of an echo split across the JSON strings of one field (as a client joins them)."""
        channels: dict[bytes, list[tuple[int, int, str]]] = {}
        name = b""
        for match in _LITERAL.finditer(data):
            if match.group(2) is not None:
                name = match.group(1)
                continue
            raw = match.group(1)
            try:
                decoded = json.loads(b'"' + raw + b'"') if b"\\" in raw else raw.decode("utf-8")
            except ValueError:  # invalid UTF-8 or a bad escape: a client could not join it either
                continue
            channels.setdefault(name, []).append((match.start(1), match.end(1), decoded))
        spans: list[tuple[int, int]] = []
        for pieces in channels.values():
            if len(pieces) < 2:
                continue
            joined = "".join(p[2] for p in pieces)
            starts = []
            total = 0
            for piece in pieces:
                starts.append(total)
                total += len(piece[2])
            for form in self.forms:
                at = joined.find(form)
                while at >= 0:
                    spans.extend(self._spans(data, pieces, starts, at, at + len(form)))
                    at = joined.find(form, at + 1)
        return spans

    @staticmethod
    def _spans(data: bytes, pieces: list[tuple[int, int, str]], starts: list[int], begin: int, end: int,
               ) -> Iterable[tuple[int, int]]:
        first = bisect.bisect_right(starts, begin) - 1
        for index in range(first, len(pieces)):
            if starts[index] >= end:
                break
            lo, hi, text = pieces[index]
            chars = _char_spans(data[lo:hi])
            if len(chars) != len(text):  # not decodable as the literal said: mask the whole literal
                yield lo, hi
                continue
            for i in range(max(begin - starts[index], 0), min(end - starts[index], len(text))):
                yield lo + chars[i][0], lo + chars[i][1]
