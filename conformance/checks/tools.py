"""Tool calls: pieces by index, ids, names, string arguments, tool_choice and the finish."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from conformance.checks.conditions import chat_answer, chat_sse, offered_tools, tool_calls
from conformance.checks.registry import Finding, check, finding, schema_problem, short
from conformance.exchange import Analysis
from conformance.protocols.chat.assembler import ToolCall

MARKUP = ("<tool_call>", "</tool_call>", "<|python_tag|>", "[TOOL_CALLS]", "<function=",
          "<｜tool▁calls▁begin｜>", "<|tool_call_begin|>", "<tool_calls>")


def markup_in(a: Analysis, rule: str, text: str, where: str, instead: str,
              markers: tuple[str, ...] = MARKUP) -> Iterator[Finding]:
    """The first of ``markers`` (a tool call's markup, or reasoning's) written as text where the protocol has its
    own objects for it: its clients run and show those only."""
    hit = next((m for m in markers if m in text), None)
    if hit is not None:
        yield finding(a, rule, f"{hit} in {where}", instead)


def _calls(a: Analysis) -> list[ToolCall]:
    return [call for choice in a.assembled.choices.values()
            for call in (choice.tool_calls[i] for i in sorted(choice.tool_calls))]


def _pieces(a: Analysis) -> Iterator[tuple[int | None, Any]]:
    """(event, raw piece) for every tool-call piece of a non-stream body (a stream's are read by the watch)."""
    for choice in a.json_body.get("choices") or []:
        message = choice.get("message") if isinstance(choice, dict) else None
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        for piece in calls if isinstance(calls, list) else ():
            yield None, piece


@check("TOOL-001", "TOOL-015", "TOOL-017", when=(chat_sse,))
def streamed_pieces(a: Analysis) -> Iterator[Finding]:
    w = a.watch
    found = []
    if w.bad_piece is not None:
        event, piece = w.bad_piece
        found.append((event, 0, "TOOL-001", f"a tool-call piece {short(piece)}", "an integer index",
                      "The openai SDK's stream helper dereferences index."))
    if w.call_changed is not None:
        event, index, ident, kind, was_id, was_type = w.call_changed
        found.append((event, 1, "TOOL-015", f"call {index} continued with id {ident!r} type {kind!r}",
                      f"the first id {was_id!r} and type {was_type!r} kept", ""))
    if w.bad_calls is not None:
        found.append((w.bad_calls[0], 2, "TOOL-001", f"tool_calls {short(w.bad_calls[1])}", "an array", ""))
    for event, _, rule, received, expected, remedy in sorted(found, key=lambda f: (f[0], f[1])):
        yield finding(a, rule, received, expected, event=event, remedy=remedy)
    if w.bad_calls is not None:
        return  # the pieces' walk ended at tool_calls that is no array
    whole = [c for c in _calls(a) if w.call_pieces.get(c.index) == 1 and len(c.arguments) >= 8]
    if whole:
        yield finding(a, "TOOL-017", f"call {whole[0].index} complete in one delta",
                      "arguments streamed as fragments")


def _raw_ids(a: Analysis) -> dict[int, Any]:
    """The first id each call was sent with, before any conversion."""
    if a.format == "sse":
        first: dict[int, Any] = a.watch.call_ids
        return first
    ids: dict[int, Any] = {}
    for position, (_, piece) in enumerate(_pieces(a)):
        if not isinstance(piece, dict):
            continue
        index = piece.get("index", position) if a.format == "sse" else position
        if isinstance(index, int) and piece.get("id") is not None:
            ids.setdefault(index, piece["id"])
    return ids


@check("TOOL-002", "TOOL-003", "TOOL-004", "TOOL-005", "TOOL-006", when=(tool_calls,))
def call_identity(a: Analysis) -> Iterator[Finding]:
    for choice in a.assembled.choices.values():
        indices = sorted(choice.tool_calls)
        if indices != list(range(len(indices))):
            yield finding(a, "TOOL-002", f"tool-call indices {indices}", f"{list(range(len(indices)))}")
    first_ids = _raw_ids(a)
    offered = {t.get("function", {}).get("name") for t in a.request.get("tools") or [] if isinstance(t, dict)}
    seen: set[str] = set()
    for call in _calls(a):
        raw = first_ids.get(call.index)
        if not isinstance(raw, str) or not raw:
            yield finding(a, "TOOL-003", f"call {call.index} with id {short(raw)}", "a non-empty string id")
        elif raw in seen:
            yield finding(a, "TOOL-004", f"id {raw!r} on two calls", "unique ids")
        seen.add(raw if isinstance(raw, str) else "")
        if call.type != "function":
            yield finding(a, "TOOL-005", f"call {call.index} with type {call.type!r}", "function")
        if not call.name or (offered and call.name not in offered):
            yield finding(a, "TOOL-006", f"a call of {call.name!r}", f"one of {sorted(n for n in offered if n)}")


def _arguments_pieces(a: Analysis) -> Iterator[tuple[int | None, Any]]:
    for event, piece in _pieces(a):
        function = piece.get("function") if isinstance(piece, dict) else None
        if isinstance(function, dict) and "arguments" in function:
            yield event, function["arguments"]


def _schema_for(a: Analysis, name: str | None) -> Any:
    for tool in a.request.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and function.get("name") == name:
            return function.get("parameters")
    return None


@check("TOOL-007", "TOOL-008", "TOOL-009", when=(tool_calls,))
def arguments(a: Analysis) -> Iterator[Finding]:
    bad = a.watch.bad_arguments if a.format == "sse" else next(
        ((e, v) for e, v in _arguments_pieces(a) if v is not None and not isinstance(v, str)), None)
    if bad is not None:
        yield finding(a, "TOOL-007", f"arguments {short(bad[1])}", "a JSON string fragment", event=bad[0])
    cut = any(c.finish_reason == "length" for c in a.assembled.choices.values())
    for call in _calls(a):
        try:
            parsed = json.loads(call.arguments) if call.arguments else {}
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict):
            if not cut:
                yield finding(a, "TOOL-008", f"call {call.index} arguments {short(call.arguments)}",
                              "a JSON object")
            continue
        schema = _schema_for(a, call.name)
        if isinstance(schema, dict):
            problem = schema_problem(parsed, schema)
            if problem is not None:
                yield finding(a, "TOOL-009", f"call {call.index} arguments {short(parsed)}: {problem}",
                              "arguments valid for the tool's parameters")


