"""httpx-sse plus a minimal assembler: content, reasoning_content, tool calls by index; complete once
[DONE] has arrived; filtered once a content filter's verdict says so (Azure, seed 003 §3.7: also after the stop)."""

from __future__ import annotations

import json
import os
from typing import Any

from conformance.fuzz.adapters import result


def main() -> None:
    import httpx
    from httpx_sse import connect_sse

    out = result()
    calls: dict[int, dict[str, Any]] = {}
    body = {"model": "replay", "messages": [{"role": "user", "content": "Hi"}], "stream": True}
    try:
        with httpx.Client(timeout=30) as client, connect_sse(
                client, "POST", os.environ["OPENAI_BASE_URL"].rstrip("/") + "/chat/completions", json=body) as source:
            for event in source.iter_sse():
                if event.data == "[DONE]":
                    out["complete"] = out["error"] is None
                    break
                chunk = json.loads(event.data)
                if "error" in chunk:
                    out["error"] = chunk["error"] if isinstance(chunk["error"], dict) else {"message": chunk["error"]}
                    break
                if chunk.get("usage"):
                    out["usage"] = chunk["usage"]
                for choice in chunk.get("choices") or []:
                    if '"filtered": true' in json.dumps(choice.get("content_filter_results")):
                        out["filtered"] = True
                    delta = choice.get("delta") or {}
                    out["content"] += delta.get("content") or ""
                    out["reasoning"] += delta.get("reasoning_content") or delta.get("reasoning") or ""
                    for piece in delta.get("tool_calls") or []:
                        call = calls.setdefault(piece["index"], {"id": None, "name": "", "arguments": ""})
                        call["id"] = call["id"] or piece.get("id")
                        function = piece.get("function") or {}
                        call["name"] += function.get("name") or ""
                        call["arguments"] += function.get("arguments") or ""
                    out["finish_reason"] = choice.get("finish_reason") or out["finish_reason"]
    except Exception as exc:  # noqa: BLE001 - what the client made of the stream is the result
        out["error"] = {"message": f"{type(exc).__name__}: {exc}"[:300]}
    out["tool_calls"] = [calls[i] for i in sorted(calls)]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
