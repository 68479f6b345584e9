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


@dataclass(frozen=True)
class Profile:
    """A named dialect: the documented extensions it allows. The report always names it."""

    name: str
    allows: frozenset[str]
    description: str

    def __post_init__(self) -> None:
        unknown = sorted(self.allows - set(ALLOWANCES))
        if unknown:
            raise ValueError(f"profile {self.name} names unknown allowances {unknown}")

    def citations(self) -> dict[str, str]:
        """Each allowance of the profile with the fact that grants it."""
        return {name: ALLOWANCES[name] for name in sorted(self.allows)}


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile("openai", frozenset(), "Strict OpenAI Chat Completions; no extensions."),
        Profile("azure", frozenset({"filter-chunks", "model-version", "filter-block-no-usage"}),
                "Azure OpenAI: prompt-filter and annotation chunks, the model version as model."),
        Profile("afm", frozenset({"finish-cancelled", "profile-events", "first-name-kept", "role-optional"}),
                "AFM: cancel endpoint, finish_reason cancelled, afm_profile events, the first tool name kept, "
                "role optional on the first delta."),
        Profile("lmstudio", frozenset({"event-error", "unknown-model-served", "overflow-in-stream", "error-string"}),
                "LM Studio: event: error in the stream (also for a prompt beyond the context); string errors; an "
                "unknown model answered by a loaded one."),
        Profile("llamacpp", frozenset({"finish-cancelled", "llamacpp-errors"}),
                "llama.cpp's llama-server: numeric error codes and typed overflow errors."),
        Profile("vllm", frozenset(), "vLLM's OpenAI server."),
        Profile("ollama", frozenset(), "Ollama: its /v1 routes and native NDJSON."),
    )
}
