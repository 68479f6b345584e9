"""What the suite sends: one request, as data. Scenarios build it, the client sends it, the reproducer writes it."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from conformance.model import Intent

__all__ = ["Request"]


@dataclass
class Request:
    """What to send. ``body`` (JSON) or ``content`` (raw bytes, for malformed input). With both, ``content`` is what
    is sent and ``body`` what is recorded: a record that names a bulk it sent (the oversized body's 16 MiB), which the
    exchange's ``sent_bytes`` observation and the reproducer's body file (the exact bytes) say."""

    method: str = "POST"
    path: str = "/v1/chat/completions"
    body: Any = None
    content: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    intent: Intent | None = None
    scenario: str = "live"
    stop_after_events: int | None = None  # disconnect after this many SSE events
    first_event: threading.Event | None = None  # set when the first SSE event has arrived
    arrived: threading.Semaphore | None = None  # released when the stream stops reading (burst scenarios)
    hold: threading.Event | None = None  # wait for this before disconnecting (burst scenarios)
    counts: Callable[[str], bool] | None = None  # which events count for stop_after_events (by their data)
    abandon: threading.Event | None = None  # stop waiting for the response once this is set (burst scenarios)
    retry_lost: bool = True  # a lost connection is sent again alone (engine.runner); False where the loss is the point
    # the body's encoding, with the body it encodes: sending, the reproducer and its script each ask for it (the
    # oversized request is 16 MiB); a new body object (``replace``, assignment) is encoded anew
    _encoding: tuple[Any, bytes] | None = field(default=None, init=False, repr=False, compare=False)

    def encoded(self) -> bytes | None:
        if self.content is not None:
            return self.content
        if self.body is None:
            return None
        if self._encoding is None or self._encoding[0] is not self.body:
            self._encoding = (self.body, json.dumps(self.body).encode())
        return self._encoding[1]
