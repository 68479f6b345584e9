"""A recorded exchange and its analysis: the one input of every check.

An ``Exchange`` is what went over the wire (request, status, headers, raw body bytes with arrival
times) plus what the live suite observed around it (``observations``: a timeout, a follow-up
request, a health counter). ``analyze`` decodes it through the sans-I/O wire layer once; checks
read the ``Analysis`` and never decode anything themselves.
"""

from __future__ import annotations

import copy
import gc
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from conformance.model import Intent
from conformance.model.observations import Observations
from conformance.model.profiles import ALLOWANCES, PROFILES, Profile
from conformance.protocols import MAX_JUDGED_BYTES, Protocol, decode_ndjson_capped, endpoint_of, protocol_for
from conformance.protocols.chat.assembler import Assembled
from conformance.protocols.chat.payloads import Payload, loads_strict
from conformance.wire.body import HOLD_BYTES, Body, SpooledBody, slices, whole
from conformance.wire.errors import WireError
from conformance.wire.ndjson import MISSING, NDJSONDecoder, NDJSONLine
from conformance.wire.sse import SSEEvent, SSEStats, decode_sse, pieces

CHAT_PATH = "/v1/chat/completions"


@dataclass(frozen=True)
class Exchange:
    """One request and its response, exactly as recorded."""

    request: Any = None
    body: Body = b""  # bytes, or past body.HOLD_BYTES a SpooledBody (kept in a file as it arrived)
    status: int | None = 200
    headers: tuple[tuple[str, str], ...] = ()
    method: str = "POST"
    path: str = CHAT_PATH
    request_headers: tuple[tuple[str, str], ...] = ()
    http_version: str = "HTTP/1.1"
    request_http_version: str = "HTTP/1.1"
    arrivals: tuple[tuple[float, int], ...] = ()  # (seconds since the request, bytes so far)
    intent: Intent | None = None  # what the scenario's request is meant to show
    scenario: str = "offline"
    observations: Observations = field(default_factory=Observations)
    # the analyses made of it, by profile: an exchange is decoded once (``analyze``); ``dataclasses.replace`` hands
    # the same memo to the copy that adds an observation, and an entry is only used while the bytes it decoded are
    # the copy's own
    memo: dict[Any, Analysis] = field(default_factory=dict, compare=False, repr=False)

    def header(self, name: str) -> str | None:
        """The first response header with this name, case-insensitively."""
        return _header(self.headers, name)

    def request_header(self, name: str) -> str | None:
        return _header(self.request_headers, name)

    @property
    def endpoint(self) -> str:
        """A protocol's route (chat, responses, ollama-chat, ...), models, model, cancel, health or other."""
        return endpoint_of(self.path)

    @property
    def protocol(self) -> Protocol | None:
        """The protocol its endpoint speaks (None for the plain JSON routes)."""
        return protocol_for(self.endpoint)


def _header(headers: tuple[tuple[str, str], ...], name: str) -> str | None:
    lowered = name.lower()
    for key, value in headers:
        if key.lower() == lowered:
            return value
    return None


