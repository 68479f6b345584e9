"""What the rules of every SSE protocol read of the events themselves (the generic SSE framing rules), fed in the
one pass that decodes a stream: shared by every SSE protocol, so none imports another's watch."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class EventWatch:
    """What the rules of every SSE protocol read of the events themselves, fed in order."""

    at: dict[int, int] = field(default_factory=dict)  # event index -> byte offset, for each event a record names
    events: int = 0
    first_end: int | None = None
    last_end: int | None = None
    last_index: int | None = None
    last_offset: int | None = None
    odd_type: tuple[int, str] | None = None  # the first event: field other than message or error (SSE-008)
    multi_data: tuple[int, int] | None = None  # the first event with more than one data: line (SSE-014)
    done: int | None = None  # the first [DONE]'s event
    after_done: int = 0  # events after it, and the first
    after_done_first: int | None = None
    invalid: Any = None  # the first payload that is not JSON (SSE-006)

    def offset(self, event: int | None) -> int | None:
        """The byte offset of an event a record names (None for one it does not)."""
        if event is None:
            return None
        return self.last_offset if event == self.last_index else self.at.get(event)

    def event(self, index: int, offset: int, end: int, type_: str, data_lines: int) -> None:
        """One decoded event (before its payload)."""
        self.events += 1
        if self.first_end is None:
            self.first_end = end
            self.at[index] = offset
        self.last_end, self.last_index, self.last_offset = end, index, offset
        if self.done is not None:
            self.after_done += 1
            if self.after_done_first is None:
                self.after_done_first = index
                self.at[index] = offset
        if type_ not in ("message", "error") and self.odd_type is None:
            self.odd_type = (index, type_)
            self.at[index] = offset
        if data_lines > 1 and self.multi_data is None:
            self.multi_data = (index, data_lines)
            self.at[index] = offset

    def problem(self, p: Any) -> None:
        """Any protocol's classified payload: the first that is not JSON."""
        if p.problem is not None and self.invalid is None:
            self.invalid = p
            self.at[p.index] = p.offset
