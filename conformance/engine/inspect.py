"""Offline inspection: decode a captured stream and judge it with every rule.

Reads a body captured with ``curl -sN`` (or ``curl -si``, headers first), an optional request JSON
and an optional header block, and gives the events, the assembled message and the findings.
"""

from __future__ import annotations

import json
import json.encoder
import os
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from conformance.checks import Finding, Verdict, evaluate, findings_of
from conformance.errors import InputError as InputError
from conformance.exchange import Analysis, Exchange, analyze, assembled_json, detect_format
from conformance.model.observations import Observations
from conformance.protocols import guess_path
from conformance.wire.body import Body, Spool, slices
from conformance.wire.errors import WireError
from conformance.wire.http1 import parse_header_block as parse_header_block
from conformance.wire.http1 import split_curl_i as split_curl_i
from conformance.wire.ndjson import MISSING, NDJSONDecoder
from conformance.wire.sse import SSEDecoder
from conformance.wire.untrusted import json_safe, json_text


@dataclass
class Inspection:
    analysis: Analysis
    verdicts: list[Verdict]

    @property
    def findings(self) -> list[Finding]:
        return findings_of(self.verdicts)

    @property
    def must_failed(self) -> bool:
        return any(f.level == "must" for f in self.findings)


MAX_CAPTURE = 1024 * 1024 * 1024  # past this a capture is refused; up to it, one past 2 MiB is kept on disk, not in memory
HEADER_BLOCK = 1024 * 1024  # a curl -si header block ends within the capture's first MiB
PIECE = 1024 * 1024


def _read(path: Path, what: str, limit: int) -> bytes:
    """A small file (a request, a header block), read whole."""
    try:
        if str(path) == "-":
            data = sys.stdin.buffer.read(limit + 1)
        else:
            with path.open("rb") as handle:
                data = handle.read(limit + 1)
    except OSError as exc:
        raise InputError(f"cannot read the {what} file {str(path)!r}: {exc.strerror or exc}") from exc
    if len(data) > limit:
        raise InputError(f"the {what} file {str(path)!r} is over {limit // (1024 * 1024)} MiB")
    return data


def _too_long(path: Path) -> InputError:
    what = "standard input" if str(path) == "-" else f"the stream file {str(path)!r}"
    return InputError(f"{what} is over {_size(MAX_CAPTURE)}; inspect judges captures up to that size (cut it with "
                      f"head -c)")


def _size(limit: int) -> str:
    return f"{limit // 1024 ** 3} GiB" if limit % 1024 ** 3 == 0 else f"{limit // 1024 ** 2} MiB"


def read_capture(path: Path) -> tuple[str | None, Body]:
    """A capture's ``curl -si`` header block (None without one) and its body, read a piece at a time: a body past
    2 MiB goes to a spool file as it is read (``body.Spool``, as a live body does), so judging a long capture holds
    the judge's state, not the capture. Past ``MAX_CAPTURE`` it is refused."""
    try:
        if str(path) == "-":
            return _read_from(sys.stdin.buffer, path)
        with path.open("rb") as handle:
            info = os.fstat(handle.fileno())
            if stat.S_ISREG(info.st_mode) and info.st_size > MAX_CAPTURE:
                raise _too_long(path)
            return _read_from(handle, path)
    except OSError as exc:
        raise InputError(f"cannot read the stream file {str(path)!r}: {exc.strerror or exc}") from exc


def _read_from(handle: BinaryIO, path: Path) -> tuple[str | None, Body]:
    first = handle.read(HEADER_BLOCK)
    header_text, rest = split_curl_i(first)
    spool = Spool()
    spool.write(rest)
    size = len(first)
    while piece := handle.read(PIECE):
        size += len(piece)
        if size > MAX_CAPTURE:
            spool.close()
            raise _too_long(path)
        spool.write(piece)
    return header_text, spool.close()


def check_header_block(text: str) -> None:
    """Refuse a --headers file that is no ``curl -si`` header block, in one sentence."""
    lines = [line for line in text.replace("\r\n", "\n").split("\n") if line.strip()]
    if not lines or not lines[0].startswith("HTTP/") or len(lines[0].split()) < 2 \
            or not lines[0].split()[1].isdigit():
        raise InputError("the headers file does not start with a status line such as 'HTTP/1.1 200 OK'")
    bad = next((line for line in lines[1:] if ":" not in line and not line.startswith("HTTP/")), None)
    if bad is not None:
        raise InputError(f"the headers file has a line that is no header: {bad[:60]!r}")


def _guess_path(body: Body, fmt: str) -> str:
    claimed = guess_path(body[:4096], fmt)
    if claimed is not None:
        return claimed
    if fmt != "ndjson":
        return "/v1/chat/completions"
    return "/api/chat" if b'"message"' in body[:4096] else "/api/generate"


