"""Server text is untrusted data: the one place that turns it into what the suite prints, writes or sends.

A server controls model ids, chunk ids, content, tool names and arguments, error messages and header
values. None of it reaches the terminal, a report or a request target as it came:

- ``printable`` escapes what a terminal or a log viewer would act on (C0 and C1 controls, so every ESC
  sequence; DEL; bidirectional overrides) and what cannot be encoded (lone surrogates; U+FFFE/U+FFFF,
  which XML refuses), visibly: ``\\x1b``, ``\\ud800``. Every terminal line and every rendered report goes
  through it.
- ``json_text`` writes JSON that is always valid UTF-8 and never carries a raw control: the same
  characters as ``\\uXXXX`` escapes, which read back to the same string.
- ``path_segment`` percent-encodes a value as one path segment, or refuses it (None) when no encoding
  can make it one.
- ``md_cell``, ``md_code`` and ``md_fence`` escape text for a Markdown table cell, code span and fenced
  block.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import quote

# C0 controls but tab and newline, DEL and C1, bidirectional embeddings/overrides/isolates and marks, the line and
# paragraph separators, lone surrogates, and the two noncharacters XML refuses
_UNSAFE = "\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff"
_UNSAFE_LINE = re.compile(f"[{_UNSAFE}]")
_UNSAFE_ANY = re.compile(f"[\n\t{_UNSAFE}]")
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if char == "\n":
        return "\\n"
    if char == "\t":
        return "\\t"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, newlines: bool = True) -> str:
    """``text`` with every control and unencodable character shown as an escape (``\\x1b``, ``\\ud800``); with
    ``newlines=False`` newlines and tabs too (for a value that must stay on one line)."""
    pattern = _UNSAFE_LINE if newlines else _UNSAFE_ANY
    return text if pattern.search(text) is None else pattern.sub(_escape, text)


def one_line(text: str) -> str:
    return printable(text, newlines=False)


def json_text(doc: Any, **kwargs: Any) -> str:
    """``json.dumps(doc, ensure_ascii=False)``, with lone surrogates, C1 controls and bidirectional controls as
    ``\\uXXXX`` escapes: valid UTF-8 when written, the same value when read back."""
    return json_safe(json.dumps(doc, ensure_ascii=False, **kwargs))


def json_safe(text: str) -> str:
    """JSON text made by ``json.dumps(..., ensure_ascii=False)`` with the characters ``json_text`` escapes escaped."""
    if text.isascii() and "\x7f" not in text:  # (isascii is a flag, not a scan: DEL is the one ASCII character to escape)
        return text
    return text if _JSON_UNSAFE.search(text) is None else _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def decode(data: bytes) -> str:
    """Bytes from the wire as text: UTF-8, with every invalid byte shown as ``\\xNN``; never raises."""
    return data.decode("utf-8", "backslashreplace")


def path_segment(value: str) -> str | None:
    """``value`` percent-encoded as exactly one path segment (``/``, ``?``, ``#``, ``%``, spaces and controls all
    encoded), or None when it cannot be one: empty, a dot segment (``.``, ``..``, which a server resolves however it
    is encoded) or not encodable as UTF-8 (a lone surrogate)."""
    if value in ("", ".", ".."):
        return None
    try:
        return quote(value, safe="", encoding="utf-8", errors="strict")
    except UnicodeEncodeError:
        return None


def md_cell(text: str) -> str:
    """Text for one Markdown table cell: on one line, ``|`` escaped, HTML not interpreted."""
    return (one_line(text).replace("\\", "\\\\").replace("|", "\\|").replace("&", "&amp;")
            .replace("<", "&lt;").replace(">", "&gt;"))


def _longest_backticks(text: str) -> int:
    return max((len(m) for m in re.findall("`+", text)), default=0)


def md_code(text: str) -> str:
    """Text as one Markdown code span: fenced by more backticks than it holds in a row, on one line."""
    text = one_line(text)
    fence = "`" * (_longest_backticks(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_fence(text: str, lang: str = "text") -> list[str]:
    """Text as a fenced Markdown block (its lines), fenced by more backticks than any run the text holds."""
    text = printable(text)
    fence = "`" * max(3, _longest_backticks(text) + 1)
    return [f"{fence}{lang}", text, fence]
