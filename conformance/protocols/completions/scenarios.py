"""The Completions API's requests and scenarios (``POST /v1/completions``: a prompt, not messages; ``text`` in each
choice), and the plain request every scenario kind sends on this protocol.

The scenarios a completions client sends: a prompt streamed and not, with its output capped, a stop sequence, n: 2,
logprobs, usage in the stream, a suffix (a code-completion client's insert), a prompt of token ids, and the request
lm-evaluation-harness's ``local-completions`` sends to score a continuation (echo, logprobs 1, max_tokens 1,
temperature 0, a seed)."""

from __future__ import annotations

from typing import Any

from conformance.model import Intent
from conformance.model.request import Request
from conformance.model.scenario import ANSWER, DETERMINISTIC, Scenario

PATH = "/v1/completions"
# prompts a completion continues (no chat template: the text goes on from its last word): a greeting that comes to an
# end by itself, and a story that only max_tokens ends
HELLO = "Greet the reader. Hello"
LONG = "Tell me a long story, as long as you can. Round"
PARITY = ("CMP-012",)
TOKEN_PROMPT = [[72, 101, 108, 108, 111]]  # a batch of one prompt of token ids, as lm-eval's tokenized requests send
# lm-eval's loglikelihood payload, with max_tokens 1
LOGLIKELIHOOD: dict[str, Any] = {"temperature": 0, "logprobs": 1, "seed": 1234, "echo": True}


def completion(ctx: Any, prompt: Any, *, stream: bool | None = True, intent: Intent | None = None,
               max_tokens: int | None = ANSWER, **fields: Any) -> Request:
    body: dict[str, Any] = {"model": ctx.model, "prompt": prompt, **fields}
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if stream is not None:
        body["stream"] = stream
    return Request(path=PATH, body=body, intent=intent)


def plain(ctx: Any, *, stream: bool, max_tokens: int, long: bool = False) -> Request:
    """A plain request of the Completions API, for the scenario kinds' liveness and side requests."""
    return completion(ctx, LONG if long else HELLO, stream=stream, max_tokens=max_tokens)


def scenarios() -> list[Any]:
    s = Scenario
    needs = "completions"
    usage: dict[str, Any] = {"stream_options": {"include_usage": True}}
    return [
        s("completions-stream", "completions", lambda c: completion(c, HELLO), needs=needs, variant="Completions API",
          description="POST /v1/completions, streamed (it probes the route: the Completions scenarios are sent only "
          "where it is served)."),
        s("completions-json", "completions", lambda c: completion(c, HELLO, stream=False), needs=needs,
          description="stream: false: one completion object, with usage."),
        s("completions-usage", "completions", lambda c: completion(c, HELLO, **usage), needs=needs,
          description="stream_options.include_usage: one usage chunk of no choices before [DONE]."),
        s("completions-cap", "completions", lambda c: completion(c, LONG, max_tokens=5, temperature=0,
                                                                 intent=Intent.EXPECT_LENGTH, **usage),
          needs=needs, kind="cap-compare", description="max_tokens 5 on a long answer: finish_reason length, "
          "completion_tokens at most 5 (the same request with 20, sent first, shows whether the answer was cut)."),
        s("completions-stop", "completions", lambda c: completion(c, HELLO, stop=[" the"], temperature=0),
          needs=needs, kind="stop-compare", description="stop [' the']: the text ends before it (the same request "
          "without stop, sent first, shows where that is)."),
        s("completions-logprobs", "completions", lambda c: completion(c, LONG, logprobs=2, max_tokens=8, temperature=0),
          needs="completions-logprobs", variant="Completions: logprobs",
          description="logprobs 2, streamed: each chunk's logprobs lists, of one length, its tokens joining into its "
          "text."),
        s("completions-echo", "completions", lambda c: completion(c, "The capital of France is Paris", stream=False,
                                                                  max_tokens=1, **LOGLIKELIHOOD),
          needs="completions-echo", variant="Completions: echo with logprobs",
          description="lm-evaluation-harness's loglikelihood request (echo, logprobs 1, max_tokens 1, temperature 0, "
          "seed 1234): the prompt echoed before one token, logprobs covering the prompt's tokens."),
        s("completions-n-two", "completions", lambda c: completion(c, HELLO, n=2, intent=Intent.N), needs=needs,
          variant="Completions: n: 2", description="n: 2, answered with two choices or refused with a 4xx."),
        s("completions-suffix", "completions", lambda c: completion(c, "def add(a, b):\n    ", suffix="\n\nprint(add(1, 2))",
                                                                    stream=False, temperature=0),
          needs=needs, variant="Completions: suffix", observable=False,
          description="A suffix after the insertion point (a code-completion client's insert): answered, or refused "
          "with a 4xx."),
        s("completions-token-prompt", "completions", lambda c: completion(c, TOKEN_PROMPT, stream=False, max_tokens=8),
          needs=needs, variant="Completions: a prompt of token ids", observable=False,
          description="A prompt given as token ids (a batch of one, as lm-evaluation-harness sends tokenized "
          "requests): answered, or refused with a 4xx."),
        s("completions-parity", "completions", lambda c: completion(c, HELLO, **DETERMINISTIC), needs=needs,
          kind="parity", only_for=PARITY,
          description="The same prompt unstreamed twice, then streamed: the stream assembles to the same text."),
        s("completions-bad-input", "completions", lambda c: completion(c, {"not": "a prompt"}, intent=Intent.WRONG_TYPE),
          needs=needs, kind="followup", description="A prompt that is an object: refused with a 4xx, and the server "
          "still answers after it."),
        s("completions-unknown-model", "completions", lambda c: Request(path=PATH, body={
            "model": "conformance-no-such-model", "prompt": HELLO, "max_tokens": ANSWER, "stream": True},
            intent=Intent.UNKNOWN_MODEL), needs=needs, kind="followup",
          description="An unknown model: refused with a 4xx (404 model_not_found), never a stream."),
        s("completions-disconnect", "completions", lambda c: completion(c, LONG, max_tokens=3000), needs=needs,
          kind="disconnect", description="A long completion left after its first chunk: the work stops."),
    ]
