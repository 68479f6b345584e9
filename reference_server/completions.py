"""The OpenAI Completions API on the same engine: ``POST /v1/completions``, a prompt (text, or token ids) continued as
it is, no chat template; streamed as ``text_completion`` chunks ended by ``data: [DONE]``, or one completion object.

What it honours, as OpenAI's reference documents it: ``max_tokens`` (default 16), ``stop`` (up to four; the text ends
before the first, which it never holds), ``echo`` (the prompt before the completion), ``logprobs`` (0 to 5: each
token's log probability and the most likely alternatives, the prompt's too with ``echo``, scored by one forward pass),
``stream_options.include_usage`` (one chunk of usage and no choices before ``[DONE]``), ``temperature``, ``top_p``,
``seed``. What it refuses as documented, a 400 naming the field: ``n`` and ``best_of`` above 1 and ``suffix``
(``unsupported_value``: the bundled model makes one sequence and has no insert mode), a prompt list of more than one
prompt, an unknown field (``unknown_parameter``).
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from reference_server.engine import Job, QueueFull
from reference_server.protocol import APIError

if TYPE_CHECKING:
    from reference_server.app import Server

KNOWN = frozenset({"model", "prompt", "max_tokens", "temperature", "top_p", "n", "stream", "stream_options", "logprobs",
                   "echo", "stop", "presence_penalty", "frequency_penalty", "best_of", "logit_bias", "user", "suffix",
                   "seed"})
DEFAULT_MAX_TOKENS = 16  # OpenAI's default for the Completions API
MAX_LOGPROBS = 5


def _bad(param: str, message: str, code: str = "invalid_value", status: int = 400) -> APIError:
    return APIError(status, message, code, param)


def _number(body: dict[str, Any], key: str, low: float, high: float, default: float) -> float:
    value = body.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise _bad(key, f"{key} must be a number from {low:g} to {high:g}")
    return float(value)


@dataclass
class CompletionRequest:
    prompt: str | list[int]
    max_tokens: int = DEFAULT_MAX_TOKENS
    stream: bool = False
    include_usage: bool = False
    logprobs: int | None = None
    echo: bool = False
    stop: list[str] = field(default_factory=list)
    temperature: float = 1.0
    top_p: float = 1.0
    seed: int | None = None


def parse(body: Any, model_id: str) -> CompletionRequest:
    """A validated request, or the 4xx OpenAI's reference documents for it."""
    if not isinstance(body, dict):
        raise _bad("body", "the request body must be a JSON object", "invalid_request_error")
    unknown = sorted(k for k in body if k not in KNOWN)
    if unknown:
        raise _bad(unknown[0], f"Unrecognized request argument supplied: {unknown[0]}", "unknown_parameter")
    if body.get("model") != model_id:
        raise APIError(404, f"The model '{str(body.get('model'))[:80]}' does not exist", "model_not_found", "model")
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], (str, list)):
        prompt = prompt[0]  # a batch of one
    if isinstance(prompt, list):
        if not prompt or not all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in prompt):
            raise _bad("prompt", "prompt must be a string, token ids, or a batch of one of either")
    elif not isinstance(prompt, str):
        raise _bad("prompt", "prompt must be a string, token ids, or a batch of one of either")
    for key in ("n", "best_of"):
        value = body.get(key, 1)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise _bad(key, f"{key} must be a positive integer")
        if value not in (None, 1):
            raise _bad(key, f"{key} above 1 is not supported: this server makes one completion", "unsupported_value")
    if body.get("suffix") not in (None, ""):
        raise _bad("suffix", "suffix is not supported by this model (no insert mode)", "unsupported_value")
    max_tokens = body.get("max_tokens", DEFAULT_MAX_TOKENS)
    if max_tokens is None:
        max_tokens = DEFAULT_MAX_TOKENS
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise _bad("max_tokens", "max_tokens must be a positive integer")
    logprobs = body.get("logprobs")
    if logprobs is not None and (not isinstance(logprobs, int) or isinstance(logprobs, bool)
                                 or not 0 <= logprobs <= MAX_LOGPROBS):
        raise _bad("logprobs", f"logprobs must be an integer from 0 to {MAX_LOGPROBS}")
    stop = body.get("stop")
    stops = [stop] if isinstance(stop, str) else stop if isinstance(stop, list) else [] if stop is None else None
    if stops is None or len(stops) > 4 or not all(isinstance(s, str) and s for s in stops):
        raise _bad("stop", "stop must be a non-empty string or a list of up to 4 of them")
    options = body.get("stream_options")
    if options is not None and not isinstance(options, dict):
        raise _bad("stream_options", "stream_options must be an object")
    echo = body.get("echo", False)
    if not isinstance(echo, bool):
        raise _bad("echo", "echo must be true or false")
    stream = body.get("stream", False)
    if not isinstance(stream, bool) and stream is not None:
        raise _bad("stream", "stream must be true or false")
    seed = body.get("seed")
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise _bad("seed", "seed must be an integer")
    return CompletionRequest(prompt, max_tokens, bool(stream), bool((options or {}).get("include_usage")), logprobs,
                             echo, list(stops), _number(body, "temperature", 0, 2, 1.0),
                             _number(body, "top_p", 0, 1, 1.0), seed)


