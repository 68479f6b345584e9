"""The openai Python SDK against the replay server, as its users call it. Standalone (stdlib and openai only): it runs
in the client's own environment. ``stream`` iterates ``chat.completions.create(stream=True)`` and assembles the
deltas as the SDK's documentation shows; ``helper`` uses ``chat.completions.stream()``, which accumulates tool calls
and returns a final completion; ``completions`` iterates ``completions.create(stream=True)`` on the Completions API and
joins the first choice's text. Prints one JSON object: what the user ends up with."""

from __future__ import annotations

import os
import sys
from typing import Any

from _replay import add_choice, blank, chat_options, reading, recorded, serve


def _reasoning(delta: Any) -> str | None:
    """The reasoning a delta carries, as the SDK gives it to its users: a field beyond its types (model_extra)."""
    extra = delta.model_extra or {}
    return extra.get("reasoning_content") or extra.get("reasoning")


def one(i: int = 0) -> dict[str, Any]:
    """One request (the ``i``-th exchange's tools and options); what the client's user ends up with."""
    import openai

    mode = sys.argv[1] if len(sys.argv) > 1 else "stream"
    out = blank(f"openai {openai.__version__} ({mode})")
    client = openai.OpenAI(base_url=os.environ["OPENAI_BASE_URL"], api_key=os.environ.get("OPENAI_API_KEY", "x"),
                           max_retries=0, timeout=30)
    request = {"model": "replay", "messages": [{"role": "user", "content": "Hi"}],
               "stream_options": {"include_usage": True}, **chat_options(recorded(i))}
    with reading(out):
        if mode == "completions":
            for chunk in client.completions.create(model="replay", prompt="Hi", stream=True,
                                                   stream_options={"include_usage": True}):
                if chunk.usage is not None:
                    out["usage"] = chunk.usage.model_dump()
                choice = next((c for c in chunk.choices or [] if c.index == 0), None)
                if choice is None:
                    continue
                out["content"] += choice.text or ""
                if choice.finish_reason is not None:
                    out["finish_reason"] = choice.finish_reason
        elif mode == "helper":
            with client.chat.completions.stream(**request) as stream:
                for _ in stream:
                    pass
                final = stream.get_final_completion()
            choice = final.choices[0] if final.choices else None
            if choice is not None:
                extra = choice.message.model_extra or {}
                out["content"] = choice.message.content or ""
                out["reasoning"] = extra.get("reasoning_content") or extra.get("reasoning") or ""
                out["tool_calls"] = [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
                                     for c in choice.message.tool_calls or []]
                out["finish_reason"] = choice.finish_reason
            out["usage"] = final.usage.model_dump() if final.usage else None
        else:
            calls: dict[int, dict[str, Any]] = {}
            for chunk in client.chat.completions.create(stream=True, **request):
                if chunk.usage is not None:
                    out["usage"] = chunk.usage.model_dump()
                choice = next((c for c in chunk.choices or [] if c.index == 0), None)  # the first choice's
                if choice is None:
                    continue
                add_choice(out, calls, choice, _reasoning)
            out["tool_calls"] = [calls[i] for i in sorted(calls)]
    return out


if __name__ == "__main__":
    serve(one)
