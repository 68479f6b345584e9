"""The streaming judge of Ollama's NDJSON frames (issue 25): fed each decoded line in order, it keeps what the OLL rules
ask of the sequence (the first offending frame of each kind, the first and last terminal frames, counters, a bounded
set of model names) and the assembled answer, never the lines, so a body is judged to its end in constant memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conformance.protocols.ollama.assembler import FrameAnswer
from conformance.wire.ndjson import NDJSONLine

MAX_MODELS = 16  # distinct model names kept (OLL-008 needs two, or one that is not a name)


def terminal(value: Any) -> bool:
    """A frame that ends the stream: done: true, or an error."""
    return isinstance(value, dict) and (value.get("done") is True or "error" in value)


def quiet(ln: NDJSONLine) -> bool:
    """A whole line whose copies move only counters: no text to add, no end, no error."""
    value = ln.value
    if ln.partial or terminal(value):
        return False
    if not isinstance(value, dict):
        return True
    message = value.get("message")
    texts = (message.get("content"), message.get("thinking")) if isinstance(message, dict) else ()
    return not any(isinstance(t, str) and t for t in (*texts, value.get("response"), value.get("thinking")))


@dataclass(slots=True)
class Mark:
    """A line a finding names: where it starts and what it held."""

    index: int
    offset: int
    value: Any
    text: str = ""
    partial: bool = False


@dataclass(slots=True)
class FrameWatch:
    """What the OLL rules and the assembler read of an NDJSON stream's lines."""

    chat: bool  # /api/chat frames carry message, /api/generate frames response
    lines: int = 0
    bad: Mark | None = None  # the first line that is not a JSON object, or ends without LF (OLL-002)
    first_terminal: Mark | None = None  # OLL-003..006
    last_terminal: Mark | None = None  # OLL-011
    after_terminal: int = 0  # lines after the first terminal frame, and the first of them (OLL-005)
    after_first: int | None = None
    early: Mark | None = None  # the first frame before it whose done is not false (OLL-006)
    shape: Mark | None = None  # the first success frame without its route's text field (OLL-007)
    models: set[str] = field(default_factory=set)  # OLL-008: the names, as shown, at most MAX_MODELS (then more)
    more_models: bool = False
    odd_model: bool = False  # a model that is no name (not a string, or empty)
    frames: int = 0  # lines whose value is an object (OLL-014/015)
    failed: bool = False  # an error frame
    done: bool = False  # a done: true frame
    last_frame: Any = None  # the last object
    last: Mark | None = None  # the last line (OLL-013)
    pull_problem: tuple[str, Mark] | None = None  # the first pull frame without a status, or a bad progress frame
    eval_count: int | None = None  # the last frame's eval_count (tokens_used)
    undone: int = 0  # frames with done: false
    assembled: FrameAnswer = field(default_factory=FrameAnswer)  # the answer, frame by frame

    def line(self, ln: NDJSONLine) -> None:
        value = ln.value
        index = self.lines
        self.lines += 1
        self.last = Mark(index, ln.offset, value)
        if self.bad is None and (not isinstance(value, dict) or ln.partial):
            self.bad = Mark(index, ln.offset, value, ln.text[:60], ln.partial)
        if self.first_terminal is not None:
            self.after_terminal += 1
            if self.after_first is None:
                self.after_first = ln.offset
        elif isinstance(value, dict) and value.get("done") is not False and not terminal(value) \
                and self.early is None:
            self.early = Mark(index, ln.offset, value)
        if terminal(value):
            mark = Mark(index, ln.offset, value)
            if self.first_terminal is None:
                self.first_terminal = mark
            self.last_terminal = mark
        self._pull(index, ln.offset, value)
        if not isinstance(value, dict):
            return
        self.frames += 1
        self.last_frame = value
        if value.get("done") is True:
            self.done = True
        if value.get("done") is False:
            self.undone += 1
        if isinstance(value.get("eval_count"), int):
            self.eval_count = value["eval_count"]
        self.assembled.add(value)
        if "error" in value:
            self.failed = True
            return
        self._shape(index, ln.offset, value)

    def again(self, ln: NDJSONLine, copies: int = 1, step: int = 0) -> None:
        """``copies`` copies of the line just fed, the last ``(copies - 1) * step`` bytes after ``ln``, when it
        carries no text and ends nothing (``quiet``): what ``line`` would do with each, the counters only (every
        first mark it could set, the line before them set). A flood of empty frames is judged at the pace of one."""
        value = ln.value
        self.last = Mark(self.lines + copies - 1, ln.offset + (copies - 1) * step, value)
        self.lines += copies
        if self.first_terminal is not None:
            self.after_terminal += copies
        if isinstance(value, dict):
            self.frames += copies
            self.last_frame = value
            if value.get("done") is False:
                self.undone += copies

    def _shape(self, index: int, offset: int, frame: dict[str, Any]) -> None:
        """OLL-007 and OLL-008 read the success frames up to the first of the wrong shape."""
        if self.shape is not None:
            return
        model = frame.get("model")
        if not isinstance(model, str) or not model:
            self.odd_model = True
        shown = str(model)
        if shown not in self.models:
            if len(self.models) < MAX_MODELS:
                self.models.add(shown)
            else:
                self.more_models = True
        if self.chat:
            message = frame.get("message")
            ok = isinstance(message, dict) and message.get("role") == "assistant" \
                and isinstance(message.get("content"), str)
        else:
            ok = isinstance(frame.get("response"), str)
        if not ok:
            self.shape = Mark(index, offset, frame)

    def _pull(self, index: int, offset: int, frame: Any) -> None:
        if self.pull_problem is not None:
            return
        if not isinstance(frame, dict) or not (isinstance(frame.get("status"), str) or "error" in frame):
            self.pull_problem = ("frame", Mark(index, offset, frame))
        elif "digest" in frame:
            total, done = frame.get("total"), frame.get("completed", 0)
            if not isinstance(frame["digest"], str) or not isinstance(total, int) or not isinstance(done, int) \
                    or isinstance(total, bool) or not 0 <= done <= total:
                self.pull_problem = ("progress frame", Mark(index, offset, frame))
