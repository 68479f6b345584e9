"""Secret scrubbing: the API key's value never reaches a file or the terminal, whatever a server echoes.

Masking keeps the length, so byte offsets in a scrubbed body still point where they did.
"""

from __future__ import annotations

from collections.abc import Iterable

MIN_SECRET = 4  # shorter values would mask ordinary text


class Scrubber:
    """Replaces every occurrence of the given secrets (and of their Bearer form) with ``*``."""

    def __init__(self, secrets: Iterable[str | None]) -> None:
        self.secrets = tuple(sorted({s for s in secrets if s and len(s) >= MIN_SECRET}, key=len, reverse=True))
        self._bytes = tuple(s.encode("utf-8") for s in self.secrets)

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def text(self, value: str) -> str:
        for secret in self.secrets:
            if secret in value:
                value = value.replace(secret, "*" * len(secret))
        return value

    def data(self, value: bytes) -> bytes:
        for secret in self._bytes:
            if secret in value:
                value = value.replace(secret, b"*" * len(secret))
        return value

    def headers(self, headers: Iterable[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
        from conformance.repro import redact_headers

        return tuple((k, self.text(v)) for k, v in redact_headers(tuple(headers)))
