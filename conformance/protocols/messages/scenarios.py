"""The Messages API's requests and scenarios: ``POST /v1/messages`` streamed and not (``max_tokens`` required,
``system`` top-level, tools as ``{name, description, input_schema}``, ``tool_choice`` as ``{"type": ...}``), and
``POST /v1/messages/count_tokens``."""

from __future__ import annotations

from typing import Any

from conformance.model import Intent
from conformance.model.request import Request

PATH = "/v1/messages"
COUNT_PATH = "/v1/messages/count_tokens"
HELLO = [{"role": "user", "content": "Say hello in one short sentence."}]
LONG = [{"role": "user", "content": "Tell me a long story, as long as you can."}]
ASK_WEATHER = [{"role": "user", "content": "What is the weather in Paris? Use the tool."}]
ANSWER = 32
CAP = 16
CALL = 64
THINK_BUDGET = 1024  # the smallest budget_tokens Anthropic takes; max_tokens must exceed it
PARITY = ("MSG-026",)
DETERMINISTIC: dict[str, Any] = {"temperature": 0}
TOOL_USE_ID = "toolu_conformance0000000001"


def tool(chat_tool: dict[str, Any]) -> dict[str, Any]:
    """A chat tool ({type, function: {name, description, parameters}}) in the Messages API's shape."""
    fn = chat_tool["function"]
    return {"name": fn["name"], **({"description": fn["description"]} if "description" in fn else {}),
            "input_schema": fn["parameters"]}


def messages(ctx: Any, history: Any, *, stream: bool | None = True, intent: Intent | None = None,
             headers: dict[str, str] | None = None, max_tokens: int | None = ANSWER, **fields: Any) -> Request:
    body: dict[str, Any] = {"model": ctx.model, "messages": history, **fields}
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if stream is not None:
        body["stream"] = stream
    return Request(path=PATH, body=body, intent=intent, headers=headers or {})


