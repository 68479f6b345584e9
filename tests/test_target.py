"""Base URL normalization, as ../shared/seeds/003 §1 asks."""

from __future__ import annotations

import pytest

from conformance.errors import ConfigError
from conformance.settings import normalize_base_url

SAME = ["http://127.0.0.1:8080", "http://127.0.0.1:8080/", "http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1/",
        " http://127.0.0.1:8080/v1 "]
BAD = [("userinfo", "http://user:pw@127.0.0.1:8080/v1"), ("query", "http://127.0.0.1:8080/v1?x=1"),
       ("fragment", "http://127.0.0.1:8080/v1#top"), ("scheme", "ftp://127.0.0.1/v1"), ("no-host", "http:///v1"),
       ("not-a-url", "localhost:8080")]


@pytest.mark.parametrize("url", SAME)
def test_both_forms_normalize_alike(url: str) -> None:
    assert normalize_base_url(url) == "http://127.0.0.1:8080"


def test_a_path_prefix_is_kept() -> None:
    assert normalize_base_url("https://gw.example/openai/v1/") == "https://gw.example/openai"


@pytest.mark.parametrize("url", [b[1] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_base_urls_are_refused(url: str) -> None:
    with pytest.raises(ConfigError):
        normalize_base_url(url)