class StopHold:
    """Holds back the tail of the text that could still begin a stop sequence; the text never holds one."""

    def __init__(self, stops: list[str]) -> None:
        self.stops, self.held, self.stopped = stops, "", False

    def add(self, text: str) -> str:
        """What of the text so far is safe to send."""
        if self.stopped:
            return ""
        self.held += text
        hits = [(self.held.find(s), s) for s in self.stops if s in self.held]
        if hits:
            self.stopped = True
            at = min(hits)[0]
            out, self.held = self.held[:at], ""
            return out
        keep = max((n for s in self.stops for n in range(1, len(s)) if self.held.endswith(s[:n])), default=0)
        out, self.held = self.held[:len(self.held) - keep], self.held[len(self.held) - keep:]
        return out

    def flush(self) -> str:
        out, self.held = ("" if self.stopped else self.held), ""
        return out


@dataclass
class Logprobs:
    """The logprobs object being built: tokens, their log probabilities, the top alternatives, their offsets."""

    tokens: list[str] = field(default_factory=list)
    token_logprobs: list[float | None] = field(default_factory=list)
    top_logprobs: list[dict[str, float] | None] = field(default_factory=list)
    text_offset: list[int] = field(default_factory=list)

    def add(self, text: str, logprob: float | None, top: dict[str, float] | None, offset: int) -> None:
        self.tokens.append(text)
        self.token_logprobs.append(logprob)
        self.top_logprobs.append(top)
        self.text_offset.append(offset)

    def to_json(self, alternatives: bool) -> dict[str, Any]:
        return {"tokens": self.tokens, "token_logprobs": self.token_logprobs,
                "top_logprobs": self.top_logprobs if alternatives else None, "text_offset": self.text_offset}


class Completion:
    """One request's completion as it is made: the prompt's tokens, then each piece of text (with its logprobs)."""

    def __init__(self, server: Server, req: CompletionRequest) -> None:
        self.server, self.req = server, req
        tok = server.engine.tokenizer
        self.tokens = list(req.prompt) if isinstance(req.prompt, list) else list(tok.encode(req.prompt))
        self.prompt_text = tok.decode(self.tokens) if isinstance(req.prompt, list) else req.prompt
        self.offset = 0  # characters of text sent so far (echo's prompt included)
        self.eos = set(getattr(tok, "eos_token_ids", ()) or ())

    def top(self, pairs: list[tuple[int, float]]) -> dict[str, float]:
        out: dict[str, float] = {}
        for token, lp in pairs:
            out.setdefault(self.token_text(token), round(lp, 6))
        return out

    async def echo(self) -> tuple[str, Logprobs | None]:
        """The prompt as text (and its logprobs, scored)."""
        text = self.prompt_text
        lp = None
        if self.req.logprobs is not None:
            scores = await asyncio.get_running_loop().run_in_executor(
                None, self.server.engine.score, self.tokens, self.req.logprobs)
            lp, at, decode = Logprobs(), 0, self.server.engine.tokenizer.decode
            for n, (logprob, top) in enumerate(scores):
                # each token's text as the prompt's text holds it (decoded with the ones before: a space, a character
                # of several byte tokens whole), so the tokens join into the echoed prompt
                full = decode(self.tokens[:n + 1])
                piece = "" if full.endswith("\ufffd") else full[at:]
                lp.add(piece, None if logprob is None else round(logprob, 6),
                       None if logprob is None else self.top(top), at)
                at += len(piece)
        self.offset = len(text)
        return text, lp

    def token_text(self, token: int) -> str:
        """A token as logprobs name it: its text, or ``bytes:\\xNN...`` for a byte that is no text alone (as OpenAI
        names a part of a UTF-8 character)."""
        tok = self.server.engine.tokenizer
        text: str = tok.decode([token])
        if "\ufffd" not in text:
            return text
        from reference_server.model import _bytes_to_unicode

        back = {c: b for b, c in _bytes_to_unicode().items()}
        piece = tok._tokenizer.convert_ids_to_tokens([token])[0]
        raw = bytes(back[c] for c in piece if c in back)
        return "bytes:" + "".join(f"\\x{b:02x}" for b in raw)

    async def pieces(self, job: Job) -> AsyncIterator[tuple[str, str, float | None, dict[str, float] | None]]:
        """("text", text, logprob, top) as the tokens come (the text decoded from every token so far, so a space or a
        character made of several tokens comes whole; a stop sequence held back until it is known not to begin
        one), then ("finish", reason, tokens made, None)."""
        hold = StopHold(self.req.stop)
        decode = self.server.engine.tokenizer.decode
        assert job.events is not None
        made: list[int] = []
        decoded, ended = "", False
        try:
            while True:
                kind, value = await job.events.get()
                if kind == "token":
                    token, _, logprob, top = value
                    if token in self.eos:
                        continue
                    made.append(token)
                    full = decode(made)
                    new = "" if full.endswith("\ufffd") else full[len(decoded):]
                    decoded += new
                    safe = hold.add(new)
                    yield "text", safe, logprob, self.top(top) if self.req.logprobs else None
                    if hold.stopped:
                        job.stop("stop")
                elif kind == "error":
                    ended = True
                    yield "error", str(value), None, None
                    return
                elif kind == "done":
                    ended = True
                    rest = hold.flush()
                    if rest:
                        yield "text", rest, None, None
                    reason, _ = value
                    reason = "stop" if hold.stopped or reason == "stop" else reason
                    yield "finish", reason, float(len(made)), None
                    return
        finally:
            if not ended:
                job.stop("disconnect")
            self.server.engine.forget(job)
            self.server.engine.release()


