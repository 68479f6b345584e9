"""A curl command that reproduces a request, with the Authorization header redacted (each scenario kind builds
its script from it: ``engine.kinds``)."""

from __future__ import annotations

import shlex

from conformance.engine.client import join_url, request_headers
from conformance.model.request import Request
from conformance.secrets import REDACTED as REDACTED
from conformance.secrets import SECRET_HEADERS as SECRET_HEADERS
from conformance.secrets import redact_headers

MAX_INLINE_BODY = 2048
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
