"""Hypothesis strategies for chat completion requests, built from the request schema.

Three kinds, each judged by its own property (rules FUZ-001 to FUZ-006):

- ``valid``: requests the schema allows but that servers rarely see: unicode and empty content,
  long and many messages, every role, tool round trips, images as data URLs (when the server
  claims them), tools with nested and nullable schemas, ``stop`` lists, the boundary values of
  ``temperature``, ``top_p`` and ``max_tokens``. Answer: a conformant response or a documented 4xx.
- ``invalid``: wrong types, out-of-range values, missing required fields, malformed or truncated
  JSON, invalid UTF-8, a wrong Content-Type, a huge body. Answer: a 4xx with the JSON error envelope.
- ``lenient``: input a server may take or refuse (duplicate keys, an unknown field, no ``model``,
  ``n`` above 1). Answer: either of the above, never a 5xx.

Every case is small unless its point is size, and every generation is capped by ``max_tokens``, so
an example costs milliseconds on a local server. Strategies shrink towards short, plain requests.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from conformance.model import Intent
from conformance.model.request import Request

KINDS = ("valid", "invalid", "lenient")
MAX_GENERATED = 16  # max_tokens for every valid request: the answers stay short
HUGE_BYTES = 16 * 1024 * 1024 + 1
# A 1x1 transparent PNG, base64.
PNG_1X1 = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA"
           "60e6kgAAAABJRU5ErkJggg==")


@dataclass(frozen=True)
class FuzzCase:
    """One generated request: its kind, what makes it unusual, and what goes on the wire."""

    kind: str
    label: str
    body: Any = None  # the JSON body, when there is one
    content: bytes | None = None  # raw bytes, when the body is not (or not only) JSON
    headers: dict[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:  # Hypothesis prints examples: not 16 MiB of them
        return f"FuzzCase({self.kind!r}, {self.label!r}, {len(self.wire())} bytes)"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # Hypothesis's pretty printer, likewise
        printer.text(repr(self))

    def request(self) -> Request:
        return Request(body=self.body, content=self.content, headers=dict(self.headers),
                       intent=Intent(f"fuzz-{self.kind}"), scenario=f"fuzz-{self.kind}")

    def wire(self) -> bytes:
        """The bytes sent as the body."""
        return self.request().encoded() or b""

    def describe(self) -> str:
        """The request as a user reads it: the JSON body, or the raw bytes escaped."""
        data = self.wire()
        text = data[:600].decode("utf-8", "backslashreplace")
        return text + (f"… ({len(data)} bytes)" if len(data) > 600 else "")


# -- pieces ------------------------------------------------------------------------------------

def _text(max_size: int = 40) -> st.SearchStrategy[str]:
    """Unicode text without lone surrogates (they cannot be UTF-8): emoji, RTL, NUL, combining marks."""
    return st.text(st.characters(exclude_categories=["Cs"]), max_size=max_size)


PLAIN = st.sampled_from(["Hi", "Say hello.", "Count to three.", "", " ", "Why?", "ok"])
TEXT = st.one_of(PLAIN, _text(), st.sampled_from([
    "\u202eRTL override\u202c", "emoji 👩‍👩‍👧‍👦 and 🏳️‍🌈", "zero\u0000byte", "e\u0301\u0301\u0301", "日本語のテキスト",
    "line\r\nbreaks\rand\ttabs", "</think><think>", "data: [DONE]\n\n", '{"error": "not really"}',
]))
LONG_TEXT = st.integers(min_value=1, max_value=12).map(lambda n: "All work and no play. " * (n * 10))
NAME = st.from_regex(r"\A[a-zA-Z_][a-zA-Z0-9_]{0,20}\Z")


def _content(vision: bool) -> st.SearchStrategy[Any]:
    parts = st.lists(TEXT.map(lambda t: {"type": "text", "text": t}), min_size=1, max_size=3)
    options: list[st.SearchStrategy[Any]] = [TEXT, TEXT, TEXT, LONG_TEXT, parts]
    if vision:
        image = st.sampled_from(["png"]).map(lambda _: {"type": "image_url",
                                                        "image_url": {"url": f"data:image/png;base64,{PNG_1X1}"}})
        options.append(st.tuples(TEXT, st.lists(image, min_size=1, max_size=2)).map(
            lambda p: [{"type": "text", "text": p[0] or "Describe."}, *p[1]]))
    return st.one_of(options)


@st.composite
def _schema(draw: st.DrawFn, depth: int = 0) -> dict[str, Any]:
    """A JSON Schema for tool parameters: nested objects and arrays, nullable types, enums."""
    leaves: list[dict[str, Any]] = [
        {"type": "string"}, {"type": "integer"}, {"type": "number"}, {"type": "boolean"},
        {"type": ["string", "null"]}, {"type": ["integer", "null"]}, {"enum": ["a", "b", "c"]},
        {"type": "string", "maxLength": 8}, {"type": "integer", "minimum": 0, "maximum": 9},
        {"anyOf": [{"type": "string"}, {"type": "null"}]},
    ]
    if depth >= 2 or not draw(st.booleans()):
        return dict(draw(st.sampled_from(leaves)))
    if draw(st.booleans()):
        return {"type": "array", "items": draw(_schema(depth + 1)), "maxItems": 3}
    names = draw(st.lists(NAME, min_size=0, max_size=3, unique=True))
    props = {n: draw(_schema(depth + 1)) for n in names}
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if props:
        schema["required"] = draw(st.lists(st.sampled_from(names), unique=True))
    if draw(st.booleans()):
        schema["additionalProperties"] = False
    if draw(st.booleans()):
        schema["type"] = ["object", "null"]
    return schema


@st.composite
def _tools(draw: st.DrawFn) -> list[dict[str, Any]]:
    names = draw(st.lists(NAME, min_size=1, max_size=3, unique=True))
    tools = []
    for name in names:
        params = draw(_schema(1))
        if params.get("type") != "object":
            params = {"type": "object", "properties": {"value": params}}
        function: dict[str, Any] = {"name": name, "parameters": params}
        if draw(st.booleans()):
            function["description"] = draw(TEXT)
        tools.append({"type": "function", "function": function})
    return tools


@st.composite
def _messages(draw: st.DrawFn, vision: bool) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if draw(st.booleans()):
        messages.append({"role": draw(st.sampled_from(["system", "developer"])), "content": draw(TEXT)})
    for turn in range(draw(st.integers(min_value=0, max_value=12))):
        messages.append({"role": "user", "content": draw(_content(vision))})
        if draw(st.booleans()) and turn % 3 == 1:  # an earlier tool round trip
            call_id = f"call_{turn}"
            messages.append({"role": "assistant", "content": draw(st.one_of(st.none(), TEXT)), "tool_calls": [
                {"id": call_id, "type": "function",
                 "function": {"name": draw(NAME), "arguments": json.dumps({"value": draw(TEXT)})}}]})
            messages.append({"role": "tool", "tool_call_id": call_id, "content": draw(TEXT)})
        messages.append({"role": "assistant", "content": draw(TEXT)})
    messages.append({"role": "user", "content": draw(_content(vision))})
    return messages


BOUNDARY_TEMPERATURE = st.sampled_from([0, 0.0, 2, 2.0, 1e-9, 1.999999, 0.7, 1])
BOUNDARY_TOP_P = st.sampled_from([1, 1.0, 1e-9, 0.5, 0.999999])


@st.composite
def valid_bodies(draw: st.DrawFn, model: str, vision: bool = False) -> dict[str, Any]:
    """A request the schema allows."""
    body: dict[str, Any] = {"model": model, "messages": draw(_messages(vision))}
    body["stream"] = draw(st.sampled_from([True, True, True, False]))
    cap = draw(st.integers(min_value=1, max_value=MAX_GENERATED))
    body[draw(st.sampled_from(["max_tokens", "max_tokens", "max_completion_tokens"]))] = cap
    if body["stream"] and draw(st.booleans()):
        body["stream_options"] = {"include_usage": draw(st.booleans())}
    if draw(st.booleans()):
        body["temperature"] = draw(BOUNDARY_TEMPERATURE)
    if draw(st.booleans()):
        body["top_p"] = draw(BOUNDARY_TOP_P)
    if draw(st.booleans()):
        word = st.one_of(st.sampled_from([" ", ".", "\n", "lo", "é", "👋"]), _text(6).filter(bool))
        body["stop"] = draw(st.one_of(word, st.lists(word, min_size=1, max_size=4)))
    if draw(st.booleans()):
        body["seed"] = draw(st.integers(min_value=0, max_value=2**31 - 1))
    if draw(st.booleans()):
        body["user"] = draw(_text(20))
    extra = draw(st.sampled_from(["none", "none", "tools", "json_object", "json_schema", "text"]))
    if extra == "tools":
        tools = draw(_tools())
        body["tools"] = tools
        choice = draw(st.sampled_from(["absent", "auto", "none", "required", "named"]))
        if choice == "named":
            body["tool_choice"] = {"type": "function",
                                   "function": {"name": draw(st.sampled_from([t["function"]["name"] for t in tools]))}}
        elif choice != "absent":
            body["tool_choice"] = choice
        if draw(st.booleans()):
            body["parallel_tool_calls"] = draw(st.booleans())
    elif extra == "json_object":
        body["messages"][-1] = {"role": "user", "content": "Answer in JSON. " + str(body["messages"][-1]["content"])}
        body["response_format"] = {"type": "json_object"}
    elif extra == "json_schema":
        schema = draw(_schema(1))
        if schema.get("type") != "object":
            schema = {"type": "object", "properties": {"value": schema}}
        spec: dict[str, Any] = {"name": draw(NAME), "schema": schema}
        if draw(st.booleans()):
            spec["strict"] = False
        body["response_format"] = {"type": "json_schema", "json_schema": spec}
    elif extra == "text":
        body["response_format"] = {"type": "text"}
    return body


def _valid_case(body: dict[str, Any]) -> FuzzCase:
    # sent as UTF-8, not as \u escapes: the server's decoding of raw multi-byte text is part of the test
    return FuzzCase("valid", "valid request", body=body, content=json.dumps(body, ensure_ascii=False).encode())


def valid_cases(model: str, vision: bool = False) -> st.SearchStrategy[FuzzCase]:
    return valid_bodies(model, vision).map(_valid_case)


# -- invalid ----------------------------------------------------------------------------------

def _base(model: str) -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": "Hi"}], "stream": True, "max_tokens": 4}


CONTENT_KEY, MODEL_KEY = b'"content": "', b'"model": "'


def _into_string(raw: bytes, key: bytes, insert: bytes) -> tuple[bytes, str]:
    """``raw`` with ``insert`` at the start of the first ``key`` string (the model's when there is no
    such string), and where that is, for the label."""
    if key not in raw:
        key = MODEL_KEY
    at = raw.index(key) + len(key)
    return raw[:at] + insert + raw[at:], "a message" if key == CONTENT_KEY else "the model"


WRONG_TYPES: dict[str, list[Any]] = {
    "messages": ["Hi", {"role": "user", "content": "Hi"}, 1, None, [], ["Hi"], [{"content": "Hi"}],
                 [{"role": "wizard", "content": "Hi"}], [{"role": "user", "content": 5}],
                 [{"role": "user", "content": [{"type": "text"}]}]],
    "model": [5, [], {"id": "x"}, True],
    "stream": ["yes", 1, [], {}],
    "temperature": ["hot", [], {}, True],
    "top_p": ["all", [], True],
    "max_tokens": ["8", 1.5, [], True],
    "stop": [5, [5], {"x": 1}, [None]],
    "tools": [{}, "tools", 1, [{"type": "function"}], [{"type": "function", "function": {"parameters": {}}}],
              [{"type": "function", "function": {"name": "f", "parameters": "object"}}]],
    "tool_choice": [5, "sometimes", {"type": "function"}, []],
    "response_format": ["json", {"type": "yaml"}, {"type": "json_schema"}, 5],
    "stream_options": ["usage", 5, {"include_usage": "yes"}],
    "n": ["two", 1.5],
    "seed": ["seed", 1.5],
}
OUT_OF_RANGE: dict[str, list[Any]] = {
    "temperature": [-1, -1e-9, 2.000001, 3, 1e308, -1e308],
    "top_p": [-0.1, 1.000001, 2, 1e308],
    "max_tokens": [0, -1, -(2**31), -(2**63)],
    "max_completion_tokens": [0, -5],
    "n": [0, -1],
    "presence_penalty": [-2.5, 2.5],
    "frequency_penalty": [-3, 3],
}


# the nested forms twice: they are where parsers and validators crash (each found a 5xx in the reference server)
INVALID_FORMS = ("wrong-type", "out-of-range", "missing", "truncated", "not-an-object", "garbage", "invalid-utf8",
                 "content-type", "huge", "deep", "deep", "nested-wrong-type", "nested-wrong-type")
DEPTHS = (65, 400, 2_000, 100_000)
HUGE_INTS = (2**31, 2**53 + 1, 2**63, 2**64, 10**30)
_TOOL = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}
NESTED_WRONG: dict[str, list[Any]] = {  # fields whose inside is wrongly typed (they are well typed on top)
    "history tool_calls": ["x", 5, [{"function": 5}], [{"function": {"name": 5, "arguments": "{}"}}], ["call"]],
    "tool_choice": [{"type": "function", "function": "f"}, {"type": "function", "function": {"name": 5}},
                    {"type": "function", "function": []}],
    "response_format": [{"type": "json_schema", "json_schema": "x"},
                        {"type": "json_schema", "json_schema": {"name": "n", "schema": 5}},
                        {"type": "json_schema", "json_schema": {"name": 5, "schema": {}}}],
}


def _deep_body(body: dict[str, Any], where: str, depth: int) -> bytes:
    """The request as bytes with one value nested ``depth`` deep (built as text: no recursion here)."""
    head = json.dumps({k: v for k, v in body.items() if k != "messages"})[:-1]
    messages = json.dumps(body["messages"])
    if where == "messages":
        return (head + ', "messages": ' + "[" * depth + "]" * depth + "}").encode()
    if where == "metadata":
        return (head + ', "messages": ' + messages + ', "metadata": ' + '{"a": ' * depth + "1" + "}" * depth
                + "}").encode()
    schema = '{"type": "object", "properties": {"a": ' * depth + '{"type": "string"}' + "}}" * depth
    tool = '{"type": "function", "function": {"name": "f", "parameters": ' + schema + "}}"
    return (head + ', "messages": ' + messages + ', "tools": [' + tool + "]}").encode()


@st.composite
def invalid_cases(draw: st.DrawFn, model: str) -> FuzzCase:
    """A request a server must refuse with a 4xx and the JSON error envelope: one fault in a request
    that is otherwise the plain one or a generated valid one (shrinking goes to the plain one)."""
    body = draw(st.one_of(st.builds(_base, st.just(model)), valid_bodies(model)))
    body["stream"] = draw(st.booleans())
    form = draw(st.sampled_from(INVALID_FORMS))
    if form == "deep":
        depth = draw(st.sampled_from(DEPTHS))
        where = draw(st.sampled_from(["messages", "metadata", "a tool schema"]))
        return FuzzCase("invalid", f"{where} nested {depth} deep", content=_deep_body(body, where, depth))
    if form == "nested-wrong-type":
        key = draw(st.sampled_from(sorted(NESTED_WRONG)))
        value = draw(st.sampled_from(NESTED_WRONG[key]))
        if key == "history tool_calls":
            body["messages"] = [*body["messages"], {"role": "assistant", "content": None, "tool_calls": value}]
        elif key == "tool_choice":
            body.update(tools=[_TOOL], tool_choice=value)
        else:
            body["response_format"] = value
        return FuzzCase("invalid", f"a wrongly typed {key} inside", body=body)
    if form == "wrong-type":
        key = draw(st.sampled_from(sorted(WRONG_TYPES)))
        body[key] = draw(st.sampled_from(WRONG_TYPES[key]))
        return FuzzCase("invalid", f"wrong type for {key}", body=body)
    if form == "out-of-range":
        key = draw(st.sampled_from(sorted(OUT_OF_RANGE)))
        body[key] = draw(st.sampled_from(OUT_OF_RANGE[key]))
        return FuzzCase("invalid", f"{key} out of range", body=body)
    if form == "missing":
        del body["messages"]
        return FuzzCase("invalid", "no messages", body=body)
    raw = json.dumps(body).encode()
    if form == "truncated":
        at = draw(st.integers(min_value=0, max_value=len(raw) - 1))
        return FuzzCase("invalid", f"JSON cut after {at} bytes", content=raw[:at])
    if form == "not-an-object":
        value = draw(st.sampled_from([b"[]", b"null", b"42", b'"hello"', b"[" + raw + b"]", b"true"]))
        return FuzzCase("invalid", "a JSON body that is not an object", content=value)
    if form == "garbage":
        junk = draw(st.sampled_from([b"}", b",", b" x", b"{}", b"\x00", b"\n]"]))
        return FuzzCase("invalid", "bytes after the JSON value", content=raw + junk)
    if form == "invalid-utf8":
        bad = draw(st.sampled_from([b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf8\x88\x80\x80\x80"]))
        content, where = _into_string(raw, draw(st.sampled_from([CONTENT_KEY, MODEL_KEY])), bad)
        return FuzzCase("invalid", f"invalid UTF-8 {bad!r} in {where}", content=content)
    if form == "content-type":
        ctype = draw(st.sampled_from(["text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
                                      "application/xml", "image/png"]))
        return FuzzCase("invalid", f"Content-Type {ctype}", body=body, headers={"Content-Type": ctype})
    filler = "a" * HUGE_BYTES
    huge = {**body, "messages": [{"role": "user", "content": filler}]}
    return FuzzCase("invalid", f"a body of {HUGE_BYTES + 100} bytes", content=json.dumps(huge).encode())


# -- lenient ----------------------------------------------------------------------------------

@st.composite
def lenient_cases(draw: st.DrawFn, model: str) -> FuzzCase:
    """Input a server may take or refuse, but never with a 5xx or a broken stream."""
    body = draw(st.one_of(st.builds(_base, st.just(model)), valid_bodies(model)))
    body["stream"] = draw(st.booleans())
    form = draw(st.sampled_from(["duplicate-key", "unknown-field", "no-model", "n", "null-fields", "surrogate",
                                 "huge-int"]))
    if form == "huge-int":
        key = draw(st.sampled_from(["seed", "top_k", "max_tokens"]))
        body[key] = draw(st.sampled_from(HUGE_INTS))
        return FuzzCase("lenient", f"{key} {body[key]}", body=body)
    if form == "duplicate-key":
        key = draw(st.sampled_from([k for k in ("model", "stream", "max_tokens", "messages") if k in body]))
        first = json.dumps(body[key])
        second = json.dumps(draw(st.sampled_from([body[key], None, "x", 7, [], {}])))
        raw = json.dumps(body)[:-1] + f', "{key}": {second}' + "}"
        return FuzzCase("lenient", f"{key} twice (first {first[:20]}, then {second[:20]})", content=raw.encode())
    if form == "unknown-field":
        name = draw(st.sampled_from(["frobnicate", "x_custom", "temperature_", "Model", "top_k", "min_p"]))
        body[name] = draw(st.sampled_from([1, "x", None, True]))
        return FuzzCase("lenient", f"unknown field {name}", body=body)
    if form == "no-model":
        del body["model"]
        return FuzzCase("lenient", "no model", body=body)
    if form == "n":
        body["n"] = draw(st.integers(min_value=2, max_value=4))
        return FuzzCase("lenient", f"n {body['n']}", body=body)
    if form == "null-fields":
        for key in draw(st.lists(st.sampled_from(["temperature", "top_p", "stop", "seed", "tools", "tool_choice",
                                                   "response_format", "stream_options", "user"]),
                                 min_size=1, unique=True)):
            body[key] = None
        return FuzzCase("lenient", "optional fields set to null", body=body)
    # a lone surrogate escape: valid JSON, not valid Unicode
    content, where = _into_string(json.dumps(body).encode(), CONTENT_KEY, b"\\ud800")
    return FuzzCase("lenient", f"a lone surrogate escape in {where}", content=content)


def cases(kind: str, model: str, vision: bool = False) -> st.SearchStrategy[FuzzCase]:
    if kind == "valid":
        return valid_cases(model, vision)
    if kind == "invalid":
        return invalid_cases(model)
    if kind == "lenient":
        return lenient_cases(model)
    raise ValueError(f"unknown kind {kind!r}")
