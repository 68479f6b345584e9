"""The Responses API's requests and scenarios: ``POST /v1/responses`` streamed and not, with the flat tool shape
(``{"type": "function", "name", "parameters"}``), ``text.format`` and ``max_output_tokens`` (at least 16 at OpenAI)."""

from __future__ import annotations

from typing import Any

from conformance.model import Intent
from conformance.model.request import Request

PATH = "/v1/responses"
HELLO = "Say hello in one short sentence."
LONG = "Tell me a long story, as long as you can."
ASK_WEATHER = "What is the weather in Paris? Use the tool."
ASK_BOTH = "What is the weather in Paris and the time in CET? Use the tools."
ANSWER = 32
REMEMBER = "Remember this word: apricot. Reply with one short sentence."
RECALL = "Which word?"  # shorter than the stored turn: a continuation's input tokens exceed the stored one's
NEVER_STORED = "resp_conformance0never0stored0000000"
CAP = 16  # the smallest max_output_tokens OpenAI takes
CALL = 64


def flat(tool: dict[str, Any]) -> dict[str, Any]:
    """A chat tool ({type, function: {name, ...}}) in the Responses API's flat shape ({type, name, ...})."""
    return {"type": "function", **tool["function"], "strict": True}


def responses(ctx: Any, input: Any, *, stream: bool | None = True, intent: Intent | None = None,
              headers: dict[str, str] | None = None, **fields: Any) -> Request:
    body: dict[str, Any] = {"model": ctx.model, "input": input, **fields}
    if stream is not None:
        body["stream"] = stream
    return Request(path=PATH, body=body, intent=intent, headers=headers or {})


def plain(ctx: Any, *, stream: bool, max_tokens: int, long: bool = False) -> Request:
    """A plain request of the Responses API, for the scenario kinds' liveness and side requests."""
    return responses(ctx, LONG if long else HELLO, stream=stream, max_output_tokens=max_tokens)


def scenarios() -> list[Any]:
    from conformance.model.scenario import PERSON, TIME, WEATHER, Scenario

    s = Scenario
    weather, both = [flat(WEATHER)], [flat(WEATHER), flat(TIME)]
    person = {"format": {"type": "json_schema", "name": "person", "schema": PERSON, "strict": True}}
    needs = "responses"
    return [
        s("responses-stream", "responses", lambda c: responses(c, HELLO, max_output_tokens=ANSWER),
          needs=needs, description="POST /v1/responses, streamed: the whole event lifecycle (it probes the route: "
          "the Responses scenarios are sent only where it is served).", variant="Responses API"),
        s("responses-json", "responses", lambda c: responses(c, HELLO, stream=False, max_output_tokens=ANSWER),
          needs=needs, description="stream: false: one response object."),
        s("responses-items", "responses", lambda c: responses(c, [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": HELLO}]}],
            max_output_tokens=ANSWER), needs=needs, description="input as message items with input_text parts."),
        s("responses-instructions", "responses", lambda c: responses(c, HELLO, instructions="Answer in French.",
                                                                     max_output_tokens=ANSWER),
          needs=needs, description="instructions (the system message of the Responses API)."),
        s("responses-cap", "responses", lambda c: responses(c, LONG, max_output_tokens=CAP, intent=Intent.EXPECT_LENGTH),
          needs=needs, description="max_output_tokens 16 on a long answer: response.incomplete, reason "
          "max_output_tokens."),
        s("responses-cap-json", "responses", lambda c: responses(c, LONG, stream=False, max_output_tokens=CAP,
                                                                 intent=Intent.EXPECT_LENGTH),
          needs=needs, description="The same cut, non-stream: status incomplete."),
        s("responses-tools-auto", "responses", lambda c: responses(c, ASK_WEATHER, tools=weather, tool_choice="auto",
                                                                   max_output_tokens=CALL),
          needs=needs, variant="Responses: function tools"),
        s("responses-tools-required", "responses", lambda c: responses(
            c, ASK_WEATHER, tools=weather, tool_choice="required", max_output_tokens=CALL), needs=needs,
          description="tool_choice required: a function_call item, its arguments streamed."),
        s("responses-tools-named", "responses", lambda c: responses(
            c, ASK_WEATHER, tools=both, tool_choice={"type": "function", "name": "get_weather"},
            max_output_tokens=CALL, temperature=0), needs=needs, description="tool_choice naming get_weather."),
        s("responses-tools-named-other", "responses", lambda c: responses(
            c, ASK_WEATHER, tools=both, tool_choice={"type": "function", "name": "get_time"},
            max_output_tokens=4 * CALL, temperature=0), needs=needs, description="tool_choice naming get_time, the tool "
          "the question does not call for: a server that ignores the name calls get_weather."),
        s("responses-tools-none", "responses", lambda c: responses(c, ASK_WEATHER, tools=weather, tool_choice="none",
                                                                   max_output_tokens=CALL),
          needs=needs, description="tool_choice none: text, no call."),
        s("responses-tools-parallel", "responses", lambda c: responses(
            c, ASK_BOTH, tools=both, tool_choice="required", parallel_tool_calls=True, max_output_tokens=2 * CALL),
          needs=needs, description="Two tools, parallel calls allowed."),
        s("responses-tools-json", "responses", lambda c: responses(
            c, ASK_WEATHER, stream=False, tools=weather, tool_choice="required", max_output_tokens=CALL),
          needs=needs, description="A function call, non-stream."),
        s("responses-structured", "responses", lambda c: responses(
            c, "Give me a person: a name and an age.", text=person, max_output_tokens=96), needs=needs,
          description="text.format json_schema, strict: the output text is JSON that matches.",
          variant="Responses: text.format json_schema"),
        s("responses-reasoning", "responses", lambda c: responses(
            c, HELLO, reasoning={"effort": "low"}, max_output_tokens=128), needs=needs,
          description="reasoning.effort low: reasoning (if any) as a reasoning item, never in the output text."),
        s("responses-unknown-model", "responses", lambda c: responses(
            type(c)(model="conformance-no-such-model"), HELLO, max_output_tokens=ANSWER, intent=Intent.UNKNOWN_MODEL),
          needs=needs, description="An unknown model: a 4xx in the error envelope (404 model_not_found at OpenAI)."),
        s("responses-bad-input", "responses", lambda c: responses(c, 42, max_output_tokens=ANSWER,
                                                                  intent=Intent.WRONG_TYPE),
          needs=needs, description="input: 42: a 400 in the error envelope."),
        s("responses-chain", "responses", lambda c: responses(c, REMEMBER, stream=False, store=True,
                                                              max_output_tokens=ANSWER),
          kind="chain", needs=needs, description="A stored response, then previous_response_id continuing it "
          "(streamed); the id of a store: false response and an unknown id, each refused with a 4xx.",
          variant="Responses: previous_response_id"),
        s("responses-parity", "responses", lambda c: responses(c, HELLO, temperature=0, max_output_tokens=ANSWER),
          kind="parity",
          only_for=("RSP-032",), needs=needs, description="The same request unstreamed twice, then streamed: the "
          "same response."),
        s("responses-disconnect", "responses", lambda c: responses(c, LONG, max_output_tokens=3000), kind="disconnect",
          needs=needs, description="Disconnect after the first output event of a long generation; the work must stop."),
    ]
