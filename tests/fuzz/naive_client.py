"""A deliberately naive client for the tests: it parses each read on its own, as if every read held
whole lines. Cut a line across two reads and it loses the event: the bug fuzz-client must find."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import httpx


def main() -> None:
    """One request, or CONFORMANCE_REPLAY_COUNT in turn (the batch `conformance clients` makes); ``--careful`` keeps
    the part of a read after its last line end for the next read: the correct client, for the control."""
    careful = "--careful" in sys.argv
    with httpx.Client(timeout=30) as client:
        for _ in range(int(os.environ.get("CONFORMANCE_REPLAY_COUNT", "1"))):
            print(json.dumps(one(client, careful)), flush=True)


def one(client: httpx.Client, careful: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"content": "", "reasoning": "", "tool_calls": [], "finish_reason": None, "usage": None,
                           "error": None, "complete": False}
    body = {"model": "replay", "messages": [{"role": "user", "content": "Hi"}], "stream": True}
    with client.stream("POST", os.environ["OPENAI_BASE_URL"].rstrip("/") + "/chat/completions",
                       json=body) as response:
        kept = b""
        for piece in response.iter_raw():
            if careful:  # whole lines only; the rest waits for the next read
                data = kept + piece
                cut = data.rfind(b"\n") + 1
                piece, kept = data[:cut], data[cut:]
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
                if isinstance(chunk.get("usage"), dict):
                    out["usage"] = chunk["usage"]
                for choice in chunk.get("choices") or []:
                    out["content"] += (choice.get("delta") or {}).get("content") or ""
                    out["finish_reason"] = choice.get("finish_reason") or out["finish_reason"]
    return out


if __name__ == "__main__":
    main()
