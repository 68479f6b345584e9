"""The Responses API's faults for the self-test: defects of the kinds servers show on /v1/responses (each with the
rules that must catch it), and legal variations that must pass."""

from __future__ import annotations

import json
from typing import Any

from reference_server.faults import Fault, State, on_type

RESPONSES = ("/v1/responses",)
TERMINAL = ("response.completed", "response.incomplete", "response.failed")
F = Fault


def req(**changes: Any) -> Any:
    """A request fault that sets (or, with None, removes) top-level fields."""
    def apply(body: Any) -> Any:
        if not isinstance(body, dict):
            return body
        out = dict(body)
        for key, value in changes.items():
            if value is None:
                out.pop(key, None)
            else:
                out[key] = value
        return out
    return apply


def _renumbered(event: Any, state: State) -> list[Any]:
    """Every event's sequence_number 0: none increases."""
    return [{**event, "sequence_number": 0}]


def _terminal_twice(event: Any, state: State) -> list[Any]:
    return [event, {**event, "sequence_number": event.get("sequence_number", 0) + 1}]


def _misnamed(event: Any, state: State) -> list[Any]:
    """The event: line names a type the payload does not have (not "message": WHATWG's default type, which a client
    cannot tell from no event: line at all)."""
    return [b"event: response.update\ndata: " + json.dumps(event, ensure_ascii=False).encode() + b"\n\n"]


def _cut_as_completed(event: Any, state: State) -> list[Any]:
    """A generation cut by max_output_tokens reported as completed (a server that never says incomplete)."""
    response = {**event["response"], "status": "completed", "incomplete_details": None}
    return [{**event, "type": "response.completed", "response": response}]


def _output_dropped(event: Any, state: State) -> list[Any]:
    return [{**event, "response": {**event["response"], "output": []}}]


def _usage_total_off(event: Any, state: State) -> list[Any]:
    usage = event["response"].get("usage")
    if not isinstance(usage, dict):
        return [event]
    return [{**event, "response": {**event["response"], "usage": {**usage, "total_tokens": usage["total_tokens"] + 7}}}]


def _text_done_changed(event: Any, state: State) -> list[Any]:
    return [{**event, "text": event.get("text", "") + " (edited)"}]


def _stateless(body: Any) -> tuple[int, dict[str, Any]] | None:
    """Ollama's /v1/responses is stateless: previous_response_id refused as unsupported."""
    if isinstance(body, dict) and "previous_response_id" in body:
        return 400, {"message": "previous_response_id is not supported: responses are not stored",
                     "type": "invalid_request_error", "param": "previous_response_id", "code": "unsupported_value"}
    return None


def _markup_in_text(value: Any, state: State) -> Any:
    """A non-stream response whose message text carries the call as <tool_call> markup (a parser left off)."""
    if not isinstance(value, dict) or not isinstance(value.get("output"), list):
        return value
    output = []
    for item in value["output"]:
        if isinstance(item, dict) and item.get("type") == "message":
            content = [{**c, "text": "<tool_call>" + c.get("text", "") + "</tool_call>"}
                       if isinstance(c, dict) and c.get("type") == "output_text" else c for c in item.get("content", [])]
            item = {**item, "content": content}
        output.append(item)
    return {**value, "output": output}


SLIM = ("tools", "tool_choice", "parallel_tool_calls")


def _slim(response: Any) -> Any:
    return {k: v for k, v in response.items() if k not in SLIM} if isinstance(response, dict) else response


def _slim_event(event: Any, state: State) -> list[Any]:
    """llama.cpp's response objects: id, object, status, model, output, usage; none of OpenAI's other fields."""
    return [{**event, "response": _slim(event["response"])}] if isinstance(event.get("response"), dict) else [event]


def _unstored(value: Any) -> Any:
    return {k: v for k, v in value.items() if k != "store"} if isinstance(value, dict) else value


def _not_found(body: Any) -> tuple[int, dict[str, Any]] | None:
    """vLLM without VLLM_ENABLE_RESPONSES_API_STORE: store turned off silently, then the id it handed out not found
    (vllm/entrypoints/openai/responses/serving.py)."""
    ref = body.get("previous_response_id") if isinstance(body, dict) else None
    if isinstance(ref, str):
        return 404, {"message": f"Response with id '{ref}' not found.", "type": "invalid_request_error",
                     "param": "response_id", "code": None}
    return None


def _edited(value: Any, state: State) -> Any:
    """The unstreamed response's text changed: a stream of the same request no longer assembles to it."""
    if isinstance(value, dict) and isinstance(value.get("output"), list):
        return _markup_free_edit(value)
    return value


