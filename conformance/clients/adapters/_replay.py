"""What every adapter shares (stdlib only; each adapter runs by path, so this folder is on its sys.path)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any


def blank(client: str, dist: str = "") -> dict[str, Any]:
    """What an adapter prints before it has assembled anything; ``client`` names the library and its version."""
    if dist:
        try:
            from importlib.metadata import version

            client = f"{dist} {version(dist)}"
        except Exception:  # noqa: BLE001 - the name alone then
            pass
    return {"content": "", "reasoning": "", "tool_calls": [], "finish_reason": None, "usage": None, "error": None,
            "complete": False, "client": client}


def serve(one: Callable[[int], dict[str, Any]]) -> None:
    """CONFORMANCE_REPLAY_COUNT requests, one after another (the replay server serves its exchanges in turn), each
    printed as one JSON line as it ends; ``one`` gets the request's number."""
    for i in range(int(os.environ.get("CONFORMANCE_REPLAY_COUNT", "1"))):
        print(json.dumps(one(i)), flush=True)
