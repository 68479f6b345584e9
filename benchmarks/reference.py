"""Tokens per second and time to first token: the reference server, mlx_lm.server and raw
mlx_lm.stream_generate, same bundled model, same prompt, same max_tokens, in one run; plus the
extra cost per token of grammar-constrained decoding.

    python benchmarks/reference.py [--tokens 2000] [--repeat 3]

Rates are measured from the first token to the last (../shared/seeds/003 §3.6), best of --repeat.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import httpx

from conformance.engine.servers import mlx_lm_server, reference
from reference_server.engine import MODEL_ID
from reference_server.model import ensure

LONG = [{"role": "user", "content": "Tell me a long story."}]


def timed_stream(url: str, body: dict[str, Any]) -> tuple[float, float, int]:
    """(time to first content token, tokens per second after it, tokens) for one streamed request."""
    start = time.perf_counter()
    first = last = None
    count = 0
    with httpx.stream("POST", url, json=body, timeout=300) as response:
        for line in response.iter_lines():
            if not line.startswith("data: {"):
                continue
            choices = json.loads(line[6:]).get("choices") or [{}]
            delta = choices[0].get("delta") or {}
            if delta.get("content") or delta.get("tool_calls"):
                now = time.perf_counter()
                first = first or now
                last = now
                count += 1
    assert first is not None and last is not None, "no tokens"
    return first - start, (count - 1) / max(last - first, 1e-9), count


def raw_generate(model_dir: str, tokens: int, constrained: bool = False) -> tuple[float, float, int]:
    """Raw generation; ``constrained`` adds the reference server's grammar processor (a long JSON string)."""
    from mlx_lm import load, stream_generate

    from reference_server.grammar import GrammarProcessor, Grammars

    model, tokenizer = load(model_dir)
    prompt = tokenizer.apply_chat_template(LONG, add_generation_prompt=True, enable_thinking=False)
    processors = []
    if constrained:
        grammars = Grammars(tokenizer)
        schema = {"type": "object", "properties": {"text": {"type": "string", "maxLength": tokens}}, "required": ["text"]}
        matcher = grammars.matcher(grammars.json_schema(schema))
        processors = [GrammarProcessor(matcher, len(prompt), len(tokenizer.get_vocab()))]
    start = time.perf_counter()
    first = last = None
    count = 0
    for _ in stream_generate(model, tokenizer, prompt, max_tokens=tokens, logits_processors=processors or None):
        now = time.perf_counter()
        first = first or now
        last = now
        count += 1
    assert first is not None and last is not None
    return first - start, (count - 1) / max(last - first, 1e-9), count


def best(runs: list[tuple[float, float, int]]) -> tuple[float, float, int]:
    return min(r[0] for r in runs), max(r[1] for r in runs), runs[0][2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    model = ensure()
    rows: dict[str, tuple[float, float, int]] = {}
    rows["raw mlx_lm.stream_generate"] = best([raw_generate(str(model), args.tokens) for _ in range(args.repeat)])
    with reference() as ref:
        url = ref.base_url + "/v1/chat/completions"
        body = {"model": MODEL_ID, "messages": LONG, "stream": True, "max_tokens": args.tokens}
        rows["reference server"] = best([timed_stream(url, body) for _ in range(args.repeat)])
    with mlx_lm_server(model) as peer:
        body = {"model": str(model), "messages": LONG, "stream": True, "max_tokens": args.tokens,
                "chat_template_kwargs": {"enable_thinking": False}}
        rows["mlx_lm.server"] = best([timed_stream(peer.base_url + "/v1/chat/completions", body)
                                      for _ in range(args.repeat)])
    raw = rows["raw mlx_lm.stream_generate"][1]
    peer_rate = rows["mlx_lm.server"][1]
    print(f"bundled model, {args.tokens} tokens, best of {args.repeat}")
    for name, (ttft, rate, count) in rows.items():
        print(f"  {name:44} TTFT {ttft * 1000:7.1f} ms  {rate:8.0f} tok/s  {rate / raw:5.2f}x raw  "
              f"{rate / peer_rate:5.2f}x mlx_lm.server  ({count} tokens)")
    tight = best([raw_generate(str(model), args.tokens, constrained=True) for _ in range(args.repeat)])
    print(f"  raw generation under a JSON grammar (llguidance): {tight[1]:.0f} tok/s over {tight[2]} tokens; "
          f"constrained decoding costs {(1 / tight[1] - 1 / raw) * 1e6:.0f} us per token")


if __name__ == "__main__":
    main()
