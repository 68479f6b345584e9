"""LiteLLM's completion(stream=True) against the replay server as an OpenAI-compatible base (model openai/<id>,
api_base), the chunks assembled as its users do. Standalone: runs in the client's own environment."""

from __future__ import annotations

import os
from typing import Any

from _replay import add_choice, blank, chat_options, reading, recorded, serve


def one(i: int = 0) -> dict[str, Any]:
    """One request (the ``i``-th exchange's tools and options); what the client's user ends up with."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no download of the cost map at import
    import litellm

    out = blank("litellm", "litellm")
    calls: dict[int, dict[str, Any]] = {}
    with reading(out):
        stream = litellm.completion(model="openai/replay", api_base=os.environ["OPENAI_BASE_URL"],
                                    api_key=os.environ.get("OPENAI_API_KEY", "x"), stream=True, num_retries=0,
                                    messages=[{"role": "user", "content": "Hi"}], timeout=30,
                                    stream_options={"include_usage": True}, **chat_options(recorded(i)))
        for chunk in stream:
            usage = getattr(chunk, "usage", None)
            if usage:
                out["usage"] = {k: getattr(usage, k, None) for k in ("prompt_tokens", "completion_tokens",
                                                                      "total_tokens")}
            for choice in chunk.choices or []:
                if (choice.index or 0) != 0:
                    continue  # the first choice's
                add_choice(out, calls, choice, lambda delta: getattr(delta, "reasoning_content", None))
        out["tool_calls"] = [calls[i] for i in sorted(calls)]
    return out


if __name__ == "__main__":
    serve(one)
