"""Errors: the JSON envelope, 4xx for bad input, refusals before the stream, in-stream errors."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from http import HTTPStatus
from typing import Any

from conformance.checks.conditions import bad_input, headers_known, openai_error_response
from conformance.checks.registry import Finding, check, finding, short
from conformance.exchange import Analysis
from conformance.model import BAD_INPUT, Intent
from conformance.model.limits import REFUSAL_DEADLINE

SUCCESS_FINISH = frozenset({"stop", "length", "tool_calls"})


def _error(a: Analysis) -> Any:
    body = a.json_body
    return body.get("error") if isinstance(body, dict) else None


NOT_VALID = BAD_INPUT | {Intent.UNKNOWN_PARAMETER, Intent.OLLAMA_FAILURE, Intent.IMAGE_MISPLACED, Intent.FUZZ_VALID,
                         Intent.FUZZ_INVALID, Intent.FUZZ_LENIENT, Intent.JSON_AS_TEXT}  # judged by their own rules


@check("ERR-021", when=(lambda a: a.exchange.status is not None and a.intent not in NOT_VALID
                        and a.exchange.observations.burst is None,))
def valid_request_failed(a: Analysis) -> Iterator[Finding]:
    if (a.exchange.status or 0) < 500:
        return
    if a.exchange.status == 503 and a.exchange.header("retry-after") is not None:
        return  # overloaded, and it says when to come back
    error = _error(a)
    said = error.get("message") if isinstance(error, dict) else error if isinstance(error, str) else \
        a.exchange.body[:120].decode("utf-8", "replace")
    yield finding(a, "ERR-021", f"{a.exchange.status} to a valid request: {short(said)}", "an answer (2xx)",
                  offset=0)


@check("ERR-022", when=(lambda a: a.intent == Intent.JSON_AS_TEXT and a.exchange.status is not None,))
def json_as_text(a: Analysis) -> Iterator[Finding]:
    status = a.exchange.status or 0
    if 200 <= status < 300:
        yield finding(a, "ERR-022", f"{status}: a JSON body sent as text/plain was parsed and answered",
                      "a 4xx (415 or 400)", remedy="text/plain needs no CORS preflight: any web page can post it to a "
                      "server on localhost. Parse the body only when Content-Type is application/json.")


@check("ERR-023", when=(openai_error_response, lambda a: isinstance(_error(a), dict)))
def code_is_status(a: Analysis) -> Iterator[Finding]:
    code = _error(a).get("code")  # a numeric code is llama.cpp's, documented (003 §5); the string "400" is no name
    if isinstance(code, str) and code.strip() == str(a.exchange.status):
        yield finding(a, "ERR-023", f"error.code {code!r} (the HTTP status again)",
                      "a name such as model_not_found or invalid_api_key, or null")


REASONS = frozenset(s.phrase.lower() for s in HTTPStatus)  # Bad Request, Not Found, ...
NULLS = frozenset({"none", "null", "undefined", "nil"})


def _type_problem(kind: str) -> str | None:
    """What an error.type is when it is no kind of error: None when it names one (snake_case or any other word)."""
    text = kind.strip()
    if re.fullmatch(r"[A-Z][A-Za-z0-9]*(Error|Exception)", text):
        return "a library's exception class"
    if text.lower() in REASONS:
        return "the HTTP reason phrase"
    if text.isdigit():
        return "a number"
    if text.lower() in NULLS:
        return "a stringified null"
    return None


@check("ERR-027", when=(openai_error_response, lambda a: isinstance(_error(a), dict)
                        and isinstance(_error(a).get("type"), str)))
def type_is_a_kind(a: Analysis) -> Iterator[Finding]:
    kind = _error(a)["type"]
    problem = _type_problem(kind)
    if problem is not None:
        yield finding(a, "ERR-027", f"error.type {kind!r} ({problem})",
                      "a kind of error such as invalid_request_error or not_found_error")


@check("ERR-001", "ERR-002", "ERR-003", "ERR-004", when=(openai_error_response,))
def envelope(a: Analysis) -> Iterator[Finding]:
    status = a.exchange.status
    error = _error(a)
    if headers_known(a) and a.content_type != "application/json":
        yield finding(a, "ERR-004", f"{status} with Content-Type {a.exchange.header('content-type')!r}",
                      "application/json")
    if isinstance(error, str) and error.strip() and a.allows("error-string"):
        return  # LM Studio's {"error": "<message>"} (003 §2.4)
    if not isinstance(error, dict):
        body = a.exchange.body[:120].decode("utf-8", "replace")
        yield finding(a, "ERR-001", f"{status} with body {body!r}", '{"error": {"message": …, …}}', offset=0,
                      remedy="Clients read error.message; anything else shows as an unknown error.")
        return
    if not isinstance(error.get("message"), str) or not error["message"].strip():
        yield finding(a, "ERR-002", f"error.message {short(error.get('message'))}", "a non-empty string")
    wanted = ("type", "code") if a.allows("llamacpp-errors") else ("type", "param", "code")
    missing = [k for k in wanted if k not in error]
    if missing:
        yield finding(a, "ERR-003", f"an error object without {missing}", "message, type, param and code")


def overflow_reported_in_stream(a: Analysis) -> bool:
    """LM Studio's documented overflow (profile lmstudio): 200, an event: error before any output, nothing after."""
    if a.intent != Intent.CONTEXT_OVERFLOW or not a.allows("overflow-in-stream") or a.format != "sse":
        return False
    w = a.watch
    if not getattr(w, "errors", None):
        return False
    return w.first_output is None or w.first_output > w.errors[0].index


