"""The ollama Python library against the replay server (OLLAMA_HOST), chat or generate as the recorded route was,
streamed; prints what its user ends up with. Standalone: runs in the client's own environment."""

from __future__ import annotations

import json
import os
from typing import Any

from _replay import blank, reading, serve


def one(route: str) -> dict[str, Any]:
    """One request on this route; what the client's user ends up with."""
    import ollama

    out = blank("ollama", "ollama")
    client = ollama.Client(host=os.environ["OLLAMA_HOST"], timeout=30)
    with reading(out, ending_completes=False):
        if route.endswith("/generate"):
            parts = client.generate(model="replay", prompt="Hi", stream=True)
        else:
            parts = client.chat(model="replay", messages=[{"role": "user", "content": "Hi"}], stream=True)
        for part in parts:
            message = getattr(part, "message", None)
            if message is not None:
                out["content"] += message.content or ""
                out["reasoning"] += message.thinking or ""
                for call in message.tool_calls or []:
                    out["tool_calls"].append({"id": None, "name": call.function.name,
                                              "arguments": json.dumps(call.function.arguments, separators=(",", ":"))})
            else:
                out["content"] += getattr(part, "response", "") or ""
                out["reasoning"] += getattr(part, "thinking", None) or ""
            if getattr(part, "done", False):
                out["finish_reason"] = getattr(part, "done_reason", None)
                if getattr(part, "eval_count", None) is not None:
                    out["usage"] = {"prompt_tokens": getattr(part, "prompt_eval_count", None),
                                    "completion_tokens": part.eval_count}
                out["complete"] = True
    return out


def main() -> None:
    routes = os.environ.get("CONFORMANCE_REPLAY_PATHS", "").split(",")
    default = os.environ.get("CONFORMANCE_REPLAY_PATH", "/api/chat")
    serve(lambda i: one(routes[i] if i < len(routes) and routes[i] else default))


if __name__ == "__main__":
    main()
