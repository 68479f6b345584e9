"""A recorded exchange and its analysis: the one input of every check.

An ``Exchange`` is what went over the wire (request, status, headers, raw body bytes with arrival
times) plus what the live suite observed around it (``observations``: a timeout, a follow-up
request, a health counter). ``analyze`` decodes it through the sans-I/O wire layer once; checks
read the ``Analysis`` and never decode anything themselves.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from conformance.model import Intent
from conformance.model.observations import Observations
from conformance.protocols import protocol_of
from conformance.protocols.chat import Assembled, Payload, assemble_body, decode_and_assemble, loads_strict
from conformance.wire.errors import WireError
from conformance.wire.ndjson import MISSING, NDJSONDecoder, NDJSONLine, decode_ndjson
from conformance.wire.sse import SSEEvent, SSEStats, decode_sse, pieces

CHAT_PATH = "/v1/chat/completions"


@dataclass(frozen=True)
class Exchange:
    """One request and its response, exactly as recorded."""

    request: Any = None
    body: bytes = b""
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

    def header(self, name: str) -> str | None:
        """The first response header with this name, case-insensitively."""
        return _header(self.headers, name)

    def request_header(self, name: str) -> str | None:
        return _header(self.request_headers, name)

    @property
    def endpoint(self) -> str:
        """chat, models, model, cancel, ollama-chat, ollama-generate, ollama-tags or other."""
        path = self.path.split("?", 1)[0].rstrip("/")
        if path.endswith("/cancel"):
            return "cancel"
        for suffix, name in (("/chat/completions", "chat"), ("/v1/models", "models"),
                             ("/api/chat", "ollama-chat"), ("/api/generate", "ollama-generate"),
                             ("/api/tags", "ollama-tags")):
            if path.endswith(suffix):
                return name
        return "model" if "/v1/models/" in path else "other"


def _header(headers: tuple[tuple[str, str], ...], name: str) -> str | None:
    lowered = name.lower()
    for key, value in headers:
        if key.lower() == lowered:
            return value
    return None


@dataclass(frozen=True)
class Profile:
    """A named dialect: the documented extensions it allows. The report always names it."""

    name: str
    allows: frozenset[str]
    description: str


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile("openai", frozenset(), "Strict OpenAI Chat Completions; no extensions."),
        Profile("azure", frozenset({"filter-chunks", "model-version", "filter-block-no-usage"}),
                "Azure OpenAI: prompt-filter and annotation chunks, the model version as model."),
        Profile("afm", frozenset({"finish-cancelled", "profile-events"}),
                "AFM: cancel endpoint, finish_reason cancelled, afm_profile events."),
        Profile("lmstudio", frozenset({"event-error", "unknown-model-served"}),
                "LM Studio: event: error in the stream; an unknown model answered by a loaded one."),
        Profile("llamacpp", frozenset({"finish-cancelled"}), "llama.cpp's llama-server."),
        Profile("vllm", frozenset(), "vLLM's OpenAI server."),
        Profile("ollama", frozenset(), "Ollama: its /v1 routes and native NDJSON."),
    )
}


@dataclass
class Analysis:
    """An exchange decoded once, for every check to read."""

    exchange: Exchange
    profile: Profile
    format: str  # sse | ndjson | json | empty | text
    events: list[SSEEvent] = field(default_factory=list)
    stats: SSEStats | None = None
    lines: list[NDJSONLine] = field(default_factory=list)
    ndjson: NDJSONDecoder | None = None
    json_body: Any = MISSING
    payloads: list[Payload] = field(default_factory=list)
    assembled: Assembled = field(default_factory=Assembled)
    wire_error: WireError | None = None

    @property
    def request(self) -> dict[str, Any]:
        req = self.exchange.request
        return req if isinstance(req, dict) else {}

    @property
    def is_stream(self) -> bool:
        """Whether the request asked for a stream (or, with no request known, the body is one)."""
        req = self.exchange.request
        if isinstance(req, dict):
            default = self.exchange.endpoint in ("ollama-chat", "ollama-generate")
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

    def allows(self, extension: str) -> bool:
        return extension in self.profile.allows


def detect_format(exchange: Exchange) -> str:
    """sse, ndjson, json, empty or text: from the Content-Type, else from the bytes."""
    body = exchange.body
    if not body.strip():
        return "empty"
    ctype = (exchange.header("content-type") or "").split(";", 1)[0].strip().lower()
    if ctype == "text/event-stream":
        return "sse"
    if ctype in ("application/x-ndjson", "application/jsonl", "application/ndjson"):
        return "ndjson"
    head = body.lstrip(b"\xef\xbb\xbf \t\r\n")[:16]
    if head.startswith((b"data:", b":", b"event:", b"id:", b"retry:")):
        return "sse"
    try:
        loads_strict(body.decode("utf-8"))
        return "json"
    except (UnicodeDecodeError, ValueError):
        pass
    lines = [line for line in body.split(b"\n") if line.strip()]
    if len(lines) > 1 and lines[0].lstrip().startswith(b"{"):
        return "ndjson"
    return "text"


def analyze(exchange: Exchange, profile: str | Profile = "openai",
            cuts: list[int] | None = None) -> Analysis:
    """Decode an exchange once, through the protocol its endpoint speaks; ``cuts`` feeds the body in
    pieces (for byte-split fuzzing)."""
    prof = profile if isinstance(profile, Profile) else PROFILES[profile]
    fmt = detect_format(exchange)
    analysis = Analysis(exchange, prof, fmt)
    protocol = protocol_of(exchange.endpoint)
    try:
        if fmt == "sse" and protocol in ("chat", None):  # an event stream off the chat route is judged as chat
            decoded = decode_and_assemble(pieces(exchange.body, cuts))
            analysis.events, analysis.stats, analysis.payloads, analysis.assembled = decoded
        elif fmt == "sse":
            analysis.events, analysis.stats = decode_sse(exchange.body, cuts)
        elif fmt == "ndjson":
            analysis.lines, analysis.ndjson = decode_ndjson(exchange.body, cuts)
        elif fmt == "json":
            analysis.json_body = json.loads(exchange.body.decode("utf-8"))
            if protocol == "chat":
                analysis.assembled = assemble_body(analysis.json_body)
    except WireError as exc:
        analysis.wire_error = exc
    return analysis