def _string_error(a: Analysis) -> str | None:
    """The message of LM Studio's {"error": "<message>"} under a profile that allows it (003 §2.4)."""
    error = _error(a)
    return error if isinstance(error, str) and a.allows("error-string") else None


@check("ERR-005", "ERR-006", when=(bad_input,))
def bad_input_status(a: Analysis) -> Iterator[Finding]:
    status = a.exchange.status
    if status is None or overflow_reported_in_stream(a):
        return
    if status >= 500:
        yield finding(a, "ERR-005", f"status {status} for {a.intent} input", "a 4xx")
    elif status < 300:
        yield finding(a, "ERR-006", f"status {status} for {a.intent} input", "a 4xx refusal")


@check("ERR-007", when=(bad_input,))
def refused_before_stream(a: Analysis) -> Iterator[Finding]:
    if overflow_reported_in_stream(a):
        return
    if a.exchange.status is not None and a.exchange.status < 300 and a.format == "sse":
        yield finding(a, "ERR-007", f"a {a.exchange.status} event stream for {a.intent} input",
                      "a 4xx JSON error before any event", offset=0)


def _error_payloads(a: Analysis) -> list[Any]:
    """A chat stream's error payloads (the first ones: the watch keeps a bounded list)."""
    return list(getattr(a.watch, "errors", ()))


@check("ERR-008", "ERR-009", "ERR-010",
       when=(lambda a: a.format == "sse", lambda a: bool(_error_payloads(a))))  # chat's rules: its streams only
def in_stream_error(a: Analysis) -> Iterator[Finding]:
    first = _error_payloads(a)[0]
    value = first.value
    if first.event_type == "error" and not a.allows("event-error"):
        yield finding(a, "ERR-008", "event: error", 'data: {"error": {...}} (profile lmstudio allows it)',
                      event=first.index, remedy="The openai SDK raises only on a data payload with an error key.")
    elif not (isinstance(value, dict) and isinstance(value.get("error"), dict)):
        yield finding(a, "ERR-008", f"error payload {short(value)}", '{"error": {"message": …}}', event=first.index)
    w = a.watch
    if w.after_error:
        yield finding(a, "ERR-009", f"{w.after_error} event(s) after the error", "nothing but [DONE]",
                      event=w.after_error_first)
    finished = [c.finish_reason for c in a.assembled.choices.values() if c.finish_reason in SUCCESS_FINISH]
    if finished:
        yield finding(a, "ERR-010", f"an error and finish_reason {finished[0]!r}", "no success finish")


def _intent(name: str) -> Any:
    """The exchange is the scenario's of this intent, and it was answered (no status: TRN-014 or ERR-017 say why)."""
    return lambda a: a.intent == name and a.exchange.status is not None


def _code(a: Analysis) -> Any:
    error = _error(a)
    return error.get("code") if isinstance(error, dict) else None


@check("ERR-011", when=(_intent(Intent.CONTEXT_OVERFLOW),))
def context_overflow(a: Analysis) -> Iterator[Finding]:
    error = _error(a)
    if a.allows("llamacpp-errors") and isinstance(error, dict) and error.get("type") == "exceed_context_size_error":
        return  # llama.cpp's documented overflow (003 §5)
    if overflow_reported_in_stream(a):
        message = a.watch.errors[0].value
        if "context length" in json.dumps(message):
            return  # LM Studio: only the message says it (003 §5)
    text = _string_error(a)
    if text is not None and "context" in text.lower() and a.exchange.status in (400, 413, 422):
        return  # LM Studio's string errors (003 §2.4): a message, no code
    if _code(a) not in ("context_length_exceeded", "context_window_exceeded"):
        yield finding(a, "ERR-011", f"status {a.exchange.status} code {short(_code(a))}",
                      "a 4xx with code context_length_exceeded")


