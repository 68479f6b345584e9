"""Chat Completions' requests and scenarios (``POST /v1/chat/completions``), and the plain request every scenario
kind sends on this protocol (its liveness and side requests)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from conformance.model import Intent
from conformance.model.request import Request
from conformance.model.scenario import (
    ANSWER,
    ASK_BOTH,
    ASK_WEATHER,
    CALL,
    CUSTOM_TOOL,
    DETERMINISTIC,
    HELLO,
    JSON,
    LONG,
    NESTED,
    NULLABLE,
    OVERSIZED_BYTES,
    PERSON,
    PIXEL,
    THINK,
    TIME,
    UNION,
    WEATHER,
    Context,
    Scenario,
    overflow_words,
)

PATH = "/v1/chat/completions"
PARITY = ("CHK-022",)  # a rule selection runs the parity scenarios (three requests each) only for this rule


def image(url: str = PIXEL, **extra: Any) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": url, **extra}}


def chat(ctx: Context, messages: list[dict[str, Any]], *, stream: bool | None = True, intent: Intent | None = None,
         headers: dict[str, str] | None = None, **fields: Any) -> Request:
    body: dict[str, Any] = {"model": ctx.model, "messages": messages, **fields}
    if stream is not None:
        body["stream"] = stream
    return Request(body=body, intent=intent, headers=headers or {})


def _raw(ctx: Context, content: bytes, intent: Intent, content_type: str = "application/json") -> Request:
    return Request(content=content, intent=intent, headers={"Content-Type": content_type})


def _effort(value: str) -> Callable[[Context], Request]:
    return lambda c: chat(c, HELLO, reasoning_effort=value, max_tokens=16, intent=Intent.EFFORT)



BULK = "\x00bulk\x00"  # where the oversized body's bulk goes in its JSON


def oversized(ctx: Context) -> Request:
    """A 16 MiB body, its bulk in the user field. The bytes sent are built once (``content``: the JSON with the bulk
    in place); the request as recorded (``body``: the wire log, the judging, results.json) names the bulk instead of
    holding it, so a run holds 16 MiB once while it sends them, not four copies to its end (issue 57: this scenario
    alone took a run against the reference server from 70 to 170 MB)."""
    req = chat(ctx, HELLO, user=BULK, max_tokens=ANSWER, intent=Intent.OVERSIZED)
    head, tail = json.dumps(req.body).encode().split(json.dumps(BULK).encode())
    req.content = b"".join((head, b'"', b"x" * OVERSIZED_BYTES, b'"', tail))
    req.body["user"] = f"x repeated {OVERSIZED_BYTES:,} times (sent whole; the record names it, not the bytes)"
    return req


def plain(ctx: Context, *, stream: bool, max_tokens: int, long: bool = False) -> Request:
    """A plain request: the liveness request after an error, a disconnect's baseline and other stream, the burst's
    settle streams."""
    return chat(ctx, LONG if long else HELLO, stream=stream, max_tokens=max_tokens)


def scenarios() -> list[Scenario]:
    s = Scenario
    usage: dict[str, Any] = {"stream_options": {"include_usage": True}}
    return [
        # transport, framing, chunks, finish, usage
        s("stream-plain", "framing", lambda c: chat(c, HELLO, max_tokens=ANSWER), needs="chat",
          description="A plain streamed answer (it probes the route: chat's scenarios are sent only where it is served).",
          variant="Chat Completions"),
        s("request-id", "transport", lambda c: chat(c, HELLO, max_tokens=ANSWER,
                                                    headers={"X-Request-ID": "conformance-plain-1"}),
          description="A plain stream with an X-Request-ID of the suite's own (not a UUID): echoed, or ignored; a "
          "server that refuses it leaves only this scenario without a stream."),
        s("stream-usage", "usage", lambda c: chat(c, HELLO, max_tokens=ANSWER, **usage), needs="usage",
          description="stream_options.include_usage: one usage chunk after the finish.", variant="usage (include_usage)"),
        s("stream-long", "transport", lambda c: chat(c, LONG, max_tokens=48, intent=Intent.EXPECT_LENGTH, **usage),
          description="A long answer cut by max_tokens 48: length, incremental delivery, usage within the cap."),
        s("stream-clock", "chunks", lambda c: chat(c, LONG, max_tokens=48, **usage), kind="clock",
          description="A long stream that lasts over a second (max_tokens scaled from a first, shorter stream's "
          "speed, at most 1536): a server that stamps each chunk with the time it makes it is seen to change "
          "created (CHK-005), whatever the clock says when the suite runs."),
        s("non-stream", "chunks", lambda c: chat(c, HELLO, stream=False, max_tokens=ANSWER), description="stream: false."),
        s("no-stream-field", "transport", lambda c: chat(c, HELLO, stream=None, max_tokens=ANSWER),
          description="No stream field at all: the answer must not stream."),
        s("max-tokens", "finish", lambda c: chat(c, LONG, max_tokens=5, temperature=0, intent=Intent.EXPECT_LENGTH,
                                                 **usage), kind="cap-compare",
          description="max_tokens 5 on a long answer: finish length, completion_tokens <= 5 (the same request with "
          "max_tokens 20, sent first, shows whether the answer was cut)."),
        s("max-completion-tokens", "finish", lambda c: chat(c, LONG, stream=False, max_completion_tokens=5,
                                                            intent=Intent.EXPECT_LENGTH),
          description="max_completion_tokens 5, non-stream."),
        s("stop-sequence", "finish", lambda c: chat(c, HELLO, stop=[" "], max_tokens=ANSWER, temperature=0),
          kind="stop-compare", description="stop [' ']: the answer ends before the first space (the same request "
          "without stop, sent first, shows where that is)."),
        s("n-two", "chunks", lambda c: chat(c, HELLO, n=2, max_tokens=ANSWER, intent=Intent.N),
          description="n: 2, honored with two choices or refused with a 4xx envelope.", variant="n: 2"),
        # tools
        s("tools-auto", "tools", lambda c: chat(c, ASK_WEATHER, tools=[WEATHER], tool_choice="auto", max_tokens=CALL),
          needs="tools", variant="tool_choice: auto"),
        s("tools-required", "tools", lambda c: chat(c, ASK_WEATHER, tools=[WEATHER], tool_choice="required",
                                                        max_tokens=CALL), needs="tools", variant="tool_choice: required"),
        # the named tool second in the list: a lone call whose index is its tool's position in tools (1), not its
        # place among the calls (0), fails TOOL-002 (issue 44). temperature 0: a server that forces the named call
        # with a grammar samples where the model has no preference (llama-cpp-python: random arguments, JSON in one
        # run and not in the next); greedy is repeatable
        s("tools-named", "tools", lambda c: chat(c, ASK_WEATHER, tools=[TIME, WEATHER], tool_choice={
            "type": "function", "function": {"name": "get_weather"}}, max_tokens=CALL, temperature=0), needs="tools",
          variant="tool_choice: named"),
        s("tools-none", "tools", lambda c: chat(c, ASK_WEATHER, tools=[WEATHER], tool_choice="none", max_tokens=CALL),
          needs="tools", variant="tool_choice: none"),
        s("tools-parallel", "tools", lambda c: chat(c, ASK_BOTH, tools=[WEATHER, TIME], parallel_tool_calls=True,
                                                    max_tokens=2 * CALL),
          needs="tools", variant="parallel tool calls"),
        s("tools-parallel-false", "tools", lambda c: chat(c, ASK_BOTH, tools=[WEATHER, TIME],
                                                          parallel_tool_calls=False, max_tokens=2 * CALL),
          needs="tools", variant="parallel_tool_calls: false"),
        s("tools-nested", "tools", lambda c: chat(c, [{"role": "user", "content": "Book a trip to Oslo for Ada."}],
                                                  tools=[NESTED], tool_choice="required", max_tokens=2 * CALL),
          needs="tools"),
        s("tools-non-stream", "tools", lambda c: chat(c, ASK_WEATHER, stream=False, tools=[WEATHER],
                                                      tool_choice="required", max_tokens=CALL), needs="tools"),
        s("tools-roundtrip", "tools", lambda c: chat(c, ASK_WEATHER + [
            {"role": "assistant", "content": None, "tool_calls": [{"id": "call_rt1", "type": "function", "function": {
                "name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
            {"role": "tool", "tool_call_id": "call_rt1", "content": '{"sky": "sunny", "celsius": 21}'}],
            tools=[WEATHER], max_tokens=CALL, intent=Intent.ROUNDTRIP), needs="tools",
          description="A tool result sent back: the next turn answers."),
        s("tools-schema-union", "tools", lambda c: chat(c, [{"role": "user", "content": "Label it 'red'."}], tools=[UNION],
                                                        max_tokens=CALL, intent=Intent.TOOL_SCHEMA_UNION), needs="tools",
          description="A tool schema with a mixed-type union and allOf: answered, or refused with a 4xx "
          "(seed 001: 400 invalid_tool_schema).", variant="tool schemas: allOf and unions"),
        s("tools-schema-nullable", "tools", lambda c: chat(c, [{"role": "user", "content": "Set a red reminder."}],
                                                            tools=[NULLABLE], max_tokens=CALL,
                                                            intent=Intent.TOOL_SCHEMA_SUPPORTED),
          needs="tools", variant="tool schemas: nullable and constant unions",
          description="A tool schema with a type plus null, a two-branch anyOf, a disjoint oneOf and string constants: "
          "answered, or refused with a 4xx (seed 001 supports every one)."),
        s("tools-non-function", "tools", lambda c: chat(c, ASK_WEATHER, tools=[WEATHER, CUSTOM_TOOL], max_tokens=CALL,
                                                        intent=Intent.TOOL_NON_FUNCTION), needs="tools",
          description="A function tool beside a custom (non-function) one, as OpenAI accepts: answered, or refused "
          "with a 4xx (seed 001 takes only function tools: 400).", variant="tools: a custom (non-function) tool"),
        s("tools-cut-by-length", "tools", lambda c: chat(c, ASK_WEATHER, tools=[WEATHER], tool_choice="required",
                                                         max_tokens=3, intent=Intent.EXPECT_LENGTH), needs="tools"),
        # reasoning and structured output
        s("reasoning", "reasoning", lambda c: chat(c, HELLO, reasoning_effort="low", max_tokens=THINK,
                                                   intent=Intent.EFFORT), needs="reasoning", variant="reasoning_effort: low",
          observable=False),
        s("reasoning-none", "reasoning", lambda c: chat(c, HELLO, reasoning_effort="none", max_tokens=THINK,
                                                        intent=Intent.EFFORT), needs="reasoning",
          variant="reasoning_effort: none"),
        s("reasoning-roundtrip", "reasoning", lambda c: chat(c, HELLO + [
            {"role": "assistant", "content": "Hello!", "reasoning_content": "The user greets me."},
            {"role": "user", "content": "Say it again."}], reasoning_effort="low", max_tokens=THINK,
            intent=Intent.ROUNDTRIP), needs="reasoning"),
        *(s(f"reasoning-effort-{value}", "reasoning", _effort(value), needs="reasoning", variant=f"reasoning_effort: {value}",
            description=f"reasoning_effort {value}: accepted, or refused as unsupported (seed 003 §2.1).", observable=False)
          for value in ("medium", "high", "xhigh")),
        # JSON is asked for in the system message (OpenAI's json_object needs the word somewhere), not in the last
        # one: the bundled model writes JSON only when the last message asks, so a server that ignores
        # response_format answers in prose here and is seen to ignore it
        s("json-object", "structured", lambda c: chat(c, [{"role": "system", "content": "You always reply in JSON."},
                                                          {"role": "user", "content": "Describe a cat."}],
                                                      response_format={"type": "json_object"}, max_tokens=JSON),
          needs="structured", variant="response_format: json_object"),
        s("json-schema-strict", "structured", lambda c: chat(c, [{"role": "user", "content": "Give a person as JSON."}],
                                                             response_format={"type": "json_schema", "json_schema": {
                                                                 "name": "person", "schema": PERSON, "strict": True}},
                                                             max_tokens=JSON),
          needs="structured", variant="response_format: json_schema strict"),
        s("response-format-text", "structured", lambda c: chat(c, HELLO, response_format={"type": "text"},
                                                              max_tokens=ANSWER, intent=Intent.FORMAT_TEXT),
          description="response_format {\"type\": \"text\"}, the default: answered as without it."),
        s("sampling-options", "errors", lambda c: chat(c, HELLO, top_k=40, repetition_penalty=1.1, max_tokens=ANSWER,
                                                       intent=Intent.SAMPLING_OPTIONS), only=("strict",),
          description="top_k and repetition_penalty, which seed 001 documents as supported: answered."),
        s("unsupported-options", "errors", lambda c: chat(c, HELLO, logit_bias={"1": -1}, verbosity="low",
                                                          max_tokens=ANSWER, intent=Intent.UNSUPPORTED_OPTIONS),
          only=("strict",), description="logit_bias and verbosity, which seed 001 refuses: 400 unsupported_value."),
        s("error-response-format-string", "errors", lambda c: chat(c, HELLO, response_format="json_object",
                                                                  max_tokens=ANSWER, intent=Intent.BAD_VALUE),
          kind="followup", description="response_format as a string, not an object: refused with a 4xx (seed 001: "
          "invalid_value)."),
        # stream/non-stream parity (CHK-022): unstreamed twice, then streamed, at temperature 0 with a seed
        s("parity-text", "chunks", lambda c: chat(c, HELLO, max_tokens=ANSWER, **DETERMINISTIC, **usage),
          kind="parity", only_for=PARITY,
          description="A plain answer unstreamed twice, then streamed: the stream assembles to it."),
        s("parity-tools", "chunks", lambda c: chat(c, ASK_WEATHER, tools=[WEATHER], tool_choice="auto",
                                                   max_tokens=CALL, **DETERMINISTIC, **usage),
          kind="parity", only_for=PARITY, needs="tools",
          description="A tool call unstreamed twice, then streamed: the same name and arguments (parsed), finish "
          "and usage."),
        s("parity-structured", "chunks", lambda c: chat(c, [{"role": "user", "content": "Give a person as JSON."}],
                                                        response_format={"type": "json_schema", "json_schema": {
                                                            "name": "person", "schema": PERSON, "strict": True}},
                                                        max_tokens=JSON, **DETERMINISTIC, **usage),
          kind="parity", only_for=PARITY, needs="structured",
          description="Structured output unstreamed twice, then streamed: the same JSON text."),
        s("parity-reasoning", "chunks", lambda c: chat(c, HELLO, reasoning_effort="low", max_tokens=THINK,
                                                       **DETERMINISTIC, **usage),
          kind="parity", only_for=PARITY, needs="reasoning",
          description="A reasoning answer unstreamed twice, then streamed: the same reasoning and content."),
        # errors before the stream (each followed by a plain request)
        s("error-malformed-json", "errors", lambda c: _raw(c, b'{"model": "x", "messages": [', Intent.MALFORMED_JSON),
          kind="followup"),
        s("error-wrong-type", "errors",
          lambda c: chat(c, "hello", max_tokens=ANSWER, intent=Intent.WRONG_TYPE),  # type: ignore[arg-type]
          kind="followup"),
        s("error-bad-value", "errors",
          lambda c: chat(c, HELLO, temperature="hot", max_tokens=ANSWER, intent=Intent.BAD_VALUE),
          kind="followup"),
        s("error-missing-messages", "errors", lambda c: Request(body={"model": c.model, "stream": True, "max_tokens": ANSWER},
                                                                intent=Intent.MISSING_MESSAGES), kind="followup"),
        s("null-fields", "errors", lambda c: chat(c, HELLO, max_tokens=ANSWER, temperature=None, top_p=None,
                                                  stop=None, seed=None, intent=Intent.NULL_FIELDS),
          description="Optional top-level fields set to null: answered as if absent."),
        s("ignored-fields", "errors", lambda c: chat(c, HELLO, max_tokens=ANSWER, user="conformance",
                                                     store=False, metadata={"suite": "conformance"},
                                                     service_tier="auto", prompt_cache_key="conformance",
                                                     safety_identifier="conformance",
                                                     intent=Intent.IGNORED_FIELDS),
          description="The OpenAI fields a server may ignore (user, store, metadata, ...): accepted."),
        s("error-unknown-parameter", "errors", lambda c: chat(c, HELLO, temperatur=0.2, max_tokens=ANSWER,
                                                                  intent=Intent.UNKNOWN_PARAMETER),
          kind="followup"),
        s("error-unknown-model", "errors", lambda c: Request(body={
            "model": "conformance-no-such-model", "messages": HELLO, "stream": True, "max_tokens": ANSWER},
            intent=Intent.UNKNOWN_MODEL),
          kind="followup"),
        s("error-context-overflow", "errors", lambda c: chat(c, [{"role": "user",
                                                              "content": "hello " * overflow_words(c)}],
                                                             max_tokens=16, intent=Intent.CONTEXT_OVERFLOW),
          kind="followup", description="A prompt a quarter beyond the context the server states (else 256K tokens)."),
        s("error-oversized", "errors", oversized, kind="followup",
          description="A 16 MiB body, its bulk in the user field: the size is what is refused (413), and a server "
          "without a body limit parses it and answers rather than tokenizing 16 MiB."),
        s("error-json-text-plain", "errors", lambda c: _raw(
            c, json.dumps({"model": c.model, "messages": HELLO, "max_tokens": 8}).encode(), Intent.JSON_AS_TEXT,
            "text/plain"),
          description="A valid JSON body labelled text/plain (what a web page may post without a CORS preflight): "
          "refused with a 4xx."),
        s("error-wrong-content-type", "errors", lambda c: _raw(c, b"hello", Intent.WRONG_CONTENT_TYPE, "text/plain"),
          kind="followup"),
        # images (seed 001 Images; 003 §2.2)
        s("image-data-url", "images", lambda c: chat(c, [{"role": "user", "content": [
            {"type": "text", "text": "What colour is this pixel?"}, image()]}], max_tokens=ANSWER, intent=Intent.IMAGE),
          description="A data-URL image in a user message: answered, or refused with a 4xx envelope.", variant="images",
          observable=False),
        s("image-wrong-role", "images", lambda c: chat(c, [{"role": "system", "content": [image()]}, *HELLO],
                                                       max_tokens=ANSWER, intent=Intent.IMAGE_MISPLACED),
          kind="followup", description="An image in a system message: refused with 400."),
        s("image-detail-high", "images", lambda c: chat(c, [{"role": "user", "content": [
            {"type": "text", "text": "Describe it."}, image(detail="high")]}], max_tokens=ANSWER,
            intent=Intent.IMAGE_MISPLACED), kind="followup", only=("strict",),
          description="detail high, which seed 001 refuses (detail absent or auto)."),
        s("image-remote-url", "images", lambda c: chat(c, [{"role": "user", "content": [
            {"type": "text", "text": "Describe it."}, image("https://example.invalid/pixel.png")]}], max_tokens=ANSWER,
            intent=Intent.IMAGE_MISPLACED), kind="followup", only=("strict",),
          description="A remote image URL, which seed 001 refuses (data URLs only); .invalid never resolves."),
        # usage: prompt reuse
        s("prompt-reuse", "usage", lambda c: chat(c, HELLO, max_tokens=ANSWER, **usage), needs="usage", kind="repeat",
          description="The same history twice: the second reports the reused prompt tokens (seed 001).",
          variant="prompt reuse (cached_tokens)"),
        # AFM profile events (seed 000): a server without them ignores the header
        s("afm-profile", "chunks", lambda c: chat(c, HELLO, max_tokens=5, headers={"X-AFM-Profile": "true"}, **usage),
          description="X-AFM-Profile: true: an afm_profile object after usage, before [DONE], without choices."),
        s("afm-profile-extended", "chunks", lambda c: chat(c, HELLO, max_tokens=5,
                                                           headers={"X-AFM-Profile": "extended"}, **usage),
          description="X-AFM-Profile: extended: afm_profile_extended with summary and samples."),
        # cancellation
        s("disconnect", "cancellation", lambda c: chat(c, LONG, max_tokens=3000), kind="disconnect",
          description="Disconnect after the first event of a long generation; the work must stop."),
        s("cancel-endpoint", "cancellation", lambda c: chat(c, LONG, max_tokens=3000, intent=Intent.CANCELLED_STREAM,
                                                            headers={"X-Request-ID": "conformance-cancel-1"}),
          needs="cancel-endpoint", kind="cancel"),
        s("cancel-unknown", "cancellation", lambda c: Request(
            path="/v1/chat/completions/conformance-unknown-id/cancel", body={}, intent=Intent.CANCEL_UNKNOWN),
          needs="cancel-endpoint", variant="cancel endpoint"),
        s("cancel-completed", "cancellation", lambda c: chat(c, HELLO, max_tokens=ANSWER, headers={
            "X-Request-ID": "conformance-cancel-done-1"}), needs="cancel-endpoint", kind="cancel-completed",
          description="A stream that has ended, then its cancel call and one with its chatcmpl id: 404, cancelled: false."),
        s("queue-full", "errors", lambda c: chat(c, LONG, max_tokens=3000), kind="burst",
          description="Twelve long streams at once: a server with a bounded queue answers 429 with Retry-After."),
        # transport over HTTP/1.0
        s("http10", "transport", lambda c: chat(c, HELLO, max_tokens=ANSWER), kind="http10",
          description="An HTTP/1.0 request: no Transfer-Encoding, a close-delimited body."),
        # models and Ollama
        s("models", "models", lambda c: Request(method="GET", path="/v1/models")),
        s("health", "models", lambda c: Request(method="GET", path="/health"),
          description="GET /health (seed 001): 200 with a JSON object where served.", variant="GET /health"),
    ]