@dataclass
class Analysis:
    """An exchange decoded once, for every check to read."""

    exchange: Exchange
    profile: Profile
    format: str  # sse | ndjson | json | empty | text
    events: list[SSEEvent] = field(default_factory=list)
    stats: SSEStats | None = None
    lines: list[NDJSONLine] = field(default_factory=list)  # NDJSON off Ollama's routes (its first 2 MiB)
    ndjson: NDJSONDecoder | None = None
    frames: Any = None  # Ollama's routes: the FrameWatch its lines were fed to (no line kept)
    json_body: Any = MISSING
    payloads: list[Any] = field(default_factory=list)  # the protocol's own payloads (chat's Payload, Responses' Event, ...)
    assembled: Assembled = field(default_factory=Assembled)
    wire_error: WireError | None = None
    judged_bytes: int | None = None  # set when only this many bytes of the body were judged (the caps below)
    protocol: Protocol | None = None  # the protocol the exchange's endpoint speaks
    watch: Any = None  # chat: the ChatWatch its one decoding pass filled (protocols/chat/watch.py)
    answer: Any = None  # what the protocol assembled (chat: ``assembled``; responses: an ``Answer``)
    cuts: list[int] | None = None  # the pieces the body was fed in (byte-split fuzzing)
    judged: dict[frozenset[str] | None, Any] = field(default_factory=dict)  # verdicts by rule selection (checks.judged)
    copies: list[Analysis] = field(default_factory=list)  # of this one, for copies of the exchange (``analyze``)

    @property
    def request(self) -> dict[str, Any]:
        req = self.exchange.request
        return req if isinstance(req, dict) else {}

    @property
    def is_stream(self) -> bool:
        """Whether the request asked for a stream (or, with no request known, the body is one)."""
        req = self.exchange.request
        if isinstance(req, dict):
            default = self.protocol is not None and self.protocol.streams_by_default
            return req.get("stream", default) is True
        return self.format in ("sse", "ndjson")

    @property
    def success(self) -> bool:
        return self.exchange.status is not None and 200 <= self.exchange.status < 300

    @property
    def content_type(self) -> str:
        value = self.exchange.header("content-type") or ""
        return value.split(";", 1)[0].strip().lower()

    @property
    def chunks(self) -> list[Payload]:
        return [p for p in self.payloads if p.kind == "chunk"]

    @property
    def intent(self) -> Intent | None:
        """What the request is meant to show, as the run's profile reads it: every rule asks this, not the exchange.
        An allowance exempts every rule the allowed behaviour would fail, not one: a request for an unknown model id
        that a profile allows to be served (LM Studio answers it with a loaded model, 003 §2.1) and that was answered
        is a valid request (no bad-input rule judges it), and ERR-012 says the profile allows it."""
        intent = self.exchange.intent
        if intent == Intent.UNKNOWN_MODEL and self.success and "unknown-model-served" in self.profile.allows:
            return None
        return intent

    def allows(self, extension: str) -> bool:
        """Whether the profile allows this documented extension (a name outside the closed set is a bug)."""
        if extension not in ALLOWANCES:
            raise KeyError(f"unknown allowance {extension!r}")
        return extension in self.profile.allows

    def expects(self, promise: str) -> bool:
        """Whether the profile's dialect documents this promise (a name outside the closed set is a bug)."""
        from conformance.model.profiles import EXPECTATIONS

        if promise not in EXPECTATIONS:
            raise KeyError(f"unknown expectation {promise!r}")
        return promise in self.profile.expects


