"""The anthropic Python SDK against the replay server, as its users call it. Standalone (stdlib and anthropic only): it
runs in the client's own environment, the base URL and key from ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY as the SDK
reads them. ``stream`` runs ``messages.stream()`` and reads ``get_final_message()``, the message the SDK accumulated
from the events; ``create`` iterates ``messages.create(stream=True)`` and assembles the raw events as the SDK's
streaming documentation shows. Prints one JSON object per request: what the user ends up with."""

from __future__ import annotations

import json
import sys
from typing import Any

from _replay import blank, reading, recorded, serve

REQUEST: dict[str, Any] = {"model": "replay", "max_tokens": 256, "messages": [{"role": "user", "content": "Hi"}]}
# what is sent of the recorded request beside the model and messages: its tools, choice and options
OPTIONS = ("tools", "tool_choice", "max_tokens", "system", "stop_sequences", "thinking")


def request(i: int) -> dict[str, Any]:
    """The adapter's request with the ``i``-th exchange's tools, tool choice and options."""
    asked = recorded(i)
    return {**REQUEST, **{k: asked[k] for k in OPTIONS if asked.get(k) is not None}}


def _usage(prompt: Any, completion: Any) -> dict[str, Any]:
    total = prompt + completion if isinstance(prompt, int) and isinstance(completion, int) else None
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total}


def _final(out: dict[str, Any], message: Any) -> None:
    """The accumulated message's blocks, stop_reason and usage, read as a user reads them."""
    for block in message.content or []:
        kind = getattr(block, "type", None)
        if kind == "text":
            out["content"] += block.text or ""
        elif kind == "thinking":
            out["reasoning"] += block.thinking or ""
        elif kind == "tool_use":
            out["tool_calls"].append({"id": block.id, "name": block.name, "arguments": json.dumps(block.input)})
    out["finish_reason"] = message.stop_reason
    if message.usage is not None:
        out["usage"] = _usage(message.usage.input_tokens, message.usage.output_tokens)


def _raw(out: dict[str, Any], client: Any, asked: dict[str, Any]) -> None:
    """create(stream=True): the events, assembled by index (text and thinking deltas appended, input_json_delta
    pieces joined and parsed at content_block_stop)."""
    blocks: dict[int, dict[str, Any]] = {}
    usage: dict[str, Any] = {}
    for event in client.messages.create(stream=True, **asked):
        if event.type == "message_start":
            usage = {"input_tokens": event.message.usage.input_tokens,
                     "output_tokens": event.message.usage.output_tokens}
        elif event.type == "content_block_start":
            block = event.content_block
            blocks[event.index] = {"type": block.type, "text": getattr(block, "text", "") or "",
                                   "thinking": getattr(block, "thinking", "") or "", "json": "",
                                   "id": getattr(block, "id", None), "name": getattr(block, "name", None)}
        elif event.type == "content_block_delta":
            block, delta = blocks[event.index], event.delta
            if delta.type == "text_delta":
                block["text"] += delta.text
            elif delta.type == "thinking_delta":
                block["thinking"] += delta.thinking
            elif delta.type == "input_json_delta":
                block["json"] += delta.partial_json
        elif event.type == "message_delta":
            out["finish_reason"] = event.delta.stop_reason
            if event.usage is not None:
                usage["output_tokens"] = event.usage.output_tokens
    for index in sorted(blocks):
        block = blocks[index]
        if block["type"] == "text":
            out["content"] += block["text"]
        elif block["type"] == "thinking":
            out["reasoning"] += block["thinking"]
        elif block["type"] == "tool_use":
            arguments = json.dumps(json.loads(block["json"])) if block["json"] else "{}"
            out["tool_calls"].append({"id": block["id"], "name": block["name"], "arguments": arguments})
    if usage:
        out["usage"] = _usage(usage.get("input_tokens"), usage.get("output_tokens"))


def one(i: int = 0) -> dict[str, Any]:
    """One request (the ``i``-th exchange's tools and options); what the client's user ends up with."""
    import anthropic

    mode = sys.argv[1] if len(sys.argv) > 1 else "stream"
    out = blank(f"anthropic {anthropic.__version__} ({mode})")
    client = anthropic.Anthropic(max_retries=0, timeout=30)  # ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY
    with reading(out):
        if mode == "create":
            _raw(out, client, request(i))
        else:
            with client.messages.stream(**request(i)) as stream:
                for _ in stream:
                    pass
                final = stream.get_final_message()
            _final(out, final)
    return out


if __name__ == "__main__":
    serve(one)
