"""The typed vocabulary every layer shares: levels, outcomes and profiles as closed, ordered sets.

``Level`` and ``Outcome`` are ``str`` enums, so a value compares equal to its name ("must") and
serializes as it; their order is their severity (``Level.MUST > Level.ADVISORY``).
"""

from __future__ import annotations

from enum import Enum


class _Ranked(str, Enum):
    """A ``str`` enum ordered by the position of its members (first is lowest)."""

    @property
    def rank(self) -> int:
        return list(type(self)).index(self)

    def _cmp(self, other: object) -> int:
        if not isinstance(other, type(self)):
            raise TypeError(f"cannot order {type(self).__name__} against {type(other).__name__}")
        return self.rank - other.rank

    def __lt__(self, other: object) -> bool:
        return self._cmp(other) < 0

    def __le__(self, other: object) -> bool:
        return self._cmp(other) <= 0

    def __gt__(self, other: object) -> bool:
        return self._cmp(other) > 0

    def __ge__(self, other: object) -> bool:
        return self._cmp(other) >= 0

    __hash__ = str.__hash__

    def __str__(self) -> str:
        return str(self.value)


class Level(_Ranked):
    """How much a rule matters: a must failure fails a run, a should failure with --strict."""

    ADVISORY = "advisory"
    SHOULD = "should"
    MUST = "must"


class Outcome(_Ranked):
    """A rule's verdict on one scenario, from best to worst."""

    PASSED = "passed"
    SKIPPED = "skipped"
    FAILED = "failed"
    ERROR = "error"


def gating_levels(strict: bool) -> tuple[Level, ...]:
    """The levels whose failures fail a run."""
    return (Level.MUST, Level.SHOULD) if strict else (Level.MUST,)





class Intent(str, Enum):
    """What a scenario's request is meant to show; the checks' preconditions read it."""

    EXPECT_LENGTH = "expect-length"  # cut by a token cap: finish_reason length
    N = "n"  # n: 2, honoured or refused
    INVALID = "invalid"  # some bad input (recorded fixtures)
    MALFORMED_JSON = "malformed-json"
    WRONG_TYPE = "wrong-type"
    BAD_VALUE = "bad-value"
    MISSING_MESSAGES = "missing-messages"
    UNKNOWN_PARAMETER = "unknown-parameter"
    UNKNOWN_MODEL = "unknown-model"
    CONTEXT_OVERFLOW = "context-overflow"
    OVERSIZED = "oversized"
    WRONG_CONTENT_TYPE = "wrong-content-type"
    JSON_AS_TEXT = "json-as-text"  # a valid JSON body labelled text/plain: refused (ERR-022)
    NULL_FIELDS = "null-fields"  # optional top-level fields set to null: treated as absent
    IGNORED_FIELDS = "ignored-fields"  # OpenAI fields a server may ignore, but must accept
    CANCELLED_STREAM = "cancelled-stream"  # a stream the cancel endpoint stops
    CANCEL = "cancel"  # the cancel call itself
    CANCEL_UNKNOWN = "cancel-unknown"
    TOOL_SCHEMA_UNION = "tool-schema-union"  # allOf / a mixed union: answered or refused with a 4xx
    TOOL_NON_FUNCTION = "tool-non-function"  # a tool of another type (custom): answered or refused with a 4xx
    TOOL_SCHEMA_SUPPORTED = "tool-schema-supported"  # nullable and constant unions: answered or refused (strict: answered)
    FORMAT_TEXT = "format-text"  # response_format {"type": "text"}: answered as without it
    SAMPLING_OPTIONS = "sampling-options"  # top_k, repetition_penalty: answered under the dialect that documents them
    UNSUPPORTED_OPTIONS = "unsupported-options"  # logit_bias and the like: refused as unsupported_value (seed 001)
    ROUNDTRIP = "roundtrip"  # a history the server sent: accepted
    EFFORT = "effort"  # one reasoning_effort value: accepted or refused as unsupported
    IMAGE = "image"  # a data-URL image in a user message
    IMAGE_MISPLACED = "image-misplaced"  # an image the server must refuse (another role; a dialect's own limits)
    PROMPT_REUSE = "prompt-reuse"  # the previous history sent again
    PROFILE_EVENTS = "profile-events"  # X-AFM-Profile asked
    CANCEL_COMPLETED = "cancel-completed"  # a cancel for a stream that has ended, or for its chatcmpl id
    OLLAMA_FAILURE = "ollama-failure"  # an Ollama request that must fail
    PULL = "pull"  # /api/pull
    CHAINED = "chained"  # a Responses request continuing a stored response (previous_response_id)
    UNSTORED = "unstored"  # previous_response_id naming no stored response (unknown, or made with store false)
    FUZZ_VALID = "fuzz-valid"
    FUZZ_INVALID = "fuzz-invalid"
    FUZZ_LENIENT = "fuzz-lenient"

    def __str__(self) -> str:
        return self.value


BAD_INPUT = frozenset({
    Intent.INVALID, Intent.MALFORMED_JSON, Intent.WRONG_TYPE, Intent.MISSING_MESSAGES, Intent.UNKNOWN_MODEL,
    Intent.CONTEXT_OVERFLOW, Intent.WRONG_CONTENT_TYPE, Intent.BAD_VALUE,
})  # an unknown parameter is not here: accepting one is legal (DEVIATIONS I1, I2); ERR-013 judges it. Nor is the
# oversized body (16 MiB, valid): seed 003 §2.3 says a request with several photos is tens of megabytes, so answering
# it is legal; a 413 is seed 001's body limit, ERR-015 under --profile strict
# inline reasoning markup (seed 003 §4: a carrier a client separates from the text), the same in every protocol
THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"

__all__ = ["BAD_INPUT", "THINK_CLOSE", "THINK_OPEN", "Intent", "Level", "Outcome", "gating_levels"]
