"""The target of a live run: its base URL (normalized), key, model, profile and expectations."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

from conformance.client import Limits


class ConfigError(Exception):
    """A usage or configuration error: one sentence, exit 2."""


class Unreachable(Exception):
    """The target cannot be reached or is not an HTTP server: exit 3."""


def normalize_base_url(url: str) -> str:
    """``http://host:port`` from a base URL given with or without ``/v1`` and a trailing slash.

    ../shared/seeds/003 §1: "Normalize both forms, or /v1/v1/models follows", and "A base URL must
    not carry userinfo, a query, or a fragment."
    """
    text = url.strip()
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"the base URL {url!r} is not an http:// or https:// URL")
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


@dataclass
class Target:
    """Everything a live run needs to know about the server under test."""

    base_url: str
    api_key: str | None = None
    model: str | None = None
    profile: str = "openai"
    expect: frozenset[str] = frozenset()
    limits: Limits = field(default_factory=Limits)
    workers: int = 4
    strict: bool = False