def _markup_free_edit(value: dict[str, Any]) -> dict[str, Any]:
    output = []
    for item in value["output"]:
        if isinstance(item, dict) and item.get("type") == "message":
            item = {**item, "content": [{**c, "text": c.get("text", "") + " (unstreamed)"}
                                        if isinstance(c, dict) and c.get("type") == "output_text" else c
                                        for c in item.get("content", [])]}
        output.append(item)
    return {**value, "output": output}


DEFECTS: list[Fault] = [
    F("responses-parity-differs", ("RSP-032",), "the unstreamed response differs from the stream of the same "
      "deterministic request (issue 59: stream = non-stream)", paths=RESPONSES, body=_edited),
    F("responses-extra-keys", ("RSP-033",), "keys beyond the reference in the response object (issue 59: vLLM's "
      "kv_transfer_params, input_messages)", paths=RESPONSES,
      body=lambda v, s: {**v, "kv_transfer_params": None} if isinstance(v, dict) and "output" in v else v),
    F("responses-tool-markup", ("RSP-029",), "a tool call as <tool_call> markup in the output text (issue 59: "
      "vLLM with tool_choice none)", paths=RESPONSES, body=_markup_in_text),
    F("responses-slim-object", ("RSP-030",), "a response object without tools, tool_choice and parallel_tool_calls "
      "(issue 59: llama.cpp's server-task.cpp)", paths=RESPONSES,
      body=lambda v, s: _slim(v) if isinstance(v, dict) and "output" in v else v, event=_slim_event),
    F("responses-store-lost", ("RSP-031",), "a response id handed out, then not found (issue 59: vLLM's silent "
      "store: false)", paths=RESPONSES, refuse=_not_found,
      body=lambda v, s: _unstored(v) if isinstance(v, dict) and "output" in v else v,
      event=lambda e, s: [{**e, "response": _unstored(e["response"])}] if isinstance(e.get("response"), dict)
      else [e]),
    F("responses-no-created", ("RSP-001",), "Open Responses: response.created first", paths=RESPONSES,
      event=on_type("response.created", lambda e, s: [])),
    F("responses-two-terminals", ("RSP-002",), "OpenAI streaming events: one terminal event", paths=RESPONSES,
      event=on_type(TERMINAL, _terminal_twice)),
    F("responses-misnamed-events", ("RSP-004",), "WHATWG SSE event field; OpenAI streaming events", paths=RESPONSES,
      event=_misnamed),
    F("responses-sequence-stuck", ("RSP-006",), "OpenAI streaming events: sequence_number", paths=RESPONSES,
      event=_renumbered),
    F("responses-text-done-differs", ("RSP-009",), "OpenAI streaming events: output_text.done", paths=RESPONSES,
      event=on_type("response.output_text.done", _text_done_changed)),
    F("responses-item-never-done", ("RSP-010",), "OpenAI streaming events: output_item.done", paths=RESPONSES,
      event=on_type("response.output_item.done", lambda e, s: [])),
    F("responses-output-dropped", ("RSP-012",), "OpenAI Responses: the response object's output", paths=RESPONSES,
      event=on_type(TERMINAL, _output_dropped)),
    F("responses-usage-total", ("RSP-014",), "OpenAI Responses: usage", paths=RESPONSES,
      event=on_type(TERMINAL, _usage_total_off)),
    F("responses-cut-completed", ("RSP-015",), "OpenAI Responses: incomplete_details max_output_tokens",
      paths=RESPONSES, event=on_type("response.incomplete", _cut_as_completed)),
    F("responses-json-object", ("RSP-013",), "OpenAI Responses: the response object", paths=RESPONSES,
      body=lambda v, s: {**v, "object": "chat.completion"} if isinstance(v, dict) and "output" in v else v),
    F("responses-previous-ignored", ("RSP-024", "RSP-026"), "Blaizzy/mlx-vlm#1046: accepted and ignored",
      paths=RESPONSES, request=req(previous_response_id=None)),
]

LEGAL: list[Fault] = [
    F("responses-openai-stream", (), "OpenAI's Responses stream (no data: [DONE] after the terminal event)",
      legal=True, done=lambda s: b"", paths=RESPONSES),
    F("responses-unnamed-events", (), "OpenAI's SDKs read the type from the data (RSP-005 is advisory)", legal=True,
      event=lambda e, s: [b"data: " + json.dumps(e, ensure_ascii=False).encode() + b"\n\n"], paths=RESPONSES),
    F("responses-stateless", (), "Ollama's /v1/responses is stateless (docs.ollama.com/api/openai-compatibility)",
      legal=True, refuse=_stateless, lacks=("responses-state",), paths=RESPONSES),
]