@check("TOOL-010", when=(chat_answer,))
def markup_in_content(a: Analysis) -> Iterator[Finding]:
    for choice in a.assembled.choices.values():
        hit = next((m for m in MARKUP if m in choice.content), None)
        if hit is None and a.request.get("tools"):
            try:
                parsed = json.loads(choice.content)
            except ValueError:
                parsed = None
            if isinstance(parsed, dict) and "name" in parsed and ("arguments" in parsed or "parameters" in parsed):
                hit = "a JSON tool call"
        if hit:
            yield finding(a, "TOOL-010", f"{hit} in content", "calls in delta.tool_calls, not in content")
            return


def _choice(a: Analysis) -> Any:
    return a.request.get("tool_choice")


@check("TOOL-011", "TOOL-012", "TOOL-013", "TOOL-014", when=(offered_tools,))
def tool_choice(a: Analysis) -> Iterator[Finding]:
    calls = _calls(a)
    choice = _choice(a)
    if a.assembled.error is not None:
        return
    cut = any(c.finish_reason == "length" for c in a.assembled.choices.values())
    if choice == "none" and calls:
        yield finding(a, "TOOL-011", f"{len(calls)} call(s) with tool_choice none", "no call")
    if choice == "required" and not calls and not cut:
        yield finding(a, "TOOL-012", "no call with tool_choice required", "at least one call")
    if isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name")
        names = [c.name for c in calls]
        if (not calls and not cut) or any(n != name for n in names):
            yield finding(a, "TOOL-013", f"calls {names}", f"a call of {name!r} only")
    if a.request.get("parallel_tool_calls") is False and len(calls) > 1:
        yield finding(a, "TOOL-014", f"{len(calls)} calls with parallel_tool_calls false", "at most one")


@check("TOOL-016", when=(chat_answer,))
def finish_matches_calls(a: Analysis) -> Iterator[Finding]:
    for choice in a.assembled.choices.values():
        reason = choice.finish_reason
        if choice.tool_calls and reason not in ("tool_calls", "length", None):
            yield finding(a, "TOOL-016", f"finish_reason {reason!r} after {len(choice.tool_calls)} call(s)",
                          "tool_calls", remedy="Agents branch on finish_reason == 'tool_calls'.")
        elif not choice.tool_calls and reason == "tool_calls":
            yield finding(a, "TOOL-016", "finish_reason 'tool_calls' with no call", "stop")
