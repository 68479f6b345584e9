"""The Anthropic Messages API: the event order the assembler's tables judged in its one pass, and what the message
holds.

Every rule here has ``protocol="messages"``: the registry runs these checks on /v1/messages exchanges only (and
/v1/messages/count_tokens, which the rules on a message leave alone).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from conformance.checks.conditions import chat_answer, chat_json, chat_sse, complete
from conformance.checks.parity import repeatable, unstreamed_differences
from conformance.checks.registry import Finding, check, finding, order_check, short
from conformance.checks.tools import markup_in
from conformance.exchange import Analysis
from conformance.model import BAD_INPUT, THINK_CLOSE, THINK_OPEN, Intent
from conformance.protocols.messages.assembler import Answer, block_problem
from conformance.protocols.messages.payloads import ERROR_STATUS, MESSAGE_START

ORDER_RULES = ("MSG-001", "MSG-002", "MSG-003", "MSG-004", "MSG-007", "MSG-008", "MSG-009", "MSG-010", "MSG-011",
               "MSG-013", "MSG-022")


def _answer(a: Analysis) -> Answer:
    return a.answer if isinstance(a.answer, Answer) else Answer()


def on_messages(a: Analysis) -> bool:
    """An exchange of POST /v1/messages itself (not count_tokens)."""
    return a.exchange.endpoint == "messages"


def _sse(a: Analysis) -> bool:
    return chat_sse(a) and on_messages(a)


def _json(a: Analysis) -> bool:
    return chat_json(a) and on_messages(a)


def _answered(a: Analysis) -> bool:
    return chat_answer(a) and on_messages(a)


def _ended(a: Analysis) -> bool:
    """A whole answer: a message object, or a stream read to its end that ended with message_stop."""
    return _json(a) or (_sse(a) and complete(a) and _answer(a).stopped and not _answer(a).errors)


event_order = order_check(ORDER_RULES, (_sse,), _answer, "event(s) in this stream")


@check("MSG-005", when=(_sse,))
def event_names(a: Analysis) -> Iterator[Finding]:
    answer = _answer(a)
    if answer.unnamed:
        yield finding(a, "MSG-005", f"{answer.unnamed} event(s) without an event: field",
                      "event: <type> before each data:", event=answer.first_unnamed,
                      remedy="Anthropic's Python and TypeScript SDKs route events by their event: name and drop the "
                      "rest: the message never assembles.")


@check("MSG-006", when=(_sse, lambda a: MESSAGE_START in _answer(a).first_of))
def message_start(a: Analysis) -> Iterator[Finding]:
    message = _answer(a).message
    problems = _message_problems(message, streamed=True)
    if problems:
        yield finding(a, "MSG-006", f"message_start with {', '.join(problems)}",
                      "message: {id, type: message, role: assistant, content: [], model, usage: {input_tokens}}",
                      event=_answer(a).first_of.get(MESSAGE_START))


def _message_problems(message: Any, streamed: bool) -> list[str]:
    if not isinstance(message, dict):
        return [f"message {short(message, 40)}"]
    problems = []
    if not isinstance(message.get("id"), str) or not message.get("id"):
        problems.append(f"id {short(message.get('id'), 30)}")
    if message.get("type") != "message":
        problems.append(f"type {short(message.get('type'), 30)}")
    if message.get("role") != "assistant":
        problems.append(f"role {short(message.get('role'), 30)}")
    content = message.get("content")
    if streamed and content != []:
        problems.append(f"content {short(content, 40)}")
    elif not streamed and not isinstance(content, list):
        problems.append(f"content {short(content, 40)}")
    if not isinstance(message.get("model"), str):
        problems.append(f"model {short(message.get('model'), 30)}")
    usage = message.get("usage")
    tokens = usage.get("input_tokens") if isinstance(usage, dict) else None
    if not isinstance(tokens, int) or isinstance(tokens, bool):
        problems.append(f"usage {short(usage, 40)}")
    if not streamed:
        missing = [k for k in ("stop_reason", "stop_sequence") if k not in message]
        if missing:
            problems.append(f"no {' or '.join(missing)}")
    return problems


@check("MSG-014", when=(_json,))
def message_object(a: Analysis) -> Iterator[Finding]:
    problems = _message_problems(a.json_body, streamed=False)
    from conformance.protocols.messages.payloads import STOP_REASONS

    reason = a.json_body.get("stop_reason")
    if "stop_reason" in a.json_body and reason not in STOP_REASONS:
        problems.append(f"stop_reason {short(reason, 30)}")
    if problems:
        yield finding(a, "MSG-014", ", ".join(problems), "a message: id, type message, role assistant, a content "
                      "array, model, a documented stop_reason, stop_sequence (null or the sequence), usage", offset=0)


@check("MSG-013", when=(_json,))
def block_shapes(a: Analysis) -> Iterator[Finding]:
    """The non-stream message's content blocks (the stream's are judged at content_block_start)."""
    for index, block in sorted(_answer(a).blocks.items()):
        obj = block.start
        problem = block_problem(obj, streamed=False) if isinstance(obj, dict) else f"{short(obj, 40)}"
        if problem:
            yield finding(a, "MSG-013", f"content[{index}] {problem}", "a content block of its type's shape")
            return


def _sequences(a: Analysis) -> list[str]:
    value = a.request.get("stop_sequences")
    return [s for s in value if isinstance(s, str)] if isinstance(value, list) else []


@check("MSG-012", when=(_ended,))
def stop_sequence(a: Analysis) -> Iterator[Finding]:
    answer = _answer(a)
    reason, seq = answer.stop_reason, answer.stop_sequence
    wanted = _sequences(a)
    if reason == "stop_sequence" and seq not in wanted:
        yield finding(a, "MSG-012", f"stop_reason stop_sequence with stop_sequence {short(seq, 40)}",
                      f"the sequence that matched, one of {wanted}")
    elif reason != "stop_sequence" and seq is not None:
        yield finding(a, "MSG-012", f"stop_sequence {short(seq, 40)} with stop_reason {short(reason, 30)}",
                      "stop_sequence null unless stop_reason is stop_sequence")
    elif wanted and reason == "end_turn" and any(s in answer.text for s in wanted):
        found = next(s for s in wanted if s in answer.text)
        yield finding(a, "MSG-012", f"text containing the stop sequence {found!r}, stop_reason end_turn",
                      "generation ends at the sequence: stop_reason stop_sequence, the sequence not in the text")


@check("MSG-015", when=(_ended,))
def usage(a: Analysis) -> Iterator[Finding]:
    answer = _answer(a)
    start = answer.start_usage
    if not isinstance(start, dict) or not isinstance(start.get("input_tokens"), int):
        where = "message_start's message" if answer.streamed else "the message"
        yield finding(a, "MSG-015", f"{where} with usage {short(start, 60)}", "usage.input_tokens, an integer")
        return
    seen = answer.output_tokens_seen
    if any(b < x for x, b in zip(seen, seen[1:], strict=False)):
        yield finding(a, "MSG-015", f"message_delta output_tokens {seen}", "cumulative counts: never decreasing")
    first = start.get("output_tokens")
    if answer.streamed and seen and isinstance(first, int) and seen[-1] < first:
        yield finding(a, "MSG-015", f"message_delta output_tokens {seen[-1]} below message_start's {first}",
                      "the final count at least the first")


def _cap(a: Analysis) -> int | None:
    cap = a.request.get("max_tokens")
    return cap if isinstance(cap, int) and not isinstance(cap, bool) else None


@check("MSG-016", when=(_ended, lambda a: _cap(a) is not None))
def max_tokens(a: Analysis) -> Iterator[Finding]:
    answer = _answer(a)
    usage = answer.usage or {}
    used = usage.get("output_tokens")
    cap = _cap(a) or 0
    if isinstance(used, int) and used > cap:
        yield finding(a, "MSG-016", f"output_tokens {used} with max_tokens {cap}", f"at most {cap} output tokens")
    elif a.intent == Intent.EXPECT_LENGTH and answer.stop_reason != "max_tokens" and not (
            answer.stop_reason == "end_turn" and isinstance(used, int) and used < cap):
        yield finding(a, "MSG-016", f"stop_reason {short(answer.stop_reason, 30)} ({used} output tokens of max_tokens "
                      f"{cap})", "stop_reason max_tokens")


def _tools(a: Analysis) -> dict[str, Any]:
    tools = a.request.get("tools")
    return {t["name"]: t for t in tools if isinstance(t, dict) and isinstance(t.get("name"), str)} \
        if isinstance(tools, list) else {}


@check("MSG-017", when=(_ended, lambda a: bool(_tools(a)) and isinstance(a.request.get("tool_choice"), dict),
                        lambda a: _answer(a).stop_reason != "max_tokens"))
def tool_choice(a: Analysis) -> Iterator[Finding]:
    choice = a.request["tool_choice"]
    names = [b.name for b in _answer(a).calls]
    kind = choice.get("type")
    if kind == "none" and names:
        yield finding(a, "MSG-017", f"tool_use blocks for {names} with tool_choice none", "no tool_use block")
    elif kind == "any" and not names:
        yield finding(a, "MSG-017", "no tool_use block with tool_choice any", "at least one tool_use block")
    elif kind == "tool":
        wanted = choice.get("name")
        if not names or any(n != wanted for n in names):
            yield finding(a, "MSG-017", f"tool_use blocks for {names} with tool_choice naming {wanted!r}",
                          f"a tool_use block for {wanted!r} only")


@check("MSG-018", when=(_ended, lambda a: bool(_answer(a).calls)))
def tool_use(a: Analysis) -> Iterator[Finding]:
    offered = _tools(a)
    answer = _answer(a)
    for block in answer.calls:
        if block.name not in offered:
            yield finding(a, "MSG-018", f"a tool_use block for {short(block.name, 40)}",
                          f"one of the offered tools {sorted(offered)}")
        if not isinstance(block.id, str) or not block.id:
            yield finding(a, "MSG-018", f"tool_use id {short(block.id, 40)}", "a non-empty id (tool_result names it)")
    if answer.stop_reason not in ("tool_use", "max_tokens"):
        yield finding(a, "MSG-018", f"stop_reason {short(answer.stop_reason, 30)} after a tool_use block",
                      "stop_reason tool_use")


def _tool_result_turn(a: Analysis) -> bool:
    """The request's last turn is the user's tool_result (the turn after a tool_use)."""
    history = a.request.get("messages")
    last = history[-1] if isinstance(history, list) and history else None
    content = last.get("content") if isinstance(last, dict) and last.get("role") == "user" else None
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


@check("MSG-019", when=(on_messages, _tool_result_turn, lambda a: a.exchange.status is not None))
def tool_result_answered(a: Analysis) -> Iterator[Finding]:
    if not a.success:
        yield finding(a, "MSG-019", f"{a.exchange.status} to a tool_result turn", "an answer (200)")


@check("MSG-020", when=(on_messages, lambda a: "system" in a.request and a.exchange.status is not None,
                        lambda a: a.intent not in BAD_INPUT))
def system_accepted(a: Analysis) -> Iterator[Finding]:
    if not a.success:
        form = "a string" if isinstance(a.request["system"], str) else "a list of text blocks"
        yield finding(a, "MSG-020", f"{a.exchange.status} to system as {form}", "an answer (200)")


def _error_status(a: Analysis) -> bool:
    """An error answered on a Messages route the server serves: a 404, 405 or 501 to a valid request is the route
    not served (the capability's probe reports it unsupported), judged by no rule of the route's shape."""
    status = a.exchange.status
    not_served = status in (404, 405, 501) and a.intent != Intent.UNKNOWN_MODEL
    return status is not None and status >= 400 and not not_served and a.format in ("json", "text", "empty")


def _envelope(value: Any) -> tuple[Any, Any] | None:
    """(error.type, error.message) of the error shape, None when the value does not have it."""
    if not isinstance(value, dict) or value.get("type") != "error" or not isinstance(value.get("error"), dict):
        return None
    return value["error"].get("type"), value["error"].get("message")


@check("MSG-021", when=(_error_status,))
def error_shape(a: Analysis) -> Iterator[Finding]:
    status = a.exchange.status
    assert status is not None
    body = a.json_body if a.format == "json" else None
    got = _envelope(body)
    if got is None:
        shown = short(body, 80) if a.format == "json" else f"a {a.format} body"
        yield finding(a, "MSG-021", f"{status} with {shown}",
                      '{"type": "error", "error": {"type": ..., "message": ...}}', offset=0)
        return
    kind, message = got
    if not isinstance(message, str):
        yield finding(a, "MSG-021", f"error.message {short(message, 40)}", "a string", offset=0)
    statuses = ERROR_STATUS.get(kind) if isinstance(kind, str) else None
    if statuses is None:
        yield finding(a, "MSG-021", f"error.type {short(kind, 40)}", f"a documented type ({', '.join(ERROR_STATUS)})",
                      offset=0)
    elif status not in statuses and not (kind == "api_error" and status >= 500):
        yield finding(a, "MSG-021", f"error.type {kind} with status {status}",
                      f"the type documented for {status}: " + ", ".join(k for k, v in ERROR_STATUS.items()
                                                                       if status in v) or "see Errors", offset=0)


@check("MSG-022", when=(_sse, lambda a: bool(_answer(a).errors)))
def error_event(a: Analysis) -> Iterator[Finding]:
    for value in _answer(a).errors[:1]:
        got = _envelope(value)
        if got is None or got[0] not in ERROR_STATUS or not isinstance(got[1], str):
            yield finding(a, "MSG-022", f"an error event {short(value, 80)}",
                          '{"type": "error", "error": {"type": <a documented type>, "message": ...}}',
                          event=_answer(a).first_of.get("error"))


@check("MSG-023", when=(on_messages, lambda a: bool(a.request) and "max_tokens" not in a.request,
                        lambda a: a.exchange.status is not None))
def max_tokens_required(a: Analysis) -> Iterator[Finding]:
    status = a.exchange.status
    kind = (_envelope(a.json_body) or (None, None))[0] if a.format == "json" else None
    if status != 400 or kind != "invalid_request_error":
        yield finding(a, "MSG-023", f"{status} ({short(kind, 30)}) to a request without max_tokens",
                      "400 invalid_request_error (max_tokens is required)",
                      remedy="A default is a server's choice, but a client tested against it breaks on Anthropic's "
                      "API.")


@check("MSG-024", when=(on_messages, lambda a: a.intent in BAD_INPUT and a.exchange.status is not None))
def invalid_refused(a: Analysis) -> Iterator[Finding]:
    status = a.exchange.status
    assert status is not None
    if not 400 <= status < 500:
        yield finding(a, "MSG-024", f"{status} to an invalid request ({a.intent})",
                      "a 4xx in the error shape (400 invalid_request_error; 404 not_found_error for a model)")


@check("MSG-025", when=(lambda a: a.exchange.request_header("x-api-key") is not None
                        and a.exchange.request_header("authorization") is None and a.exchange.status is not None,))
def key_header(a: Analysis) -> Iterator[Finding]:
    if a.exchange.status not in (401, 403):
        return
    yield finding(a, "MSG-025", f"{a.exchange.status} to a request with the key in x-api-key",
                  "the key accepted from x-api-key", remedy="Claude Code sends ANTHROPIC_API_KEY as X-Api-Key and "
                  "ANTHROPIC_AUTH_TOKEN as Authorization: Bearer; accept both.")


@check("MSG-026", when=(_sse, complete, repeatable))
def parity(a: Analysis) -> Iterator[Finding]:
    yield from unstreamed_differences(a, "MSG-026")


@check("MSG-030", when=(lambda a: a.exchange.endpoint == "messages-count-tokens", chat_json))
def count_tokens(a: Analysis) -> Iterator[Finding]:
    tokens = a.json_body.get("input_tokens")
    if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 1:
        yield finding(a, "MSG-030", f"{short(a.json_body, 80)}", '{"input_tokens": n}, n a positive integer', offset=0)


@check("MSG-031", when=(_answered,))
def think_markup(a: Analysis) -> Iterator[Finding]:
    yield from markup_in(a, "MSG-031", _answer(a).text, "a text block", "reasoning in a thinking block, not in the text",
                         (THINK_OPEN, THINK_CLOSE))


@check("MSG-032", when=(_ended, lambda a: any(b.type == "thinking" for b in _answer(a).blocks.values())))
def thinking_signature(a: Analysis) -> Iterator[Finding]:
    for index, block in sorted(_answer(a).blocks.items()):
        if block.type == "thinking" and not block.signature:
            yield finding(a, "MSG-032", f"thinking block {index} without a signature",
                          "a signature (signature_delta before content_block_stop)",
                          remedy="Clients send thinking blocks back with their signature; Anthropic's API refuses one "
                          "without it.")
            return


@check("MSG-033", when=(_answered,))
def tool_markup(a: Analysis) -> Iterator[Finding]:
    """A tool call written into a text block: Anthropic's clients run tool_use blocks only (chat's TOOL-010)."""
    yield from markup_in(a, "MSG-033", _answer(a).text, "a text block", "a tool_use block (or text without call markup)")


def _prefill(a: Analysis) -> bool:
    history = a.request.get("messages")
    return isinstance(history, list) and bool(history) and isinstance(history[-1], dict) and \
        history[-1].get("role") == "assistant" and a.exchange.status is not None and \
        a.intent not in BAD_INPUT


@check("MSG-034", when=(on_messages, _prefill))
def prefill_answered(a: Analysis) -> Iterator[Finding]:
    if not a.success:
        yield finding(a, "MSG-034", f"{a.exchange.status} to a conversation ending with an assistant turn (a prefill)",
                      "an answer (200) that continues the assistant's turn")


@check("MSG-035", when=(_ended, lambda a: _answer(a).stop_reason == "end_turn"))
def text_not_thinking_alone(a: Analysis) -> Iterator[Finding]:
    kinds = [b.type for _, b in sorted(_answer(a).blocks.items())]
    if kinds and all(k in ("thinking", "redacted_thinking") for k in kinds):
        yield finding(a, "MSG-035", f"end_turn after {len(kinds)} thinking block(s) and no text",
                      "the answer's text block after the thinking")


@check("MSG-036", when=(_ended, lambda a: bool(_sequences(a)) and a.exchange.observations.unstopped is not None))
def stop_reported(a: Analysis) -> Iterator[Finding]:
    """The same request without its stop sequences, sent first: where the unstopped text holds one, this answer is
    that text cut before it, and must say stop_sequence (a server that stops right and says end_turn passes MSG-012:
    the two fields agree)."""
    answer = _answer(a)
    unstopped = a.exchange.observations.unstopped or ""
    hits = [(i, seq) for seq in _sequences(a) if seq and (i := unstopped.find(seq)) >= 0]
    if not hits:
        return
    at, seq = min(hits)
    if answer.text == unstopped[:at] and answer.stop_reason != "stop_sequence":
        yield finding(a, "MSG-036", f"stop_reason {short(answer.stop_reason, 30)} for a text cut before {seq!r} (the "
                      f"same request without stop_sequences went on: {short(unstopped[at:at + 30], 40)})",
                      f"stop_reason stop_sequence, stop_sequence {seq!r}")


# the message object's keys (anthropic-sdk-python types/message.py) and what newer API versions add
MESSAGE_KEYS = frozenset({"id", "type", "role", "content", "model", "stop_reason", "stop_sequence", "usage",
                          "container", "stop_details", "diagnostics", "context_management"})


@check("MSG-037", when=(_json,))
def unknown_keys(a: Analysis) -> Iterator[Finding]:
    extra = sorted(k for k in a.json_body if k not in MESSAGE_KEYS)
    if extra:
        yield finding(a, "MSG-037", f"keys beyond the reference: {', '.join(extra[:8])}",
                      "the message object's documented keys")