def routes(server: Server) -> list[Route]:
    async def create(request: Request) -> Response:
        from reference_server.app import SSE_HEADERS, error_response, read_json

        headers = server.request_ids(request)
        try:
            server.check_key(request)
            req = parse(await read_json(request), server.engine.model_id)
            completion = Completion(server, req)
            job = submit(server, completion)
        except APIError as exc:
            return error_response(exc, headers)
        meta = {"id": f"cmpl-{uuid.uuid4().hex[:24]}", "object": "text_completion", "created": int(time.time()),
                "model": server.engine.model_id}
        if req.stream:
            return StreamingResponse(sse(completion, job, meta), media_type="text/event-stream",
                                     headers={**SSE_HEADERS, **headers})
        body = await whole(completion, job, meta)
        if "error" in body:
            return error_response(APIError(500, body["error"], "generation_failed", type_="server_error"), headers)
        return JSONResponse(body, headers=headers)

    return [Route("/v1/completions", create, methods=["POST"])]


def submit(server: Server, completion: Completion) -> Job:
    engine, req = server.engine, completion.req
    vocab = len(engine.tokenizer.get_vocab())
    if any(t >= vocab for t in completion.tokens):
        raise _bad("prompt", f"a token id of the prompt is not in the model's vocabulary of {vocab}")
    if not completion.tokens:
        raise _bad("prompt", "the prompt is empty")
    if len(completion.tokens) + req.max_tokens > engine.max_context:
        raise APIError(400, f"This model's maximum context length is {engine.max_context} tokens; the prompt has "
                       f"{len(completion.tokens)} and {req.max_tokens} more were asked for.", "context_length_exceeded",
                       "prompt")
    try:
        engine.admit()
    except QueueFull:
        raise APIError(429, "the queue is full; retry shortly", "queue_full", type_="server_busy",
                       headers={"Retry-After": "1"}) from None
    job = Job(prompt=completion.tokens, max_tokens=req.max_tokens, temperature=req.temperature, top_p=req.top_p,
              seed=req.seed, loop=asyncio.get_running_loop(), events=asyncio.Queue(), logprobs=req.logprobs or 0)
    engine.submit(job)
    return job


def usage(prompt: int, completion: int) -> dict[str, int]:
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


async def sse(completion: Completion, job: Job, meta: dict[str, Any]) -> AsyncIterator[bytes]:
    def chunk(choices: list[dict[str, Any]], **extra: Any) -> bytes:
        return b"data: " + json.dumps({**meta, "choices": choices, **extra}, ensure_ascii=False).encode() + b"\n\n"

    def choice(text: str, finish: str | None = None, lp: Logprobs | None = None) -> dict[str, Any]:
        return {"text": text, "index": 0, "logprobs": lp.to_json(completion.req.logprobs != 0) if lp else None,
                "finish_reason": finish}

    req = completion.req
    if req.echo:
        text, lp = await completion.echo()
        yield chunk([choice(text, lp=lp)])
    async for kind, text, logprob, top in completion.pieces(job):
        if kind == "text":
            lp = None
            if req.logprobs is not None and text is not None:
                lp = Logprobs()
                lp.add(text, logprob, top, completion.offset)
            completion.offset += len(text or "")
            yield chunk([choice(text or "", lp=lp)])
        elif kind == "error":
            yield b"data: " + json.dumps({"error": {"message": text, "type": "server_error", "param": None,
                                                    "code": "generation_failed"}}).encode() + b"\n\n"
            return
        else:
            yield chunk([choice("", str(text))])
            if req.include_usage:
                yield chunk([], usage=usage(len(completion.tokens), int(logprob or 0)))
    yield b"data: [DONE]\n\n"


async def whole(completion: Completion, job: Job, meta: dict[str, Any]) -> dict[str, Any]:
    req = completion.req
    text, lp = (await completion.echo()) if req.echo else ("", None)
    if req.logprobs is not None and lp is None:
        lp = Logprobs()
    finish, made = "stop", 0
    async for kind, piece, logprob, top in completion.pieces(job):
        if kind == "text":
            if lp is not None:
                lp.add(piece or "", logprob, top, len(text))
            text += piece or ""
        elif kind == "error":
            return {"error": piece}
        else:
            finish, made = str(piece), int(logprob or 0)
    return {**meta, "choices": [{"text": text, "index": 0,
                                 "logprobs": lp.to_json(req.logprobs != 0) if lp is not None else None,
                                 "finish_reason": finish}],
            "usage": usage(len(completion.tokens), made)}
