"""Judging real shapes of stream (issue 58): every rule against merely reading the same bytes, shape by shape.

    python benchmarks/shapes.py [--mb 10] [--repeat 3] [--no-memory] [--only SHAPE ...]

The corpus: streams of about --mb megabytes each, every event carrying its own text (a seeded vocabulary of
varied tokens: words, punctuation, digits, accents, CJK, emoji, quotes and newlines to escape), in the shapes servers
send:

- synthetic shapes, as the issue names them: vLLM-style chunks of varied tokens; llama-server-style chunks with a
  `timings` object that changes on every chunk; an agent's answer (reasoning deltas, then content, then one tool
  call's argument pieces, then usage); Responses text deltas with their `sequence_number` and OpenAI's random
  `obfuscation` padding; Messages text deltas with pings; Completions `text_completion` chunks, bare and with
  `logprobs`; and the old headline, byte-identical copies of one chunk, as one row among the others;
- each published server's own chunk shape, scaled up: the recorded `stream-long` body of reports/<server>/wire (and
  llama-server's recorded Messages stream), its first content event the template, its text replaced by the
  vocabulary's tokens, its head and tail events kept.

Per shape, in one process, the best of --repeat: `httpx-sse + json.loads` (httpx-sse's decoders and json.loads of
every payload: what a client does to read the stream; NDJSON has no such peer); `orjson floor` (orjson.loads of the
payloads alone, already cut out of the stream: the floor of any Python judge); and `judge` (the suite's decode,
assemble and every rule, `checks.evaluate(analyze(exchange))`), in MB/s, with the judge's ratio to each. Then the
judge's peak memory (tracemalloc, a fresh process) on the shape at --mb and at a fifth of it: constant in the
stream's length means a ratio near 1. Goals: judge >= 1.0x httpx-sse + json.loads, within 2x of the orjson floor.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

WORDS = ("the quick brown fox jumps over lazy dog model server stream token answer weather Paris Berlin Tokyo "
         "function argument value result because therefore however although never always perhaps").split()
ODD = ["café", "über", "naïve", "東京", "☕", "🙂", "😀👍", "\\", "\"quoted\"", "\n", "\n\n", "\t", "1", "42", "3.14",
       "2026", ",", ".", "!", "?", ":", ";", "(", ")", "-", "'s", "n't", "ing", "ed", " ", "  ", "<b>", "{", "}"]


def vocabulary(seed: int = 58) -> Iterator[str]:
    """An endless sequence of varied tokens: mostly words with a leading space, now and then an odd one."""
    rng = random.Random(seed)
    words = [" " + w for w in WORDS] + [w.capitalize() for w in WORDS] + [w[: rng.randint(1, len(w))] for w in WORDS]
    while True:
        yield rng.choice(ODD) if rng.random() < 0.2 else rng.choice(words)


def _sse(payload: Any, event: str | None = None) -> str:
    data = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return (f"event: {event}\n" if event else "") + f"data: {data}\n\n"


def _fill(mb: float, head: list[str], make: Callable[[int, str], str], tail: Callable[[int, str], list[str]]) -> bytes:
    """head, then events make(i, token) until about mb megabytes, then tail(count, text)."""
    tokens = vocabulary()
    parts, size, i, text = list(head), sum(len(p.encode()) for p in head), 0, []
    while size < mb * 1_000_000:
        token = next(tokens)
        part = make(i, token)
        parts.append(part)
        text.append(token)
        size += len(part.encode())
        i += 1
    parts += tail(i, "".join(text))
    return "".join(parts).encode()


CHAT_BASE = {"id": "chatcmpl-5f1c2ad8e0b14a5e9f6a", "object": "chat.completion.chunk", "created": 1764400000,
             "model": "Qwen/Qwen2.5-0.5B-Instruct"}


def _chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
    return _sse({**CHAT_BASE, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
                 **extra})


def _chat_tail(count: int, _text: str) -> list[str]:
    return [_chunk({}, "stop"), _sse({**CHAT_BASE, "choices": [], "usage": {
        "prompt_tokens": 9, "completion_tokens": count, "total_tokens": 9 + count}}), "data: [DONE]\n\n"]


def varied_tokens(mb: float) -> bytes:
    return _fill(mb, [_chunk({"role": "assistant", "content": ""})], lambda _i, t: _chunk({"content": t}), _chat_tail)


def identical_copies(mb: float) -> bytes:
    return _fill(mb, [_chunk({"role": "assistant", "content": ""})], lambda _i, _t: _chunk({"content": " the"}),
                 _chat_tail)


def llama_server_timings(mb: float) -> bytes:
    rng = random.Random(7)

    def make(i: int, token: str) -> str:
        predicted_ms = 12.5 * (i + 1) + rng.random() * 3
        return _sse({"choices": [{"finish_reason": None, "index": 0, "delta": {"content": token}}],
                     "created": CHAT_BASE["created"], "id": CHAT_BASE["id"], "model": CHAT_BASE["model"],
                     "system_fingerprint": "b6123-0c1e570",
                     "object": "chat.completion.chunk",
                     "timings": {"prompt_n": 47, "prompt_ms": 35.125, "prompt_per_token_ms": 0.747,
                                 "prompt_per_second": 1338.08, "predicted_n": i + 1, "predicted_ms": predicted_ms,
                                 "predicted_per_token_ms": predicted_ms / (i + 1),
                                 "predicted_per_second": 1000 * (i + 1) / predicted_ms}})

    return _fill(mb, [_chunk({"role": "assistant", "content": None})], make, _chat_tail)


def agentic(mb: float) -> bytes:
    """A third reasoning, a third content, a third one tool call's argument pieces (the JSON of a long string)."""
    third = mb / 3
    tokens = vocabulary(3)
    parts = [_chunk({"role": "assistant", "content": ""})]
    size = 0
    while size < third * 1_000_000:
        part = _chunk({"reasoning_content": next(tokens)})
        parts.append(part)
        size += len(part)
    while size < 2 * third * 1_000_000:
        part = _chunk({"content": next(tokens)})
        parts.append(part)
        size += len(part)
    parts.append(_chunk({"tool_calls": [{"index": 0, "id": "call_8f2a", "type": "function", "function": {
        "name": "write_file", "arguments": ""}}]}))
    parts.append(_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"path": "notes.md", "content": "'}}]}))
    while size < mb * 1_000_000:
        piece = json.dumps(next(tokens), ensure_ascii=False)[1:-1]  # a piece of the JSON string, escaped
        part = _chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
        parts.append(part)
        size += len(part)
    parts.append(_chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"}'}}]}))
    parts.append(_chunk({}, "tool_calls"))
    parts.append(_sse({**CHAT_BASE, "choices": [], "usage": {"prompt_tokens": 4000, "completion_tokens": 90000,
                                                              "total_tokens": 94000}}))
    parts.append("data: [DONE]\n\n")
    return "".join(parts).encode()


def _obfuscation(rng: random.Random) -> str:
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
                   for _ in range(rng.randint(2, 15)))


def responses_deltas(mb: float) -> bytes:
    rng = random.Random(11)
    rid, mid = "resp_68b1f0c2d9e48190a1b2c3d4e5f60718", "msg_68b1f0c3a5dc8190b2c3d4e5f6071829"
    response = {"id": rid, "object": "response", "created_at": 1764400000, "status": "in_progress", "model": "gpt-4.1",
                "output": [], "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "usage": None}
    head = [_sse({"type": "response.created", "sequence_number": 0, "response": response}, "response.created"),
            _sse({"type": "response.in_progress", "sequence_number": 1, "response": response},
                 "response.in_progress"),
            _sse({"type": "response.output_item.added", "sequence_number": 2, "output_index": 0, "item": {
                "id": mid, "type": "message", "status": "in_progress", "role": "assistant", "content": []}},
                "response.output_item.added"),
            _sse({"type": "response.content_part.added", "sequence_number": 3, "item_id": mid, "output_index": 0,
                  "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}},
                 "response.content_part.added")]

    def make(i: int, token: str) -> str:
        return _sse({"type": "response.output_text.delta", "sequence_number": 4 + i, "item_id": mid, "output_index": 0,
                     "content_index": 0, "delta": token, "logprobs": [], "obfuscation": _obfuscation(rng)},
                    "response.output_text.delta")

    def tail(count: int, text: str) -> list[str]:
        n = 4 + count
        part = {"type": "output_text", "text": text, "annotations": []}
        item = {"id": mid, "type": "message", "status": "completed", "role": "assistant", "content": [part]}
        done = {**response, "status": "completed", "output": [item],
                "usage": {"input_tokens": 9, "output_tokens": count, "total_tokens": 9 + count}}
        return [_sse({"type": "response.output_text.done", "sequence_number": n, "item_id": mid, "output_index": 0,
                      "content_index": 0, "text": text, "logprobs": []}, "response.output_text.done"),
                _sse({"type": "response.content_part.done", "sequence_number": n + 1, "item_id": mid,
                      "output_index": 0, "content_index": 0, "part": part}, "response.content_part.done"),
                _sse({"type": "response.output_item.done", "sequence_number": n + 2, "output_index": 0, "item": item},
                     "response.output_item.done"),
                _sse({"type": "response.completed", "sequence_number": n + 3, "response": done}, "response.completed")]

    return _fill(mb, head, make, tail)


def messages_pings(mb: float) -> bytes:
    head = [_sse({"type": "message_start", "message": {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant", "content": [],
        "model": "claude-sonnet-4-5", "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 25, "output_tokens": 1}}}, "message_start"),
        _sse({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
             "content_block_start"),
        _sse({"type": "ping"}, "ping")]

    def make(i: int, token: str) -> str:
        delta = _sse({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": token}},
                     "content_block_delta")
        return delta + (_sse({"type": "ping"}, "ping") if i % 40 == 39 else "")

    def tail(count: int, _text: str) -> list[str]:
        return [_sse({"type": "content_block_stop", "index": 0}, "content_block_stop"),
                _sse({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                      "usage": {"output_tokens": count}}, "message_delta"),
                _sse({"type": "message_stop"}, "message_stop")]

    return _fill(mb, head, make, tail)


COMPLETION_BASE = {"id": "cmpl-7c1e2f3a4b5c6d7e8f90", "object": "text_completion", "created": 1764400000,
                   "model": "Qwen/Qwen2.5-0.5B"}


def _completion_tail(count: int, _text: str) -> list[str]:
    return [_sse({**COMPLETION_BASE, "choices": [{"text": "", "index": 0, "logprobs": None, "finish_reason": "length"}]}),
            _sse({**COMPLETION_BASE, "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": count,
                                                              "total_tokens": 5 + count}}), "data: [DONE]\n\n"]


def completions_text(mb: float) -> bytes:
    return _fill(mb, [], lambda _i, t: _sse({**COMPLETION_BASE, "choices": [
        {"text": t, "index": 0, "logprobs": None, "finish_reason": None}]}), _completion_tail)


def completions_logprobs(mb: float) -> bytes:
    rng = random.Random(5)
    offset = [0]

    def make(_i: int, token: str) -> str:
        lp = -rng.random() * 4
        others = {token: lp, " the": lp - rng.random(), ",": lp - 1 - rng.random()}
        chunk = _sse({**COMPLETION_BASE, "choices": [{"text": token, "index": 0, "finish_reason": None, "logprobs": {
            "tokens": [token], "token_logprobs": [lp], "top_logprobs": [others], "text_offset": [offset[0]]}}]})
        offset[0] += len(token)
        return chunk

    return _fill(mb, [], make, _completion_tail)


def recorded(server: str, name: str) -> Callable[[float], bytes]:
    """A published server's own recorded stream (reports/<server>/wire/*-<name>.body), scaled up: its first text
    delta the template of every generated event, its text replaced by the vocabulary's tokens."""

    def build(mb: float) -> bytes:
        bodies = sorted((ROOT / "reports" / server / "wire").glob(f"*-{name}.body"))
        events = bodies[0].read_bytes().decode().split("\n\n")
        at = next(i for i, e in enumerate(events) if _text_of(e) not in (None, ""))
        template, token = events[at], _text_of(events[at])
        last = max(i for i, e in enumerate(events) if _text_of(e) not in (None, ""))
        head = [e + "\n\n" for e in events[:at]]
        rest = [e + "\n\n" for e in events[last + 1:] if e]
        escaped = json.dumps(token, ensure_ascii=False)

        def make(_i: int, t: str) -> str:
            return template.replace(escaped, json.dumps(t, ensure_ascii=False), 1) + "\n\n"

        return _fill(mb, head, make, lambda _c, _t: rest)

    return build


def _text_of(event: str) -> str | None:
    """The text an event carries (chat's delta content, Messages' text_delta), None for another kind."""
    for line in event.split("\n"):
        if line.startswith("data:") and line[5:].strip().startswith("{"):
            try:
                doc = json.loads(line[5:])
            except ValueError:
                return None
            if isinstance(doc.get("choices"), list) and doc["choices"]:
                content = (doc["choices"][0].get("delta") or {}).get("content")
                return content if isinstance(content, str) else None
            if doc.get("type") == "content_block_delta":
                return (doc.get("delta") or {}).get("text")
    return None


CHAT = "/v1/chat/completions"
HI = [{"role": "user", "content": "Tell me a long story."}]
TOOL = {"type": "function", "function": {"name": "write_file", "description": "Write a file", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    "required": ["path", "content"]}}}
CHAT_REQUEST = {"model": "m", "messages": HI, "stream": True, "stream_options": {"include_usage": True}}
# shape: (builder, path, request)
SHAPES: dict[str, tuple[Callable[[float], bytes], str, dict[str, Any]]] = {
    "varied-tokens": (varied_tokens, CHAT, CHAT_REQUEST),
    "llama-server-timings": (llama_server_timings, CHAT, CHAT_REQUEST),
    "agentic": (agentic, CHAT, {**CHAT_REQUEST, "tools": [TOOL]}),
    "responses-deltas": (responses_deltas, "/v1/responses", {"model": "m", "input": "Tell me a long story.",
                                                              "stream": True}),
    "messages-pings": (messages_pings, "/v1/messages", {"model": "m", "max_tokens": 100000, "messages": HI,
                                                        "stream": True}),
    "completions-text": (completions_text, "/v1/completions", {"model": "m", "prompt": "Once upon a time",
                                                               "max_tokens": 100000, "stream": True,
                                                               "stream_options": {"include_usage": True}}),
    "completions-logprobs": (completions_logprobs, "/v1/completions", {
        "model": "m", "prompt": "Once upon a time", "max_tokens": 100000, "logprobs": 2, "stream": True,
        "stream_options": {"include_usage": True}}),
    "identical-copies": (identical_copies, CHAT, CHAT_REQUEST),
}
for _server in ("llama-server", "llama-cpp-python", "mlx-lm-server", "mlx-omni-server", "transformers-serve",
                "litellm-proxy", "reference"):
    SHAPES[f"{_server} (recorded)"] = (recorded(_server, "stream-long"), CHAT, CHAT_REQUEST)
SHAPES["llama-server messages (recorded)"] = (recorded("llama-server", "messages-stream"), "/v1/messages",
                                              {"model": "m", "max_tokens": 100000, "messages": HI, "stream": True})


HEADERS = (("content-type", "text/event-stream"), ("cache-control", "no-cache"), ("x-accel-buffering", "no"))


def _model_of(cut: list[bytes]) -> str:
    """The model the stream names (the request asks for it: no rule fails on the name)."""
    for payload in cut[:4]:
        doc = json.loads(payload)
        found = doc.get("model") or (doc.get("message") or doc.get("response") or {}).get("model")
        if isinstance(found, str):
            return found
    return "m"


def payloads(body: bytes) -> list[bytes]:
    """The data payloads of an SSE body, cut out (what the orjson floor parses)."""
    out = []
    for event in body.split(b"\n\n"):
        for line in event.split(b"\n"):
            if line.startswith(b"data:") and line[5:].strip() != b"[DONE]":
                out.append(line[5:].strip())
    return out


def stage(name: str, shape: str, mb: float, repeat: int) -> dict[str, float]:
    """One shape's three stages in this process: best seconds and MB/s of each."""
    import orjson
    from decode import httpx_sse_decode_and_parse

    import conformance.checks as checks
    from conformance.exchange import Exchange, analyze

    build, path, request = SHAPES[shape]
    body = build(mb)
    pieces = [body[i:i + 65536] for i in range(0, len(body), 65536)]
    cut = payloads(body)
    request = {**request, "model": _model_of(cut)}
    checks._load()
    headers = HEADERS

    def judge() -> None:
        verdicts = checks.evaluate(analyze(Exchange(request=request, body=body, headers=headers, path=path), "openai"))
        failed.update(v.rule.id for v in verdicts if v.outcome in ("failed", "error"))

    failed: set[str] = set()
    folder = tempfile.mkdtemp()
    capture, request_file, header_file = (Path(folder) / n for n in ("capture.sse", "request.json", "headers.txt"))
    capture.write_bytes(body)
    request_file.write_text(json.dumps(request), encoding="utf-8")
    header_file.write_text("HTTP/1.1 200 OK\r\n" + "".join(f"{k}: {v}\r\n" for k, v in HEADERS), encoding="utf-8")

    def inspect() -> None:  # the command a user runs on a capture: its text report, thrown away
        from conformance.cli import cli

        with open(os.devnull, "w", encoding="utf-8") as sink, contextlib.redirect_stdout(sink), \
                contextlib.suppress(SystemExit):
            cli.main(["inspect", str(capture), "--request", str(request_file), "--headers", str(header_file),
                      "--path", path])

    runs = {"httpx-sse + json.loads": lambda: httpx_sse_decode_and_parse(pieces),
            "orjson floor": lambda: [orjson.loads(p) for p in cut], "judge": judge, "inspect": inspect}
    best = {}
    for label, fn in runs.items():
        seconds = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            fn()
            seconds = min(seconds, time.perf_counter() - start)
        best[label] = seconds
    return {"mb": len(body) / 1e6, "events": len(cut), **{f"{k} s": v for k, v in best.items()},
            "failed": sorted(failed)}  # type: ignore[dict-item]


def memory(shape: str, mb: float) -> float:
    """The judge's peak allocation (MB) on the shape at this size, the body built before tracing."""
    import tracemalloc

    import conformance.checks as checks
    from conformance.exchange import Exchange, analyze

    build, path, request = SHAPES[shape]
    body = build(mb)
    request = {**request, "model": _model_of(payloads(body))}
    checks._load()
    tracemalloc.start()
    checks.evaluate(analyze(Exchange(request=request, body=body, headers=HEADERS, path=path), "openai"))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 1e6


def _in_fresh(*args: str) -> Any:
    run = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, check=False, cwd=ROOT)
    if run.returncode:
        raise SystemExit(run.stderr[-3000:])
    return json.loads(run.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=10.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--only", action="append", choices=sorted(SHAPES))
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--memory", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(stage("all", args.one, args.mb, args.repeat)))
        return
    if args.memory:
        print(json.dumps(memory(args.memory, args.mb)))
        return
    print(f"shapes of about {args.mb:g} MB, best of {args.repeat}, load average {os.getloadavg()[0]:.2f}\n")
    print("| shape | MB | events | httpx-sse + json.loads MB/s | orjson floor MB/s | judge MB/s | judge / httpx-sse "
          "| orjson floor / judge | inspect MB/s | inspect / httpx-sse |"
          + ("" if args.no_memory else " judge peak MB (full, a fifth) |"))
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + ("" if args.no_memory else "---:|"))
    for shape in args.only or SHAPES:
        row = _in_fresh("--one", shape, "--mb", str(args.mb), "--repeat", str(args.repeat))
        rate = {k[:-2]: row["mb"] / row[k] for k in row if k.endswith(" s")}
        line = (f"| {shape} | {row['mb']:.1f} | {row['events']:,} | {rate['httpx-sse + json.loads']:.1f} | "
                f"{rate['orjson floor']:.1f} | {rate['judge']:.1f} | {rate['judge'] / rate['httpx-sse + json.loads']:.2f}x"
                f" | {rate['orjson floor'] / rate['judge']:.1f}x | {rate['inspect']:.1f} | "
                f"{rate['inspect'] / rate['httpx-sse + json.loads']:.2f}x |")
        if not args.no_memory:
            full = _in_fresh("--memory", shape, "--mb", str(args.mb))
            fifth = _in_fresh("--memory", shape, "--mb", str(args.mb / 5))
            line += f" {full:.1f}, {fifth:.1f} |"
        print(line, flush=True)
        if row["failed"]:
            print(f"  (rules failed on {shape}: {', '.join(row['failed'])})", file=sys.stderr)


if __name__ == "__main__":
    main()
