"""What the start of a run learns, and how it says what is wrong (issues 57 and 61).

A run first asks ``GET /v1/models``, then sends each protocol's route probe. Every answer is read before anything
is blamed:

- a model list that is not one (a 404, a redirect, a 5xx, an HTML page, JSON without ``data``) names the base URL
  as the likely problem, with what was expected, what came, and a hint (``url_problem``);
- a route probe answered 404, 405 or 501 is a route the server does not serve, unless its refusal names the model
  (``names_model``): a server of one protocol is tested on what it serves;
- the model is blamed only when the refusal names it, or when the server lists models and not that one;
- when no route of the run is served, the run stops in one sentence that names the URL.

Everything a server sent is untrusted: excerpts are cut short and made printable.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from conformance.exchange import Exchange
from conformance.wire.body import held
from conformance.wire.untrusted import one_line

EXCERPT = 100
MODEL_CODES = frozenset({"model_not_found", "model_not_available", "invalid_model"})


def excerpt(ex: Exchange, size: int = EXCERPT) -> str:
    """The start of a body, on one line, printable and cut short."""
    text = held(ex.body)[:size * 4].decode("utf-8", "replace")
    text = " ".join(text.split())
    return one_line(text[:size] + ("…" if len(text) > size else ""))


def media_type(ex: Exchange) -> str:
    return (ex.header("content-type") or "no Content-Type").split(";")[0].strip().lower() or "no Content-Type"


def _json(ex: Exchange) -> Any:
    try:
        return json.loads(held(ex.body))
    except ValueError:
        return None


def error_text(ex: Exchange) -> str:
    """The message of an error body (OpenAI's, Anthropic's or a plain string), short; else the body's start."""
    doc = _json(ex)
    error = doc.get("error") if isinstance(doc, dict) else None
    if isinstance(error, dict):
        message = error.get("message")
        if isinstance(message, (str, int)):
            return one_line(str(message)[:160])
    if isinstance(error, str):
        return one_line(error[:160])
    if isinstance(doc, dict) and isinstance(doc.get("detail"), str):  # FastAPI's {"detail": "Not Found"}
        return one_line(doc["detail"][:160])
    return excerpt(ex)


def names_model(ex: Exchange, model: str) -> bool:
    """Whether a refusal is about the model: its error code says so, or its message names the model id (or says
    "model" with not found / does not exist), as OpenAI's, Anthropic's, vLLM's, llama.cpp's and Ollama's refusals of
    an unknown model do. A route not found ("Unknown route", "Not Found", an HTML page) names no model."""
    doc = _json(ex)
    error = doc.get("error") if isinstance(doc, dict) else None
    fields = error if isinstance(error, dict) else {}
    if str(fields.get("code")) in MODEL_CODES or str(fields.get("type")) in MODEL_CODES:
        return True
    message = fields.get("message") if fields else error if isinstance(error, str) else None
    if not isinstance(message, str):
        return False
    text = message.lower()
    if model and model.lower() in text:
        return True
    return "model" in text and any(p in text for p in ("not found", "does not exist", "not exist", "unknown model",
                                                         "not available", "not loaded", "not served"))


def listed_ids(ex: Exchange) -> list[str] | None:
    """The model ids a model list names (OpenAI's and Anthropic's ``data[].id``, Ollama's ``/api/tags``
    ``models[].name``), or None when the body is no model list."""
    doc = _json(ex)
    if not isinstance(doc, dict):
        return None
    if isinstance(doc.get("data"), list):
        return [str(e["id"]) for e in doc["data"] if isinstance(e, dict) and "id" in e]
    if ex.path.endswith("/api/tags") and isinstance(doc.get("models"), list):
        return [str(e.get("name") or e.get("model")) for e in doc["models"]
                if isinstance(e, dict) and (e.get("name") or e.get("model"))]
    return None


