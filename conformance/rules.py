"""The rulebook, as data. Every check, the CLI's rule selection and the docs table come from here.

Ids are stable: never renumber a rule, retire it instead. ``source`` names a seed document in
../shared/seeds/ and its section, the WHATWG standard, an RFC, or the public OpenAI API reference;
``refs`` names rows of ../shared/docs/DEVIATIONS.md that show servers getting it wrong.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from conformance.capabilities import CAPABILITY_RULES
from conformance.protocols import REGISTRY

RULESET_VERSION = "10"  # bumped whenever a rule is added or retired or its meaning changes; in every report
# 2: TRN-014 (every request gets a response; nothing passes without one), judging caps under TRN-011.
# 3: ERR-017 (bad input is refused within the refusal deadline), ERR-018 (a burst is answered or refused, not
#    queued without a bound); TRN-014 leaves a request cut at the refusal deadline to ERR-017; MOD-002 asks only
#    for the data array 003 §6 reads, MOD-006 (should) for object: list; ERR-014 and STR-004 advisory (003 §5: a
#    429's Retry-After "may" be present; §2.6: a schema without strict binds nothing).
# 4: the dialect facts of issue 12: TRN-015/016 (OpenAI-Request-ID, X-Grammar-Constraints), CHK-020 (AFM profile
#    events), TOOL-019/020/021 (union schemas, the round trip accepted, a custom tool), RSN-009/010, IMG-001..003, USG-012 (prompt
#    reuse), MOD-007/008 (capabilities, /health), OLL-011..014 (length, X-Request-ID, /api/pull, failures);
#    CAN-004 also for a completed and a chatcmpl id; STR-003 leaves a declared downgrade to STR-004.
# 5: what real servers showed (issue 15): TRN-017 (an HTTP/1.1 request answered in HTTP/1.1), FIN-010 (length
#    only at the cap), FIN-011 (generation ends at the stop sequence), ERR-021 (no 5xx on a valid request), ERR-022
#    (a JSON body labelled text/plain refused), ERR-023 (error.code is not the HTTP status), MOD-009 (the model list
#    is not empty); TRN-006 judged on a scenario of its own (request-id).

# 7: the Responses API (issue 22): RSP-001..023; rules declare where they apply (protocol http, sse or a protocol's
#    name) and the registry decides; the generic SSE framing and stream-header rules judge every SSE protocol.
# 8: agents (issue 46): AGT-001 (the requests real agents send are answered: client readiness), TRN-019 (no long
#    silence in a stream, the longest reported).
# 9: one-protocol servers (issue 61): chat's route is a capability (TRN-020, --expect chat); a server that does not
#    serve a protocol's route gets none of its scenarios, and a refusal that names no model never blames the model.
# 10: the Completions API (issue 61): CMP-001..015 and its three capabilities, all in its package; a run of
#     --protocol judges no other protocol's capability rule. Depth on every API (issue
#     59): ERR-027 (error.type a kind, not a class name), RSP-029..031 (markup, the fields OpenAI always sends, a
#     stored response continued), MSG-033..036 (markup, a prefill, thinking alone, a stop reported as end_turn),
#     MSG-014 asks for stop_sequence, RSP-032 (parity), RSP-033 and MSG-037 (keys beyond the reference), TRN-021
#     (a body cut by the server); a refusal whose message names its cause
#     skips the rules that would blame the request's feature.
# the categories: chat's and the HTTP ones, then one per other protocol (its name, from the registry), then fuzz
CATEGORIES = (
    "transport", "framing", "chunks", "finish", "usage", "tools", "reasoning", "structured",
    "errors", "images", "cancellation", "models", *(name for name in REGISTRY if name != "chat"), "agents", "fuzz",
)
LEVELS = ("must", "should", "advisory")
APPLIES = ("stream", "non-stream", "both")

AFM = "000_9adc55f728b3a6e5.txt"
STRICT = "001_b86e68556766b6cb.txt"
NPU = "002_018dc7b61835a212.txt"
WIRE = "003_b25f797ba83b2388.txt"
# how users read a seed document's name: they cannot open the project's seed files, so a citation names its title
SEED_TITLES = {
    AFM: "AFM's streaming documentation (a local server's OpenAI-shaped SSE)",
    STRICT: "OPENAI_SERVER.md, a strict local OpenAI-compatible server's guide",
    NPU: "npu_proxy's STREAMING.md (OpenAI SSE and Ollama NDJSON)",
    WIRE: "\"Wire protocol: OpenAI-compatible Chat Completions\" (notes observed across LM Studio, mlx-lm, llama.cpp, "
          "vLLM and Azure OpenAI)",
}
WHATWG = "WHATWG HTML §9.2.6 Parsing an event stream"
OPENAI = "OpenAI API reference: Chat Completions"
OPENAI_STREAM = "OpenAI API reference: Chat Completions streaming events"
OPENAI_MODELS = "OpenAI API reference: Models"
OPENAI_RESP = "OpenAI API reference: Responses (create a response; the response object)"
OPENAI_RESP_STREAM = "OpenAI API reference: Responses streaming events"
OPEN_RESPONSES = "Open Responses specification (openresponses.org): Streaming"
RFC9112 = "RFC 9112 §6"
RFC9110 = "RFC 9110 §2.5 (a server sends the highest version it conforms to, not above the request's)"
FETCH_CORS = ("WHATWG Fetch §CORS-safelisted request-header (text/plain needs no preflight); FastAPI 0.65.2 "
              "(CVE-2021-32677: JSON bodies of another media type are no longer parsed)")


@dataclass(frozen=True, slots=True)
class Rule:
    """One checkable fact."""

    id: str
    title: str
    category: str
    level: str
    applies: str
    source: str
    refs: tuple[str, ...] = ()
    # where it applies, decided by the registry (checks.evaluate), never by the check body: a protocol's name
    # (chat, ollama, responses), "sse" for every protocol framed as an event stream, "http" for any exchange
    protocol: str = "chat"


WHERE = ("http", "sse", *REGISTRY)
# The rules every SSE protocol shares: the stream's media type and headers, and the WHATWG framing. The [DONE]
# terminator and the event types are chat's (the Responses API names its events and has its own end).
SSE_RULES = frozenset({"TRN-001", "TRN-002", "TRN-003", "TRN-004", "TRN-005", "TRN-009", "TRN-012", "TRN-018",
                       "SSE-001", "SSE-005", "SSE-006", "SSE-007", "SSE-009", "SSE-010", "SSE-011", "SSE-012",
                       "SSE-013", "SSE-014", "SSE-015", "SSE-016", "SSE-017", "TRN-019"})
CHAT_RULES = frozenset({"SSE-002", "SSE-003", "SSE-004", "SSE-008", "TRN-015", "ERR-008", "ERR-009", "ERR-010"})
HTTP_CATEGORIES = ("transport", "errors", "models", "cancellation", "agents", "fuzz")


def _where(id: str, category: str) -> str:
    if id in CAPABILITY_RULES.values():
        return "http"  # a capability the user expects is judged on its probe, whatever the route answered
    if category in REGISTRY:  # a protocol's own category (ollama, responses)
        return category
    if id in CHAT_RULES:
        return "chat"
    if id in SSE_RULES:
        return "sse"
    return "http" if category in HTTP_CATEGORIES else "chat"


def groups(rulebook: Iterable[Rule] | None = None) -> list[tuple[str, list[Rule], str]]:
    """The rulebook (or ``rulebook``) by category, in order: each category's rules and the protocols they apply to
    (for its tables)."""
    every = list(RULES if rulebook is None else rulebook)
    out = []
    for category in CATEGORIES:
        rules = [r for r in every if r.category == category]
        out.append((category, rules, ", ".join(sorted({r.protocol for r in rules}))))
    return out


def cite(source: str) -> str:
    """A rule's source as a user reads it: each seed document named by its title in words, never by its file."""
    for name, title in SEED_TITLES.items():
        source = source.replace(name, title)
    return source