def detect_format(exchange: Exchange) -> str:
    """sse, ndjson, json, empty or text: from the Content-Type, else from the bytes."""
    body = exchange.body
    if not body or body.isspace():  # (not body.strip(): that copies a body of any size)
        return "empty"
    ctype = (exchange.header("content-type") or "").split(";", 1)[0].strip().lower()
    if ctype == "text/event-stream":
        return "sse"
    if ctype in ("application/x-ndjson", "application/jsonl", "application/ndjson"):
        return "ndjson"
    head = body[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")[:16]
    if head.startswith((b"data:", b":", b"event:", b"id:", b"retry:")) or re.search(rb"(?m)^data:", body[:4096]):
        return "sse"  # an event stream, whatever unknown field its first line holds
    if isinstance(body, SpooledBody):  # past 2 MiB, told from its first 2 MiB: JSON lines, one JSON document, text
        window = body[:HOLD_BYTES].lstrip(b"\xef\xbb\xbf \t\r\n")
        first, _, rest = window.partition(b"\n")
        if first.lstrip().startswith(b"{") and rest.strip():
            try:
                loads_strict(first.decode("utf-8"))
                return "ndjson"  # a whole JSON value on the first line, and more lines after it
            except (UnicodeDecodeError, ValueError):
                pass
        return "json" if window.startswith((b"{", b"[")) else "text"
    try:
        loads_strict(body.decode("utf-8"))
        return "json"
    except (UnicodeDecodeError, ValueError):
        pass
    lines = [line for line in body.split(b"\n") if line.strip()]
    if len(lines) > 1 and lines[0].lstrip().startswith(b"{"):
        return "ndjson"
    return "text"


SLICE = 64 * 1024


def _slices(body: Body, cuts: list[int] | None) -> Iterator[bytes]:
    """The body in the given pieces, or in 64 KiB slices (read from its file when it is spooled)."""
    if cuts:
        yield from pieces(whole(body), cuts)
        return
    yield from slices(body, SLICE)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while one whole body is decoded, then restore it.

    Decoding keeps every payload (tens of thousands of small dicts, none in a cycle); each
    collection walks all of them, which halves the decode-and-assemble rate on a long stream. The
    pause is here, where a whole exchange is judged, not in the sans-I/O layers, which never touch
    process state.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


MAX_KEPT_COPIES = 8  # copies of one exchange whose analyses are kept (a kind adds one or two observations)


def analyze(exchange: Exchange, profile: str | Profile = "openai",
            cuts: list[int] | None = None) -> Analysis:
    """Decode an exchange once, through the protocol its endpoint speaks; ``cuts`` feeds the body in
    pieces (for byte-split fuzzing)."""
    prof = profile if isinstance(profile, Profile) else PROFILES[profile]
    key = (prof, id(exchange.body), id(exchange.headers), exchange.path, id(exchange.request), exchange.status)
    if cuts is None and (known := exchange.memo.get(key)) is not None:
        if known.exchange is exchange:
            return known
        # a copy of the exchange (another observation added) shares its memo: the same decoding, read against the
        # copy's observations, kept for the copy with verdicts of its own (the rules read the observations)
        again = next((c for c in known.copies if c.exchange is exchange), None)
        if again is None:
            again = copy.copy(known)
            again.exchange, again.judged, again.copies = exchange, {}, []
            if len(known.copies) < MAX_KEPT_COPIES:
                known.copies.append(again)
        return again
    analysis = _analyze(exchange, prof, cuts)
    if cuts is None:
        exchange.memo[key] = analysis
    return analysis


def _analyze(exchange: Exchange, prof: Profile, cuts: list[int] | None) -> Analysis:
    fmt = detect_format(exchange)
    protocol = exchange.protocol
    analysis = Analysis(exchange, prof, fmt, protocol=protocol, cuts=cuts)
    body = exchange.body
    try:
        if protocol is not None and fmt in (protocol.framing, "json"):
            with gc_paused():
                protocol.analyze(analysis, _slices(body, cuts))
        elif fmt == "sse":
            analysis.events, analysis.stats = decode_sse(body[:MAX_JUDGED_BYTES], cuts)
            analysis.judged_bytes = MAX_JUDGED_BYTES if len(body) > MAX_JUDGED_BYTES else None
        elif fmt == "ndjson":
            analysis.lines, analysis.ndjson, analysis.judged_bytes = decode_ndjson_capped(body, cuts)
        elif fmt == "json":
            analysis.json_body = json.loads(whole(exchange.body).decode("utf-8"))
    except WireError as exc:
        analysis.wire_error = exc.with_traceback(None)  # its frames held the decoder's buffer: a 16 MiB line each
    return analysis


def assembled_json(a: Analysis) -> dict[str, Any]:
    """What the protocol assembled, as JSON (chat's message, Ollama's frames, a Responses answer)."""
    if a.answer is None and a.format == "ndjson":  # NDJSON off Ollama's routes: its frames, as Ollama's
        from conformance.protocols.ollama.assembler import assemble_frames

        return assemble_frames(line.value for line in a.lines)
    answer: Any = a.answer if a.answer is not None else a.assembled
    return dict(answer) if isinstance(answer, dict) else answer.to_json()