def tool_result_turn() -> list[dict[str, Any]]:
    """A tool_use the assistant made and the user's tool_result for it, then the model answers."""
    return [*ASK_WEATHER,
            {"role": "assistant", "content": [{"type": "tool_use", "id": TOOL_USE_ID, "name": "get_weather",
                                               "input": {"city": "Paris"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": TOOL_USE_ID,
                                          "content": "18 C and sunny"}]}]


def plain(ctx: Any, *, stream: bool, max_tokens: int, long: bool = False) -> Request:
    """A plain request of the Messages API, for the scenario kinds' liveness and side requests."""
    return messages(ctx, LONG if long else HELLO, stream=stream, max_tokens=max_tokens)


def scenarios() -> list[Any]:
    from conformance.model.scenario import TIME, WEATHER, Scenario

    s = Scenario
    weather, both = [tool(WEATHER)], [tool(WEATHER), tool(TIME)]
    needs = "messages"
    return [
        s("messages-stream", "messages", lambda c: messages(c, HELLO),
          needs=needs, description="POST /v1/messages, streamed: the whole event flow (it probes the route: the "
          "Messages scenarios are sent only where it is served).", variant="Messages API"),
        s("messages-json", "messages", lambda c: messages(c, HELLO, stream=False), needs=needs,
          description="stream: false: one message object."),
        s("messages-blocks", "messages", lambda c: messages(c, [
            {"role": "user", "content": [{"type": "text", "text": HELLO[0]["content"]}]}]), needs=needs,
          description="A user turn as a list of text blocks."),
        s("messages-system", "messages", lambda c: messages(c, HELLO, system="Answer in French."), needs=needs,
          description="system as a string."),
        s("messages-system-blocks", "messages", lambda c: messages(
            c, HELLO, system=[{"type": "text", "text": "Answer in French."}]), needs=needs,
          description="system as a list of text blocks (as Claude Code sends it)."),
        s("messages-cap", "messages", lambda c: messages(c, LONG, max_tokens=CAP, intent=Intent.EXPECT_LENGTH),
          needs=needs, description="max_tokens 16 on a long answer: stop_reason max_tokens."),
        s("messages-cap-json", "messages", lambda c: messages(c, LONG, stream=False, max_tokens=CAP,
                                                              intent=Intent.EXPECT_LENGTH),
          needs=needs, description="The same cut, non-stream."),
        s("messages-stop-sequence", "messages", lambda c: messages(c, HELLO, stop_sequences=[" "], **DETERMINISTIC),
          needs=needs, kind="stop-compare",
          description="stop_sequences [' ']: the answer ends before the first space, stop_reason stop_sequence (the "
          "same request without stop_sequences, sent first, shows where the space comes)."),
        s("messages-prefill", "messages", lambda c: messages(c, [*HELLO, {"role": "assistant", "content": "Hello"}],
                                                             stream=False), needs=needs,
          description="A final assistant turn (a prefill): answered, the model continuing it."),
        s("messages-tools-auto", "messages", lambda c: messages(c, ASK_WEATHER, tools=weather,
                                                                tool_choice={"type": "auto"}, max_tokens=CALL),
          needs=needs, variant="Messages: tools"),
        s("messages-tools-any", "messages", lambda c: messages(c, ASK_WEATHER, tools=weather,
                                                               tool_choice={"type": "any"}, max_tokens=CALL),
          needs=needs, description="tool_choice any: a tool_use block, its input streamed as partial_json."),
        s("messages-tools-named", "messages", lambda c: messages(
            c, ASK_WEATHER, tools=both, tool_choice={"type": "tool", "name": "get_weather"}, max_tokens=CALL,
            temperature=0), needs=needs, description="tool_choice naming get_weather."),
        s("messages-tools-named-other", "messages", lambda c: messages(
            c, ASK_WEATHER, tools=both, tool_choice={"type": "tool", "name": "get_time"}, max_tokens=4 * CALL,
            temperature=0), needs=needs, description="tool_choice naming get_time, the tool the question does not "
          "call for: a server that ignores the name calls get_weather."),
        s("messages-tools-none", "messages", lambda c: messages(c, ASK_WEATHER, tools=weather,
                                                                tool_choice={"type": "none"}, max_tokens=CALL),
          needs=needs, description="tool_choice none: text, no tool_use."),
        s("messages-tools-json", "messages", lambda c: messages(c, ASK_WEATHER, stream=False, tools=weather,
                                                                tool_choice={"type": "any"}, max_tokens=CALL),
          needs=needs, description="A tool_use block, non-stream."),
        s("messages-tool-result", "messages", lambda c: messages(c, tool_result_turn(), tools=weather), needs=needs,
          description="The turn after a tool_use: the user's tool_result, answered."),
        s("messages-thinking", "messages", lambda c: messages(
            c, HELLO, max_tokens=THINK_BUDGET + 64, thinking={"type": "enabled", "budget_tokens": THINK_BUDGET}),
          needs=needs, description="thinking enabled: thinking blocks (with a signature) before the text, if the "
          "server supports it (capability messages-thinking).", variant="Messages: extended thinking"),
        s("messages-count-tokens", "messages", lambda c: Request(path=COUNT_PATH, body={
            "model": c.model, "messages": HELLO}), needs=needs,
          description="POST /v1/messages/count_tokens (capability messages-count-tokens).",
          variant="Messages: count_tokens"),
        s("messages-unknown-model", "messages", lambda c: messages(type(c)(model="conformance-no-such-model"), HELLO,
                                                                   intent=Intent.UNKNOWN_MODEL),
          needs=needs, kind="followup", description="An unknown model: 404 not_found_error in the error shape."),
        s("messages-no-max-tokens", "messages", lambda c: messages(c, HELLO, max_tokens=None, stop_sequences=["."],
                                                                   intent=Intent.INVALID),
          needs=needs, kind="followup", description="No max_tokens (required): 400 invalid_request_error (a lenient "
          "server that answers stops at the first full stop)."),
        s("messages-bad-role", "messages", lambda c: messages(c, [{"role": "robot", "content": "Hello."}],
                                                              intent=Intent.BAD_VALUE),
          needs=needs, kind="followup", description="A role that is neither user nor assistant: 400."),
        # chat's error family, on the Messages route: each refused with a 4xx in Anthropic's error shape
        s("messages-malformed-json", "messages", lambda c: Request(
            path=PATH, content=b'{"model": "x", "max_tokens": 8, "messages": [', intent=Intent.MALFORMED_JSON,
            headers={"Content-Type": "application/json"}), needs=needs, kind="followup",
          description="A body that is not JSON: 400 invalid_request_error."),
        s("messages-missing-messages", "messages", lambda c: Request(
            path=PATH, body={"model": c.model, "max_tokens": ANSWER}, intent=Intent.MISSING_MESSAGES), needs=needs,
          kind="followup", description="No messages: 400 invalid_request_error."),
        s("messages-wrong-type", "messages", lambda c: messages(c, "Hello", intent=Intent.WRONG_TYPE), needs=needs,
          kind="followup", description="messages as a string: 400 invalid_request_error."),
        s("messages-max-tokens-zero", "messages", lambda c: messages(c, HELLO, max_tokens=0, intent=Intent.BAD_VALUE),
          needs=needs, kind="followup", description="max_tokens 0 (at least 1): 400 invalid_request_error."),
        s("messages-unknown-block", "messages", lambda c: messages(c, [
            {"role": "user", "content": [{"type": "conformance_no_such_block", "text": "Hello."}]}],
            intent=Intent.BAD_VALUE), needs=needs, kind="followup",
          description="A content block of a type that does not exist: 400 invalid_request_error."),
        s("messages-parity", "messages", lambda c: messages(c, HELLO, **DETERMINISTIC), kind="parity",
          only_for=PARITY, needs=needs, description="The same request unstreamed twice, then streamed: the same "
          "message."),
        s("messages-disconnect", "messages", lambda c: messages(c, LONG, max_tokens=3000), kind="disconnect",
          needs=needs, description="Disconnect after the first content event of a long generation; the work must "
          "stop."),
    ]
