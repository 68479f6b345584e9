"""The OpenAI Responses API's rules: rows of (id, level, applies, title, source, *refs); their category is
``responses``.

Sources: OpenAI's API reference (the response object, its streaming events) and the Open Responses specification."""

from __future__ import annotations

WHATWG = "WHATWG HTML §9.2.6 Parsing an event stream"
OPENAI_RESP = "OpenAI API reference: Responses (create a response; the response object)"
OPENAI_RESP_STREAM = "OpenAI API reference: Responses streaming events"
OPEN_RESPONSES = "Open Responses specification (openresponses.org): Streaming"

RULES: tuple[tuple[str, ...], ...] = (
    ("RSP-001", "must", "stream", "A Responses stream begins with response.created",
     f"{OPENAI_RESP_STREAM} (response.created: emitted when a response is created); {OPEN_RESPONSES}"),
    ("RSP-002", "must", "stream",
     "Exactly one terminal event (response.completed, response.incomplete or response.failed) ends the stream; "
     "nothing but data: [DONE] follows it", f"{OPENAI_RESP_STREAM}; {OPEN_RESPONSES} (terminal states)"),
    ("RSP-003", "must", "stream", "Every data payload is a JSON object with a string type",
     f"{OPENAI_RESP_STREAM} (every event has type); {WHATWG}"),
    ("RSP-004", "must", "stream", "An event: field, where sent, equals the payload's type",
     f"{OPEN_RESPONSES} (event: <event-type> then data:); {OPENAI_RESP_STREAM} (OpenAI sends them equal)"),
    ("RSP-005", "advisory", "stream", "Every event names its type in an event: field",
     f"{OPEN_RESPONSES} (OpenAI's SDKs read type from the data, so a stream without event: lines works)"),
    ("RSP-006", "must", "stream", "Every event carries an integer sequence_number, strictly increasing",
     f"{OPENAI_RESP_STREAM} (sequence_number on every event); {OPEN_RESPONSES} (monotonically increasing)"),
    ("RSP-007", "must", "stream",
     "An output item's events come between its output_item.added and output_item.done, with its output_index "
     "and item_id", f"{OPENAI_RESP_STREAM} (output_item.added, item events, output_item.done); {OPEN_RESPONSES}"),
    ("RSP-008", "must", "stream",
     "A message's text deltas come inside their content part (content_part.added, deltas, content_part.done)",
     f"{OPENAI_RESP_STREAM} (content_part.added, output_text.delta, output_text.done, content_part.done)"),
    ("RSP-009", "must", "stream",
     "Each .done event repeats exactly the joined deltas (text, arguments, the item's content)",
     f"{OPENAI_RESP_STREAM} (output_text.done: the text content that is finalized; "
     "function_call_arguments.done: the function-call arguments)"),
    ("RSP-010", "must", "stream", "Every output item added is done before the terminal event",
     f"{OPENAI_RESP_STREAM}; {OPEN_RESPONSES}"),
    ("RSP-011", "must", "stream",
     "The terminal event's response has the status it names; response.incomplete says why (incomplete_details)",
     f"{OPENAI_RESP} (status: completed, failed, in_progress, cancelled, queued or incomplete; "
     "incomplete_details.reason)"),
    ("RSP-012", "must", "stream", "The terminal event's response.output holds the items the stream built",
     f"{OPENAI_RESP_STREAM} (response.completed carries the final response); {OPEN_RESPONSES}"),
    ("RSP-013", "must", "non-stream",
     "A non-stream answer is a response object: object response, an id, a status and an output array",
     f"{OPENAI_RESP} (the response object)"),
    ("RSP-014", "should", "both",
     "usage states input_tokens, output_tokens and total_tokens, the total their sum",
     f"{OPENAI_RESP} (usage: input_tokens, output_tokens, total_tokens)"),
    ("RSP-015", "must", "both",
     "A generation cut by max_output_tokens is incomplete, with incomplete_details.reason max_output_tokens",
     f"{OPENAI_RESP} (max_output_tokens; incomplete_details.reason max_output_tokens)"),
    ("RSP-016", "must", "both",
     "A function call names an offered tool, carries a call_id, and its arguments parse as a JSON object",
     f"{OPENAI_RESP} (function tool call: name, call_id, arguments a JSON string)"),
    ("RSP-017", "must", "both",
     "tool_choice is honoured: none calls no tool, required at least one, a named function only that one",
     f"{OPENAI_RESP} (tool_choice)"),
    ("RSP-018", "must", "both",
     "Output asked for with text.format json_schema (strict) is JSON matching the schema",
     f"{OPENAI_RESP} (text.format: json_schema, strict)"),
    ("RSP-019", "should", "stream", "An error event is followed by response.failed",
     f"{OPEN_RESPONSES} (a failed response ends in response.failed); {OPENAI_RESP_STREAM} (error)"),
    ("RSP-020", "must", "stream",
     "The stream ends with data: [DONE] after its terminal event (dialects that document it)",
     f"{OPEN_RESPONSES} (the stream terminates with [DONE]; OpenAI's own stream sends none)"),
    ("RSP-021", "must", "both",
     "POST /v1/responses is served when the server is expected to (capability responses)", OPENAI_RESP),
    ("RSP-022", "should", "stream",
     "response.created's response is in_progress or queued, with no output yet",
     f"{OPENAI_RESP_STREAM} (response.created; response.in_progress)"),
    ("RSP-023", "should", "both", "Reasoning stays out of the output text (no <think> markup in output_text)",
     f"{OPENAI_RESP} (reasoning items are output items of their own)"),
    ("RSP-024", "should", "both",
     "A response that continues a stored one (previous_response_id) names it in its previous_response_id",
     f"{OPENAI_RESP} (the response object's previous_response_id); masaic-ai-platform/AgC#49"),
    ("RSP-025", "should", "both",
     "A continued response is answered with the stored turn in its context (its input_tokens exceed the stored "
     "response's)", f"{OPENAI_RESP} (previous_response_id: the previous response's input and output are the "
     "context); Blaizzy/mlx-vlm#1046 (accepted and ignored)"),
    ("RSP-026", "must", "both",
     "A previous_response_id naming no stored response (unknown, or made with store: false) is refused with a "
     "4xx, never answered as a new conversation",
     f"{OPENAI_RESP} (store: false responses cannot be continued; OpenAI answers 400 previous_response_not_found); "
     "Blaizzy/mlx-vlm#1046"),
    ("RSP-027", "must", "both",
     "previous_response_id continues a stored response when the server is expected to (capability "
     "responses-state)", f"{OPENAI_RESP} (previous_response_id, store)"),
    ("RSP-028", "must", "both",
     "The response object carries every field the Open Responses ResponseResource requires, null where it does not "
     "apply (dialects that document it)",
     "Open Responses specification, schema/components/schemas/ResponseResource.json (required: 32 fields); "
     "OpenAI's own response object carries them all"),
    ("RSP-029", "must", "both",
     "Tool-call markup stays out of the output text (<tool_call>, [TOOL_CALLS], …): a call is a function_call item",
     f"{OPENAI_RESP} (function calls are output items of type function_call)"),
    ("RSP-030", "should", "both",
     "The response object carries the fields OpenAI's reference always includes: id, object, created_at (in "
     "seconds), model, output, parallel_tool_calls, tool_choice and tools (every dialect)",
     f"{OPENAI_RESP} (the response object; openai-python types/responses/response.py: the fields without a "
     "default)"),
    ("RSP-031", "must", "both",
     "A response the server stored (its object does not say store: false) can be continued: previous_response_id "
     "naming it is not refused as not found",
     f"{OPENAI_RESP} (store defaults to true: the response can be retrieved and continued by its id)"),
    ("RSP-032", "should", "both",
     "A stream assembles to the unstreamed response of the same deterministic request: text, calls and status",
     f"{OPENAI_RESP_STREAM} (the events build the same response object the request returns unstreamed)"),
    ("RSP-033", "advisory", "both",
     "The response object carries no keys beyond OpenAI's reference (a strict client or a typed decoder rejects "
     "them)", f"{OPENAI_RESP} (the response object's fields)"),
)
