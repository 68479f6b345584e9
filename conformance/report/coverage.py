"""The seed-coverage map: every testable fact of the four seed documents (../shared/seeds/), in a few words
of our own, with the rules that judge it, the live scenarios that show it and the fixtures that pin it.

``cue`` is a short verbatim fragment of the seed, so the map can be checked against the text it cites
(tests/test_coverage.py); ``client`` names what ``conformance fuzz-client`` compares for a fact about
clients; ``dialect`` marks a fact only a dialect's profile judges (the reference report, run under the
openai profile, does not show it, so a fixture must). ``NOT_JUDGED`` lists the seeds' statements that no
server or client verdict can test, each with the reason. ``python -m conformance.report.coverage`` prints
it; the docs site's reference page is generated from ``render()`` (conformance.docsite).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import cache

from conformance.rules import RULES_BY_ID

SEEDS = {"000": "000_9adc55f728b3a6e5.txt", "001": "001_b86e68556766b6cb.txt", "002": "002_018dc7b61835a212.txt",
         "003": "003_b25f797ba83b2388.txt"}
TITLES = {"000": "AFM (streaming lifecycle, tools, cancellation, profiling)",
          "001": "A strict local OpenAI server (TurboFieldfare's OPENAI_SERVER.md)",
          "002": "npu_proxy STREAMING.md (SSE and Ollama NDJSON)",
          "003": "Wire protocol: OpenAI-compatible Chat Completions (svir)"}


@dataclass(frozen=True)
class Fact:
    seed: str
    section: str
    cue: str  # verbatim from the seed
    fact: str  # our words
    rules: tuple[str, ...]
    live: tuple[str, ...] = ()  # scenarios
    fixtures: tuple[str, ...] = ()  # folder/name under fixtures/
    client: tuple[str, ...] = ()  # what fuzz-client compares (conformance.fuzz.client_fuzz.COMPARED)
    dialect: str = ""  # the profile that judges it, when only a dialect's profile does


def _f(seed: str, section: str, cue: str, fact: str, rules: str, live: str = "", fixtures: str = "",
       client: str = "", dialect: str = "") -> Fact:
    return Fact(seed, section, cue, fact, tuple(rules.split()), tuple(live.split()), tuple(fixtures.split()),
                tuple(client.split()), dialect)


FACTS: tuple[Fact, ...] = (
    # seed 000: AFM
    _f("000", "Response headers", "Content-Type: text/event-stream", "A stream is served as text/event-stream.",
       "TRN-001", "stream-plain", "conformant/plain-stream defects/json-content-type"),
    _f("000", "Response headers", "Cache-Control: no-cache", "The stream carries Cache-Control: no-cache.",
       "TRN-003", "stream-plain", "conformant/plain-stream defects/no-cache-headers"),
    _f("000", "Response headers", "X-Accel-Buffering: no", "Proxies are told not to buffer (advisory).",
       "TRN-004", "stream-plain", "conformant/plain-stream defects/no-cache-headers"),
    _f("000", "Response headers", "The correlation and cancellation handle", "The request's X-Request-ID comes back.",
       "TRN-006 TRN-013", "request-id", "conformant/expected-request-id defects/request-id-not-echoed"),
    _f("000", "Response headers", "`X-Request-ID` and `OpenAI-Request-ID`",
       "OpenAI-Request-ID carries the same handle as X-Request-ID.", "TRN-015", "stream-plain",
       "seeds/afm-openai-request-id defects/openai-request-id-missing", dialect="afm"),
    _f("000", "Response headers", "X-Grammar-Constraints: downgraded",
       "A strict schema run best-effort is declared; its answer is then judged as non-strict.", "TRN-016 STR-003",
       "json-schema-strict", "seeds/afm-grammar-downgraded defects/grammar-downgraded-silently "
       "defects/grammar-header-unasked"),
    _f("000", "Role and first delta", "can include delta.role", "The first delta carries role assistant.",
       "CHK-009 CHK-010", "stream-plain", "conformant/plain-stream defects/no-role defects/role-every-delta"),
    _f("000", "Role and first delta", "may instead begin with reasoning_content",
       "A reasoning model's first delta may be reasoning without role (profile afm); the role, where sent, is "
       "assistant.", "CHK-010 CHK-009", "reasoning",
       "seeds/afm-reasoning-first seeds/afm-reasoning-first-profile defects/afm-first-delta-other-role", dialect="afm"),
    _f("000", "Content or tool deltas", "Append content and reasoning_content independently",
       "Deltas carry new text only, content and reasoning apart.", "CHK-012 RSN-004", "reasoning",
       "conformant/reasoning-content defects/cumulative-deltas defects/think-leaks-beside-reasoning",
       client="content reasoning"),
    _f("000", "Content or tool deltas", "Merge tool_calls by their numeric index",
       "Tool-call pieces carry an integer index and merge by it.", "TOOL-001", "tools-auto",
       "seeds/afm-tool-call defects/tool-index-missing", client="tool_calls"),
    _f("000", "Finish chunk", "An empty delta carries finish_reason",
       "One finish_reason per choice, on an empty delta.", "FIN-001 FIN-004", "stream-plain",
       "conformant/plain-stream defects/finish-never defects/finish-twice"),
    _f("000", "Finish chunk", "commonly stop, length, tool_calls, or cancelled",
       "finish_reason is one of the documented values (cancelled under profile afm).", "FIN-002",
       "max-tokens", "seeds/afm-cancelled defects/finish-eos defects/finish-empty-string"),
    _f("000", "Usage chunk", "a separate chunk has an empty choices array and a top-level usage object",
       "When enabled, usage comes in its own chunk with empty choices.", "USG-002 USG-005", "stream-usage",
       "seeds/afm-lifecycle defects/usage-on-finish-chunk defects/usage-choices-missing", client="usage"),
    _f("000", "Profile event", "emitted after usage and before the terminator",
       "A profile event comes after usage and before [DONE].", "CHK-020", "afm-profile",
       "seeds/afm-profile defects/profile-event-early", dialect="afm"),
    _f("000", "Transport terminator", "The literal event data: [DONE] ends the logical stream",
       "data: [DONE] ends the stream; no event follows it.", "SSE-002 SSE-003", "stream-plain",
       "conformant/plain-stream defects/no-done defects/events-after-done", client="complete"),
    _f("000", "Transport terminator", "the HTTP body then closes", "Nothing but the blank line follows [DONE].",
       "SSE-004", "stream-plain", "conformant/plain-stream defects/comment-after-done"),
    _f("000", "Streaming tool calls", "may be fragmented across arbitrary token boundaries",
       "Tool names and arguments arrive in pieces; the assembled call is what counts.", "TOOL-006 TOOL-008",
       "tools-auto", "seeds/afm-tool-call seeds/interleaved-two-calls defects/tool-name-repeated defects/tool-arguments-broken",
       client="tool_calls"),
    _f("000", "Streaming tool calls", "keep the first non-null id, type, and function.name",
       "A later piece does not change a call's id or type; under profile afm a resent name is kept, not appended.",
       "TOOL-015 TOOL-006", "tools-auto", "seeds/afm-name-resent seeds/afm-name-resent-profile defects/tool-id-changes"),
    _f("000", "Streaming tool calls", "parse JSON only after the tool-call turn finishes",
       "Arguments are string fragments that parse as a JSON object once complete.", "TOOL-007 TOOL-008",
       "tools-auto", "conformant/tools-auto defects/tool-arguments-object defects/tool-arguments-broken",
       client="tool_calls complete"),
    _f("000", "Streaming tool calls", "AFM limits the assistant turn to at most one call",
       "parallel_tool_calls false gets at most one call.", "TOOL-014", "tools-parallel-false",
       "conformant/tools-parallel-false defects/tool-parallel-ignored"),
    _f("000", "Streaming tool calls", "multiple indices can advance interleaved",
       "Several calls may interleave; indices stay contiguous and ids unique.", "TOOL-002 TOOL-004", "tools-parallel",
       "conformant/tools-parallel seeds/interleaved-two-calls defects/tool-ids-shared"),
    _f("000", "Reasoning and structured output", "Keep them as distinct channels",
       "Reasoning and answer stay in separate channels; no think markup in content.", "RSN-004 RSN-007",
       "reasoning", "conformant/reasoning-content defects/think-leaks-beside-reasoning defects/reasoning-after-answer",
       client="reasoning"),
    _f("000", "Reasoning and structured output", "unfenced JSON payload instead of markdown code fences",
       "Structured answers are bare JSON, not fenced.", "STR-002", "json-object", "conformant/json-object defects/json-fenced"),
    _f("000", "Reasoning and structured output", "For json_object and json_schema",
       "json_object and json_schema answers are JSON (matching a strict schema).", "STR-001 STR-003",
       "json-object json-schema-strict", "conformant/json-object conformant/json-schema-strict "
       "defects/json-object-not-json defects/json-schema-strict-ignored"),
    _f("000", "Cancellation", "A registered stream returns HTTP 200 with cancelled: true",
       "Cancelling a live stream answers 200 cancelled: true.", "CAN-002 CAN-006", "cancel-endpoint",
       "conformant/cancel-live defects/cancel-noop"),
    _f("000", "Cancellation", "Unknown, already completed, or expired IDs return 404 with cancelled: false",
       "An unknown or completed id answers 404 cancelled: false.", "CAN-004", "cancel-unknown cancel-completed",
       "conformant/cancel-unknown conformant/cancel-completed defects/cancel-unknown-200"),
    _f("000", "Cancellation", "not the chatcmpl-… stream ID",
       "The path id is the correlation value: the chatcmpl id is not a handle (404).", "CAN-004", "cancel-completed",
       "conformant/cancel-completed defects/cancel-completed-200"),
    _f("000", "Cancellation", "ends the stream cleanly with finish_reason",
       "A cancelled stream ends with finish_reason cancelled, then [DONE].", "CAN-003", "cancel-endpoint",
       "seeds/afm-cancelled defects/cancelled-as-stop"),
    _f("000", "Optional profiling events", "`X-AFM-Profile: true`",
       "X-AFM-Profile: true adds one afm_profile object.", "CHK-020", "afm-profile",
       "seeds/afm-profile defects/profile-event-unasked defects/afm-profile-ignored defects/profile-keys-swapped "
       "defects/profile-event-twice", dialect="afm"),
    _f("000", "Optional profiling events", "`X-AFM-Profile: extended`",
       "X-AFM-Profile: extended adds afm_profile_extended with summary and samples.", "CHK-020",
       "afm-profile-extended", "seeds/afm-profile-extended defects/profile-extended-no-samples", dialect="afm"),
    _f("000", "Optional profiling events", "do not have a choices array",
       "Profile objects have no choices; outside profile afm they fail the chunk envelope.", "CHK-020 CHK-001",
       "afm-profile", "seeds/afm-profile seeds/afm-profile-openai"),
    _f("000", "Mid-stream failure", "Before headers are sent, failures use ordinary HTTP status codes",
       "A failure before the stream is an HTTP status with the JSON envelope.", "ERR-001 ERR-004 ERR-007",
       "error-unknown-model", "conformant/error-unknown-model defects/error-in-stream-after-200"),
    _f("000", "Mid-stream failure", "an error-marked content chunk before [DONE]",
       "An error-marked chunk after the headers is an error, not content.", "ERR-008 ERR-010", "",
       "seeds/afm-error-marked-chunk defects/chunks-after-error", client="error complete"),
    # seed 001: a strict local server
    _f("001", "Start the server", "admits up to four additional requests",
       "Requests beyond capacity are refused or started, not queued without a bound.", "ERR-018 ERR-014",
       "queue-full", "conformant/burst-bounded conformant/error-queue-full defects/burst-queued-without-bound"),
    _f("001", "Start the server", "enforced before prompt rendering and tokenization",
       "Limits and bad input are refused before the work, within the refusal deadline.", "ERR-017",
       "error-context-overflow", "conformant/error-context-overflow "
       "defects/overflow-silent-past-deadline defects/overflow-keepalive-past-deadline"),
    _f("001", "Start the server", "max_completion_tokens",
       "max_completion_tokens caps the answer (finish length).", "FIN-006 FIN-007", "max-completion-tokens",
       "conformant/length-cut defects/max-tokens-ignored defects/length-reported-as-stop"),
    _f("001", "Prompt reuse", "usage.prompt_tokens_details.cached_tokens",
       "The same history sent again reports its reused tokens (profile strict), within the totals.",
       "USG-012 USG-009", "prompt-reuse", "conformant/prompt-reuse defects/prompt-reuse-unreported "
       "defects/usage-details-exceed"),
    _f("001", "Tool calls", "When finish_reason is \"tool_calls\"",
       "A turn with calls finishes tool_calls, and each call's arguments are a JSON object.", "TOOL-016 TOOL-008",
       "tools-auto", "conformant/tools-auto defects/tool-finish-stop"),
    _f("001", "Tool calls", "Append the assistant message, including its unchanged tool_calls",
       "The history with the assistant's calls and the tool results is accepted.", "TOOL-020", "tools-roundtrip",
       "conformant/tools-roundtrip defects/tools-roundtrip-refused"),
    _f("001", "Tool calls", "The server accepts only function tools",
       "A custom (non-function) tool is answered or refused with a 4xx; under profile strict refused (the seed names "
       "no status); every call is of type function.", "TOOL-021 TOOL-005", "tools-non-function tools-auto",
       "conformant/tool-custom-answered conformant/tool-custom-refused defects/tool-custom-answered-strict "
       "defects/tool-custom-500 defects/tool-type-missing"),
    _f("001", "Tool calls", "Omit tool_choice or set it to auto to allow calls",
       "Tools are probed with tool_choice auto; with --expect tools a refusal fails.", "TOOL-018", "tools-auto",
       "conformant/expected-tools defects/expected-tools-missing"),
    _f("001", "Tool calls", "Set it to none to disable them", "tool_choice none gets no call.", "TOOL-011",
       "tools-none", "conformant/tools-none defects/tool-choice-none-ignored"),
    _f("001", "Tool calls", "The server does not support required, named tool selection",
       "A documented refusal of required, named or parallel false makes only that variant unsupported.",
       "TOOL-012 TOOL-013 TOOL-014", "tools-required tools-named tools-parallel-false",
       "conformant/tools-required conformant/tools-named defects/tool-choice-required-ignored "
       "defects/tool-choice-named-ignored defects/tool-parallel-ignored"),
    _f("001", "Tool calls", "nullable forms with one concrete type plus null",
       "Nested nullable schemas are taken and the arguments match them.", "TOOL-009", "tools-nested",
       "conformant/tools-nested defects/tool-arguments-off-schema"),
    _f("001", "Tool calls", "including equivalent two-branch anyOf and disjoint oneOf forms",
       "A type plus null, two-branch anyOf, disjoint oneOf and string-constant unions are answered (profile strict; "
       "elsewhere answered or refused with a 4xx).", "TOOL-022", "tools-schema-nullable",
       "conformant/tool-schema-nullable-answered conformant/tool-schema-nullable-refused "
       "defects/tool-schema-nullable-refused-strict defects/tool-schema-nullable-500"),
    _f("001", "Tool calls", "return HTTP 400 with invalid_tool_schema",
       "allOf and mixed-type unions are answered or refused with a 4xx (400 invalid_tool_schema, profile strict).",
       "TOOL-019", "tools-schema-union", "conformant/tool-schema-refused defects/tool-schema-other-code "
       "defects/tool-schema-500"),
    _f("001", "Supported API", "Chat Completions supports JSON and Server-Sent Events responses",
       "stream false is JSON; stream true is an event stream.", "TRN-001 TRN-002", "stream-plain non-stream",
       "conformant/non-stream defects/non-stream-as-html"),
    _f("001", "Supported API", "Set \"stream\": true for streaming",
       "Without stream: true the answer does not stream.", "TRN-009", "no-stream-field",
       "conformant/non-stream defects/stream-without-asking"),
    _f("001", "Supported API", "to receive a final usage chunk",
       "include_usage asks for one usage chunk; without it none comes.", "USG-001 USG-002", "stream-usage",
       "conformant/usage-stream defects/usage-missing defects/usage-unrequested"),
    _f("001", "Supported API", "Supported options include temperature",
       "stop ends the answer before the sequence; max_tokens caps it.", "FIN-008 FIN-006", "stop-sequence max-tokens",
       "conformant/stop-sequence defects/stop-sequence-ignored"),
    _f("001", "Supported API", "top_k, repetition_penalty",
       "top_k and repetition_penalty are answered (profile strict: elsewhere an unknown field may be refused).",
       "ERR-025", "sampling-options", "conformant/sampling-options-answered defects/sampling-options-refused",
       dialect="strict"),
    _f("001", "Supported API", "verbosity, modalities, audio, prediction, web_search_options",
       "logit_bias, verbosity and the other listed fields are refused with 400 unsupported_value naming the field "
       "(profile strict: elsewhere answering them is legal).", "ERR-026", "unsupported-options",
       "conformant/unsupported-options-refused defects/unsupported-options-unknown", dialect="strict"),
    _f("001", "Supported API", "response_format is accepted only as {\"type\": \"text\"}",
       "response_format text, the default, is answered as without it.", "STR-007", "response-format-text",
       "conformant/format-text-answered defects/format-text-refused"),
    _f("001", "Supported API", "Unknown top-level request fields return HTTP 400 with code unknown_parameter",
       "Under profile strict an unknown top-level field gets 400 unknown_parameter naming it (elsewhere accepting it "
       "is legal: DEVIATIONS I1, I2).", "ERR-013", "error-unknown-parameter",
       "seeds/strict-unknown-parameter defects/unknown-parameter-other-code", dialect="strict"),
    _f("001", "Supported API", "json_object and json_schema return unsupported_value",
       "A documented refusal of json_object/json_schema makes structured output unsupported, not failed.",
       "STR-006", "json-schema-strict", "conformant/expected-structured defects/expected-structured-missing"),
    _f("001", "Supported API", "response_format is accepted only as",
       "json_object and json_schema are refused with 400 unsupported_value naming response_format (profile strict: "
       "elsewhere answering them is what OpenAI does).", "ERR-026", "json-object json-schema-strict",
       "conformant/json-object-refused-strict defects/json-object-answered-strict", dialect="strict"),
    _f("001", "Supported API", "as do logit_bias, top_logprobs, reasoning_effort",
       "reasoning_effort refused as unsupported_value is a documented refusal.", "RSN-010",
       "reasoning-effort-medium reasoning-effort-high reasoning-effort-xhigh",
       "conformant/effort-unsupported defects/effort-refused-422"),
    _f("001", "Supported API", "any other JSON value returns invalid_value",
       "A value of the wrong type (a response_format that is a string among them) is refused with a 4xx, never "
       "accepted.", "ERR-005 ERR-006", "error-bad-value error-wrong-type error-response-format-string",
       "conformant/error-malformed-json defects/bad-input-accepted"),
    _f("001", "Supported API", "are accepted and ignored",
       "user, store, metadata, service_tier, prompt_cache_key, safety_identifier are accepted.", "ERR-020",
       "ignored-fields", "conformant/ignored-fields defects/ignored-fields-refused"),
    _f("001", "Supported API", "A top-level field set to null is treated as absent",
       "A top-level null is the field absent, not refused.", "ERR-019", "null-fields",
       "conformant/null-fields defects/null-fields-refused"),
    _f("001", "Supported API", "The server supports one model and one choice",
       "n: 2 is honoured with two choices or refused with a 4xx envelope.", "CHK-007 ERR-001", "n-two",
       "conformant/n-two defects/n-ignored"),
    _f("001", "Supported API", "Context length can be",
       "A prompt beyond the stated context is refused with its code (the context read from /health, where stated).",
       "ERR-011 ERR-006", "error-context-overflow", "conformant/error-context-overflow defects/overflow-without-code"),
    _f("001", "Supported API", "GET /health", "GET /health answers with a JSON object (required, profile strict).",
       "MOD-008", "health", "conformant/health defects/health-missing", dialect="strict"),
    _f("001", "Supported API", "GET /v1/models", "GET /v1/models answers with a data array.", "MOD-001 MOD-002",
       "models", "conformant/models defects/models-404 defects/models-bare-list"),
    _f("001", "Images", "accepts image_url parts in user messages",
       "A data-URL image in a user message is answered or refused with a 4xx envelope.", "IMG-001 IMG-003",
       "image-data-url", "conformant/image-unsupported conformant/image-answered defects/image-500 "
       "conformant/expected-images defects/expected-images-missing"),
    _f("001", "Images", "An image_url on any other role returns HTTP 400",
       "An image outside a user message is refused with 400.", "IMG-002", "image-wrong-role",
       "conformant/image-wrong-role defects/image-wrong-role-answered"),
    _f("001", "Images", "detail must be absent or set to auto",
       "Under profile strict a detail other than auto, or a URL that is not a data URL, is refused with 400.",
       "IMG-002", "image-detail-high image-remote-url", "conformant/image-detail-refused defects/image-detail-answered",
       dialect="strict"),
    _f("001", "Images", "Bodies and images over their limits return HTTP 413",
       "Under profile strict an oversized body gets 413 (elsewhere answering a valid 16 MiB request is legal: seed 003 "
       "§2.3).", "ERR-015", "error-oversized", "conformant/error-oversized defects/oversized-as-400", dialect="strict"),
    _f("001", "Images", "reports capabilities as",
       "capabilities on a listed model is an array of strings with text (required, profile strict).", "MOD-007",
       "models", "conformant/models-capabilities defects/models-capabilities-string "
       "defects/models-capabilities-missing"),
    _f("001", "Images", "GET /health reports the same state under vision",
       "/health's vision is ready, missing, invalid or unsupported.", "MOD-008", "health",
       "conformant/health defects/health-vision-unknown"),
    # seed 002: npu_proxy
    _f("002", "1. OpenAI chat streaming", "a true FastAPI StreamingResponse with media type text/event-stream",
       "The stream is text/event-stream, delivered as it is made.", "TRN-001 TRN-007", "stream-long",
       "conformant/timed-stream defects/buffered-to-end"),
    _f("002", "1. OpenAI chat streaming", "SSE frames shaped as data: {json}",
       "Each event is data: JSON ended by a blank line.", "SSE-005 SSE-006", "stream-plain",
       "conformant/plain-stream defects/single-newline-between-events defects/done-without-blank-line"),
    _f("002", "1. OpenAI chat streaming", "successful streams end with data: [DONE]",
       "A successful stream ends with data: [DONE].", "SSE-002", "stream-plain", "seeds/npu-openai defects/no-done"),
    _f("002", "1. OpenAI chat streaming", "failed streams emit a terminal data: {\"error\": ...} payload",
       "A failed stream ends with an error payload and no success terminator.", "ERR-008 ERR-009 ERR-010", "",
       "seeds/npu-error-terminal defects/chunks-after-error defects/error-string-in-stream", client="error complete"),
    _f("002", "1. OpenAI chat streaming", "The final OpenAI stream chunk carries the finish reason",
       "The finish reason is on the final chunk, with an empty delta.", "FIN-001 FIN-004 CHK-008", "stream-plain",
       "seeds/npu-openai defects/delta-null-on-finish"),
    _f("002", "Implementation notes", "normalizes the final reason to stop or length",
       "A cut answer finishes length, a natural one stop.", "FIN-002 FIN-007", "max-tokens stream-plain",
       "conformant/length-cut conformant/ended-before-the-cap defects/length-reported-as-stop"),
    _f("002", "2. Ollama streaming", "These endpoints stream newline-delimited JSON chunks",
       "/api/chat and /api/generate stream one JSON object per line.", "OLL-002 OLL-010",
       "ollama-chat ollama-generate", "seeds/ollama-chat seeds/ollama-generate defects/ollama-partial-line"),
    _f("002", "2. Ollama streaming", "Current media type in the implementation is application/x-ndjson",
       "The Ollama stream is application/x-ndjson.", "OLL-001", "ollama-chat",
       "conformant/ollama-length defects/ollama-text-plain"),
    _f("002", "2. Ollama streaming", "frame includes done: true and done_reason",
       "The final frame has done: true and done_reason; earlier ones done: false.", "OLL-003 OLL-004 OLL-006",
       "ollama-chat ollama-generate", "seeds/ollama-generate defects/ollama-no-done defects/ollama-done-no-reason "
       "defects/ollama-done-missing-early"),
    _f("002", "2. Ollama streaming", "done_reason is stop for natural completion",
       "A natural end says done_reason stop: a length finish is judged against the output limit where the final "
       "frame reports its token count (Ollama: num_predict, eval_count; without it, the tokens are unknown).",
       "OLL-004", "ollama-chat", "seeds/ollama-chat defects/ollama-natural-end-length"),
    _f("002", "2. Ollama streaming", "length when generation reaches the effective max output token limit",
       "A generation cut at the effective max output token limit says done_reason length (Ollama: num_predict).",
       "OLL-011", "ollama-length", "conformant/ollama-length defects/ollama-length-as-stop"),
    _f("002", "2. Ollama streaming", "emit a terminal NDJSON error object",
       "A failure is an error status or a terminal error frame, never done: true, nothing after.",
       "OLL-014 OLL-005", "ollama-error", "seeds/ollama-error-terminal conformant/ollama-error-frame "
       "conformant/ollama-error-404 defects/ollama-error-done defects/ollama-after-done"),
    _f("002", "2. Ollama streaming", "/api/generate example",
       "/api/generate frames carry response; /api/chat frames carry message.", "OLL-007 OLL-008",
       "ollama-generate ollama-chat", "seeds/ollama-generate defects/ollama-chat-shape defects/ollama-model-changes"),
    _f("002", "2. Ollama streaming", "/api/pull example",
       "/api/pull streams status frames (digest, total, completed) ending in success or an error.", "OLL-013",
       "ollama-pull", "seeds/npu-pull defects/pull-no-success defects/pull-progress-past-total"),
    _f("002", "Cancellation and timeouts", "If a client disconnects or the consumer stops",
       "A disconnect stops the generation, and other clients' streams go on.", "CAN-001 CAN-005", "disconnect",
       "conformant/disconnect-freed defects/disconnect-ignored defects/disconnect-delays-next"),
    _f("002", "Cancellation and timeouts", "a native OpenVINO call already in flight may still finish its current token",
       "After a disconnect, the token already in flight may still be produced: the generation is judged stopped "
       "after a grace period, not at once.", "CAN-001", "disconnect",
       "conformant/disconnect-freed defects/disconnect-ignored"),
    _f("002", "Request/response headers", "X-NPU-Proxy-Fallback-Reason - present only when the execution device differs",
       "The routing headers agree: X-NPU-Proxy-Device is the execution device, and a fallback reason comes exactly "
       "when the request ran elsewhere than routed (advisory).", "TRN-022", "",
       "conformant/npu-proxy-headers conformant/npu-proxy-fallback defects/npu-proxy-headers-inconsistent"),
    _f("002", "Request/response headers", "Streaming chat/generate responses can include",
       "X-Request-ID comes back, on the chat route (should) and the Ollama routes (advisory).", "TRN-006 OLL-012",
       "request-id ollama-chat", "conformant/ollama-request-id defects/ollama-request-id-missing "
       "defects/request-id-not-echoed"),
    # seed 003: the wire protocol
    _f("003", "§1 Endpoints", "lists models", "GET /v1/models lists the models as JSON.", "MOD-001", "models",
       "conformant/models defects/models-404"),
    _f("003", "§1 Endpoints", "Normalize both forms, or `/v1/v1/models` follows",
       "A client asks for /v1/chat/completions once, whichever base URL form it was given.", "MOD-001", "models",
       "conformant/models defects/models-404", client="path"),
    _f("003", "§1 Endpoints", "Authentication, when enabled, is `Authorization: Bearer <token>`",
       "A refused key is an error a client reports, not an answer (HTTP: 401).", "ERR-001", "",
       "conformant/error-unauthorized defects/error-plain-text",
       client="error"),
    _f("003", "§2.1 Fields", "LM Studio answers a request for an ID it does not know",
       "An unknown model is refused (OpenAI: 404 model_not_found); under profile lmstudio a loaded model may answer.", "ERR-012",
       "error-unknown-model", "conformant/error-unknown-model defects/unknown-model-served"),
    _f("003", "§2.1 Fields", "Output cap", "The output stays within max_tokens (OpenAI: usage.completion_tokens).", "FIN-006",
       "max-tokens stream-long", "conformant/length-cut defects/max-tokens-ignored"),
    _f("003", "§2.1 Fields", "more than one choice is not supported",
       "With n: 1 there is one choice, index 0.", "CHK-007", "stream-plain",
       "defects/choice-index-missing conformant/n-two"),
    _f("003", "§2.1 Fields", "`none`, `low`, `medium`, `high`, `xhigh`",
       "Every reasoning_effort value is accepted or refused as unsupported.", "RSN-010",
       "reasoning reasoning-none reasoning-effort-medium reasoning-effort-high reasoning-effort-xhigh",
       "conformant/effort-unsupported defects/effort-refused-422"),
    _f("003", "§2.2 Messages", "**Images** go inline as data URLs",
       "A data-URL image is answered or refused with a 4xx.", "IMG-001", "image-data-url",
       "conformant/image-answered defects/image-500"),
    _f("003", "§2.2 Messages", "**Assistant turns with tool calls** carry",
       "An assistant turn with tool_calls and a tool result is accepted.", "TOOL-020", "tools-roundtrip",
       "conformant/tools-roundtrip defects/tools-roundtrip-refused"),
    _f("003", "§2.2 Messages", "the next request repeats it on that assistant message under the same key",
       "reasoning_content sent back on the assistant turn is accepted.", "RSN-009", "reasoning-roundtrip",
       "conformant/reasoning-roundtrip defects/reasoning-roundtrip-refused"),
    _f("003", "§2.4 Tools", "`\"required\"` (at least one",
       "tool_choice required gets at least one call.", "TOOL-012", "tools-required",
       "conformant/tools-required defects/tool-choice-required-ignored"),
    _f("003", "§2.4 Tools", "(a call of that tool)", "A named tool_choice gets a call of that tool only.",
       "TOOL-013", "tools-named", "conformant/tools-named defects/tool-choice-named-ignored"),
    _f("003", "§2.4 Tools", "`\"none\"` (no call)", "tool_choice none gets no call.", "TOOL-011", "tools-none",
       "conformant/tools-none defects/tool-choice-none-ignored"),
    _f("003", "§2.4 Tools", "A named function is rejected with 400",
       "LM Studio refuses a named tool_choice with a string error (profile lmstudio: a legal envelope).",
       "ERR-001", "tools-named", "seeds/lmstudio-named-tool-choice seeds/lmstudio-error-string-profile "
       "defects/lmstudio-error-number",
       dialect="lmstudio"),
    _f("003", "§2.4 Tools", "`required` is accepted and not kept",
       "required accepted but answered without a call fails.", "TOOL-012", "tools-required",
       "conformant/tools-required defects/tool-choice-required-ignored"),
    _f("003", "§2.4 Tools", "A model without tool support may ignore tools or fail",
       "Tool support is probed; --expect tools turns a refusal into a failure.", "TOOL-018", "tools-auto",
       "conformant/expected-tools defects/expected-tools-missing"),
    _f("003", "§2.5 Optional fields", "may reject the whole request with 400 or 422",
       "A refused stream_options makes usage unsupported; --expect usage fails it.", "USG-011", "stream-usage",
       "conformant/expected-usage defects/expected-usage-missing"),
    _f("003", "§2.6 Structured output", "`json_object` asks for a JSON object of any shape",
       "json_object gets a JSON object.", "STR-001", "json-object",
       "conformant/json-object defects/json-object-not-json"),
    _f("003", "§2.6 Structured output", "to treat `length` as incomplete before parsing",
       "A cut answer says length, so that a client can treat it as incomplete before parsing it; fuzz-client holds "
       "a client to surfacing that finish reason (the openai helper raises LengthFinishReasonError on it, by design).",
       "FIN-007", "max-tokens", "conformant/length-cut defects/length-reported-as-stop", client="finish_reason"),
    _f("003", "§2.6 Structured output", "guarantee an answer that matches",
       "A strict json_schema answer matches the schema.", "STR-003", "json-schema-strict",
       "conformant/json-schema-strict defects/json-schema-strict-ignored"),
    _f("003", "§2.6 Structured output", "Without it the schema guides the model but binds nothing",
       "A non-strict schema that is not matched is advisory only.", "STR-004", "",
       "conformant/json-schema-loose defects/json-schema-loose-ignored"),
    _f("003", "§2.6 Structured output", "`json_object` is rejected with 400",
       "LM Studio's string refusal of json_object is a legal envelope under profile lmstudio.", "ERR-001",
       "json-object", "seeds/lmstudio-error-string seeds/lmstudio-error-string-profile "
       "defects/lmstudio-json-object-error-number", dialect="lmstudio"),
    _f("003", "§2.6 Structured output", "the whole JSON arrives as\n`reasoning_content`",
       "Structured output arrives as content, not reasoning.", "STR-005", "json-schema-strict",
       "conformant/json-schema-strict defects/json-in-reasoning"),
    _f("003", "§3.1 SSE framing", "Lines end in LF or CRLF",
       "LF, CRLF and CR line ends are all legal (advisory where clients break), one style per stream.",
       "SSE-011 SSE-016", "stream-plain", "conformant/plain-stream legal/crlf legal/bare-cr defects/mixed-line-ends"),
    _f("003", "§3.1 SSE framing", "one leading space after the colon is not part of it",
       "data: without a space is legal (advisory).", "SSE-010", "stream-plain",
       "conformant/plain-stream legal/no-space-after-colon",
       client="content"),
    _f("003", "§3.1 SSE framing", "Several `data:` lines in one event join with `\\n`",
       "A payload over several data: lines joins with LF (advisory).", "SSE-014", "stream-plain",
       "conformant/plain-stream legal/multiline-data", client="content"),
    _f("003", "§3.1 SSE framing", "Lines starting with `:` are comments (keep-alives)",
       "Comment lines are keep-alives, ignored (advisory).", "SSE-009", "stream-plain",
       "conformant/plain-stream legal/comments-keepalive",
       client="content"),
    _f("003", "§3.1 SSE framing", "`id:`, `retry:`, and `event: message` also occur",
       "id:, retry: and event: message are legal; retry carries digits.", "SSE-012 SSE-015 SSE-008", "stream-plain",
       "legal/id-and-retry legal/event-message defects/bad-retry", client="content"),
    _f("003", "§3.1 SSE framing", "Other event types are not part of this protocol",
       "Event types are message or error only.", "SSE-008", "stream-plain", "conformant/plain-stream defects/named-events"),
    _f("003", "§3.1 SSE framing", "inside a UTF-8 character",
       "Chunk boundaries fall anywhere; the text carries no U+FFFD and is valid UTF-8.", "CHK-013 SSE-001",
       "stream-plain", "legal/one-byte-per-read defects/replacement-char defects/invalid-utf8", client="content"),
    _f("003", "§3.2 Chunks", "`id` and `model` stay the same for the whole stream",
       "id and model are the same on every chunk.", "CHK-003 CHK-004", "stream-plain",
       "conformant/plain-stream defects/id-per-chunk defects/model-changes"),
    _f("003", "§3.2 Chunks", "Keys can be present with `null`",
       "content, refusal and reasoning are strings or null.", "CHK-011", "stream-plain",
       "conformant/plain-stream defects/content-object"),
    _f("003", "§3.2 Chunks", "`refusal` is the model's refusal to answer",
       "A refusal comes with null content.", "CHK-018", "", "conformant/refusal defects/refusal-with-content",
       client="refusal"),
    _f("003", "§3.2 Chunks", "`finish_reason` appears once, on the last choice chunk",
       "finish_reason appears once, last, with a documented value; only usage and [DONE] follow.",
       "FIN-001 FIN-002 FIN-003", "stream-plain",
       "conformant/plain-stream defects/finish-twice defects/content-after-finish"),
    _f("003", "§3.2 Chunks", "LM Studio's\nfirst `content` delta after reasoning is `\"\\n\\n\"`",
       "The \"\\n\\n\" after reasoning is part of the answer's text.", "RSN-007", "reasoning",
       "legal/lmstudio-blank-after-reasoning defects/reasoning-after-answer", client="content"),
    _f("003", "§3.3 Tool calls", "Each piece has an `index`", "Every tool-call piece carries an index.",
       "TOOL-001", "tools-auto", "conformant/tools-auto defects/tool-index-missing"),
    _f("003", "§3.3 Tool calls", "Names can be split across pieces, not just arguments",
       "Split names and interleaved calls assemble by index.", "TOOL-006 TOOL-002", "tools-parallel",
       "seeds/interleaved-two-calls defects/tool-name-repeated defects/tool-index-from-one", client="tool_calls"),
    _f("003", "§3.3 Tool calls", "contiguous indices from 0, a non-empty unique `id` and a non-empty name",
       "Indices contiguous from 0, ids non-empty and unique, names non-empty.", "TOOL-002 TOOL-003 TOOL-004",
       "tools-parallel",
       "conformant/tools-parallel defects/tool-index-from-one defects/tool-id-missing defects/tool-ids-shared"),
    _f("003", "§3.3 Tool calls", "`finish_reason` is `tool_calls` exactly when there are calls",
       "finish_reason tool_calls exactly when there are calls (or length).", "TOOL-016",
       "tools-auto tools-cut-by-length", "conformant/tools-cut-by-length defects/tool-finish-stop"),
    _f("003", "§3.3 Tool calls", "a stream cut before `[DONE]` may have incomplete arguments",
       "A stream cut before [DONE] is partial.", "SSE-002", "stream-plain",
       "conformant/plain-stream seeds/cut-before-done", client="complete"),
    _f("003", "§3.4 Usage", "after the finish reason,\nwith an empty `choices` array, before `[DONE]`",
       "Usage comes after the finish, with empty choices, before [DONE].", "USG-002 USG-003 USG-005",
       "stream-usage", "conformant/usage-stream defects/usage-before-finish", client="usage"),
    _f("003", "§3.4 Usage", "optionally `completion_tokens_details.reasoning_tokens`",
       "Counts are integers, total = prompt + completion, details within totals.", "USG-006 USG-009",
       "stream-usage", "conformant/usage-stream defects/usage-wrong-total defects/usage-details-exceed"),
    _f("003", "§3.4 Usage", "sends no usage at all; the answer is still complete",
       "Without usage support, usage rules are skipped, not failed.", "USG-002 USG-011", "stream-long max-tokens",
       "conformant/expected-usage defects/expected-usage-missing"),
    _f("003", "§3.4 Usage", "Usage is reported once", "One usage chunk.", "USG-004", "stream-usage",
       "conformant/usage-stream defects/usage-every-chunk"),
    _f("003", "§3.5 Errors inside the stream", "send an error chunk inside an open stream",
       "An in-stream error is data: {\"error\": {...}}, and nothing but [DONE] follows.", "ERR-008 ERR-009", "",
       "seeds/vllm-error-chunk defects/error-string-in-stream defects/chunks-after-error", client="error"),
    _f("003", "§3.5 Errors inside the stream", "LM Studio sends an SSE event of type `error`",
       "event: error with status 200 and nothing after (profile lmstudio).", "SSE-008 ERR-009", "",
       "seeds/lmstudio-event-error seeds/lmstudio-event-error-profile defects/named-events defects/chunks-after-error "
       "defects/lmstudio-event-error-then-chunks",
       client="error", dialect="lmstudio"),
    _f("003", "§3.5 Errors inside the stream", "A prompt longer than the loaded context is reported this way",
       "Under profile lmstudio an over-context prompt may be 200 plus event: error, without a code.",
       "ERR-006 ERR-011", "error-context-overflow", "seeds/lmstudio-overflow seeds/lmstudio-overflow-profile "
       "defects/lmstudio-overflow-500",
       dialect="lmstudio"),
    _f("003", "§3.5 Errors inside the stream", "Everything received before an error is a partial answer",
       "A stream that reports an error does not also finish as a success.", "ERR-010", "",
       "seeds/vllm-error-chunk defects/chunks-after-error", client="complete"),
    _f("003", "§3.7 Content filtering", "`prompt_filter_results` holds the verdict per category",
       "Azure's prompt-filter chunk (empty choices, id, model) is legal under profile azure.", "CHK-014 CHK-003",
       "", "seeds/azure-filter-default seeds/azure-filter-default-openai defects/azure-content-without-choices "
       "defects/azure-chunk-without-id", dialect="azure"),
    _f("003", "§3.7 Content filtering", "`model` in the chunks is the model version",
       "Under profile azure the model may name the version, not the deployment; one model on every chunk still.",
       "CHK-017 CHK-004", "", "seeds/azure-filter-default seeds/azure-filter-default-openai defects/azure-model-changes",
       dialect="azure"),
    _f("003", "§3.7 Content filtering", "`[DONE]` follows at once: no usage\nchunk",
       "A content_filter block is followed by [DONE], without usage (profile azure).", "FIN-002 USG-002", "",
       "seeds/azure-blocklist-block seeds/azure-blocklist-block-openai defects/azure-stop-without-usage "
       "defects/azure-block-unknown-finish", dialect="azure"),
    _f("003", "§3.7 Content filtering", "An annotation is a choice with `content_filter_offsets`",
       "Annotation chunks (no delta) interleave and follow the finish (profile azure).", "CHK-008 FIN-003", "",
       "seeds/azure-async-annotations seeds/azure-async-annotations-openai defects/azure-content-after-finish",
       dialect="azure"),
    _f("003", "§3.7 Content filtering", "A block caught while the answer streams is an annotation",
       "A block in an annotation finishes content_filter (profile azure).", "FIN-001", "",
       "seeds/azure-async-block seeds/azure-async-block-openai defects/azure-block-without-finish", dialect="azure"),
    _f("003", "§3.7 Content filtering", "Only the verdict says that the\nanswer",
       "A verdict filtered: true after stop is recorded as filtered (profile azure).", "FIN-003 CHK-008", "",
       "seeds/azure-async-flagged-after-stop seeds/azure-async-flagged-after-stop-openai "
       "defects/azure-content-after-finish", client="filtered",
       dialect="azure"),
    _f("003", "§4 Reasoning", "Three carriers exist", "reasoning_content, reasoning or inline think markers.",
       "RSN-001 RSN-002", "reasoning", "legal/reasoning-key conformant/reasoning-content", client="reasoning"),
    _f("003", "§4 Reasoning", "The markers can be split across chunks anywhere",
       "Split think markers assemble; markers are balanced.", "RSN-003", "reasoning",
       "seeds/think-split-markers defects/think-close-only", client="reasoning"),
    _f("003", "§4 Reasoning", "An unfinished marker at the\nvery end", "A marker unfinished at the end is text.",
       "RSN-003", "", "seeds/think-unfinished-marker defects/think-close-only", client="content"),
    _f("003", "§5 HTTP errors", "Some servers stall the error body; do not wait for it",
       "A stalled body ends at the time limits, with a finding.", "TRN-010", "stream-plain",
       "conformant/plain-stream defects/stalled"),
    _f("003", "§5 HTTP errors", "`Retry-After` may be present",
       "A 429 may carry Retry-After (advisory).", "ERR-014", "queue-full",
       "conformant/error-queue-full defects/queue-full-no-retry-after"),
    _f("003", "§5 HTTP errors", "The body is `{\"error\":{\"code\":...,\"message\":...}}` on most servers",
       "A refusal is JSON with an error object carrying a message and a code (OpenAI's envelope adds type and param).",
       "ERR-001 ERR-002 ERR-003 ERR-004", "error-malformed-json",
       "conformant/error-malformed-json defects/error-plain-text defects/error-html defects/error-empty-message"),
    _f("003", "§5 HTTP errors", "Not expected from this API",
       "A rejected request is 400, 413 or 422; a feature refused with another status fails.", "ERR-024",
       "image-data-url image-wrong-role", "conformant/image-refused-422 defects/image-404"),
    _f("003", "§5 HTTP errors", "Transient server or gateway failure", "Bad input never gets a 5xx.", "ERR-005",
       "error-malformed-json error-wrong-type", "conformant/error-malformed-json defects/error-html"),
    _f("003", "§5 HTTP errors", "`context_length_exceeded` or `context_window_exceeded`",
       "An over-context prompt gets 400/413/422 with a context code.", "ERR-011 ERR-006", "error-context-overflow",
       "conformant/error-context-overflow defects/overflow-without-code"),
    _f("003", "§5 HTTP errors", "`exceed_context_size_error`",
       "llama.cpp's numeric code and typed overflow are legal under profile llamacpp.", "ERR-003 ERR-011",
       "error-context-overflow", "seeds/llamacpp-context-overflow seeds/llamacpp-context-overflow-profile "
       "defects/llamacpp-overflow-untyped",
       dialect="llamacpp"),
    _f("003", "§5 HTTP errors", "`content_filter`, as `application/json`, also for a streamed request",
       "A blocked prompt is refused as JSON with an error envelope (no scenario sends one: a fixture judges it).",
       "ERR-004 ERR-001", "", "seeds/azure-prompt-blocked defects/error-html defects/azure-prompt-blocked-html",
       dialect="azure"),
    _f("003", "§5 HTTP errors", "A successful response must be `text/event-stream`",
       "A 2xx stream that is not text/event-stream is not a stream.", "TRN-001", "stream-plain",
       "conformant/plain-stream defects/json-content-type", client="complete"),
    _f("003", "§6 Model listing", "`name` is optional", "The model list is a data array of entries with an id.",
       "MOD-002 MOD-003 MOD-005", "models", "conformant/models defects/models-bare-list defects/models-empty-id "
       "defects/models-duplicate"),
)

# The seeds' statements no server or client verdict can test, and why.
NOT_JUDGED: tuple[tuple[str, str, str], ...] = (
    ("000", "When enabled, a separate chunk", "covered above; nothing more"),
    ("001", "It binds to 127.0.0.1 without authentication or TLS", "deployment advice, not wire behaviour"),
    ("001", "The server loads the model before opening the port", "start-up order, seen only as a refused connection"),
    ("001", "Values are validated before the model loads", "command-line start-up, not the API"),
    ("001", "The settings are fixed for the life of the process", "process configuration"),
    ("001", "Some client libraries require an API key, but the server ignores it",
     "a server that checks keys is as legal (seed 003 §1); the suite sends a key only when given one"),
    ("001", "Tool schemas need a non-null object at the top level",
     "this server's own input rule; the suite sends only typed object schemas, so no verdict follows"),
    ("001", "Requests may contain system, developer, user, assistant, and tool messages",
     "system, user, assistant and tool are sent; developer is a newer OpenAI role other servers may refuse"),
    ("001", "Inside stream_options only include_usage is read",
     "ignoring or refusing a misspelled key inside stream_options are both legal"),
    ("001", "It does not support the Responses API", "the absence of other APIs is legal"),
    ("001", "rejects the request if they do not fit the context",
     "needs a vision model and an image beyond its context (a text prompt beyond it is seed 001's context fact)"),
    ("001", "Image bytes go to disk as the request body arrives", "memory use inside the server"),
    ("001", "stderr reports the request lifecycle", "server logs"),
    ("000", "Unknown, already completed, or expired IDs",
     "expired: the expiry time is not documented, so an expired id cannot be made on purpose"),
    ("002", "AsyncTokenStream defaults to 60s", "internal timeouts of one implementation"),
    ("002", "top_p and timeout are forwarded", "internal plumbing"),
    ("003", "A base URL must not carry userinfo, a query, or a fragment",
     "the suite applies it to its own --base-url (tests/test_target.py); not a server's behaviour"),
    ("003", "Streaming it\nfrom disk needs the exact length up front",
     "request encoding: the suite always sends Content-Length"),
    ("003", "OpenAI rejects it unless the word \"JSON\" appears",
     "the json-object scenario's prompt says JSON, so such a server answers"),
    ("003", "`name` is required, of ASCII letters",
     "request construction: the suite's schema names follow it"),
    ("003", "Azure OpenAI was reported to reject a\n`tool_choice` sent without `tools`",
     "the suite never sends tool_choice without tools; both answers are legal"),
    ("003", "Tokens per second is meaningful only from the first visible token",
     "a measurement for clients; the report's timeline shows time to first output"),
    ("003", "The offsets do not behave as documented",
     "the recording contradicts the documentation, so the suite judges neither"),
    ("003", "| 408, 504 | Timeout |",
     "what the statuses mean, a timeout, is the server's or a gateway's verdict on time, not on the request (the "
     "status itself is judged as any 4xx or 5xx is: a 5xx to bad input is a server error), and whether a client "
     "retries is the client's own policy, which no replayed stream shows"),
    ("003", "An upstream `401` in a proxy is ambiguous", "a proxy's internal bookkeeping"),
    ("003", "the practical filter is a name heuristic",
     "the client's side: the suite's own model discovery applies it (engine.runner.chat_model, "
     "tests/test_discovery.py); a server lists what it serves"),
)


# The seeds' example streams that fail a must or should rule as their bytes stand, the rules they fail and why: each
# abbreviates what another seed or OpenAI's schema requires of every stream. A dialect's own shape is not listed: it
# passes under its profile, in a twin fixture of the same bytes (tests/test_coverage.py checks both).
ABBREVIATED: dict[str, tuple[str, str]] = {
    "seeds/afm-lifecycle": ("CHK-004 CHK-007", "AFM's lifecycle example leaves out model and the choice index; seed "
                            "003 §3.2 keeps model on every chunk and gives the one choice index 0"),
    "seeds/afm-tool-call": ("CHK-003 CHK-004 CHK-007 CHK-010 CHK-017 FIN-001 SSE-002",
                            "AFM shows two tool-call deltas only: no id, model, index or role, and neither the finish "
                            "nor [DONE], which its own lifecycle requires"),
    "seeds/npu-openai": ("CHK-003 CHK-004 CHK-007 CHK-017 FIN-005",
                         "npu_proxy's framing example shows choices only: no id, model, choice index or null "
                         "finish_reason, which seed 003 §3.2 and OpenAI's chunk schema give every chunk"),
    "seeds/npu-error-terminal": ("CHK-003 CHK-004 CHK-007 CHK-017 FIN-005",
                                 "the same abbreviated chunks as npu_proxy's framing example, before its error"),
    "seeds/cut-before-done": ("FIN-001 SSE-002 TOOL-006 TOOL-008 USG-002",
                              "seed 003's recorded example cut after its second event, as its text describes: the "
                              "cut is what the fixture shows"),
}


@cache
def _judged(name: str) -> tuple[frozenset[str], frozenset[str]]:
    """The rules a fixture fails and the ones it passes, judged as the offline tests judge it."""
    from conformance.checks import evaluate
    from conformance.exchange import analyze
    from conformance.fixtures import FIXTURES_DIR, load

    fx = load(FIXTURES_DIR / f"{name}.json")
    verdicts = evaluate(analyze(fx.exchange, fx.profile))
    return (frozenset(v.rule.id for v in verdicts if v.outcome == "failed"),
            frozenset(v.rule.id for v in verdicts if v.outcome == "passed"))


def examples(fact: Fact) -> tuple[list[str], list[str]]:
    """The fact's counterexamples (fixtures that fail one of its rules) and legal examples (fixtures that fail none
    of them and pass at least one)."""
    counter, legal = [], []
    for name in fact.fixtures:
        failed, passed = _judged(name)
        if failed & set(fact.rules):
            counter.append(name)
        elif passed & set(fact.rules):
            legal.append(name)
    return counter, legal


def _failing(name: str) -> frozenset[str]:
    """The must and should rules a fixture fails."""
    return frozenset(r for r in _judged(name)[0] if RULES_BY_ID[r].level != "advisory")


def seed_examples() -> list[tuple[str, str, str]]:
    """Every seed example fixture that fails a must or should rule: (fixture, rules, why)."""
    from conformance.fixtures import FIXTURES_DIR, load

    seeds = sorted(f"seeds/{p.stem}" for p in (FIXTURES_DIR / "seeds").glob("*.json"))
    loaded = {n: load(FIXTURES_DIR / f"{n}.json") for n in seeds}
    body = {n: fx.body_path.read_bytes() for n, fx in loaded.items()}
    rows = []
    for name in seeds:
        failing = _failing(name)
        if not failing:
            continue
        if name in ABBREVIATED:
            rows.append((name, " ".join(sorted(failing)), ABBREVIATED[name][1]))
            continue
        fx = loaded[name]
        twins = [n for n, t in loaded.items() if t.profile != fx.profile and body[n] == body[name]
                 and not _failing(n)]
        twins.sort(key=lambda n: not (n.startswith(name) or name.startswith(n)))  # its own -profile twin first
        why = (f"a dialect's own shape: passes under profile {loaded[twins[0]].profile} ({twins[0]})" if twins
               else "UNEXPLAINED")
        rows.append((name, " ".join(sorted(failing)), why))
    return rows


def render() -> str:
    """The seed-coverage page of the docs site (reference/seed-coverage.md)."""
    out = ["# Seed coverage", "",
           "Every testable fact of the four documents this project was built from (the seeds: their titles below), in",
           "a few words of our own, with the",
           "rules that judge it, the live scenarios that show it and the fixtures that pin it. Generated from",
           "`conformance/report/coverage.py` when the site is built. Every claim is executable:",
           "`tests/test_coverage.py` judges each fact's fixtures and requires a counterexample (*fails on*: a fixture",
           "that fails one of the fact's rules, at the level shown, and lists it among its expected failures) and a",
           "legal example (*passes on*: a fixture that fails none of them and passes one); it also checks that each",
           "cue is in its seed, that every rule, scenario and fixture exists, and that the published reference report",
           "judged each live fact in its scenario. *Client* names what `conformance fuzz-client` compares; *dialect*",
           "names the profile that judges a dialect's own fact.", "",
           f"{len(FACTS)} facts: " + ", ".join(f"seed {s} {sum(1 for f in FACTS if f.seed == s)}" for s in SEEDS)
           + f"; {len(NOT_JUDGED)} statements not judged (at the end, with the reason).", ""]
    for seed, title in TITLES.items():
        out += [f"## Seed {seed}: {title}", "",
                "| # | section | fact | rules (level) | live | fails on | passes on | client | dialect |",
                "|---|---|---|---|---|---|---|---|---|"]
        for n, f in enumerate((f for f in FACTS if f.seed == seed), 1):
            counter, legal = examples(f)
            cells = [f"{seed}-{n:02d}", f.section, f.fact,
                     " ".join(f"{r} ({RULES_BY_ID[r].level})" for r in f.rules), " ".join(f.live) or "—",
                     "<br>".join(counter) or "—", "<br>".join(legal) or "—", " ".join(f.client) or "—",
                     f.dialect or "—"]
            out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        out.append("")
    out += ["## The seeds' own example streams", "",
            "Each example stream of the seeds is a fixture under `seeds/`, judged as its bytes stand; the others pass",
            "every must and should rule. Seed 003's chunk shape and recorded example carry only `id`, `model` and",
            "`choices`: legal, so a missing `object` or `created` is only CHK-021's advisory note. What a seed",
            "documents as its dialect's own shape passes under that dialect's profile, in a twin fixture of the same",
            "bytes, and is judged as a deviation under `openai`. Where a seed abbreviates for display, the rules that",
            "refuse the abbreviation are listed with the reason (`tests/test_coverage.py` requires a reason for every",
            "row).", "", "| fixture | fails (must/should) | why |", "|---|---|---|"]
    out += [f"| {name} | {rules} | {why} |" for name, rules, why in seed_examples()]
    out.append("")
    out += ["## Not judged", "", "| seed | statement | why |", "|---|---|---|"]
    for seed, cue, why in NOT_JUDGED:
        out.append(f"| {seed} | {' '.join(cue.split())} | {why} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
