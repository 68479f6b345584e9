"""Throughput of the strict SSE decoder and the assembler, against httpx-sse and the openai SDK.

    python benchmarks/decode.py [--mb 50] [--read 65536] [--repeat 3]

Builds a recorded-style stream (chat.completion.chunk events with one token of content each, some
multi-byte, a usage chunk, [DONE]) of about --mb megabytes, feeds it in --read-byte pieces as a
socket would deliver it, and prints MB/s for each decoder in the same run, best of --repeat, with
ratios. The peers are driven the way their libraries drive them: httpx-sse decodes text from
httpx's incremental UTF-8 decoder line by line; the openai SDK's SSEDecoder takes the byte pieces.
"""

from __future__ import annotations

import argparse
import codecs
import json
import time
from collections.abc import Callable

from conformance.exchange import gc_paused
from conformance.protocols.chat.assembler import decode_and_assemble
from conformance.wire.sse import SSEDecoder

TOKENS = [" the", " quick", " brown", " fox", " jumps", " café", " ☕", " über", " 東京", ",", "."]


def recorded_style_stream(megabytes: float) -> bytes:
    """About ``megabytes`` MB of chat.completion.chunk events, as mlx_lm.server or vLLM send them."""
    base = {"id": "chatcmpl-5f1c2ad8e0b14a5e9f6a", "object": "chat.completion.chunk", "created": 1764400000,
            "model": "mlx-community/Qwen2.5-0.5B-Instruct-4bit", "system_fingerprint": None}
    def event(**fields: object) -> str:
        return f"data: {json.dumps({**base, **fields}, ensure_ascii=False)}\n\n"

    first = {"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None, "finish_reason": None}
    parts = [event(choices=[first])]
    size, i = 0, 0
    while size < megabytes * 1_000_000:
        delta = {"index": 0, "delta": {"content": TOKENS[i % len(TOKENS)]}, "logprobs": None, "finish_reason": None}
        line = event(choices=[delta])
        parts.append(line)
        size += len(line.encode())
        i += 1
    parts.append(event(choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}]))
    parts.append(event(choices=[], usage={"prompt_tokens": 9, "completion_tokens": i, "total_tokens": 9 + i}))
    parts.append("data: [DONE]\n\n")
    return "".join(parts).encode()


def pieces(body: bytes, size: int) -> list[bytes]:
    return [body[i:i + size] for i in range(0, len(body), size)]


def strict_decoder(chunks: list[bytes]) -> int:
    decoder = SSEDecoder()
    count = 0
    for chunk in chunks:
        count += len(decoder.feed(chunk))
    return count + len(decoder.close())


def strict_decode_and_assemble(chunks: list[bytes]) -> object:
    """Events, stats, payloads and the assembled message, as ``analyze`` keeps them."""
    with gc_paused():  # as analyze() runs it
        return decode_and_assemble(chunks)


def httpx_sse_decoder(chunks: list[bytes]) -> int:
    from httpx_sse._decoders import SSEDecoder as HttpxSSEDecoder
    from httpx_sse._decoders import SSELineDecoder

    text = codecs.getincrementaldecoder("utf-8")(errors="replace")
    lines = SSELineDecoder()
    decoder = HttpxSSEDecoder()
    count = 0
    for chunk in chunks:
        for line in lines.decode(text.decode(chunk)):
            if decoder.decode(line) is not None:
                count += 1
    for line in lines.flush():
        if decoder.decode(line) is not None:
            count += 1
    return count


def httpx_sse_decode_and_parse(chunks: list[bytes]) -> list[object]:
    """httpx-sse's decoders plus json.loads of every payload: the honest peer of decode + assemble."""
    from httpx_sse._decoders import SSEDecoder as HttpxSSEDecoder
    from httpx_sse._decoders import SSELineDecoder

    text = codecs.getincrementaldecoder("utf-8")(errors="replace")
    lines = SSELineDecoder()
    decoder = HttpxSSEDecoder()
    values = []
    for chunk in chunks:
        for line in lines.decode(text.decode(chunk)):
            event = decoder.decode(line)
            if event is not None and event.data != "[DONE]":
                values.append(json.loads(event.data))
    return values


def orjson_payloads(payloads: list[bytes]) -> list[object]:
    """The floor: orjson on the payloads alone, already cut out of the stream."""
    import orjson

    return [orjson.loads(p) for p in payloads]


def openai_sdk_decoder(chunks: list[bytes]) -> int:
    from openai._streaming import SSEDecoder as OpenAISSEDecoder

    return sum(1 for _ in OpenAISSEDecoder().iter_bytes(iter(chunks)))


def openai_sdk_decode_and_parse(chunks: list[bytes]) -> int:
    """The SDK's decoder plus json.loads of every payload, as its Stream does."""
    from openai._streaming import SSEDecoder as OpenAISSEDecoder

    count = 0
    for sse in OpenAISSEDecoder().iter_bytes(iter(chunks)):
        if sse.data != "[DONE]":
            json.loads(sse.data)
            count += 1
    return count


def best_rate(func: Callable[[list[bytes]], object], chunks: list[bytes], size: int, repeat: int) -> float:
    """MB/s of the fastest run; what a run returns is freed after the clock stops."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        result = func(chunks)
        best = min(best, time.perf_counter() - start)
        del result
    return size / best / 1_000_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=50.0)
    parser.add_argument("--read", type=int, default=65536)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    body = recorded_style_stream(args.mb)
    chunks = pieces(body, args.read)
    events = strict_decoder(chunks)
    assert events == httpx_sse_decoder(chunks) == openai_sdk_decoder(chunks), "decoders disagree on the event count"
    content = decode_and_assemble(chunks)[3].choice(0).content
    assert content.startswith(TOKENS[0]) and len(content) > events, "the assembled answer is incomplete"
    rows = [
        ("strict SSE decoder (conformance.wire.sse)", strict_decoder),
        ("httpx-sse decoder (SSELineDecoder + SSEDecoder)", httpx_sse_decoder),
        ("openai SDK SSEDecoder.iter_bytes", openai_sdk_decoder),
        ("strict decode + assemble (protocols.chat)", strict_decode_and_assemble),
        ("openai SDK decode + json.loads", openai_sdk_decode_and_parse),
        ("httpx-sse decode + json.loads", httpx_sse_decode_and_parse),
    ]
    payloads = [line[6:] for line in body.split(b"\n") if line.startswith(b"data: {")]
    rates = {name: best_rate(func, chunks, len(body), args.repeat) for name, func in rows}
    rates["orjson on the payloads alone (the floor)"] = best_rate(lambda _: orjson_payloads(payloads), chunks,
                                                                  len(body), args.repeat)
    print(f"stream: {len(body) / 1e6:.1f} MB, {events} events, {args.read}-byte reads, best of {args.repeat}")
    base = rates[rows[1][0]]
    for name, rate in rates.items():
        print(f"  {name:50} {rate:8.1f} MB/s   {rate / base:5.2f}x httpx-sse")
    print("  (events and assemblies are kept, as the tool keeps them; freeing them is not timed)")
    strict, openai = rates[rows[0][0]], rates[rows[2][0]]
    print(f"  strict decoder vs openai SDK decoder: {strict / openai:.2f}x")
    assemble, peer = rates[rows[3][0]], rates["httpx-sse decode + json.loads"]
    print(f"  decode + assemble vs httpx-sse + json.loads: {assemble / peer:.2f}x; vs orjson alone: "
          f"{assemble / rates['orjson on the payloads alone (the floor)']:.2f}x")


if __name__ == "__main__":
    main()
