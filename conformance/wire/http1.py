"""HTTP/1.x heads as a capture shows them (``curl -si``, a raw HTTP/1.0 answer): sans-I/O, text in, parts out."""

from __future__ import annotations

from conformance.errors import InputError

__all__ = ["parse_header_block", "split_curl_i"]


def parse_header_block(text: str) -> tuple[int | None, str, list[tuple[str, str]]]:
    """Status, HTTP version and headers from a ``curl -si`` header block (the last block wins)."""
    status: int | None = None
    version = "HTTP/1.1"
    headers: list[tuple[str, str]] = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.startswith("HTTP/"):
            parts = line.split()
            version = parts[0]
            status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None
            headers = []
        elif ":" in line:
            name, _, value = line.partition(":")
            headers.append((name.strip().lower(), value.strip()))
    return status, version, headers


def split_curl_i(data: bytes) -> tuple[str | None, bytes]:
    """Split ``curl -si`` output into its header block(s) and the body."""
    if not data.startswith(b"HTTP/"):
        return None, data
    rest = data
    blocks = []
    while rest.startswith(b"HTTP/"):
        for sep in (b"\r\n\r\n", b"\n\n"):
            at = rest.find(sep)
            if at >= 0:
                blocks.append(rest[:at].decode("latin-1"))
                rest = rest[at + len(sep):]
                break
        else:
            raise InputError("the file starts with an HTTP status line but its header block never ends")
    return blocks[-1], rest
