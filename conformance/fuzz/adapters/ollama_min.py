"""An Ollama NDJSON client with a minimal assembler: one JSON object per line, whatever the reads; content
from message.content or response, thinking, done_reason, eval counts; complete with a done: true frame,
partial after an error frame (../shared/seeds/002 §2)."""

from __future__ import annotations

import json
import os
from typing import Any

from conformance.fuzz.adapters import result


def main() -> None:
    import httpx

    out = result()
    path = os.environ.get("CONFORMANCE_REPLAY_PATH", "/api/chat")
    body: dict[str, Any] = {"model": "replay", "stream": True}
    body.update({"messages": [{"role": "user", "content": "Hi"}]} if path == "/api/chat" else {"prompt": "Hi"})
    try:
        with httpx.Client(timeout=30) as client, client.stream(
                "POST", os.environ["OLLAMA_HOST"].rstrip("/") + path, json=body) as response:
            if response.status_code >= 400:
                response.read()
                try:
                    error = response.json().get("error")
                except ValueError:
                    error = None
                out["error"] = {"message": str(error or f"HTTP {response.status_code}")}
            else:
                for line in response.iter_lines():  # httpx joins lines across reads
                    if not line.strip():
                        continue
                    frame = json.loads(line)
                    if "error" in frame:
                        out["error"] = {"message": str(frame["error"])}
                        break
                    message = frame.get("message") or {}
                    out["content"] += message.get("content", frame.get("response")) or ""
                    out["reasoning"] += message.get("thinking", frame.get("thinking")) or ""
                    if frame.get("done") is True:
                        out["finish_reason"] = frame.get("done_reason")
                        if "eval_count" in frame:
                            out["usage"] = {"prompt_tokens": frame.get("prompt_eval_count"),
                                            "completion_tokens": frame.get("eval_count")}
                        out["complete"] = True
                        break
    except Exception as exc:  # noqa: BLE001 - what the client made of the stream is the result
        out["error"] = {"message": f"{type(exc).__name__}: {exc}"[:300]}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
