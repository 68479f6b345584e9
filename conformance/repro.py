"""A curl command that reproduces a request, with the Authorization header redacted."""

from __future__ import annotations

import shlex
from dataclasses import replace

from conformance.client import Request, cancel_path, join_url, request_headers

MAX_INLINE_BODY = 2048
REDACTED = "Bearer <redacted>"
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "x-api-key", "api-key"})


def redact_headers(headers: dict[str, str] | tuple[tuple[str, str], ...]) -> list[tuple[str, str]]:
    """Headers with every secret value replaced."""
    items = headers.items() if isinstance(headers, dict) else headers
    return [(k, REDACTED if k.lower() == "authorization" else ("<redacted>" if k.lower() in SECRET_HEADERS else v))
            for k, v in items]


def curl(base_url: str, req: Request, api_key: str | None = None, body_file: str | None = None) -> str:
    """``curl -sN …`` for ``req``; a body over 2 KiB is read from ``body_file`` when the caller saved it
    there, else described, not inlined."""
    parts = ["curl", "-sN"]
    if req.method != "POST" or req.encoded() is None:
        parts += ["-X", req.method]
    parts.append(join_url(base_url, req.path))
    body = req.encoded()
    for name, value in redact_headers(request_headers(req, api_key)):
        parts += ["-H", f"{name}: {value}"]
    if body is not None and body_file is not None and len(body) > MAX_INLINE_BODY and body_file.endswith(".gz"):
        parts += ["--data-binary", f"@<(gunzip -c {shlex.quote(body_file)})"]  # bash: the body, unpacked
    elif body is not None and body_file is not None and len(body) > MAX_INLINE_BODY:
        parts += ["--data-binary", f"@{body_file}"]
    elif body is not None:
        try:
            body.decode("utf-8")
        except UnicodeDecodeError:  # not text: printf writes the exact bytes, curl reads them from stdin
            if len(body) <= MAX_INLINE_BODY:
                parts += ["--data-binary", "@-"]
                return f"printf {shlex.quote(printf_format(body))} | " + " ".join(shlex.quote(p) for p in parts)
        if len(body) <= MAX_INLINE_BODY:
            parts += ["--data-binary", body.decode("utf-8", "backslashreplace")]
        else:
            head = body[:200].decode("utf-8", "backslashreplace")
            parts += ["--data-binary", f"@body.json  # {len(body)} bytes, starting {head!r}"]
    return " ".join(p if p.startswith(("@body.json", "@<(")) else shlex.quote(p) for p in parts)


def printf_format(data: bytes) -> str:
    """A printf format that writes exactly ``data``: octal escapes for bytes outside printable ASCII."""
    out = []
    for byte in data:
        char = chr(byte)
        if char == "%":
            out.append("%%")
        elif char == "\\":
            out.append("\\\\")
        elif 0x20 <= byte < 0x7F:
            out.append(char)
        else:
            out.append(f"\\{byte:03o}")
    return "".join(out)



def _cancel_call(base_url: str, req: Request, api_key: str | None) -> str:
    """The cancel call for the stream ``req`` opened, by its X-Request-ID (seed 000)."""
    rid = req.headers.get("X-Request-ID", "ID")
    return curl(base_url, Request(path=cancel_path(rid), body={}), api_key)


def scenario_script(kind: str, base_url: str, req: Request, api_key: str | None = None, body_file: str | None = None,
                    followup: Request | None = None, burst: int = 12) -> str:
    """A short shell script of what the suite actually did for a scenario of this kind: an HTTP/1.0
    request, a disconnect after the first event, the cancel call beside its stream, the burst."""
    one = curl(base_url, req, api_key, body_file)
    if kind == "http10":
        return one.replace("curl -sN", "curl -sN --http1.0", 1)
    if kind == "disconnect":
        return f"{one} | head -n 1  # read the first event, then hang up"
    if kind == "cancel":
        call = _cancel_call(base_url, req, api_key)
        return f"{one} &\nsleep 1  # the stream has started\n{call}\nwait"
    if kind == "burst":
        return f"for i in $(seq {burst}); do\n  {one} | head -n 1 &\ndone\nwait  # the refused ones answer 429"
    if kind == "repeat":
        return f"{one}\n# the same history again: its usage reports the reused prompt tokens\n{one}"
    if kind == "clock":
        return f"{one}\n# then the same with max_tokens scaled so that the stream lasts over a second"
    if kind == "stop-compare":
        unstopped = curl(base_url, replace(req, body={k: v for k, v in (req.body or {}).items() if k != "stop"}),
                         api_key)
        return f"{unstopped}\n# the same request with its stop sequences: the answer is the first cut before them\n{one}"
    if kind == "cancel-completed":
        call = _cancel_call(base_url, req, api_key)
        return f"{one}\n# the stream has ended: cancelling it now answers 404\n{call}"
    if kind == "followup" and followup is not None:
        return f"{one}\n# then a plain request, which must still be answered:\n{curl(base_url, followup, api_key)}"
    return one
