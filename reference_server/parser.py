"""Turns generated text into wire deltas as it streams: think markup becomes reasoning, tool-call
markup becomes tool-call pieces (id, type and name first, then arguments as string fragments), and
neither leaks into content. Stop sequences end the content before them.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
CALL_OPEN, CALL_CLOSE = "<tool_call>", "</tool_call>"
CALL_HEAD = re.compile(r'^\s*\{\s*"name"\s*:\s*"((?:[^"\\]|\\.)*)"\s*,\s*"arguments"\s*:\s*')
CALL_TAIL = "}\n" + CALL_CLOSE


@dataclass
class Delta:
    """One piece of output: content, reasoning, or a tool-call piece."""

    kind: str  # content | reasoning | tool
    text: str = ""
    index: int = 0
    call_id: str | None = None
    name: str | None = None


@dataclass
class OutputParser:
    """Feed generated text with ``feed``; ``close`` at the end. Both return deltas."""

    stop: list[str] = field(default_factory=list)
    tools: bool = False
    mode: str = "text"  # text | think | tool
    buf: str = ""
    calls: int = 0
    stopped: bool = False
    matched: str | None = None  # the stop sequence that ended the output
    after_think: bool = False
    call_buf: str = ""
    call_started: bool = False

    def feed(self, text: str) -> list[Delta]:
        self.buf += text
        out: list[Delta] = []
        while self.buf and not self.stopped:
            before = (self.mode, len(self.buf))
            {"text": self._text, "think": self._think, "tool": self._tool}[self.mode](out)
            if (self.mode, len(self.buf)) == before:
                break
        return out

    def close(self) -> list[Delta]:
        out: list[Delta] = []
        rest, self.buf = self.buf, ""
        if self.mode == "think" and rest:
            out.append(Delta("reasoning", rest))
        elif self.mode == "tool":
            out += self._unfinished_call(rest)
        elif rest and not self.stopped:
            out += self._content(rest, final=True)
        return out

    def _markers(self) -> list[str]:
        return [THINK_OPEN, CALL_OPEN] if self.tools else [THINK_OPEN]

    def _text(self, out: list[Delta]) -> None:
        hits = [(self.buf.find(m), m) for m in self._markers() if m in self.buf]
        if hits:
            at, marker = min(hits)
            out += self._content(self.buf[:at], final=True)
            self.buf = self.buf[at + len(marker):]
            self.mode = "think" if marker == THINK_OPEN else "tool"
            self.call_buf, self.call_started = "", False
            return
        keep = max(partial_marker(self.buf, m) for m in self._markers())
        ready, self.buf = self.buf[: len(self.buf) - keep], self.buf[len(self.buf) - keep:]
        out += self._content(ready, final=False)

    def _think(self, out: list[Delta]) -> None:
        at = self.buf.find(THINK_CLOSE)
        if at >= 0:
            if at:
                out.append(Delta("reasoning", self.buf[:at]))
            self.buf = self.buf[at + len(THINK_CLOSE):]
            self.mode, self.after_think = "text", True
            return
        keep = partial_marker(self.buf, THINK_CLOSE)
        if len(self.buf) > keep:
            out.append(Delta("reasoning", self.buf[: len(self.buf) - keep]))
            self.buf = self.buf[len(self.buf) - keep:]

    def _tool(self, out: list[Delta]) -> None:
        self.call_buf += self.buf
        self.buf = ""
        if not self.call_started:
            head = CALL_HEAD.match(self.call_buf)
            if head is None:
                return
            name = json.loads(f'"{head.group(1)}"')
            out.append(Delta("tool", "", self.calls, f"call_{uuid.uuid4().hex[:24]}", name))
            self.call_buf = self.call_buf[head.end():]
            self.call_started = True
        at = self.call_buf.find(CALL_CLOSE)
        if at >= 0:
            args = self.call_buf[:at].rstrip()
            args = args[:-1] if args.endswith("}") else args  # the closing brace of {"name", "arguments"}
            if args:
                out.append(Delta("tool", args, self.calls))
            self.buf = self.call_buf[at + len(CALL_CLOSE):].lstrip("\n")
            self.call_buf, self.mode = "", "text"
            self.calls += 1
            return
        keep = min(len(self.call_buf), len(CALL_TAIL))
        ready = self.call_buf[: len(self.call_buf) - keep]
        if ready:
            out.append(Delta("tool", ready, self.calls))
            self.call_buf = self.call_buf[len(ready):]

    def _unfinished_call(self, rest: str) -> list[Delta]:
        """A call cut short (by max_tokens): what arrived of its arguments is sent as it is."""
        self.call_buf += rest
        if not self.call_started:
            return []
        text, self.call_buf = self.call_buf, ""
        self.calls += 1
        return [Delta("tool", text, self.calls - 1)] if text else []

    def _content(self, text: str, final: bool) -> list[Delta]:
        if self.after_think:
            text = text.lstrip("\n")
            if text:
                self.after_think = False
        if not text:
            return []
        if self.stop:
            hits = [text.find(s) for s in self.stop if s in text]
            if hits:
                self.stopped = True
                self.matched = min((text.find(s), s) for s in self.stop if s in text)[1]
                cut = text[: min(hits)]
                return [Delta("content", cut)] if cut else []
            if not final:
                keep = max(partial_marker(text, s) for s in self.stop)
                if keep:
                    self.buf = text[len(text) - keep:] + self.buf
                    text = text[: len(text) - keep]
        return [Delta("content", text)] if text else []


def partial_marker(text: str, marker: str) -> int:
    """Length of the longest end of ``text`` that could begin ``marker`` (held back until the next token).

    The server keeps its own copy: it must not lean on the oracle that judges it.
    """
    for size in range(min(len(marker) - 1, len(text)), 0, -1):
        if marker.startswith(text[-size:]):
            return size
    return 0
