"""Ollama's requests and scenarios (``/api/chat``, ``/api/generate``, ``/api/pull``, ``/api/tags``), and the plain
request every scenario kind sends on this protocol."""

from __future__ import annotations

from conformance.model import Intent
from conformance.model.request import Request
from conformance.model.scenario import ANSWER, HELLO, LONG, Context, Scenario


def plain(ctx: Context, *, stream: bool, max_tokens: int, long: bool = False) -> Request:
    """A plain request: /api/chat, streamed as NDJSON unless ``stream`` is false."""
    body = {"model": ctx.model, "messages": LONG if long else HELLO, "options": {"num_predict": max_tokens}}
    return Request(path="/api/chat", body=body if stream else {**body, "stream": False})


def scenarios() -> list[Scenario]:
    s = Scenario
    return [
        s("ollama-chat", "ollama", lambda c: Request(path="/api/chat", body={"model": c.model, "messages": HELLO,
                                                                                 "options": {"num_predict": ANSWER}},
                                                     headers={"X-Request-ID": "conformance-ollama-1"}),
          description="POST /api/chat, streamed as NDJSON (it probes the route: the Ollama scenarios are sent only "
          "where it is served).",
          needs="ollama", variant="Ollama /api/chat"),
        s("ollama-length", "ollama", lambda c: Request(path="/api/generate", body={
            "model": c.model, "prompt": "Tell me a long story.", "options": {"num_predict": 3}},
            intent=Intent.EXPECT_LENGTH), needs="ollama", description="num_predict 3: done_reason length."),
        s("ollama-error", "ollama", lambda c: Request(path="/api/chat", body={
            "model": "conformance-no-such-model", "messages": HELLO, "options": {"num_predict": ANSWER}},
            intent=Intent.OLLAMA_FAILURE), needs="ollama",
          description="An unknown model on /api/chat: an error status or a terminal error frame, no done: true."),
        s("ollama-pull", "ollama", lambda c: Request(path="/api/pull", body={"model": c.model}, intent=Intent.PULL),
          needs="ollama", opt_in=True,
          description="/api/pull of the model already served (opt-in: a real Ollama may download): status frames, "
          "then success or an error frame."),
        s("ollama-generate", "ollama", lambda c: Request(path="/api/generate", body={
            "model": c.model, "prompt": "Say hello.", "options": {"num_predict": ANSWER}}), needs="ollama",
          variant="Ollama /api/generate"),
        s("ollama-tags", "ollama", lambda c: Request(method="GET", path="/api/tags"), needs="ollama", variant="Ollama /api/tags"),
    ]

