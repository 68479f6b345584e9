"""The Messages API's rules: rows of (id, level, applies, title, source, *refs); their category is ``messages``.

Every source is a page of Anthropic's API reference (docs.anthropic.com / platform.claude.com), named by its
section; the SDK sources are anthropic-sdk-python ``_streaming.py`` and @anthropic-ai/sdk ``lib/MessageStream.ts``.
"""

from __future__ import annotations

MESSAGES = "Anthropic API reference: Messages (create a message; the message object)"
STREAMING = "Anthropic API reference: Streaming Messages"
ERRORS = "Anthropic API reference: Errors"
TOOLS = "Anthropic docs: Tool use (tool_choice; tool_use and tool_result blocks)"
THINKING = "Anthropic docs: Extended thinking (thinking blocks, signature, streaming thinking)"
COUNT = "Anthropic API reference: Count message tokens"
VERSIONS = "Anthropic API reference: Versions and Authentication (x-api-key, anthropic-version)"
SDK = "anthropic-sdk-python _streaming.py and @anthropic-ai/sdk core/streaming.ts (events routed by their event: name)"

RULES: tuple[tuple[str, ...], ...] = (
    ("MSG-001", "must", "stream", "A Messages stream begins with message_start (pings aside)",
     f"{STREAMING}: Event types (a message_start event, then the content blocks)"),
    ("MSG-002", "must", "stream",
     "The content blocks, then one or more message_delta, then message_stop last, with nothing after it",
     f"{STREAMING}: Event types (the flow of events)"),
    ("MSG-003", "must", "stream", "Every data payload is a JSON object with a string type",
     f"{STREAMING}: Event types"),
    ("MSG-004", "must", "stream", "An event: field equals the payload's type",
     f"{STREAMING}: each event has a named event type and associated JSON data; {SDK}"),
    ("MSG-005", "must", "stream", "Every event names its type in an event: field (Anthropic's SDKs drop an unnamed event)",
     f"{STREAMING}: Basic streaming request (event: before each data:); {SDK}"),
    ("MSG-006", "must", "stream",
     "message_start's message has an id, type message, role assistant, content [], a model and usage.input_tokens",
     f"{STREAMING}: Event types (a Message object with empty content); {MESSAGES}"),
    ("MSG-007", "must", "stream",
     "Content blocks are indexed from 0 consecutively, one open at a time: start, its deltas, stop",
     f"{STREAMING}: Content block start, delta and stop (index: the index in the final content array)", "H24"),
    ("MSG-008", "must", "stream", "Each delta is of a type its block takes (text_delta, input_json_delta, thinking_delta, "
     "signature_delta, citations_delta)", f"{STREAMING}: Content block delta types"),
    ("MSG-009", "must", "stream", "Every content block is stopped before message_delta",
     f"{STREAMING}: Event types (each block: content_block_start, deltas, content_block_stop)"),
    ("MSG-010", "must", "stream", "A tool_use block's partial_json pieces join into a JSON object (its input)",
     f"{STREAMING}: Input JSON delta (accumulate the partial_json strings, parse them at content_block_stop)"),
    ("MSG-011", "must", "stream",
     "message_delta carries delta.stop_reason (a documented value) and usage.output_tokens",
     f"{STREAMING}: message_delta (cumulative token counts); {MESSAGES}: stop_reason; @anthropic-ai/sdk "
     "MessageStream reads event.usage.output_tokens"),
    ("MSG-012", "must", "both", "stop_sequence is set exactly when stop_reason is stop_sequence, to a requested one",
     f"{MESSAGES}: stop_reason, stop_sequence"),
    ("MSG-013", "must", "both", "Every content block has its type's shape (text, tool_use, thinking, redacted_thinking)",
     f"{MESSAGES}: content; {TOOLS}; {THINKING}"),
    ("MSG-014", "must", "non-stream",
     "A non-stream answer is a message object with every key the reference documents: id, type message, role "
     "assistant, content, model, stop_reason, stop_sequence (null unless a stop sequence ended it), usage",
     f"{MESSAGES}: the message object (stop_sequence: string | null, present; anthropic-sdk-python types/message.py)"),
    ("MSG-015", "should", "both",
     "usage: input_tokens where the message starts, output_tokens cumulative (never decreasing)",
     f"{STREAMING}: message_delta (the token counts in usage are cumulative); {MESSAGES}: usage"),
    ("MSG-016", "must", "both", "max_tokens is honoured: output_tokens within it, and a cut answer says max_tokens",
     f"{MESSAGES}: max_tokens, stop_reason max_tokens"),
    ("MSG-017", "must", "both", "tool_choice is honoured: any and tool give a tool_use block (of that tool), none none",
     f"{TOOLS}: Forcing tool use (auto, any, tool, none)"),
    ("MSG-018", "must", "both",
     "A tool_use block names an offered tool with an id, and the answer ends with stop_reason tool_use",
     f"{TOOLS}: tool_use content blocks; {MESSAGES}: stop_reason tool_use"),
    ("MSG-019", "must", "both", "A tool_result turn (after the assistant's tool_use) is answered",
     f"{TOOLS}: Handling tool use and tool results"),
    ("MSG-020", "must", "both", "system is accepted as a string and as a list of text blocks",
     f"{MESSAGES}: system (string or array of text blocks)", "I1"),
    ("MSG-021", "must", "both",
     'An error answers {"type": "error", "error": {"type", "message"}} with the type documented for its status',
     f"{ERRORS}: HTTP errors, Error shapes", "H24"),
    ("MSG-022", "must", "stream", "An error event has the error shape and ends the stream",
     f"{STREAMING}: Error events; {ERRORS}"),
    ("MSG-023", "should", "both", "A request without max_tokens is refused with 400 invalid_request_error",
     f"{MESSAGES}: max_tokens (required)"),
    ("MSG-024", "must", "both", "An invalid request (an unknown model, a bad role, no max_tokens) gets a 4xx, not a 2xx "
     "or a 5xx", f"{ERRORS}: HTTP errors (400 invalid_request_error, 404 not_found_error)"),
    ("MSG-025", "must", "both", "The key in x-api-key is accepted (Anthropic's SDKs and Claude Code send it there)",
     f"{VERSIONS}; Claude Code docs: LLM gateway (ANTHROPIC_API_KEY sent as X-Api-Key)"),
    ("MSG-026", "must", "both", "A streamed answer assembles to the non-stream message of the same request (parity)",
     f"{STREAMING} (the stream builds the same Message object)"),
    ("MSG-027", "must", "both", "POST /v1/messages is served when the server is expected to (capability messages)",
     MESSAGES),
    ("MSG-028", "must", "both", "POST /v1/messages/count_tokens is served when the server is expected to (capability "
     "messages-count-tokens)", COUNT),
    ("MSG-029", "must", "both", "thinking gives thinking blocks when the server is expected to (capability "
     "messages-thinking)", THINKING),
    ("MSG-030", "must", "both", 'count_tokens answers {"input_tokens": n}, n a positive integer', COUNT),
    ("MSG-031", "should", "both", "Thinking stays out of the text blocks (no <think> markup in text)",
     f"{THINKING} (thinking content blocks)"),
    ("MSG-032", "advisory", "both", "A thinking block carries a signature (clients send it back with the block)",
     f"{THINKING}: signature_delta, preserving thinking blocks"),
    ("MSG-033", "must", "both", "Tool-call markup stays out of the text blocks (<tool_call>, [TOOL_CALLS], …): a call "
     "is a tool_use block", f"{TOOLS} (Claude's tool calls are tool_use content blocks)"),
    ("MSG-034", "should", "both", "A final assistant turn (a prefill) is answered: the model continues it",
     f"{MESSAGES} (messages: the last message may be an assistant turn, which the response continues); Anthropic "
     "docs: Prefill Claude's response"),
    ("MSG-035", "should", "both", "An answer that ends with end_turn holds its text (or a tool_use), not thinking "
     "alone", f"{THINKING} (the response holds thinking blocks followed by the text blocks of the answer)"),
    ("MSG-036", "must", "both", "A text cut at a stop sequence says so: stop_reason stop_sequence, not end_turn",
     f"{MESSAGES} (stop_reason stop_sequence: one of the custom stop_sequences was generated)"),
    ("MSG-037", "advisory", "both", "The message object carries no keys beyond the reference (a strict client or a "
     "typed decoder rejects them)", f"{MESSAGES}: the message object"),
)
