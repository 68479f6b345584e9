"""Profiles: a closed set of named dialects, each a set of allowances; each allowance cites the
documented fact that grants it. A check asks ``analysis.allows(name)``; a name outside
``ALLOWANCES`` is a bug in the check and raises.
"""

from __future__ import annotations

from dataclasses import dataclass

ALLOWANCES: dict[str, str] = {
    "filter-chunks": "003 §3.7: Azure's prompt-filter chunk (empty choices, empty id and model) and annotation "
                     "chunks (a choice with content_filter_offsets and no delta)",
    "model-version": "003 §3.7: Azure's chunks name the model version, not the deployment the request named",
    "filter-block-no-usage": "003 §3.7: a content-filter block is followed by [DONE] at once, with no usage chunk "
                             "although the request asked for usage",
    "finish-cancelled": "000 Cancellation: a cancelled stream ends with finish_reason cancelled, then [DONE]",
    "profile-events": "000 Optional profiling events: afm_profile objects without a choices array before [DONE]",
    "event-error": "003 §3.5: LM Studio reports a failure as event: error with status 200 and nothing after it",
    "unknown-model-served": "003 §2.1: LM Studio answers a request for an unknown model id with a loaded model",
    "first-name-kept": "000 Streaming tool calls: keep the first non-null id, type and function.name (a name sent "
                       "again is not appended)",
    "role-optional": "000 Role and first delta: the first content chunk can include role; reasoning models may "
                     "begin with reasoning_content",
    "overflow-in-stream": "003 §3.5 and §5: LM Studio reports a prompt beyond the context as status 200 and an "
                          "event: error before anything is generated, with only a message (no code)",
    "error-string": "003 §2.4: LM Studio refuses with 400 and {\"error\": \"<a message>\"}, the error a string",
    "llamacpp-errors": "003 §5: llama.cpp's errors carry a numeric code and a type (exceed_context_size_error for "
                       "a prompt beyond the context), and no param",
}


# What a dialect documents beyond the common protocol: a rule that judges a dialect's own promise asks
# ``analysis.expects(name)``; without the expectation it judges only what every server must do.
EXPECTATIONS: dict[str, str] = {
    "invalid-tool-schema": "001 Tool calls: overlapping oneOf, mixed-type unions such as string | object, and allOf "
                           "return HTTP 400 with invalid_tool_schema",
    "function-tools-only": "001 Tool calls: the server accepts only function tools (another type is refused with "
                           "HTTP 400)",
    "image-rules": "001 Images: image_url parts in user messages only, a data URL, detail absent or auto; anything "
                   "else returns HTTP 400",
    "health": "001 Supported API: GET /health is an endpoint",
    "model-capabilities": "001 Images: GET /v1/models reports capabilities, [\"text\", \"image\"] or [\"text\"]",
    "prompt-reuse": "001 Prompt reuse: a request that continues the retained conversation exactly reports the reused "
                    "tokens in usage.prompt_tokens_details.cached_tokens",
    "openai-request-id": "000 Request and transport: X-Request-ID and OpenAI-Request-ID are the correlation and "
                         "cancellation handle",
    "unknown-field-refused": "001 Supported API: an unknown top-level field returns HTTP 400 with code "
                             "unknown_parameter naming it",
    "body-limit": "001 Images: bodies and images over their limits return HTTP 413",
    "done-terminator": "Open Responses specification, Streaming: the event stream of a response ends with data: [DONE] "
                       "after its terminal event",
    "resource-fields": "Open Responses specification, ResponseResource: the response object carries every required "
                       "field (null where it does not apply)",
    "supported-schema-forms": "001 Tool calls: nested properties and items may use nullable forms with one concrete "
                              "type plus null, including two-branch anyOf and disjoint oneOf forms; unions of string "
                              "constants are also supported",
    "sampling-options": "001 Supported API: supported options include temperature, top_p, top_k, repetition_penalty, "
                        "seed, stop, max_tokens, max_completion_tokens",
    "documented-refusals": "001 Supported API: a value the server does not support (a reasoning_effort among them) "
                           "returns HTTP 400 with code unsupported_value",
}


@dataclass(frozen=True)
class Profile:
    """A named dialect: the documented extensions it allows. The report always names it."""

    name: str
    allows: frozenset[str]
    description: str
    expects: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        unknown = sorted(self.allows - set(ALLOWANCES)) + sorted(self.expects - set(EXPECTATIONS))
        if unknown:
            raise ValueError(f"profile {self.name} names unknown allowances or expectations {unknown}")

    def citations(self) -> dict[str, str]:
        """Each allowance and expectation of the profile with the fact that grants or states it."""
        return {**{name: ALLOWANCES[name] for name in sorted(self.allows)},
                **{name: EXPECTATIONS[name] for name in sorted(self.expects)}}


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile("openai", frozenset(), "Strict OpenAI Chat Completions; no extensions."),
        Profile("azure", frozenset({"filter-chunks", "model-version", "filter-block-no-usage"}),
                "Azure OpenAI: prompt-filter and annotation chunks, the model version as model."),
        Profile("afm", frozenset({"finish-cancelled", "profile-events", "first-name-kept", "role-optional"}),
                "AFM: cancel endpoint, finish_reason cancelled, afm_profile events, the first tool name kept, "
                "role optional on the first delta, OpenAI-Request-ID.", frozenset({"openai-request-id"})),
        Profile("strict", frozenset(),
                "Seed 001's strict local server: unknown fields refused, documented refusals (unsupported_value) for "
                "what it does not support, invalid_tool_schema, image rules, /health, capabilities, prompt reuse.",
                frozenset({"invalid-tool-schema", "function-tools-only", "image-rules", "health", "model-capabilities",
                           "prompt-reuse", "documented-refusals", "body-limit", "unknown-field-refused",
                           "supported-schema-forms", "sampling-options"})),
        Profile("lmstudio", frozenset({"event-error", "unknown-model-served", "overflow-in-stream", "error-string"}),
                "LM Studio: event: error in the stream (also for a prompt beyond the context); string errors; an "
                "unknown model answered by a loaded one."),
        Profile("llamacpp", frozenset({"finish-cancelled", "llamacpp-errors"}),
                "llama.cpp's llama-server: numeric error codes and typed overflow errors."),
        Profile("vllm", frozenset(), "vLLM's OpenAI server."),
        Profile("ollama", frozenset(), "Ollama: its /v1 routes and native NDJSON."),
        Profile("openresponses", frozenset(), "The Open Responses specification: the Responses API's stream ends with "
                "data: [DONE]; the response object carries every field its ResponseResource requires.",
                frozenset({"done-terminator", "resource-fields"})),
    )
}
