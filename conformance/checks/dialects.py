"""The documented dialects' own facts (issue 12): what seed 000 (AFM) and seed 001 (a strict local server)
promise beyond the common protocol, each judged where a server shows it (a header it sends, an event it
emits) or where its profile says it documents it (``analysis.expects``), and the requests every server
must take or refuse cleanly: union tool schemas, the round trips, every reasoning_effort, images.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from conformance.checks.conditions import chat_answer, chat_sse, complete, headers_known, usage_of
from conformance.checks.registry import Finding, check, finding, short
from conformance.exchange import Analysis
from conformance.model import Intent
from conformance.protocols.chat.payloads import PROFILE_KEYS

VISION_STATES = frozenset({"ready", "missing", "invalid", "unsupported"})


def _intent(*intents: Intent) -> Any:
    return lambda a: a.intent in intents


def _error(a: Analysis) -> dict[str, Any]:
    body = a.json_body
    error = body.get("error") if isinstance(body, dict) else None
    return error if isinstance(error, dict) else {}


def _refused_4xx(a: Analysis) -> bool:
    status = a.exchange.status
    return status is not None and 400 <= status < 500


def _answered_or_refused(a: Analysis, rule: str, what: str) -> Iterator[Finding]:
    """A 2xx answer (the other rules judge it) or a 4xx (ERR-024 judges which): anything else fails ``rule``."""
    status = a.exchange.status
    if status is None or a.success or _refused_4xx(a):
        return
    yield finding(a, rule, f"{what}: status {status}", "an answer, or a 4xx with the error envelope")


# seed 003 §5: a rejected request is 400, 413 or 422; 401/403 (authentication), 408 (timeout) and 429 (rate limit) are
# no verdict on the request, and their own rules report them; any other status is "not expected from this API"
REFUSED = frozenset({400, 413, 422})
NOT_A_VERDICT = frozenset({401, 403, 408, 429})
# seed 001 Supported API: the OpenAI fields it refuses with unsupported_value (ERR-026)
UNSUPPORTED_OPTIONS = frozenset({"logit_bias", "verbosity", "top_logprobs", "modalities", "audio", "prediction",
                                 "web_search_options", "functions", "function_call"})
FEATURE_INTENTS = frozenset({Intent.IMAGE, Intent.IMAGE_MISPLACED, Intent.TOOL_SCHEMA_UNION, Intent.TOOL_NON_FUNCTION,
                             Intent.EFFORT, Intent.TOOL_SCHEMA_SUPPORTED})


@check("ERR-024", when=(_intent(*FEATURE_INTENTS),))
def refusal_status(a: Analysis) -> Iterator[Finding]:
    status = a.exchange.status
    if status is None or not 400 <= status < 500 or status in REFUSED or status in NOT_A_VERDICT:
        return
    yield finding(a, "ERR-024", f"a valid request refused with {status}",
                  "400, 413 or 422 (seed 003 §5: other statuses are not expected from this API)")


# transport (seed 000's headers)

@check("TRN-015", when=(chat_answer, headers_known, lambda a: a.expects("openai-request-id")))
def openai_request_id(a: Analysis) -> Iterator[Finding]:
    rid, oid = a.exchange.header("x-request-id"), a.exchange.header("openai-request-id")
    if not oid or (rid and oid != rid):
        yield finding(a, "TRN-015", f"X-Request-ID {short(rid)}, OpenAI-Request-ID {short(oid)}",
                      "OpenAI-Request-ID with the same handle (seed 000)")


def _strict_request(a: Analysis) -> bool:
    fmt = a.request.get("response_format")
    if isinstance(fmt, dict) and isinstance(fmt.get("json_schema"), dict) and fmt["json_schema"].get("strict") is True:
        return True
    tools = a.request.get("tools")
    return isinstance(tools, list) and any(isinstance(t, dict) and isinstance(t.get("function"), dict)
                                           and t["function"].get("strict") is True for t in tools)


@check("TRN-016", when=(headers_known, lambda a: a.exchange.header("x-grammar-constraints") is not None))
def grammar_constraints(a: Analysis) -> Iterator[Finding]:
    value = (a.exchange.header("x-grammar-constraints") or "").strip().lower()
    if value != "downgraded":
        yield finding(a, "TRN-016", f"X-Grammar-Constraints {short(value)}", "downgraded (seed 000)")
    elif not _strict_request(a):
        yield finding(a, "TRN-016", "X-Grammar-Constraints: downgraded on a request with no strict schema or tool",
                      "the header only where a strict grammar was asked for")


def downgraded(a: Analysis) -> bool:
    """The server declared a strict schema best-effort (seed 000's X-Grammar-Constraints: downgraded)."""
    return (a.exchange.header("x-grammar-constraints") or "").strip().lower() == "downgraded" and _strict_request(a)


# chunks: AFM's profile events

def _profile_payloads(a: Analysis) -> list[Any]:
    """The payloads with a profile key (the first ones: the watch keeps a bounded list)."""
    return list(getattr(a.watch, "profiles", ()))


def _profile_asked(a: Analysis) -> bool:
    """Under a dialect that has profile events (seed 000), a successful stream that asked for them."""
    asked = (a.exchange.request_header("x-afm-profile") or "").strip().lower()
    return asked in ("true", "extended") and a.allows("profile-events") and chat_sse(a) and complete(a)


@check("CHK-020", when=(lambda a: a.format == "sse" and (bool(_profile_payloads(a)) or _profile_asked(a)),))
def profile_events(a: Analysis) -> Iterator[Finding]:
    asked = (a.exchange.request_header("x-afm-profile") or "").strip().lower()
    if not _profile_payloads(a):  # seed 000: X-AFM-Profile asks for the event; under afm its absence is a finding
        yield finding(a, "CHK-020", f"no profile event for X-AFM-Profile: {asked}",
                      "an afm_profile event after the finish and usage, before [DONE]")
        return
    last_chunk, done = a.watch.last_plain_chunk, a.watch.done
    count = a.watch.profile_count
    if count > 1 and asked in ("true", "extended"):  # seed 000: the header adds one profile object
        second = _profile_payloads(a)[1]
        yield finding(a, "CHK-020", f"{count} profile events", "one profile event", event=second.index)
    for p in _profile_payloads(a):
        key = next(k for k in PROFILE_KEYS if k in p.value)
        if asked not in ("true", "extended"):
            yield finding(a, "CHK-020", f"{key} without X-AFM-Profile", "profile events only when asked",
                          event=p.index)
            return
        wanted = "afm_profile_extended" if asked == "extended" else "afm_profile"
        if key != wanted:
            yield finding(a, "CHK-020", f"{key} for X-AFM-Profile: {asked}", f"{wanted} (seed 000)", event=p.index)
        if "choices" in p.value:
            yield finding(a, "CHK-020", f"{key} with a choices array", "no choices (an AFM extension)", event=p.index)
        if p.index < last_chunk or (done is not None and p.index > done):
            yield finding(a, "CHK-020", f"{key} at event {p.index} (last chunk {last_chunk}, [DONE] {done})",
                          "after usage and the finish, before [DONE]", event=p.index)
        if key == "afm_profile_extended":
            body = p.value[key]
            if not isinstance(body, dict) or not isinstance(body.get("summary"), dict) \
                    or not isinstance(body.get("samples"), list):
                yield finding(a, "CHK-020", f"afm_profile_extended {short(body)}", "{summary: {...}, samples: [...]}",
                              event=p.index)
        elif not isinstance(p.value[key], dict):
            yield finding(a, "CHK-020", f"afm_profile {short(p.value[key])}", "an object", event=p.index)


# usage: seed 001's prompt reuse

@check("USG-012", when=(chat_answer, _intent(Intent.PROMPT_REUSE), lambda a: a.expects("prompt-reuse")))
def prompt_reuse(a: Analysis) -> Iterator[Finding]:
    usage = usage_of(a) or {}
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    if not isinstance(cached, int) or isinstance(cached, bool) or cached <= 0:
        yield finding(a, "USG-012", f"usage {short(usage)}",
                      "prompt_tokens_details.cached_tokens above 0 for a history sent again (seed 001)")


# tools

@check("TOOL-019", when=(_intent(Intent.TOOL_SCHEMA_UNION),))
def union_schema(a: Analysis) -> Iterator[Finding]:
    yield from _answered_or_refused(a, "TOOL-019", "a tool schema with allOf and a mixed union")
    if a.expects("invalid-tool-schema") and a.exchange.status is not None:
        code = _error(a).get("code")
        if a.exchange.status != 400 or code != "invalid_tool_schema":
            yield finding(a, "TOOL-019", f"status {a.exchange.status} code {short(code)}",
                          "400 invalid_tool_schema (seed 001: the server does not guess)")


@check("TOOL-021", when=(_intent(Intent.TOOL_NON_FUNCTION),))
def non_function_tool(a: Analysis) -> Iterator[Finding]:
    yield from _answered_or_refused(a, "TOOL-021", "a custom (non-function) tool beside a function")
    status = a.exchange.status
    if a.expects("function-tools-only") and status is not None and not 400 <= status < 500:
        yield finding(a, "TOOL-021", f"status {status}", "a 4xx refusal (seed 001: the server accepts only function "
                      "tools; it names no status)")


def _answered(a: Analysis, rule: str, what: str, expected: str) -> Iterator[Finding]:
    """A request that must be answered: a status that is not a success fails ``rule``."""
    if a.exchange.status is not None and not a.success:
        yield finding(a, rule, f"{what}: status {a.exchange.status} code {short(_error(a).get('code'))}", expected)


@check("TOOL-022", when=(_intent(Intent.TOOL_SCHEMA_SUPPORTED),))
def supported_schema_forms(a: Analysis) -> Iterator[Finding]:
    what = "a tool schema with a type plus null, a two-branch anyOf, a disjoint oneOf and string constants"
    if a.expects("supported-schema-forms"):
        yield from _answered(a, "TOOL-022", what, "an answer (seed 001 supports each of these forms)")
    else:
        yield from _answered_or_refused(a, "TOOL-022", what)


@check("STR-007", when=(_intent(Intent.FORMAT_TEXT), lambda a: a.exchange.status is not None))
def format_text(a: Analysis) -> Iterator[Finding]:
    yield from _answered(a, "STR-007", "response_format text",
                         "an answer, as without response_format (text is its default)")


@check("ERR-025", when=(_intent(Intent.SAMPLING_OPTIONS), lambda a: a.exchange.status is not None
                        and a.expects("sampling-options")))
def sampling_options(a: Analysis) -> Iterator[Finding]:
    yield from _answered(a, "ERR-025", "top_k and repetition_penalty",
                         "an answer (seed 001 lists both among its supported options)")


def _unsupported_sent(a: Analysis) -> list[str]:
    """The fields of the request that seed 001 refuses with unsupported_value: the listed options, and a
    response_format of json_object or json_schema."""
    sent = [k for k in a.request if k in UNSUPPORTED_OPTIONS]
    fmt = a.request.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") in ("json_object", "json_schema"):
        sent.append("response_format")
    return sorted(sent)


@check("ERR-026", when=(lambda a: a.exchange.endpoint == "chat" and a.exchange.status is not None
                        and a.expects("documented-refusals") and bool(_unsupported_sent(a)),))
def unsupported_options(a: Analysis) -> Iterator[Finding]:
    error = _error(a)
    sent = _unsupported_sent(a)
    if a.exchange.status != 400 or error.get("code") != "unsupported_value" or error.get("param") not in sent:
        yield finding(a, "ERR-026", f"{', '.join(sent)}: status {a.exchange.status} code {short(error.get('code'))} "
                      f"param {short(error.get('param'))}", "400 unsupported_value naming one of them (seed 001)")


@check("TOOL-020", when=(_intent(Intent.ROUNDTRIP), lambda a: bool(a.request.get("tools"))))
def tool_roundtrip(a: Analysis) -> Iterator[Finding]:
    if a.exchange.status is not None and not a.success:
        yield finding(a, "TOOL-020", f"status {a.exchange.status}: {short(_error(a).get('message'))}",
                      "the history the server produced, sent back with the tool result, is answered")


@check("RSN-009", when=(_intent(Intent.ROUNDTRIP), lambda a: not a.request.get("tools")))
def reasoning_roundtrip(a: Analysis) -> Iterator[Finding]:
    if a.exchange.status is not None and not a.success:
        yield finding(a, "RSN-009", f"status {a.exchange.status}: {short(_error(a).get('message'))}",
                      "reasoning_content repeated on the assistant turn is accepted (seed 003 §2.2)")


@check("RSN-010", when=(_intent(Intent.EFFORT),))
def effort_value(a: Analysis) -> Iterator[Finding]:
    status = a.exchange.status
    if status is None or a.success:
        return
    documented = _error(a).get("code") in ("unsupported_value", "invalid_value", "unsupported_parameter")
    enveloped = isinstance(a.json_body, dict) and "error" in a.json_body
    # seed 003 §2.5: "a stricter server ... may reject the whole request with 400 or 422 because of either field":
    # any 4xx in an error envelope is a refusal; seed 001's own codes are its profile's (strict) expectation
    if _refused_4xx(a) and (documented or enveloped and not a.expects("documented-refusals")):
        return
    expected = ("accepted, or refused as unsupported_value (seed 001)" if a.expects("documented-refusals")
                else "accepted, or refused with a 4xx in an error envelope")
    yield finding(a, "RSN-010", f"reasoning_effort {short(a.request.get('reasoning_effort'))}: status {status} "
                  f"code {short(_error(a).get('code'))}", expected)


# images

@check("IMG-001", when=(_intent(Intent.IMAGE),))
def image_in_user_message(a: Analysis) -> Iterator[Finding]:
    yield from _answered_or_refused(a, "IMG-001", "a data-URL image in a user message")  # ERR-001 judges the body


@check("IMG-002", when=(_intent(Intent.IMAGE_MISPLACED),))
def image_misplaced(a: Analysis) -> Iterator[Finding]:
    status = a.exchange.status
    if status is None:
        return
    if a.expects("image-rules") and status != 400:
        yield finding(a, "IMG-002", f"status {status}", "400 (seed 001: the image is refused)")
    elif not 400 <= status < 500:
        yield finding(a, "IMG-002", f"status {status}", "a 4xx: the image is refused, not answered or ignored")


# models: capabilities and /health

@check("MOD-007", when=(lambda a: a.exchange.endpoint == "models" and a.success,))
def capabilities(a: Analysis) -> Iterator[Finding]:
    body = a.json_body
    entries = body.get("data") if isinstance(body, dict) else None
    stated = False
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or "capabilities" not in entry:
            continue
        stated = True
        caps = entry["capabilities"]
        if not isinstance(caps, list) or not all(isinstance(c, str) for c in caps) or "text" not in caps:
            yield finding(a, "MOD-007", f"capabilities {short(caps)}", '["text"] or ["text", "image"] (seed 001)')
            return
    if not stated and a.expects("model-capabilities"):
        yield finding(a, "MOD-007", "no model states capabilities", "capabilities on the listed model (seed 001)")


@check("MOD-008", when=(lambda a: a.exchange.endpoint == "health" and a.exchange.status is not None,))
def health(a: Analysis) -> Iterator[Finding]:
    status = a.exchange.status
    if status in (404, 405) and not a.expects("health"):
        return  # not served: seed 001 documents it, the OpenAI API has none
    body = a.json_body
    if status != 200 or not isinstance(body, dict):
        yield finding(a, "MOD-008", f"status {status}, body {short(a.exchange.body[:80])}", "200 with a JSON object")
        return
    vision = body.get("vision")
    state = vision.get("state", vision.get("status")) if isinstance(vision, dict) else vision
    if vision is not None and state not in VISION_STATES:
        yield finding(a, "MOD-008", f"vision {short(vision)}", f"one of {sorted(VISION_STATES)} (seed 001)")
