"""Request validation, as ../shared/seeds/001 describes a strict server: unknown top-level fields are
refused with ``unknown_parameter``, bad values with ``invalid_value``, unsupported ones with
``unsupported_value``, bad tool schemas with ``invalid_tool_schema``; every error in the envelope
``{"error": {"message", "type", "param", "code"}}``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import jsonschema

KNOWN = frozenset({
    "model", "messages", "stream", "stream_options", "max_tokens", "max_completion_tokens", "temperature",
    "top_p", "top_k", "repetition_penalty", "seed", "stop", "n", "tools", "tool_choice", "parallel_tool_calls", "response_format",
    "reasoning_effort", "user", "metadata", "store", "service_tier", "prompt_cache_key", "safety_identifier",
    "chat_template_kwargs",
})
# OpenAI fields seed 001 names as unsupported: refused with unsupported_value, not as unknown
UNSUPPORTED = frozenset({"logit_bias", "top_logprobs", "verbosity", "modalities", "audio", "prediction",
                         "web_search_options", "functions", "function_call"})
ROLES = frozenset({"system", "developer", "user", "assistant", "tool"})
EFFORTS = frozenset({"none", "minimal", "low", "medium", "high", "xhigh"})
SCHEMA_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class APIError(Exception):
    """An error answered before any generation, in the OpenAI envelope."""

    def __init__(self, status: int, message: str, code: str, param: str | None = None,
                 type_: str = "invalid_request_error", headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.code, self.param, self.type = status, message, code, param, type_
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


@dataclass
class ChatRequest:
    """A validated chat completion request."""

    model: str
    messages: list[dict[str, Any]]
    stream: bool = False
    include_usage: bool = False
    max_tokens: int | None = None
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    repetition_penalty: float | None = None
    seed: int | None = None
    stop: list[str] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    tool_choice: Any = "auto"
    parallel_tool_calls: bool = True
    response_format: dict[str, Any] | None = None
    reasoning: bool = False


def _bad(param: str, message: str, code: str = "invalid_value") -> APIError:
    return APIError(400, message, code, param)


def _number(body: dict[str, Any], key: str, low: float, high: float, default: float) -> float:
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _bad(key, f"{key} must be a number", "invalid_type")
    if not low <= value <= high:
        raise _bad(key, f"{key} must be between {low} and {high}")
    return float(value)


def _integer(body: dict[str, Any], key: str, low: int, high: int = 2**31 - 1) -> int | None:
    """An integer field within the range the engine can run (refused up front, never a 200 with an error)."""
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(key, f"{key} must be an integer", "invalid_type")
    if not low <= value <= high:
        raise _bad(key, f"{key} must be between {low} and {high}")
    return value


def _tool_calls(i: int, value: Any) -> None:
    """An assistant turn's tool_calls, as seed 003 §2.2 shapes them: [{id, type, function: {name, arguments}}]."""
    where = f"messages[{i}].tool_calls"
    if not isinstance(value, list):
        raise _bad(where, "tool_calls must be an array of calls", "invalid_type")
    for call in value:
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str) \
                or not isinstance(function.get("arguments", ""), str):
            raise _bad(where, "each tool call needs function: {name: string, arguments: string}", "invalid_type")
        if not isinstance(call.get("id", ""), str):
            raise _bad(where, "a tool call's id must be a string", "invalid_type")


def _messages(value: Any) -> list[dict[str, Any]]:
    if value is None:
        raise _bad("messages", "messages is required", "missing_required_parameter")
    if not isinstance(value, list) or not value:
        raise _bad("messages", "messages must be a non-empty array of message objects", "invalid_type")
    for i, message in enumerate(value):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise _bad(f"messages[{i}]", f"messages[{i}] must be an object with a role in {sorted(ROLES)}")
        if message.get("tool_calls") is not None:
            _tool_calls(i, message["tool_calls"])
        if message.get("role") == "tool" and not isinstance(message.get("tool_call_id", ""), str):
            raise _bad(f"messages[{i}].tool_call_id", "tool_call_id must be a string", "invalid_type")
        content = message.get("content")
        if content is not None and not isinstance(content, (str, list)):
            raise _bad(f"messages[{i}].content", "content must be a string or an array of parts", "invalid_type")
        if isinstance(content, list):
            for part in content:
                if not isinstance(part, dict) or part.get("type") not in ("text", "image_url"):
                    raise _bad(f"messages[{i}].content", "content parts must be text or image_url objects")
                if part.get("type") == "image_url":
                    _image(i, message["role"], part)
                if not isinstance(part.get("text"), str):  # found by conformance fuzz (seed 11)
                    raise _bad(f"messages[{i}].content", "a text part needs text, a string", "invalid_type")
    return value