def answer(ex: Exchange) -> str:
    """A short description of what an answer was, for a sentence: "an HTML page", "text/plain: Not Found", "JSON:
    {...}" (an error's message where it has one)."""
    body = excerpt(ex, 60)
    if not body:
        return "an empty body"
    if "html" in media_type(ex) or body.lstrip().startswith("<"):
        return "an HTML page"
    doc = _json(ex)
    if doc is not None:
        message = error_text(ex)
        return f"JSON: {message if message != excerpt(ex) else body}"
    return f"{media_type(ex)}: {body}"


def model_list_problem(ex: Exchange) -> str | None:
    """What a model list route answered instead of a JSON model list (None: it is one, possibly empty)."""
    status = ex.status
    if status is None:
        return None
    if 300 <= status < 400:
        where = ex.header("location")
        return f"answered {status}, a redirect" + (f" to {one_line(where[:200])!r}" if where else "")
    if status != 200:
        return f"answered {status} ({answer(ex)})"
    if listed_ids(ex) is None:
        what = answer(ex)
        return f"answered 200 with {'JSON that is no model list' if what.startswith('JSON') else what}"
    return None


def grouped(pairs: list[tuple[str, str]]) -> str:
    """("GET /v1/models", "answered 404 (an HTML page)") pairs, those that say the same joined: "GET /v1/models and
    GET /api/tags answered 404 (an HTML page)"."""
    said: dict[str, list[str]] = {}
    for what, how in pairs:
        said.setdefault(how, []).append(what)
    return "; ".join(f"{' and '.join(whats) if len(whats) < 3 else ', '.join(whats[:-1]) + ' and ' + whats[-1]} {how}"
                     for how, whats in said.items())


def url_hint(base_url: str, ex: Exchange | None = None) -> str:
    """What to try instead of ``base_url``: the API's root a redirect points at, else the root with /v1 when the base
    URL has a path of its own, else a path where APIs often live."""
    where = ex.header("location") if ex is not None and ex.status is not None and 300 <= ex.status < 400 else None
    if where:
        target = urlsplit(where)
        path = target.path.rstrip("/")
        if path.endswith("/models"):
            path = path[: -len("/models")]
        if target.scheme in ("http", "https") and target.netloc:
            return f"is the base URL {one_line(f'{target.scheme}://{target.netloc}{path}')[:200]}? (the suite follows " \
                   "no redirect)"
        return f"is the base URL the one the redirect points at ({one_line(where[:200])})? (the suite follows no redirect)"
    parts = urlsplit(base_url)
    root = f"{parts.scheme}://{parts.netloc}"
    if parts.path.strip("/"):
        return f"is the API at {root}/v1? (the base URL is the API's root, with or without /v1; the suite adds " \
               "/v1/models, /v1/chat/completions, ...)"
    return "does the API live under a path, such as /api/v1 or /openai/v1? Give it in --base-url (the suite adds " \
           "/v1/models, /v1/chat/completions, ...)"


def url_problem(base_url: str, tried: list[tuple[Exchange, str]]) -> str:
    """The sentence for model lists that are not ones, without --model: the URL named, expected and got, a hint."""
    said = grouped([(f"GET {base_url}{ex.path}", problem) for ex, problem in tried])
    return (f"the base URL does not look like an LLM API: {said}, where a JSON model list was expected; "
            f"{url_hint(base_url, tried[0][0])} (with --model the run goes on without a model list)")


def nothing_served(base_url: str, probes: list[tuple[str, Exchange]], tried: list[tuple[Exchange, str]]) -> str:
    """The sentence for a run where no protocol route of the run is served: every probe answered 404, 405 or 501."""
    said = grouped([(f"{ex.method} {ex.path}", f"answered {ex.status} ({answer(ex)})") for _, ex in probes]
                   + [(f"GET {ex.path}", problem) for ex, problem in tried])
    hint = url_hint(base_url, tried[0][0] if tried else None)
    return f"nothing at {base_url} serves an LLM API: {said}; {hint}"
