"""Protocols: what the payloads of a wire format mean. ``wire/`` decodes SSE and NDJSON with no
knowledge of payloads; each package here says, for one protocol, which routes speak it, how it is
framed, how its payloads are decoded and assembled (one pass, fed as the bytes arrive), when an
answer is complete, and how many tokens it used.

- ``chat``: OpenAI Chat Completions over SSE (and its JSON body), ``[DONE]``, the assembler.
- ``ollama``: Ollama's NDJSON frames.
- ``responses``: the OpenAI Responses API's semantic events over SSE, and its response object.
- ``messages``: the Anthropic Messages API's named events over SSE, and its message object.

The engine, the judge, inspect, rejudge, replay and the reports ask ``protocol_for(endpoint)`` and
call what it returns; nothing outside this package and the registries below switches on a
protocol's name. A new protocol is one package here and one line in ``REGISTRY``; what else it
brings is found by name from the registry, never listed by hand:

- ``conformance/protocols/<name>/scenarios.py``: ``scenarios()``, its scenarios;
- ``conformance/protocols/<name>/rules.toml``: its rules, a ``[[rule]]`` table each (their category is its name);
- ``conformance/checks/<name>.py``: its checks, registered by import;
- ``reference_server/<name>.py``: ``routes(server)``, its reference route, and
  ``reference_server/<name>_faults.py``: ``DEFECTS`` and ``LEGAL``, its faults for the self-test.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from conformance.exchange import Analysis

# The registry: one line per protocol (its package under conformance.protocols).
REGISTRY = ("chat", "ollama", "responses", "messages", "completions")
DEFAULT_SSE = "chat"  # how an event stream off every protocol's routes is waited on

# What one exchange is judged on: a protocol's event stream whole (the streaming judge keeps no event, issue 25);
# an NDJSON body, or an event stream on a route no protocol serves, on its first 2 MiB.
MAX_JUDGED_BYTES = 2 * 1024 * 1024

# Routes that speak no streaming protocol (plain JSON): the judge still reads them.
PLAIN_ROUTES = (("/v1/models", "models"), ("/api/tags", "ollama-tags"), ("/health", "health"))


@dataclass(frozen=True)
class Protocol:
    """One protocol, as the rest of the suite may ask about it."""

    name: str
    summary: str  # what it is, in a few words (help texts and the docs)
    # (path suffix, endpoint name), most specific first; a name None says a path that ends so is not this protocol's
    # (the Completions API's /completions is not chat's /chat/completions)
    routes: tuple[tuple[str, str | None], ...]
    framing: str  # sse | ndjson
    streams_by_default: bool  # whether a request without "stream" is answered with a stream
    # fill an Analysis from the body (pieces as they arrived): the single pass of decoding, assembling, ordering
    analyze: Callable[[Analysis, Iterable[bytes]], None]
    # whether a successful answer's stream ended as the protocol ends one (for "cut short" resends)
    finished: Callable[[Analysis], bool]
    # (completion tokens used, 1 when that is a count of events rather than a reported usage)
    tokens_used: Callable[[Analysis], tuple[int, int]]
    # whether one SSE data payload shows the generation under way or over (the wait for "answered")
    answers: Callable[[str], bool]
    # offline (inspect, replay): whether the first bytes of a body look like this protocol, and the path to judge
    # it under then; the first protocol that claims a body wins, chat's SSE and JSON the default
    sniff: Callable[[bytes], bool] | None = None
    path: str = ""
    # what a correct client library makes of an answer, in the shape client adapters print (content, reasoning,
    # tool_calls, finish_reason, usage, error, complete); None: the chat assembly as it is
    client_view: Callable[[Analysis], dict[str, Any]] | None = None
    # one of OpenAI's APIs: its error envelope ({"error": {...}}) and its X-Request-ID echo apply (Ollama has its own)
    openai: bool = True
    # the headers every request of this protocol carries, given the run's API key (None: no key): where the key
    # goes (a bearer token unless the protocol says otherwise) and any version header the protocol requires
    headers: Callable[[str | None], dict[str, str]] | None = None
    # whether a successful answer to a capability's probe shows the capability ((supported, evidence)), for the
    # capabilities whose evidence is in the answer (None: answered is supported)
    shows: Callable[[str, Analysis], tuple[bool, str] | None] | None = None
    # the environment a client library of this protocol reads its server from, given the replay's /v1 base URL and
    # its root (the base URL and key variables of the protocol's SDKs); None: OPENAI_BASE_URL and OPENAI_API_KEY
    client_env: Callable[[str, str], dict[str, str]] | None = None
    # the request field that caps the output tokens (dotted: a field inside an object), set where a request sent as
    # recorded (the agents' corpus) asks for none
    cap_field: str = "max_tokens"
    # the scenario that probes whether the server serves this protocol's route (its route capability's probe): sent
    # first; a 404, 405 or 501 that names no model leaves the protocol's other scenarios unsent
    probe: str = ""
    # the route that lists the models this protocol serves (OpenAI's and Anthropic's APIs: /v1/models; Ollama:
    # /api/tags): where discovery looks for a model, and what a run of this protocol alone may ask
    models_path: str = "/v1/models"
    # the answer's fields a recorded fixture pins (``conformance record``, the peers' fixtures): what this protocol's
    # assembly says a client gets, as ``assembled_json`` gives it
    pinned: tuple[str, ...] = ("content", "reasoning", "finish_reason", "tool_calls")

    def plain(self, ctx: Any, *, stream: bool, max_tokens: int, long: bool = False) -> Any:
        """A plain request of this protocol (``protocols/<name>/scenarios.py``'s ``plain``): what every scenario kind
        sends beside its own request (the liveness request after an error, a disconnect's baseline and other stream,
        the burst's settle streams), so a server of one protocol gets no request of another."""
        module = importlib.import_module(f"conformance.protocols.{self.name}.scenarios")
        return module.plain(ctx, stream=stream, max_tokens=max_tokens, long=long)

    def request_headers(self, api_key: str | None) -> dict[str, str]:
        if self.headers is not None:
            return self.headers(api_key)
        return bearer(api_key)

    def endpoint_of(self, path: str) -> str | None:
        return next((name for suffix, name in self.routes if path.endswith(suffix)), None)


def client_environment(base_url: str, host_url: str) -> dict[str, str]:
    """What client libraries and agents read their server from, for every protocol's SDKs (``conformance clients``,
    ``fuzz-client``): the replay's URLs in each protocol's variables, a key that is no secret."""
    env = {"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "replay"}
    for name in REGISTRY:
        protocol = by_name(name)
        if protocol.client_env is not None:
            env.update(protocol.client_env(base_url, host_url))
    return env


def bearer(api_key: str | None) -> dict[str, str]:
    """The key as OpenAI's APIs (and most servers) take it."""
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def brought(pattern: str) -> list[Any]:
    """The module ``pattern`` names (``{name}`` the protocol's name) of every registered protocol that brings one, in
    registry order: how the registries of scenarios, rules, checks, reference routes and faults find what a protocol
    adds, with no list of protocols kept anywhere else."""
    import importlib.util

    found = []
    for name in REGISTRY:
        module = pattern.format(name=name)
        try:
            spec = importlib.util.find_spec(module)
        except ModuleNotFoundError:  # its parent package is not there
            spec = None
        if spec is not None:
            found.append(importlib.import_module(module))
    return found


_LOADED: dict[str, Protocol] = {}


def load() -> dict[str, Protocol]:
    """Every registered protocol, by name (imported on first use: the packages import the wire layer only)."""
    if not _LOADED:
        for name in REGISTRY:
            module = importlib.import_module(f"conformance.protocols.{name}.protocol")
            _LOADED[name] = module.PROTOCOL
    return _LOADED


def by_name(name: str) -> Protocol:
    return load()[name]


def endpoint_of(path: str) -> str:
    """The endpoint a request path names: a protocol's route, a plain route, cancel, model or other."""
    path = path.split("?", 1)[0].rstrip("/")
    if path.endswith("/cancel"):
        return "cancel"
    for protocol in load().values():
        found = protocol.endpoint_of(path)
        if found is not None:
            return found
    for suffix, name in PLAIN_ROUTES:
        if path.endswith(suffix):
            return name
    return "model" if "/v1/models/" in path else "other"


def headers_for(path: str, api_key: str | None) -> dict[str, str]:
    """The headers a request to this route carries for its protocol: the key where it goes (a bearer token on a
    route no protocol serves)."""
    protocol = protocol_for(endpoint_of(path))
    return protocol.request_headers(api_key) if protocol is not None else bearer(api_key)


def protocol_for(endpoint: str) -> Protocol | None:
    """The protocol an endpoint speaks (None for the plain JSON routes: models, cancel, tags, health)."""
    for protocol in load().values():
        if any(name == endpoint for _, name in protocol.routes):
            return protocol
    return None


def guess_path(head: bytes, fmt: str) -> str | None:
    """The route of the protocol whose ``sniff`` claims a body's first bytes (None: none claims it)."""
    for protocol in load().values():
        if protocol.sniff is not None and fmt in (protocol.framing, "json") and protocol.sniff(head):
            return protocol.path
    return None


def answers_for(path: str) -> Callable[[str], bool]:
    """How the protocol of a request's route tells an event that shows the generation under way (the default SSE
    protocol's way for a route no SSE protocol serves)."""
    protocol = protocol_for(endpoint_of(path))
    return (protocol if protocol is not None and protocol.framing == "sse" else by_name(DEFAULT_SSE)).answers


def feed_sse(pieces: Iterable[bytes], feed_events: Callable[[list[Any]], None],
             max_events: int | None = None, keep: bool = True, runs: bool = False) -> tuple[list[Any], Any]:
    """Decode an SSE body delivered in pieces, handing each batch of events to ``feed_events`` as it is decoded:
    the one pass every SSE protocol's ``analyze`` makes. With ``max_events``, feeding stops at the first piece that
    passes it (``stats.total_bytes`` says how far it got). Returns the events (none unless ``keep``: the streaming
    judge reads each batch as it comes and keeps none) and the decoder's stats. With ``runs``, a batch may hold
    ``SSERun`` items (identical events after the one before them), which ``feed_events`` takes as those events."""
    from conformance.wire.sse import SSEDecoder

    decoder = SSEDecoder(runs=runs and not keep)
    events: list[Any] = []
    count = 0
    for piece in pieces:
        batch = decoder.feed(piece)
        if keep:
            events += batch
        count += len(batch)
        feed_events(batch)
        if max_events is not None and count > max_events:
            return events, decoder.stats
    batch = decoder.close()
    if keep:
        events += batch
    feed_events(batch)
    return events, decoder.stats


def decode_ndjson_capped(body: Any, cuts: list[int] | None) -> tuple[Any, Any, int | None]:
    """An NDJSON body decoded on its first ``MAX_JUDGED_BYTES`` (whole lines): lines, decoder, and the bytes judged
    when the cap cut it (None when it did not)."""
    from conformance.wire.ndjson import decode_ndjson

    judged = None
    if len(body) > MAX_JUDGED_BYTES:  # (a body spooled to disk reads only this much)
        head = body[:MAX_JUDGED_BYTES]
        body = head[: head.rfind(b"\n") + 1]
        judged = len(body)
    lines, decoder = decode_ndjson(body, cuts)
    return lines, decoder, judged
