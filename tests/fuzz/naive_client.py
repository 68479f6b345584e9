"""A deliberately naive client for the tests: it parses each read on its own, as if every read held
whole lines. Cut a line across two reads and it loses the event: the bug fuzz-client must find."""

from __future__ import annotations

import json
import os
from typing import Any

import httpx


def main() -> None:
    out: dict[str, Any] = {"content": "", "reasoning": "", "tool_calls": [], "finish_reason": None, "usage": None,
                           "error": None, "complete": False}
    body = {"model": "replay", "messages": [{"role": "user", "content": "Hi"}], "stream": True}
    with httpx.Client(timeout=30) as client, client.stream(
            "POST", os.environ["OPENAI_BASE_URL"].rstrip("/") + "/chat/completions", json=body) as response:
        for piece in response.iter_raw():
            for line in piece.decode("utf-8", "replace").splitlines():
                if not line.startswith("data: "):
                    continue
                if line == "data: [DONE]":
                    out["complete"] = True
                    continue
                try:
                    chunk = json.loads(line[6:])
                except ValueError:
                    continue  # the naive part: a line cut across reads is dropped
                for choice in chunk.get("choices") or []:
                    out["content"] += (choice.get("delta") or {}).get("content") or ""
                    out["finish_reason"] = choice.get("finish_reason") or out["finish_reason"]
    print(json.dumps(out))


if __name__ == "__main__":
    main()