def _r(id: str, category: str, level: str, applies: str, title: str, source: str,
       *refs: str) -> Rule:
    return Rule(id, title, category, level, applies, source, refs, _where(id, category))


RULES: tuple[Rule, ...] = (
    # transport
    _r("TRN-001", "transport", "must", "stream", "A successful stream is served as text/event-stream",
       f"{WIRE} §5; {NPU} §1; {AFM} headers", "A24", "A25", "A40"),
    _r("TRN-002", "transport", "must", "non-stream", "A non-stream response is served as application/json",
       OPENAI, "A39"),
    _r("TRN-003", "transport", "should", "stream", "The stream carries Cache-Control: no-cache",
       f"{AFM} headers"),
    _r("TRN-004", "transport", "advisory", "stream", "The stream carries X-Accel-Buffering: no",
       f"{AFM} headers", "A30", "A31", "A32"),
    _r("TRN-005", "transport", "should", "stream", "The event stream is not compressed (no Content-Encoding)",
       f"{AFM} headers (forward events immediately)", "A34"),
    _r("TRN-006", "transport", "should", "both", "A request's X-Request-ID is echoed in the response",
       f"{AFM} headers; {NPU} headers"),
    _r("TRN-007", "transport", "must", "stream", "Events are delivered incrementally, not buffered to the end",
       f"{AFM} headers; {NPU} §1 (a true StreamingResponse)", "F44", "A32"),
    _r("TRN-008", "transport", "must", "both", "An HTTP/1.0 request gets no Transfer-Encoding",
       f"{RFC9112}.1", "A35"),
    _r("TRN-009", "transport", "must", "non-stream", "A request without stream: true is not answered with a stream",
       OPENAI, "A28"),
    _r("TRN-010", "transport", "must", "both",
       "The response completes within the time limits (first byte, between events, total)",
       f"{WIRE} §5 (do not wait for a stalled body)", "A36"),
    _r("TRN-011", "transport", "must", "both", "The response stays within the byte and line-length caps",
       f"{WIRE} §3.1", "A36"),
    _r("TRN-012", "transport", "should", "stream", "The Content-Type of a stream names no charset other than UTF-8",
       WHATWG),
    _r("TRN-013", "transport", "must", "both", "X-Request-ID is echoed when the server is expected to (capability request-id)",
       f"{AFM} headers"),
    _r("TRN-019", "transport", "advisory", "stream",
       "No silence of 60 s or more in a stream, before the first byte or between reads (the longest is reported)",
       "nginx, proxy_read_timeout (default 60 s: a proxy in front of the server closes a quieter stream); Claude Code "
       "2.1.332 gives up on a stream idle for max(CLAUDE_STREAM_IDLE_TIMEOUT_MS, 300 s); Anthropic API reference, "
       "Streaming Messages (ping events)"),
    _r("TRN-018", "transport", "must", "both",
       "A successful chat answer has a body (an event stream, or a JSON completion), not zero bytes",
       f"{WIRE} §3 (a stream of data: events ending in [DONE]) and §2 (a JSON completion); OpenAI API reference"),
    _r("TRN-014", "transport", "must", "both", "Every request gets an HTTP response (a status line), also bad input",
       f"RFC 9110 §3.4 (a server responds to a request with a response); {WIRE} §5 (errors are statuses); "
       f"{STRICT} (bad input gets a 4xx envelope)"),
    _r("TRN-015", "transport", "should", "both", "OpenAI-Request-ID accompanies X-Request-ID (dialects that document it)",
       f"{AFM} headers (X-Request-ID and OpenAI-Request-ID: the correlation and cancellation handle)"),
    _r("TRN-016", "transport", "should", "both",
       "X-Grammar-Constraints, where sent, says downgraded, on a request with a strict schema or strict tool",
       f"{AFM} headers (a strict schema or strict tool grammar running best-effort)"),
    _r("TRN-017", "transport", "should", "both", "An HTTP/1.1 request is answered in HTTP/1.1, not HTTP/1.0",
       f"{RFC9110}; {RFC9112} (HTTP/1.0 has no chunked framing or persistent connections by default)"),
    _r("TRN-020", "transport", "must", "both",
       "POST /v1/chat/completions is served when the server is expected to (capability chat)",
       f"{OPENAI} (create chat completion); {WIRE} §1 (the OpenAI-compatible base URL serves /chat/completions)"),
    _r("TRN-021", "transport", "must", "both",
       "A response's body is whole: the server does not close the connection before it ends (a chunked body without "
       "its last chunk, fewer bytes than its Content-Length)",
       f"{RFC9112}.3 (message body length: an incomplete message is an error); {WIRE} §3.1 (a stream ends with its "
       "terminator, not a dropped connection)"),
    _r("TRN-022", "transport", "advisory", "both",
       "X-NPU-Proxy-* headers, where a server sends them, agree: X-NPU-Proxy-Device is the execution device, and "
       "X-NPU-Proxy-Fallback-Reason is present exactly when the execution device differs from the routed one",
       f"{NPU} Request/response headers"),
    # framing
    _r("SSE-001", "framing", "must", "stream", "The event stream is valid UTF-8", f"{WHATWG}; {WIRE} §3.1", "B8"),
    _r("SSE-002", "framing", "must", "stream", "The stream ends with a data: [DONE] event",
       f"{WIRE} §3.1; {AFM} lifecycle; {NPU} §1", "A1", "A2", "A4", "A5"),
    _r("SSE-003", "framing", "must", "stream", "No event follows data: [DONE]", f"{AFM} lifecycle; {WIRE} §3.1"),
    _r("SSE-004", "framing", "should", "stream", "No bytes other than the closing blank line follow [DONE]",
       f"{AFM} lifecycle (the HTTP body then closes)"),
    _r("SSE-005", "framing", "must", "stream", "The last event is terminated by a blank line",
       WHATWG, "A8"),
    _r("SSE-006", "framing", "must", "stream", "Every data payload is JSON or [DONE]", f"{WIRE} §3.2; {NPU} §1", "A20", "A9"),
    _r("SSE-007", "framing", "must", "stream",
       "A line that carries the payload (JSON, [DONE], an error) is a data: field, not an unknown one",
       f"{WHATWG}; {WIRE} §3.1", "A6", "A9", "A10"),
    _r("SSE-008", "framing", "must", "stream", "Event types are only message or error",
       f"{WIRE} §3.1 (other event types are not part of this protocol)", "A5"),
    _r("SSE-009", "framing", "advisory", "stream", "Comment lines (keep-alives) break some clients",
       f"{WIRE} §3.1", "A14", "A15", "A16", "A21"),
    _r("SSE-010", "framing", "advisory", "stream", "data: without a space breaks some clients",
       f"{WIRE} §3.1", "A9"),
    _r("SSE-011", "framing", "advisory", "stream", "CR or CRLF line ends break some clients",
       f"{WIRE} §3.1", "A21", "A22"),
    _r("SSE-012", "framing", "advisory", "stream", "id: and retry: fields break some clients",
       f"{WIRE} §3.1", "A18"),
    _r("SSE-013", "framing", "advisory", "stream", "A byte-order mark at the start breaks some clients", WHATWG),
    _r("SSE-014", "framing", "advisory", "stream", "A payload split over several data: lines breaks some clients",
       f"{WHATWG}; {WIRE} §3.1", "A9", "A12"),
    _r("SSE-015", "framing", "should", "stream", "retry: carries only ASCII digits", WHATWG),
    # advisory: WHATWG allows CRLF, LF or CR on each line and seed 003 §3.1 says "LF or CRLF"; a proxy that injects
    # CRLF keep-alives into an LF stream is legal, and only a naive client that splits on one style breaks
    # advisory: WHATWG's grammar admits any field name and parsers ignore one they do not know (x-trace: 1 on each
    # event); only a line that carries what the client needs is lost (SSE-007)
    _r("SSE-017", "framing", "advisory", "stream", "Unknown field lines (ignored by parsers) break some clients", WHATWG),
    _r("SSE-016", "framing", "advisory", "stream", "One line-ending style throughout the stream (mixed ends are legal "
       "and break naive clients)", f"{WHATWG}; {WIRE} §3.1", "A21"),
    # chunks
    _r("CHK-001", "chunks", "must", "stream", "Every chunk is a JSON object with a choices array",
       f"{WIRE} §3.2; {OPENAI_STREAM}", "H4"),
    _r("CHK-002", "chunks", "must", "both",
       "object, where present, is chat.completion.chunk (stream) or chat.completion",
       OPENAI_STREAM, "C1", "C2", "C4", "C6"),
    _r("CHK-003", "chunks", "must", "stream", "id is a non-empty string, the same on every chunk",
       f"{WIRE} §3.2", "C10", "C11", "C12", "C15", "C16"),
    _r("CHK-004", "chunks", "must", "stream", "model is a non-empty string, the same on every chunk",
       f"{WIRE} §3.2", "C6"),
    _r("CHK-005", "chunks", "must", "both", "created, where present, is an integer, the same on every chunk",
       OPENAI_STREAM, "C14", "C20", "C21"),
    _r("CHK-006", "chunks", "must", "both", "created is in seconds, not milliseconds", OPENAI_STREAM, "C18", "C19"),
    _r("CHK-007", "chunks", "must", "both", "Each choice has an integer index, as many choices as n asks, from 0",
       f"{WIRE} §3.2 (with n: 1 exactly one choice, index 0)", "I4", "C34", "D18"),
    _r("CHK-008", "chunks", "must", "stream", "Each choice carries a delta object", OPENAI_STREAM, "C8", "C9", "C35"),
    _r("CHK-009", "chunks", "must", "stream", "role appears once per choice, on its first delta, and is assistant",
       f"{WIRE} §3.2", "A5", "C25", "C26", "C28", "C29"),
    _r("CHK-010", "chunks", "should", "stream", "The first delta of each choice carries role: assistant",
       f"{AFM} lifecycle; {WIRE} §3.2", "C30", "C31", "C32"),
    _r("CHK-011", "chunks", "must", "both", "content, refusal and reasoning are strings or null",
       f"{WIRE} §3.2", "F38"),
    _r("CHK-012", "chunks", "should", "stream", "Deltas carry only new text, not the text so far",
       f"{AFM} lifecycle (append content)", "A38"),
    _r("CHK-013", "chunks", "should", "both", "Text carries no U+FFFD from a split multi-byte character",
       f"{WIRE} §3.1", "B1", "B2", "B4", "B5", "B6"),
    _r("CHK-014", "chunks", "must", "stream", "choices is empty only on the usage chunk",
       f"{WIRE} §3.4", "C19"),
    _r("CHK-015", "chunks", "advisory", "stream", "Unknown top-level chunk keys", f"{WIRE} §3.2", "F42"),
    _r("CHK-016", "chunks", "advisory", "stream", "Empty keep-alive chunks (no delta, no finish) break some clients",
       f"{WIRE} §3.2", "A19"),
    _r("CHK-017", "chunks", "should", "both", "The response names the model that was requested",
       f"{WIRE} §2.1 (exact model ID as the server lists it)", "H15"),
    _r("CHK-018", "chunks", "must", "both", "A refusal comes with null content",
       f"{WIRE} §3.2 (refusal in place of content)"),
    _r("CHK-019", "chunks", "must", "non-stream", "A non-stream choice carries a message with role assistant",
       OPENAI),
    _r("CHK-020", "chunks", "must", "stream",
       "Profile events come only when asked, after usage and before [DONE], without choices",
       f"{AFM} optional profiling events (after usage, before the terminator; no choices array)"),
    _r("CHK-021", "chunks", "advisory", "both", "The envelope carries object and created",
       f"{OPENAI_STREAM} (both required); {WIRE} §3.2 (its chunk shape and recorded example carry only id, model "
       "and choices: legal, so absence is advisory)"),
    _r("CHK-022", "chunks", "should", "stream",
       "A stream assembles to the unstreamed answer of the same deterministic request: content, reasoning, tool-call "
       "names and parsed arguments, finish reason, usage totals",
       f"{OPENAI_STREAM} (a chunk is a streamed piece of the completion the request returns unstreamed); judged only "
       "when two unstreamed answers to the request (temperature 0, a seed) are the same"),
    # finish
    _r("FIN-001", "finish", "must", "both", "Every choice ends with exactly one non-null finish_reason",
       f"{WIRE} §3.2; {AFM} lifecycle", "D5", "D6", "D8", "D10", "D16"),
    _r("FIN-002", "finish", "must", "both", "finish_reason is stop, length, tool_calls, content_filter or function_call",
       f"{WIRE} §3.2", "D1", "D2", "D11", "D12", "D14", "D15", "H5"),
    _r("FIN-003", "finish", "must", "stream", "Nothing follows the finish of a choice but usage and [DONE]",
       f"{AFM} lifecycle; {WIRE} §3.2", "D16", "D18", "D26"),
    _r("FIN-004", "finish", "advisory", "stream", "The finish chunk carries an empty delta",
       f"{AFM} lifecycle; {NPU} §1", "D19"),
    _r("FIN-005", "finish", "must", "stream", "Every choice carries the finish_reason key (null until the last)",
       OPENAI_STREAM, "D4"),
    _r("FIN-006", "finish", "must", "both", "completion_tokens does not exceed max_tokens",
       f"{WIRE} §2.1 (output cap)", "I4"),
    _r("FIN-007", "finish", "must", "both", "Output cut by max_tokens finishes with length",
       f"{NPU} §2; {WIRE} §3.2", "D20", "D21", "D22", "D24"),
    _r("FIN-008", "finish", "must", "both", "The answer does not contain a stop sequence", OPENAI, "I4", "D25"),
    _r("FIN-009", "finish", "should", "both", "An ordinary answer to a plain prompt is not empty",
       f"{AFM} lifecycle"),
    _r("FIN-010", "finish", "should", "both",
       "finish_reason length comes with max_tokens reached (completion_tokens equals the cap)",
       f"{OPENAI} (length: the maximum number of tokens specified in the request was reached); {AFM} lifecycle"),
    _r("FIN-011", "finish", "should", "both",
       "Generation ends at a stop sequence: the answer is the unstopped answer cut before it, not more",
       f"{OPENAI} (stop: sequences where the API will stop generating further tokens)"),
    # usage
    _r("USG-001", "usage", "must", "stream", "No usage chunk unless stream_options.include_usage asks",
       f"{WIRE} §3.4", "E1", "E2", "E4", "E6"),
    _r("USG-002", "usage", "must", "stream", "With include_usage, a usage chunk arrives before [DONE]",
       f"{WIRE} §3.4; {AFM} lifecycle", "E12", "E14", "E15", "E16"),
    _r("USG-003", "usage", "must", "stream", "The usage chunk comes after the last finish_reason",
       f"{WIRE} §3.4"),
    _r("USG-004", "usage", "must", "stream", "Usage is reported once", f"{WIRE} §3.4", "E8", "E9"),
    _r("USG-005", "usage", "must", "stream", "The usage chunk has an empty choices array", f"{WIRE} §3.4; {AFM} lifecycle",
       "E18", "E19", "E20"),
    _r("USG-006", "usage", "must", "both", "Token counts are non-negative integers and total = prompt + completion",
       f"{WIRE} §3.4"),
    _r("USG-007", "usage", "should", "stream", "Other chunks carry no usage, or usage: null", OPENAI_STREAM, "E8", "E10"),
    _r("USG-008", "usage", "should", "non-stream", "A non-stream response carries usage", OPENAI),
    _r("USG-009", "usage", "should", "both", "Token details are within the totals (reasoning_tokens, cached_tokens)",
       f"{WIRE} §3.4; {STRICT} prompt reuse"),
    _r("USG-010", "usage", "should", "both", "An answer with text reports completion_tokens > 0", f"{WIRE} §3.4"),
    _r("USG-011", "usage", "must", "both", "include_usage is honored when the server is expected to (capability usage)",
       f"{WIRE} §3.4", "E12", "E14", "E15"),
    _r("USG-012", "usage", "should", "both",
       "The same history sent again reports its reused tokens in cached_tokens (dialects that reuse prompts)",
       f"{STRICT} prompt reuse (usage.prompt_tokens_details.cached_tokens)"),
    # tools
    _r("TOOL-001", "tools", "must", "stream", "tool_calls is an array whose pieces carry an integer index",
       f"{WIRE} §3.3; {AFM} tool calls", "F18", "F19", "F20"),
    _r("TOOL-002", "tools", "must", "both", "Tool-call indices are contiguous from 0", f"{WIRE} §3.3",
       "F21", "F22", "F25", "F28"),
    _r("TOOL-003", "tools", "must", "both", "Every call has a non-empty string id", f"{WIRE} §3.3", "F34", "F35", "F36"),
    _r("TOOL-004", "tools", "must", "both", "Tool-call ids are unique", f"{WIRE} §3.3", "F29", "F30"),
    _r("TOOL-005", "tools", "must", "both", "Every call has type function", f"{AFM} tool calls; {WIRE} §2.2"),
    _r("TOOL-006", "tools", "must", "both", "Every call names one of the offered tools", f"{WIRE} §3.3", "F31"),
    _r("TOOL-007", "tools", "must", "both", "arguments is a string, sent as string fragments", f"{WIRE} §2.2", "F38", "F39"),
    _r("TOOL-008", "tools", "must", "both", "Each call's arguments parse as a JSON object once complete",
       f"{AFM} tool calls; {WIRE} §3.3", "F41"),
    _r("TOOL-009", "tools", "should", "both", "Arguments match the tool's parameter schema", f"{WIRE} §2.4"),
    _r("TOOL-010", "tools", "must", "both", "No tool-call markup leaks into content", f"{WIRE} §3.3",
       "F10", "F12", "F14", "F15", "F16"),
    _r("TOOL-011", "tools", "must", "both", "tool_choice none gets no call", f"{WIRE} §2.4"),
    _r("TOOL-012", "tools", "must", "both", "tool_choice required gets at least one call", f"{WIRE} §2.4"),
    _r("TOOL-013", "tools", "must", "both", "A named tool_choice gets a call of that tool only", f"{WIRE} §2.4"),
    _r("TOOL-014", "tools", "must", "both", "parallel_tool_calls false gets at most one call", f"{AFM} tool calls", "F41"),
    _r("TOOL-015", "tools", "must", "stream", "A later piece of a call does not change its id or type",
       f"{AFM} tool calls (keep the first non-null id)", "F26", "F29"),
    _r("TOOL-016", "tools", "must", "both", "finish_reason is tool_calls exactly when there are calls (or length)",
       f"{WIRE} §3.3", "F1", "F5", "F6", "F8", "F11"),
    _r("TOOL-017", "tools", "advisory", "stream", "A whole tool call in one delta defeats progress UIs",
       f"{WIRE} §3.3", "F40"),
    _r("TOOL-018", "tools", "must", "both", "Tools are accepted when the server is expected to (capability tools)",
       f"{WIRE} §2.4"),
    _r("TOOL-019", "tools", "should", "both",
       "A tool schema with allOf or a mixed-type union is answered, or refused with a 4xx (invalid_tool_schema where "
       "the dialect says so)", f"{STRICT} tool calls (overlapping oneOf, mixed unions and allOf return 400 "
       "invalid_tool_schema; the server does not guess)"),
    _r("TOOL-020", "tools", "must", "both", "A history with the assistant's tool calls and their results is accepted",
       f"{WIRE} §2.2 (assistant turns with tool calls, tool results); {STRICT} tool calls (the client runs the loop)"),
    _r("TOOL-021", "tools", "should", "both",
       "A tool that is not a function (a custom tool) is answered, or refused with a 4xx (refused where the dialect "
       "takes only function tools)", f"{OPENAI} (tools: function or custom); {STRICT} tool calls (the server accepts only "
       "function tools)"),
    _r("TOOL-022", "tools", "should", "both",
       "A tool schema in the nullable and union forms (a type plus null, two-branch anyOf, disjoint oneOf, string "
       "constants) is answered, or refused with a 4xx (answered where the dialect supports them)",
       f"{STRICT} tool calls (nullable forms, two-branch anyOf, disjoint oneOf and unions of string constants are "
       "supported); OpenAI's own function schemas take them (Structured Outputs: anyOf, nullable types)"),
    # reasoning
    _r("RSN-001", "reasoning", "advisory", "both", "Reasoning inline as <think> in content", f"{WIRE} §4", "G11"),
    # should: a client shows reasoning_content as it comes; the model's template markup in it is a parser's leak
    _r("RSN-011", "reasoning", "should", "both", "reasoning_content carries no <think> or </think> markup",
       f"{WIRE} §4 (the reasoning text under its own key, apart from the content)"),
    _r("RSN-002", "reasoning", "advisory", "both", "Reasoning in reasoning rather than reasoning_content",
       f"{WIRE} §4", "G4", "G5"),
    _r("RSN-003", "reasoning", "must", "both", "Inline think markers are balanced", f"{WIRE} §4", "G2"),
    _r("RSN-004", "reasoning", "must", "both", "Separated reasoning leaves no think markup in content",
       f"{AFM} reasoning (keep them as distinct channels)", "G9", "G10"),
    _r("RSN-005", "reasoning", "should", "both", "reasoning_effort other than none yields reasoning",
       f"{WIRE} §2.1; {AFM} reasoning"),
    _r("RSN-006", "reasoning", "should", "both", "reasoning_effort none yields no reasoning", f"{WIRE} §2.6"),
    _r("RSN-007", "reasoning", "should", "stream", "Reasoning comes before the answer", f"{AFM} lifecycle"),
    _r("RSN-008", "reasoning", "must", "both", "Reasoning is produced when the server is expected to (capability reasoning)",
       f"{WIRE} §4"),
    _r("RSN-009", "reasoning", "should", "both", "A history repeating reasoning_content on the assistant turn is accepted",
       f"{WIRE} §2.2 (reasoning sent back under the same key)"),
    _r("RSN-010", "reasoning", "should", "both",
       "Every reasoning_effort value (none, low, medium, high, xhigh) is accepted or refused as unsupported",
       f"{WIRE} §2.1 and §2.5; {STRICT} supported API (reasoning_effort returns unsupported_value)"),
    # structured
    _r("STR-001", "structured", "must", "both", "json_object gets content that parses as a JSON object", f"{WIRE} §2.6"),
    _r("STR-002", "structured", "must", "both", "Structured content is not fenced in markdown", f"{AFM} structured output"),
    _r("STR-003", "structured", "must", "both", "json_schema with strict gets content that matches the schema",
       f"{WIRE} §2.6"),
    _r("STR-004", "structured", "advisory", "both", "json_schema without strict gets content that matches the schema",
       f"{WIRE} §2.6 (without strict the schema guides the model but binds nothing)"),
    _r("STR-005", "structured", "should", "both", "Structured output arrives as content, not as reasoning",
       f"{WIRE} §2.6 (LM Studio #1773)"),
    _r("STR-006", "structured", "must", "both",
       "response_format is accepted when the server is expected to (capability structured)", f"{WIRE} §2.6"),
    _r("STR-007", "structured", "should", "both",
       "response_format {\"type\": \"text\"}, the default, is answered as without it",
       f"{OPENAI} (response_format: text is the default response format); {STRICT} Supported API "
       "(response_format is accepted as {\"type\": \"text\"})"),
    # errors
    _r("ERR-001", "errors", "must", "both", "An error response is a JSON object with an error object",
       f"{WIRE} §5; {STRICT} supported API", "H9", "H19", "H20", "H25"),
    _r("ERR-002", "errors", "must", "both", "error.message is a non-empty string", f"{WIRE} §5", "H10"),
    _r("ERR-003", "errors", "should", "both", "The error object carries type, param and code", f"{STRICT} supported API"),
    _r("ERR-004", "errors", "must", "both", "An error response is served as application/json", f"{WIRE} §5", "H21", "H26"),
    _r("ERR-005", "errors", "must", "both", "Bad input never gets a 5xx", f"{WIRE} §5", "H10", "H11", "H12"),
    _r("ERR-006", "errors", "must", "both", "Bad input is not accepted with a 2xx", f"{STRICT} supported API", "I5"),
    _r("ERR-007", "errors", "must", "stream", "A streamed request is refused before the stream, with a 4xx",
       f"{AFM} mid-stream failure; {WIRE} §5", "H1", "H2", "A11", "H14"),
    _r("ERR-008", "errors", "should", "stream", "An in-stream error is data: {\"error\": {...}}",
       f"{WIRE} §3.5; {NPU} §1", "A10", "H5", "H6"),
    _r("ERR-009", "errors", "must", "stream", "Nothing but [DONE] follows an in-stream error",
       f"{WIRE} §3.5; {NPU} §1; {AFM} mid-stream failure"),
    _r("ERR-010", "errors", "must", "stream", "A stream that reports an error does not also finish as a success",
       f"{NPU} §1 (stop without a success terminator)"),
    _r("ERR-011", "errors", "should", "both", "A prompt beyond the context gets code context_length_exceeded",
       f"{WIRE} §5; {STRICT} images", "H8", "H14"),
    _r("ERR-012", "errors", "must", "both", "An unknown model gets 404 (model_not_found)", f"{WIRE} §2.1", "H15"),
    # judged under --profile strict only: OpenAI refuses an unknown field with 400 but no unknown_parameter code, and
    # accepting one is what compatible servers legally do (DEVIATIONS I1, I2); the code and param are seed 001's
    _r("ERR-013", "errors", "should", "both",
       "An unknown top-level field gets 400 unknown_parameter naming it (profile strict: seed 001's validation)",
       f"{STRICT} supported API", "I5", "I6", "I9"),
    _r("ERR-014", "errors", "advisory", "both", "429 carries Retry-After", f"{WIRE} §5 (Retry-After may be present)"),
    # judged under --profile strict only: seed 001's body limit; seed 003 §2.3's requests are tens of megabytes
    _r("ERR-015", "errors", "should", "both", "An oversized body gets 413 (profile strict: seed 001's body limit)",
       f"{STRICT} images (bodies over their limits return HTTP 413)"),
    _r("ERR-016", "errors", "must", "both", "The server still answers after a bad request", f"{STRICT} start"),
    _r("ERR-017", "errors", "should", "both",
       "Bad input is refused before the work: a status (and for a 2xx its first event) within the refusal deadline",
       f"{STRICT} start (limits enforced before prompt rendering and tokenization); "
       f"{WIRE} §5 (a prompt beyond the context is reported before anything is generated)", "H1"),
    _r("ERR-018", "errors", "advisory", "stream",
       "Requests beyond the server's capacity are refused (429) or started, not queued without a bound",
       f"{STRICT} start (one generation plus a queue of four; more get 429)"),
    # should under every profile: OpenAI itself takes a null optional field as absent, and seed 001 says the same
    _r("ERR-019", "errors", "should", "both", "A top-level field set to null is treated as absent, not refused",
       f"{STRICT} supported API (a top-level field set to null is treated as absent); {OPENAI}"),
    # should under every profile: these are OpenAI's own request fields, which OpenAI accepts
    _r("ERR-020", "errors", "should", "both",
       "user, store, metadata, service_tier, prompt_cache_key and safety_identifier are accepted (if ignored)",
       f"{STRICT} supported API (accepted and ignored); {OPENAI}"),
    _r("ERR-021", "errors", "must", "both", "A valid request never gets a 5xx (a 503 with Retry-After aside)",
       f"{WIRE} §5 (a 5xx is a server failure); {STRICT} supported API"),
    _r("ERR-022", "errors", "should", "both", "A JSON body labelled Content-Type: text/plain is refused with a 4xx",
       FETCH_CORS),
    _r("ERR-023", "errors", "advisory", "both", "error.code, where a string, names the error: not the HTTP status as a string",
       f"{OPENAI} (error codes such as invalid_api_key, model_not_found); {WIRE} §5"),
    _r("ERR-024", "errors", "should", "both",
       "A feature refused (an image, a tool schema, a reasoning effort) is refused with 400, 413 or 422",
       f"{WIRE} §5 (400, 413, 422: request rejected; other statuses are not expected from this API: a client reads a "
       "404 as a missing route or model)"),
    _r("ERR-025", "errors", "should", "both",
       "The sampling options a dialect documents as supported (seed 001: top_k, repetition_penalty) are answered",
       f"{STRICT} Supported API (supported options include temperature, top_p, top_k, repetition_penalty, seed, "
       "stop, ...); a server outside the dialect may refuse them as unknown (run under --profile strict)"),
    _r("ERR-027", "errors", "should", "both",
       "error.type names the kind of error (invalid_request_error, not_found_error, …): not a library's exception "
       "class (BadRequestError), an HTTP reason phrase (Bad Request), a number or a stringified null",
       "OpenAI API reference: Error codes (errors are identified by error.type, such as invalid_request_error, and "
       "error.code; BadRequestError and NotFoundError are the Python library's exception classes, not API types)"),
    _r("ERR-026", "errors", "should", "both",
       "The OpenAI options a dialect documents as unsupported (seed 001: json_object and json_schema response formats, "
       "logit_bias, verbosity, the legacy functions) are refused with 400 unsupported_value naming the field",
       f"{STRICT} Supported API (json_object and json_schema return unsupported_value, as do logit_bias, "
       "top_logprobs, reasoning_effort, verbosity, modalities, audio, prediction, web_search_options, and the legacy "
       "functions and function_call); elsewhere answering or refusing them are both legal (run under --profile "
       "strict)"),
    # images
    _r("IMG-001", "images", "must", "both",
       "A data-URL image in a user message is answered, or refused with a 4xx (never a 5xx)",
       f"{WIRE} §2.2 (images go inline as data URLs); {STRICT} images"),
    _r("IMG-003", "images", "must", "both", "Images are accepted when the server is expected to (capability images)",
       f"{STRICT} images (capabilities [\"text\", \"image\"] with a vision pack)"),
    # should under every profile: OpenAI itself refuses an image_url outside a user message with 400; the remote URL
    # and detail limits are seed 001's, judged under --profile strict (expectation image-rules)
    _r("IMG-002", "images", "should", "both",
       "An image outside a user message is refused with a 4xx (400, and also a remote URL or a detail other than "
       "auto, where the dialect says so)", f"{STRICT} images (an image_url on any other role returns 400; data URLs only, "
       "detail absent or auto)"),
    # cancellation
    _r("CAN-001", "cancellation", "must", "stream", "A disconnect frees the generation",
       f"{NPU} cancellation", "J1", "J2", "J5", "J8", "J14"),
    _r("CAN-002", "cancellation", "must", "both", "The cancel endpoint answers 200 cancelled: true for a live stream",
       f"{AFM} cancellation", "J9", "J10"),
    _r("CAN-003", "cancellation", "must", "stream", "A cancelled stream ends with finish_reason cancelled, then [DONE]",
       f"{AFM} cancellation"),
    _r("CAN-004", "cancellation", "must", "both",
       "The cancel endpoint answers 404 cancelled: false for an unknown, a completed or a chatcmpl id",
       f"{AFM} cancellation"),
    _r("CAN-005", "cancellation", "must", "stream", "A disconnect does not disturb another client's stream",
       f"{NPU} cancellation", "J4"),
    _r("CAN-006", "cancellation", "must", "both",
       "The cancel endpoint is served when the server is expected to (capability cancel-endpoint)",
       f"{AFM} cancellation"),
    # models
    _r("MOD-001", "models", "must", "non-stream", "GET /v1/models answers 200 with JSON",
       f"{WIRE} §1; {STRICT} supported API", "K6"),
    _r("MOD-002", "models", "must", "non-stream", "The model list is an object with a data array",
       f"{WIRE} §6 (the client reads {{\"data\": [{{\"id\", \"name\"}}]}})", "K1", "K2"),
    _r("MOD-003", "models", "must", "non-stream", "Every listed model has a non-empty string id", f"{WIRE} §6"),
    # advisory (MOD-004, MOD-006): OpenAI's list has these fields, but seed 003 §6 documents the list servers send as
    # {"data": [{"id": ..., "name": ...}]}: a client that needs them is reading more than the protocol promises
    _r("MOD-004", "models", "advisory", "non-stream", "Every listed model has object, created and owned_by",
       f"{OPENAI_MODELS}; {WIRE} §6 (the documented list has id and name)", "K4", "K5"),
    _r("MOD-005", "models", "should", "non-stream", "Listed ids are unique", f"{WIRE} §6"),
    _r("MOD-006", "models", "advisory", "non-stream", "The model list says object: list",
       f"{OPENAI_MODELS}; {WIRE} §6 (the documented list has data only)", "K2"),
    _r("MOD-007", "models", "should", "non-stream",
       "capabilities, where a listed model states them, is an array of strings with text",
       f"{STRICT} images (/v1/models reports capabilities [\"text\", \"image\"] or [\"text\"])"),
    _r("MOD-008", "models", "should", "non-stream",
       "GET /health, where served (and where the dialect documents it), answers 200 with a JSON object",
       f"{STRICT} supported API (GET /health; its vision state ready, missing, invalid or unsupported)"),
    _r("MOD-009", "models", "should", "non-stream", "The model list is not empty while the server answers chat",
       f"{OPENAI_MODELS} (the models currently available); {WIRE} §6 (clients pick a model from data)"),
    # agents: the corpus of requests real agents sent (conformance/agents/corpus), each sent with the run's model
    _r("AGT-001", "agents", "advisory", "both",
       "A request a real agent sends (the corpus: Claude Code, Codex CLI, the OpenAI Agents SDK, an Ollama tool loop) "
       "is answered: a refusal is a client-readiness failure, the agent cannot work with the server",
       "the agent corpus (conformance agents record: each request as the agent sent it, at its pinned version); "
       "a refusal in the protocol's envelope is also judged by the protocol's error rules"),
    # fuzz: judged on generated requests by `conformance fuzz`, not by the scenarios of a live run
    _r("FUZ-001", "fuzz", "must", "both",
       "A valid request gets a conformant response or a documented 4xx (400, 404, 413, 422, 429) in the envelope",
       f"{WIRE} §2 and §5; {OPENAI}", "I1", "I2"),
    _r("FUZ-002", "fuzz", "must", "both", "An invalid request gets a 4xx with the JSON error envelope",
       f"{WIRE} §5; {STRICT} supported API", "H9", "H10", "I5"),
    _r("FUZ-003", "fuzz", "must", "both", "No request, however malformed, gets a 5xx", f"{WIRE} §5",
       "H10", "H11", "H12"),
    _r("FUZ-004", "fuzz", "must", "both", "No request makes the response hang past the time limits or the byte cap",
       f"{WIRE} §5 (do not wait for a stalled body)", "A36"),
    _r("FUZ-005", "fuzz", "must", "stream", "No request breaks the event stream (UTF-8, JSON payloads, [DONE])",
       f"{WIRE} §3.1; {WHATWG}", "A1"),
    _r("FUZ-006", "fuzz", "must", "both", "The server still answers a plain request after every generated request",
       f"{STRICT} start", "B8"),
)



def _protocol_rules() -> tuple[Rule, ...]:
    """The rules a protocol package brings (``conformance/protocols/<name>/rules.py``: ``RULES``, rows of
    (id, level, applies, title, source, *refs); its category is its name), found by the registry."""
    from conformance.protocols import brought

    return tuple(_r(row[0], module.__name__.split(".")[-2], *row[1:])
                 for module in brought("conformance.protocols.{name}.rules") for row in module.RULES)


RULES = RULES + _protocol_rules()
RULES_BY_ID: dict[str, Rule] = {rule.id: rule for rule in RULES}
