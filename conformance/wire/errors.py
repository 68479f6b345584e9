"""The one error type of the wire layer."""

from __future__ import annotations


class WireError(Exception):
    """The bytes cannot be decoded any further; ``offset`` is where in the stream that was seen."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} (at byte {offset})")
        self.message = message
        self.offset = offset
