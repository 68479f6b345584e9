"""The target's base URL, normalized and validated (../shared/seeds/003 §1)."""

from __future__ import annotations

from urllib.parse import urlsplit

from conformance.errors import ConfigError, Unreachable
from conformance.untrusted import printable

__all__ = ["ConfigError", "Unreachable", "normalize_base_url"]


def normalize_base_url(url: str) -> str:
    """``http://host:port`` from a base URL given with or without ``/v1`` and a trailing slash.

    ../shared/seeds/003 §1: "Normalize both forms, or /v1/v1/models follows", and "A base URL must
    not carry userinfo, a query, or a fragment."
    """
    text = url.strip()
    if not text:
        raise ConfigError("the base URL is empty; pass --base-url http://HOST:PORT/v1, or leave it out to test "
                          "the bundled reference server")
    if any("\udc80" <= c <= "\udcff" for c in text):
        raise ConfigError(f"the base URL '{printable(text)}' is not valid UTF-8; give it as text (http://HOST:PORT/v1)")
    if any(not c.isprintable() or c.isspace() for c in text):
        raise ConfigError(f"the base URL '{printable(text)}' has a space or a control character in it; percent-encode "
                          "it (%20) or check what was pasted")
    if not text.isascii():
        at = next(c for c in text if not c.isascii())
        raise ConfigError(f"the base URL '{printable(text)}' has a character that is not ASCII ({at!r}); "
                          "percent-encode it in the path, and give a host name in its ASCII (xn--) form")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise ConfigError(f"the base URL {url!r} is not a valid URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.netloc or not parts.hostname:
        raise ConfigError(f"the base URL {url!r} is not an http:// or https:// URL")
    if port == 0:
        raise ConfigError(f"the base URL {url!r} names port 0")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise ConfigError("the base URL must not carry a user name or password; pass the key with --api-key")
    if parts.query or text.endswith("?"):
        raise ConfigError(f"the base URL {url!r} must not carry a query")
    if parts.fragment or "#" in text:
        raise ConfigError(f"the base URL {url!r} must not carry a fragment")
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[: -len("/v1")]
    return f"{parts.scheme}://{parts.netloc}{path}"
