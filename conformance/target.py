"""The target's base URL, normalized and validated (../shared/seeds/003 §1)."""

from __future__ import annotations

from urllib.parse import urlsplit

from conformance.errors import ConfigError, Unreachable

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
