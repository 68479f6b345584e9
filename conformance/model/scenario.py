"""What every protocol's scenarios share: the ``Scenario`` record, the ``Context`` a request is built in, the prompts,
tools and token caps the scenarios of every protocol use, and the context length a server states.

A protocol's scenarios live in its package (``conformance/protocols/<name>/scenarios.py``); the registry of all of
them is ``conformance.scenarios``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from conformance.model.request import Request

HELLO = [{"role": "user", "content": "Say hello in one short sentence."}]
LONG = [{"role": "user", "content": "Tell me a long story, as long as you can."}]
WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Current weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 40}},
                   "required": ["city"], "additionalProperties": False}}}
TIME = {"type": "function", "function": {
    "name": "get_time", "description": "Current time in a time zone",
    "parameters": {"type": "object", "properties": {"zone": {"type": "string", "maxLength": 40}},
                   "required": ["zone"], "additionalProperties": False}}}
NESTED = {"type": "function", "function": {
    "name": "book_trip", "description": "Book a trip",
    "parameters": {"type": "object", "additionalProperties": False, "required": ["traveller", "legs"],
                   "properties": {
                       "traveller": {"type": "object", "additionalProperties": False, "required": ["name"],
                                     "properties": {"name": {"type": "string", "maxLength": 30},
                                                    "age": {"type": ["integer", "null"], "maximum": 130}}},
                       "legs": {"type": "array", "maxItems": 2, "items": {
                           "type": "object", "additionalProperties": False, "required": ["to"],
                           "properties": {"to": {"type": "string", "maxLength": 30}}}}}}}}
ASK_WEATHER = [{"role": "user", "content": "What is the weather in Paris? Use the tool."}]
ASK_BOTH = [{"role": "user", "content": "What is the weather in Paris and the time in CET? Use the tools."}]
# OpenAI's custom tool (free-form text input): a tool that is not a function
CUSTOM_TOOL = {"type": "custom", "custom": {"name": "run_sql", "description": "Run one SQL query"}}
UNION = {"type": "function", "function": {
    "name": "set_label", "description": "Label a thing",
    "parameters": {"type": "object", "required": ["label"], "properties": {
        "label": {"anyOf": [{"type": "string"}, {"type": "object"}]},  # a mixed-type union
        "note": {"allOf": [{"type": "string"}, {"maxLength": 20}]}}}}}
NULLABLE = {"type": "function", "function": {
    "name": "set_reminder", "description": "Set a reminder",
    "parameters": {"type": "object", "required": ["color"], "properties": {  # the forms seed 001 supports
        "color": {"anyOf": [{"const": "red"}, {"const": "blue"}]},  # a union of string constants
        "note": {"type": ["string", "null"]},  # one concrete type plus null
        "when": {"anyOf": [{"type": "string"}, {"type": "null"}]},  # a two-branch anyOf
        "count": {"oneOf": [{"type": "integer"}, {"type": "null"}]}}}}}  # a disjoint oneOf
PIXEL = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5"
         "ErkJggg==")  # a 1x1 PNG


PERSON = {"type": "object", "additionalProperties": False, "required": ["name", "age"],
          "properties": {"name": {"type": "string", "maxLength": 30}, "age": {"type": "integer", "minimum": 0,
                                                                              "maximum": 150}}}


DEFAULT_CONTEXT = 262_144  # the largest context seed 001 names (256K), for a server that states none
MAX_OVERFLOW_WORDS = 1_300_000  # about 7.8 MB: the over-context prompt stays well under the oversized body
CONTEXT_FIELDS = ("max_model_len", "context_length", "max_context_length", "loaded_context_length", "context_window",
                  "max_context", "n_ctx", "contextWindow")


@dataclass(frozen=True)
class Context:
    """What a scenario needs to build its request."""

    model: str
    profile: str = "openai"
    context_tokens: int | None = None  # the context length the server states (None: it states none)


def context_tokens(doc: Any, model: str) -> int | None:
    """The context length, in tokens, that a model list (the entry of ``model``) or a status document states:
    vLLM's ``max_model_len``, LM Studio's ``max_context_length``, llama.cpp's ``meta.n_ctx_train``, seed 001's
    ``/health`` ``max_context``, and the like; None when it states none."""
    if isinstance(doc, dict) and isinstance(doc.get("data"), list):
        entries = [e for e in doc["data"] if isinstance(e, dict) and e.get("id") == model]
        return context_tokens(entries[0], model) if entries else None
    if not isinstance(doc, dict):
        return None
    places = [doc, doc.get("meta"), doc.get("limit"), doc.get("default_generation_settings")]
    for place in places:
        if not isinstance(place, dict):
            continue
        for key in (*CONTEXT_FIELDS, "n_ctx_train", "context"):
            value = place.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 100_000_000:
                return value
    return None


def overflow_words(ctx: Context) -> int:
    """Words of the over-context prompt: a quarter more than the stated context (each word is at least one token
    in any tokenizer), or than ``DEFAULT_CONTEXT`` when none is stated; at most ``MAX_OVERFLOW_WORDS``."""
    tokens = ctx.context_tokens or DEFAULT_CONTEXT
    return min(MAX_OVERFLOW_WORDS, tokens + max(1024, tokens // 4))


@dataclass(frozen=True)
class Scenario:
    """One request to the server and what it is meant to show."""

    name: str
    category: str
    build: Callable[[Context], Request]
    needs: str | None = None
    kind: str = "plain"  # plain | followup | disconnect | cancel | cancel-completed | repeat | stop-compare | clock
    #                      | http10 | burst
    description: str = ""
    tags: tuple[str, ...] = field(default_factory=tuple)
    only: tuple[str, ...] = ()  # the profiles whose dialect it tests (empty: every profile)
    opt_in: bool = False  # run only when chosen by name (it has side effects on the server)
    variant: str = ""  # the feature variant it shows (results.json target.features), e.g. "tool_choice: required"
    observable: bool = True  # whether an answer can show the variant was used (else "accepted", never "supported")
    only_for: tuple[str, ...] = ()  # a rule selection runs it only when it chooses one of these rules (costly, narrow)

    def runs_under(self, profile: str) -> bool:
        """Whether a run under this profile includes it by default."""
        return not self.opt_in and (not self.only or profile in self.only)


CAP_FIELDS = ("max_completion_tokens", "max_tokens", "max_output_tokens")  # the token caps a request may set
OVERSIZED_BYTES = 16 * 1024 * 1024
ANSWER = 32  # a short answer's cap: "Say hello in one short sentence." ends well within it
CALL = 64  # room for one tool call in any template's markup
THINK = 128  # reasoning before a short answer
JSON = 96  # a small JSON object, whole
DETERMINISTIC: dict[str, Any] = {"temperature": 0, "seed": 7}  # the same answer each time from a server that can




def tool_name(tool: dict[str, Any]) -> str:
    """A tool's name, whatever its type: a function's, a custom tool's ({"type": "custom", "custom": {...}}), or its own."""
    inner = tool.get(str(tool.get("type")))
    return str(inner.get("name") if isinstance(inner, dict) else tool.get("name"))
