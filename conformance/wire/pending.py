"""What the SSE and NDJSON decoders share: the bytes of a line not yet ended, kept as a buffer and the pieces that
arrived after it (joined once, when the line ends or the decoder needs it whole)."""

from __future__ import annotations

from conformance.wire.errors import WireError


class Pending:
    """The bytes held back: ``_buf``, and ``_more`` (pieces since, ``_more_len`` bytes), joined by ``_joined``."""

    _buf: bytes
    _more: list[bytes]
    _more_len: int
    _max_line: int

    def _joined(self, data: bytes = b"") -> bytes:
        """The held bytes and ``data``, in one piece; the pieces are forgotten."""
        if self._more:
            buf = b"".join([self._buf, *self._more, data])
            self._more, self._more_len = [], 0
            return buf
        return self._buf + data if self._buf else data

    def _hold(self, data: bytes, start: int) -> None:
        """Keep ``data``, a piece of a long line arriving piece by piece (not copied again on every feed); a line
        grown past the limit is an error at ``start``, where the line began."""
        self._more.append(data)
        self._more_len += len(data)
        if len(self._buf) + self._more_len > self._max_line:
            raise WireError(f"a line longer than {self._max_line} bytes", start)