def _image(i: int, role: str, part: dict[str, Any]) -> None:
    """Seed 001 "Images": image_url parts in user messages only, a data URL, detail absent or auto. The
    bundled model has no vision tower (no companion pack: /v1/models lists capabilities ["text"]), so a
    well-formed image is then refused as unsupported."""
    where = f"messages[{i}].content"
    if role != "user":
        raise _bad(where, f"image_url parts are only allowed in user messages, not {role}")
    image = part.get("image_url")
    url = image.get("url") if isinstance(image, dict) else None
    if not isinstance(url, str) or not url.startswith("data:"):
        raise _bad(where, "an image_url must be a data URL (data:<media type>;base64,...)")
    if image.get("detail", "auto") != "auto":  # type: ignore[union-attr]
        raise _bad(where, "image_url.detail must be absent or auto")
    raise APIError(400, "this model does not take images (no vision pack is loaded)", "unsupported_value", where)


def _union_problem(schema: Any) -> str | None:
    """What seed 001 refuses in a tool schema: allOf, a mixed-type union, an overlapping oneOf."""
    if isinstance(schema, list):
        return next((p for p in map(_union_problem, schema) if p), None)
    if not isinstance(schema, dict):
        return None
    if "allOf" in schema:
        return "allOf is not supported in tool schemas"
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if not isinstance(branches, list):
            continue
        consts = all(isinstance(b, dict) and "const" in b and isinstance(b["const"], str) for b in branches)
        types = [b.get("type") if isinstance(b, dict) else None for b in branches]
        concrete = [t for t in types if t != "null"]
        if not consts and len(set(map(str, concrete))) > 1:
            return f"{key} mixes types {sorted(map(str, concrete))}; use one concrete type plus null"
        if key == "oneOf" and not consts and len(concrete) != len(set(map(str, concrete))):
            return "oneOf branches overlap (two of the same type)"
    inner: list[Any] = [schema.get(k) for k in ("items", "additionalProperties", "not", "anyOf", "oneOf")]
    for k in ("properties", "$defs", "definitions"):
        if isinstance(schema.get(k), dict):
            inner.extend(schema[k].values())
    return next((p for p in map(_union_problem, inner) if p), None)


def _tools(value: Any) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _bad("tools", "tools must be an array", "invalid_type")
    names = set()
    for i, tool in enumerate(value):
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(function, dict):
            raise APIError(400, f"tools[{i}] must be a function tool", "invalid_tool_schema", f"tools[{i}]")
        name = function.get("name")
        if not isinstance(name, str) or not SCHEMA_NAME.match(name) or name in names:
            raise APIError(400, f"tools[{i}].function.name must be a unique name of letters, digits, _ and -",
                           "invalid_tool_schema", f"tools[{i}].function.name")
        names.add(name)
        params = function.get("parameters", {"type": "object", "properties": {}})
        if not isinstance(params, dict) or params.get("type") != "object":
            raise APIError(400, f"tools[{i}].function.parameters must be an object schema", "invalid_tool_schema",
                           f"tools[{i}].function.parameters")
        try:
            jsonschema.Draft202012Validator.check_schema(params)
        except jsonschema.SchemaError as exc:
            raise APIError(400, f"tools[{i}].function.parameters: {exc.message}", "invalid_tool_schema",
                           f"tools[{i}].function.parameters") from None
        problem = _union_problem(params)
        if problem:
            raise APIError(400, problem, "invalid_tool_schema", f"tools[{i}].function.parameters")
    return value


