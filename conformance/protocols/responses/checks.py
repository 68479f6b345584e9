"""The Responses API: the event order the assembler's tables judged in its one pass, and what the answer holds.

Every rule here has ``protocol="responses"``: the registry runs these checks on /v1/responses exchanges only.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from conformance.checks.conditions import chat_answer, chat_json, chat_sse, complete
from conformance.checks.parity import repeatable, unstreamed_differences
from conformance.checks.registry import Finding, check, finding, order_check, schema_problem, short
from conformance.checks.tools import markup_in
from conformance.exchange import Analysis
from conformance.model import THINK_CLOSE, THINK_OPEN, Intent
from conformance.protocols.responses.assembler import Answer
from conformance.protocols.responses.payloads import CREATED, FAILED, QUEUED

ORDER_RULES = ("RSP-001", "RSP-002", "RSP-003", "RSP-004", "RSP-006", "RSP-007", "RSP-008", "RSP-009", "RSP-010",
               "RSP-011", "RSP-012")


def _answer(a: Analysis) -> Answer:
    return a.answer if isinstance(a.answer, Answer) else Answer()


event_order = order_check(ORDER_RULES, (chat_sse,), _answer, "event(s) in this stream")


@check("RSP-005", when=(chat_sse,))
def event_names(a: Analysis) -> Iterator[Finding]:
    missing = _answer(a).event_name_missing
    if missing:
        first = _answer(a).first_unnamed
        yield finding(a, "RSP-005", f"{missing} event(s) without an event: field", "event: <type> before each data:",
                      event=first, remedy="OpenAI's SDKs read the type from the data; some SSE clients route by event:.")


@check("RSP-022", when=(chat_sse,))
def created_state(a: Analysis) -> Iterator[Finding]:
    created = _answer(a).created
    if isinstance(created, dict):
        status, output = created.get("status"), created.get("output")
        if status not in ("in_progress", "queued") or output not in ([], None):
            yield finding(a, "RSP-022", f"response.created with status {status!r} and output {short(output, 40)}",
                          "status in_progress (or queued) and no output yet", event=_first(a, CREATED))


@check("RSP-013", when=(chat_json,))
def response_object(a: Analysis) -> Iterator[Finding]:
    body = a.json_body
    problems = []
    if body.get("object") != "response":
        problems.append(f"object {body.get('object')!r}")
    if not isinstance(body.get("id"), str) or not body.get("id"):
        problems.append(f"id {short(body.get('id'), 30)}")
    if not isinstance(body.get("status"), str):
        problems.append(f"status {short(body.get('status'), 30)}")
    if not isinstance(body.get("output"), list):
        problems.append(f"output {short(body.get('output'), 30)}")
    if problems:
        yield finding(a, "RSP-013", ", ".join(problems), "object: response, an id, a status and an output array",
                      offset=0)


# Open Responses' ResponseResource: its required fields, and the JSON types a present value may take ("null" where
# the schema allows null); enum and nested shapes are other rules' (RSP-011, RSP-014)
RESOURCE_FIELDS: dict[str, tuple[str, ...]] = {
    "id": ("string",), "object": ("string",), "created_at": ("integer",), "completed_at": ("integer", "null"),
    "status": ("string",), "incomplete_details": ("object", "null"), "model": ("string",),
    "previous_response_id": ("string", "null"), "instructions": ("string", "array", "null"), "output": ("array",),
    "error": ("object", "null"), "tools": ("array",), "tool_choice": ("string", "object"), "truncation": ("string",),
    "parallel_tool_calls": ("boolean",), "text": ("object",), "top_p": ("number",), "presence_penalty": ("number",),
    "frequency_penalty": ("number",), "top_logprobs": ("integer",), "temperature": ("number",),
    "reasoning": ("object", "null"), "user": ("string", "null"), "usage": ("object", "null"),
    "max_output_tokens": ("integer", "null"), "max_tool_calls": ("integer", "null"), "store": ("boolean",),
    "background": ("boolean",), "service_tier": ("string",), "metadata": ("object",),
    "safety_identifier": ("string", "null"), "prompt_cache_key": ("string", "null"),
}


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    return {float: "number", str: "string", list: "array", dict: "object"}.get(type(value), type(value).__name__)


@check("RSP-028", when=(chat_answer, lambda a: a.expects("resource-fields"),
                        lambda a: isinstance(_answer(a).response, dict)))
def resource_fields(a: Analysis) -> Iterator[Finding]:
    response = _answer(a).response
    missing = [name for name in RESOURCE_FIELDS if name not in response]
    wrong = [f"{name} {json_type(response[name])}" for name, kinds in RESOURCE_FIELDS.items() if name in response
             and json_type(response[name]) not in kinds and not (json_type(response[name]) == "integer"
                                                                 and "number" in kinds)]
    if missing or wrong:
        said = ([f"missing {', '.join(missing[:8])}" + (f" and {len(missing) - 8} more" if len(missing) > 8 else "")]
                if missing else []) + ([f"of the wrong type: {', '.join(wrong[:5])}"] if wrong else [])
        yield finding(a, "RSP-028", "; ".join(said), "every field ResponseResource requires, null where it does not apply")


@check("RSP-014", when=(chat_answer, lambda a: _answer(a).status == "completed"))
def usage(a: Analysis) -> Iterator[Finding]:
    u = _answer(a).usage
    if not isinstance(u, dict):
        yield finding(a, "RSP-014", f"usage {short(u, 40)}", "usage with input_tokens, output_tokens, total_tokens")
        return
    counts = {k: u.get(k) for k in ("input_tokens", "output_tokens", "total_tokens")}
    bad = [k for k, v in counts.items() if not isinstance(v, int) or isinstance(v, bool) or v < 0]
    if bad:
        yield finding(a, "RSP-014", f"usage {short(u, 80)}", f"non-negative integers for {', '.join(bad)}")
    elif counts["total_tokens"] != counts["input_tokens"] + counts["output_tokens"]:  # type: ignore[operator]
        yield finding(a, "RSP-014", f"total_tokens {counts['total_tokens']}",
                      f"input_tokens + output_tokens = {counts['input_tokens'] + counts['output_tokens']}")  # type: ignore[operator]


def _cap(a: Analysis) -> int | None:
    cap = a.request.get("max_output_tokens")
    return cap if isinstance(cap, int) and not isinstance(cap, bool) else None


@check("RSP-015", when=(chat_answer, lambda a: a.intent == Intent.EXPECT_LENGTH, lambda a: _cap(a) is not None,
                        lambda a: complete(a) or a.format == "json"))
def cut_by_cap(a: Analysis) -> Iterator[Finding]:
    answer = _answer(a)
    used = answer.usage.get("output_tokens") if isinstance(answer.usage, dict) else None
    if answer.status == "completed" and isinstance(used, int) and used < (_cap(a) or 0):
        return  # it finished before the cap: nothing was cut
    if answer.status != "incomplete" or answer.incomplete_reason != "max_output_tokens":
        yield finding(a, "RSP-015", f"status {answer.status!r}, incomplete_details.reason "
                      f"{answer.incomplete_reason!r} ({used} output tokens of max_output_tokens {_cap(a)})",
                      "status incomplete with incomplete_details.reason max_output_tokens")


def _tools(a: Analysis) -> dict[str, Any]:
    tools = a.request.get("tools")
    return {t["name"]: t for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)} \
        if isinstance(tools, list) else {}


@check("RSP-016", when=(chat_answer, lambda a: bool(_answer(a).calls)))
def function_calls(a: Analysis) -> Iterator[Finding]:
    offered = _tools(a)
    for call in _answer(a).calls:
        if call.name not in offered:
            yield finding(a, "RSP-016", f"a call to {short(call.name, 40)}", f"one of the offered tools {sorted(offered)}")
        if not isinstance(call.call_id, str) or not call.call_id:
            yield finding(a, "RSP-016", f"call_id {short(call.call_id, 40)}", "a non-empty call_id")
        if _answer(a).status == "incomplete":
            continue  # cut by max_output_tokens: the call's arguments end where the cap cut them
        try:
            args = json.loads(call.arguments)
        except ValueError:
            yield finding(a, "RSP-016", f"arguments {short(call.arguments)}", "a JSON object")
            continue
        if not isinstance(args, dict):
            yield finding(a, "RSP-016", f"arguments {short(args)}", "a JSON object")


@check("RSP-017", when=(chat_answer, lambda a: bool(_tools(a)) and "tool_choice" in a.request,
                        lambda a: _answer(a).status == "completed"))
def tool_choice(a: Analysis) -> Iterator[Finding]:
    choice = a.request["tool_choice"]
    names = [c.name for c in _answer(a).calls]
    if choice == "none" and names:
        yield finding(a, "RSP-017", f"calls to {names} with tool_choice none", "no function call")
    elif choice == "required" and not names:
        yield finding(a, "RSP-017", "no function call with tool_choice required", "at least one function call")
    elif isinstance(choice, dict) and choice.get("type") == "function":
        wanted = choice.get("name")
        if not names or any(n != wanted for n in names):
            yield finding(a, "RSP-017", f"calls to {names} with tool_choice naming {wanted!r}", f"a call to {wanted!r} only")


def _format(a: Analysis) -> dict[str, Any] | None:
    text = a.request.get("text")
    fmt = text.get("format") if isinstance(text, dict) else None
    return fmt if isinstance(fmt, dict) and fmt.get("type") == "json_schema" and fmt.get("strict") is True else None


@check("RSP-018", when=(chat_answer, lambda a: _format(a) is not None, lambda a: _answer(a).status == "completed"))
def structured(a: Analysis) -> Iterator[Finding]:
    text = _answer(a).text
    try:
        value = json.loads(text)
    except ValueError:
        yield finding(a, "RSP-018", f"output text {short(text)} that is not JSON", "JSON matching the schema")
        return
    schema = (_format(a) or {}).get("schema")
    if isinstance(schema, dict):
        problem = schema_problem(value, schema)
        if problem is not None:
            yield finding(a, "RSP-018", f"{short(value)}: {problem}", "output that matches the schema")


@check("RSP-019", when=(chat_sse, lambda a: bool(_answer(a).errors), complete))
def error_then_failed(a: Analysis) -> Iterator[Finding]:
    answer = _answer(a)
    if answer.terminal != FAILED:
        yield finding(a, "RSP-019", f"an error event, then {answer.terminal or 'no terminal event'}",
                      "response.failed after the error", event=_first(a, "error"))


@check("RSP-020", when=(chat_sse, lambda a: a.expects("done-terminator"), complete,
                        lambda a: _answer(a).terminal is not None))
def done_terminator(a: Analysis) -> Iterator[Finding]:
    if not _answer(a).done:
        yield finding(a, "RSP-020", "a stream that ends at its terminal event", "data: [DONE] after it")


@check("RSP-023", when=(chat_answer,))
def think_markup(a: Analysis) -> Iterator[Finding]:
    yield from markup_in(a, "RSP-023", _answer(a).text, "the output text", "reasoning in a reasoning item, not in the text",
                         (THINK_OPEN, THINK_CLOSE))


def _chained(a: Analysis) -> bool:
    return a.intent == Intent.CHAINED and a.exchange.observations.chained is not None


@check("RSP-024", when=(chat_answer, _chained, lambda a: isinstance(_answer(a).response, dict)))
def names_previous(a: Analysis) -> Iterator[Finding]:
    chained = a.exchange.observations.chained
    assert chained is not None
    echoed = _answer(a).response.get("previous_response_id")
    if echoed != chained.previous_id:
        yield finding(a, "RSP-024", f"previous_response_id {short(echoed, 60)}",
                      f"the id it continued, {short(chained.previous_id, 60)}")


@check("RSP-025", when=(chat_answer, _chained, lambda a: _answer(a).status in ("completed", "incomplete")))
def continues_context(a: Analysis) -> Iterator[Finding]:
    chained = a.exchange.observations.chained
    assert chained is not None
    usage = _answer(a).usage
    tokens = usage.get("input_tokens") if isinstance(usage, dict) else None
    if not isinstance(tokens, int) or chained.previous_input_tokens is None:
        return  # without both counts nothing shows what the context held
    if tokens <= chained.previous_input_tokens:
        yield finding(a, "RSP-025", f"input_tokens {tokens}, no more than the stored response's "
                      f"{chained.previous_input_tokens}: the stored turn was not in the context",
                      "the stored turn (its input and output) before the new input")


@check("RSP-026", when=(lambda a: a.intent == Intent.UNSTORED and a.exchange.status is not None,))
def unstored_refused(a: Analysis) -> Iterator[Finding]:
    status = a.exchange.status
    assert status is not None
    if not 400 <= status < 500:
        ref = a.request.get("previous_response_id")
        yield finding(a, "RSP-026", f"{status} to previous_response_id {short(ref, 60)}, which names no stored "
                      "response", "a 4xx error (OpenAI: 400 previous_response_not_found)")


def _first(a: Analysis, kind: str) -> int | None:
    """The first event of this type (response.created: or response.queued, which may come first)."""
    seen = _answer(a).first_of
    found = [seen[k] for k in (kind, QUEUED if kind == CREATED else kind) if k in seen]
    return min(found, default=None)


@check("RSP-029", when=(chat_answer,))
def tool_markup(a: Analysis) -> Iterator[Finding]:
    """A tool call written into the output text: clients run function_call items only (chat's TOOL-010)."""
    yield from markup_in(a, "RSP-029", _answer(a).text, "the output text", "a function_call item (or text without call markup)")


# the fields of OpenAI's response object with no default in openai-python (types/responses/response.py): a client
# that validates the object (the SDK's strict models, a typed decoder) needs every one
OPENAI_FIELDS = ("id", "object", "created_at", "model", "output", "parallel_tool_calls", "tool_choice", "tools")


@check("RSP-030", when=(chat_answer, lambda a: isinstance(_answer(a).response, dict)))
def openai_fields(a: Analysis) -> Iterator[Finding]:
    response = _answer(a).response
    missing = [name for name in OPENAI_FIELDS if name not in response]
    where = "the terminal event's response" if a.format == "sse" else "the response object"
    if missing:
        yield finding(a, "RSP-030", f"{where} without {', '.join(missing)}",
                      f"every field OpenAI's response object always carries: {', '.join(OPENAI_FIELDS)}")
    created = response.get("created_at")
    if isinstance(created, (int, float)) and not isinstance(created, bool) and created > 1e11:
        yield finding(a, "RSP-030", f"{where} with created_at {created} (milliseconds)", "created_at in seconds")


# every field of OpenAI's response object (openai-python types/responses/response.py) and Open Responses'
# ResponseResource: a key beyond them is a server's own
DOCUMENTED_FIELDS = frozenset(RESOURCE_FIELDS) | frozenset({
    "conversation", "prompt", "include", "top_logprobs", "output_text", "stream_options", "context_management",
    "moderation", "reasoning_context", "max_tool_calls"})


@check("RSP-033", when=(chat_answer, lambda a: isinstance(_answer(a).response, dict)))
def unknown_fields(a: Analysis) -> Iterator[Finding]:
    extra = sorted(k for k in _answer(a).response if k not in DOCUMENTED_FIELDS)
    if extra:
        yield finding(a, "RSP-033", f"keys beyond the reference: {', '.join(extra[:8])}",
                      "the response object's documented fields")


@check("RSP-032", when=(chat_sse, complete, repeatable))
def parity(a: Analysis) -> Iterator[Finding]:
    yield from unstreamed_differences(a, "RSP-032")


NOT_FOUND = ("not found", "not_found", "does not exist", "no response", "unknown response", "could not find")


def _continued_refused(a: Analysis) -> bool:
    return _chained(a) and a.exchange.status is not None and a.exchange.status >= 400


@check("RSP-031", when=(_continued_refused,))
def stored_found(a: Analysis) -> Iterator[Finding]:
    """The chain's continuation refused as not found, though the response it names was handed out and not marked
    store: false: the server gave an id it cannot honour (a server that keeps no state says store: false, or refuses
    previous_response_id as unsupported, and is reported unsupported)."""
    from conformance.model.refusal import message_of_doc

    chained = a.exchange.observations.chained
    assert chained is not None
    if chained.stored is False:
        return
    codes, message = message_of_doc(a.json_body)
    said = f"{codes} {message}".lower()
    if a.exchange.status == 404 or any(p in said for p in NOT_FOUND):
        yield finding(a, "RSP-031", f"{a.exchange.status} to previous_response_id {short(chained.previous_id, 50)}, "
                      f"an id the server handed out: {short(' '.join(message.split()), 120)}",
                      "the stored response continued (or store: false in the response it handed out)")