@check("ERR-012", when=(lambda a: a.exchange.intent == Intent.UNKNOWN_MODEL and a.exchange.status is not None,))
def unknown_model(a: Analysis) -> Iterator[Finding]:
    if a.exchange.status != 404 and not (a.allows("unknown-model-served") and a.success):
        yield finding(a, "ERR-012", f"status {a.exchange.status} for model {a.request.get('model')!r}",
                      "404 with code model_not_found")


OPENAI_FIELDS = frozenset({
    "model", "messages", "stream", "stream_options", "max_tokens", "max_completion_tokens", "temperature", "top_p",
    "n", "stop", "presence_penalty", "frequency_penalty", "logit_bias", "logprobs", "top_logprobs", "user", "seed",
    "tools", "tool_choice", "parallel_tool_calls", "response_format", "reasoning_effort", "metadata", "store",
    "service_tier", "modalities", "audio", "prediction", "web_search_options", "verbosity", "functions",
    "function_call", "prompt_cache_key", "safety_identifier",
})


@check("ERR-013", when=(_intent(Intent.UNKNOWN_PARAMETER), lambda a: a.expects("unknown-field-refused")))
def unknown_parameter(a: Analysis) -> Iterator[Finding]:
    unknown = sorted(set(a.request) - OPENAI_FIELDS)
    name = a.exchange.observations.unknown_field or (unknown[0] if unknown else None)
    error = _error(a)
    param = error.get("param") if isinstance(error, dict) else None
    text = _string_error(a)
    if text is not None and a.exchange.status == 400 and name is not None and name in text:
        return  # LM Studio's string errors (003 §2.4): the message names the field
    if a.exchange.status != 400 or _code(a) != "unknown_parameter" or param != name:
        yield finding(a, "ERR-013", f"status {a.exchange.status} code {short(_code(a))} param {short(param)}",
                      f"400 unknown_parameter with param {name!r}")


@check("ERR-014", when=(headers_known, lambda a: a.exchange.status == 429))
def retry_after(a: Analysis) -> Iterator[Finding]:
    if a.exchange.header("retry-after") is None:
        yield finding(a, "ERR-014", "429 without Retry-After", "Retry-After in seconds")


@check("ERR-015", when=(_intent(Intent.OVERSIZED), lambda a: a.expects("body-limit")))
def oversized(a: Analysis) -> Iterator[Finding]:
    if a.exchange.status != 413:
        yield finding(a, "ERR-015", f"status {a.exchange.status} for an oversized body", "413")


@check("ERR-016", when=(lambda a: a.exchange.observations.followup is not None,))
def still_answers(a: Analysis) -> Iterator[Finding]:
    followup = a.exchange.observations.followup
    status = followup.status if followup is not None else None
    if status != 200:
        yield finding(a, "ERR-016", f"a plain request afterwards got {status}", "200")


@check("ERR-017", when=(bad_input,))
def refused_promptly(a: Analysis) -> Iterator[Finding]:
    obs = a.exchange.observations
    if obs.aborted == REFUSAL_DEADLINE:
        seen = (f"status {a.exchange.status} and no event" if a.exchange.status is not None
                else "no status line")
        yield finding(a, "ERR-017", f"{seen} after {obs.elapsed_s or 0:.1f} s: the server went on with the request",
                      "a 4xx before any work (the refusal deadline is min(10 s, --timeout))",
                      offset=len(a.exchange.body) or None,
                      remedy="Check sizes, types and the context before rendering, tokenizing or generating.")


@check("ERR-018", when=(lambda a: a.exchange.observations.burst is not None,))
def bounded_queue(a: Analysis) -> Iterator[Finding]:
    burst = a.exchange.observations.burst
    assert burst is not None
    if burst.queued and not burst.refused:  # some queued and some refused: a bounded queue (seed 001's 1 + 4)
        yield finding(a, "ERR-018", f"{burst.queued} of {burst.sent} streams neither started nor were refused within "
                      f"{burst.wait_s:g} s ({burst.started} started, none refused)",
                      "each request started or refused (429) at once: a bounded queue",
                      remedy="Bound the queue and answer 429 with Retry-After beyond it (seed 001: --queue-limit).")


@check("ERR-019", "ERR-020", when=(lambda a: a.intent in (Intent.NULL_FIELDS, Intent.IGNORED_FIELDS)
                                   and a.exchange.status is not None,))
def optional_fields(a: Analysis) -> Iterator[Finding]:
    rule = "ERR-019" if a.intent == Intent.NULL_FIELDS else "ERR-020"
    if not a.success:
        error = _error(a)
        said = error.get("message") if isinstance(error, dict) else error
        fields = sorted(k for k, v in a.request.items() if (v is None) == (rule == "ERR-019")
                        and k not in ("model", "messages", "stream", "max_tokens"))
        yield finding(a, rule, f"status {a.exchange.status} ({short(said)}) for {', '.join(fields)}",
                      "an answer, as without them", offset=0)