def build_exchange(stream: Path, request: Path | None = None, headers: Path | None = None,
                   path: str | None = None) -> Exchange:
    """An ``Exchange`` from files on disk; raises ``InputError`` for anything unusable."""
    header_text, body = read_capture(stream)
    if headers is not None:
        header_text = _read(headers, "headers", 1024 * 1024).decode("latin-1")
        check_header_block(header_text)
    req: Any = None
    if request is not None:
        try:
            req = json.loads(_read(request, "request", 64 * 1024 * 1024))
        except ValueError as exc:
            raise InputError(f"the request file {str(request)!r} is not JSON: {exc}") from exc
    status, version, header_list = parse_header_block(header_text) if header_text else (200, "HTTP/1.1", [])
    observations = Observations(headers_unknown=not header_text)
    probe = Exchange(body=body, headers=tuple(header_list))
    fmt = detect_format(probe)
    if fmt in ("empty", "text"):
        raise InputError(f"{str(stream)!r} is not an SSE or NDJSON stream, nor a JSON body")
    return Exchange(request=req, body=body, status=status, headers=tuple(header_list), http_version=version,
                    path=path or _guess_path(body, fmt), observations=observations,
                    request_headers=(), scenario="inspect")


def inspect_exchange(exchange: Exchange, profile: str = "openai") -> Inspection:
    analysis = analyze(exchange, profile)
    return Inspection(analysis, evaluate(analysis))


def iter_events(a: Analysis) -> Iterator[dict[str, Any]]:
    """The body's events (SSE) or lines (NDJSON) as JSON, one at a time: those the analysis kept, else decoded from
    the body a piece at a time (the streaming judge keeps none), so a long capture is listed in constant memory. A
    body the strict decoder refuses (a line past its cap) is listed up to there."""
    if a.format == "ndjson":
        for ln in a.lines or _decoded(a.exchange.body, NDJSONDecoder):
            yield {"index": ln.index, "offset": ln.offset, "value": None if ln.value is MISSING else ln.value,
                   "error": ln.error, "partial": ln.partial}
        return
    if a.format != "sse":
        return
    for e in a.events or _decoded(a.exchange.body, SSEDecoder):
        yield {"index": e.index, "offset": e.offset, "type": e.type, "data": e.data, "id": e.last_event_id}


def _decoded(body: Body, decoder_class: Callable[[], Any]) -> Iterator[Any]:
    decoder = decoder_class()
    try:
        for piece in slices(body, PIECE):
            yield from decoder.feed(piece)
        yield from decoder.close()
    except WireError:
        return


def events_json(a: Analysis) -> list[dict[str, Any]]:
    return list(iter_events(a))


def _findings_json(result: Inspection) -> list[dict[str, Any]]:
    return [{k: v for k, v in f.to_json().items() if k != "excerpt"} for f in result.findings]


def to_json(result: Inspection) -> dict[str, Any]:
    a = result.analysis
    return {"events": events_json(a), "assembled": assembled_json(a), "findings": _findings_json(result)}


def write_json(result: Inspection, write: Callable[[str], Any]) -> None:
    """``json_text(to_json(result), indent=2)`` and a line end, the same text, written an event at a time: a long
    capture's events are never all held."""
    write('{\n  "events": [')
    first = True
    for event in iter_events(result.analysis):
        write(("\n    " if first else ",\n    ") + _event_text(event))
        first = False
    write("]" if first else "\n  ]")
    for key, value in (("assembled", assembled_json(result.analysis)), ("findings", _findings_json(result))):
        write(f",\n  {json.dumps(key)}: " + json_text(value, indent=2).replace("\n", "\n  "))
    write("\n}\n")


_EVENT = '{\n      "index": %d,\n      "offset": %d,\n      "type": %s,\n      "data": %s,\n      "id": %s\n    }'
_string = json.encoder.encode_basestring  # what json.dumps(..., ensure_ascii=False) writes for a str


def _event_text(event: dict[str, Any]) -> str:
    """One listed event as ``json_text(event, indent=2)`` writes it four spaces in, an SSE event's made from a
    template (json.dumps builds an encoder on every call: most of the time of writing 200,000 events)."""
    values = tuple(event.values())
    if tuple(event) == ("index", "offset", "type", "data", "id") and tuple(map(type, values)) == (int, int, str, str, str):
        index, offset, kind, data, last_id = values
        return json_safe(_EVENT % (index, offset, _string(kind), _string(data), _string(last_id)))
    return json_text(event, indent=2).replace("\n", "\n    ")