def _tool_choice(value: Any, tools: list[dict[str, Any]]) -> Any:
    if value is None:
        return "auto" if tools else "none"
    if value in ("auto", "none", "required"):
        if value != "none" and not tools:
            raise _bad("tool_choice", f"tool_choice {value!r} needs tools")
        return value
    function = value.get("function") if isinstance(value, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    if not isinstance(value, dict) or value.get("type") != "function" or not isinstance(name, str):
        raise _bad("tool_choice", "tool_choice must be auto, none, required or {type: function, function: {name}}")
    if name not in {t["function"]["name"] for t in tools}:
        raise _bad("tool_choice", f"tool_choice names {name!r}, which is not among the tools")
    return value


def _response_format(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise _bad("response_format", "response_format must be an object", "invalid_value")  # seed 001
    kind = value.get("type")
    if kind == "text":
        return None
    if kind == "json_object":
        return {"type": "json_object", "schema": {"type": "object"}}
    if kind != "json_schema":
        raise _bad("response_format.type", "response_format.type must be text, json_object or json_schema")
    spec = value.get("json_schema")
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str) or not SCHEMA_NAME.match(spec["name"]):
        raise _bad("response_format.json_schema", "json_schema needs a name of letters, digits, _ and - (max 64)")
    schema = spec.get("schema", {})
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise _bad("response_format.json_schema.schema", f"invalid schema: {exc.message}") from None
    return {"type": "json_schema", "schema": schema}


def _stop(value: Any) -> list[str]:
    if value is None:
        return []
    stops = [value] if isinstance(value, str) else value
    if not isinstance(stops, list) or len(stops) > 4 or not all(isinstance(s, str) and s for s in stops):
        raise _bad("stop", "stop must be a non-empty string or up to 4 of them")
    return list(stops)


def parse_chat(body: Any, model_id: str) -> ChatRequest:
    """Validate a chat completion body; ``APIError`` for anything the server will not run."""
    if not isinstance(body, dict):
        raise _bad("", "the body must be a JSON object", "invalid_type")
    body = {k: v for k, v in body.items() if v is not None}  # a top-level null is absent (seed 001)
    unsupported = sorted(set(body) & UNSUPPORTED)
    if unsupported:
        raise APIError(400, f"{unsupported[0]} is not supported by this server", "unsupported_value", unsupported[0])
    unknown = sorted(set(body) - KNOWN)
    if unknown:
        raise APIError(400, f"Unknown parameter: '{unknown[0]}'.", "unknown_parameter", unknown[0])
    messages = _messages(body.get("messages"))
    model = body.get("model")
    if not isinstance(model, str):
        raise _bad("model", "model is required and must be a string", "missing_required_parameter")
    if model != model_id:
        raise APIError(404, f"The model '{model}' does not exist", "model_not_found", "model")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise _bad("stream", "stream must be a boolean", "invalid_type")
    options = body.get("stream_options", {})
    if not isinstance(options, dict):
        raise _bad("stream_options", "stream_options must be an object", "invalid_type")
    if not isinstance(options.get("include_usage", False), bool):
        raise _bad("stream_options.include_usage", "stream_options.include_usage must be a boolean", "invalid_type")
    n = _integer(body, "n", 1)
    if n not in (None, 1):
        raise APIError(400, "only n: 1 is supported", "unsupported_value", "n")
    effort = body.get("reasoning_effort")
    if effort is not None and effort not in EFFORTS:
        raise _bad("reasoning_effort", f"reasoning_effort must be one of {sorted(EFFORTS)}")
    tools = _tools(body.get("tools"))
    parallel = body.get("parallel_tool_calls", True)
    if not isinstance(parallel, bool):
        raise _bad("parallel_tool_calls", "parallel_tool_calls must be a boolean", "invalid_type")
    if not isinstance(body.get("metadata", {}), dict):
        raise _bad("metadata", "metadata must be an object", "invalid_type")
    # both validated, whichever wins: a bad one is refused even next to a good one (found by conformance fuzz)
    completion_cap, legacy_cap = _integer(body, "max_completion_tokens", 1), _integer(body, "max_tokens", 1)
    max_tokens = completion_cap if completion_cap is not None else legacy_cap
    return ChatRequest(
        model=model, messages=messages, stream=stream, include_usage=options.get("include_usage") is True,
        max_tokens=max_tokens, temperature=_number(body, "temperature", 0, 2, 1.0),
        top_p=_number(body, "top_p", 0, 1, 1.0),
        repetition_penalty=_number(body, "repetition_penalty", 0.01, 10, 1.0) if "repetition_penalty" in body else None,
        top_k=_integer(body, "top_k", 0) or 0, seed=_integer(body, "seed", 0, 2**64 - 1),
        stop=_stop(body.get("stop")), tools=tools, tool_choice=_tool_choice(body.get("tool_choice"), tools),
        parallel_tool_calls=parallel, response_format=_response_format(body.get("response_format")),
        reasoning=effort is not None and effort != "none",
    )
