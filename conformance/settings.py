"""One typed ``Settings`` for a live run, built from raw option values and validated once.

The CLI, the pytest plugin, the fuzzer and the self-test all build it here, so an option means the
same everywhere and every input error is found before the first request: one sentence
(``ConfigError``), exit 2.
"""

from __future__ import annotations

import math
import re
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from conformance.errors import ConfigError
from conformance.model.limits import ANSWER_DEADLINE, DEFAULT_MAX_BYTES, Limits
from conformance.wire.untrusted import printable


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


DEFAULT_TIMEOUT = 120.0
DEFAULT_WORKERS = 4
MAX_WORKERS = 64


def profile_names() -> tuple[str, ...]:
    """The closed set of dialect profiles."""
    from conformance.model.profiles import PROFILES

    return tuple(PROFILES)


def capability_names() -> tuple[str, ...]:
    from conformance.scenarios import CAPABILITIES

    return CAPABILITIES


REFUSAL_S = 10.0
QUEUE_WAIT_S = 5.0
RUN_TIMEOUT_FLOOR_S = 300.0


def derive_limits(timeout: float) -> Limits:
    """The per-request limits a ``--timeout`` gives: total, first byte (at most 60 s), between reads (30 s)."""
    return Limits(total=timeout, idle=min(30.0, timeout), first_byte=min(60.0, timeout))


LIVENESS_S = 10.0  # the plain request after an error scenario (liveness_total)


def liveness_total(timeout: float, plain_first_event_s: float | None = None) -> float:
    """The time limit of the plain request after an error scenario: LIVENESS_S, or ten times the plain stream's first
    event when that is longer (a slow server), never more than min(60 s, --timeout). A server still busy with the
    request before it (an over-context prompt it goes on tokenizing after the suite left) is cut there and judged
    (ERR-016), not waited on for a minute (issue 44)."""
    return min(timeout, 60.0, max(LIVENESS_S, 10 * (plain_first_event_s or 0.0)))


def refusal_deadline(timeout: float) -> float:
    """How long a request the server must refuse may go without its answer beginning: min(10 s, --timeout).

    A refusal needs no generation (seed 001 enforces its limits before rendering and tokenization; seed 003
    reports a prompt beyond the context before anything is generated), so a server still silent, or
    streaming only keep-alive comments, after it is doing the work it should have refused (ERR-017)."""
    return min(REFUSAL_S, timeout)


def queue_wait(timeout: float, plain_first_event_s: float | None = None) -> float:
    """How long the burst waits for each request to start or be refused: 5 s, or twice the time the plain
    stream took to its first event when that was longer, and never more than the first-byte limit."""
    wait = max(QUEUE_WAIT_S, 2 * (plain_first_event_s or 0.0))
    return min(wait, derive_limits(timeout).first_byte)


def default_run_timeout(timeout: float) -> float:
    """The bound on a whole run when ``--run-timeout`` is not given: ten responses' worth, at least 5 minutes."""
    return max(RUN_TIMEOUT_FLOOR_S, 10 * timeout)


@dataclass(frozen=True)
class Settings:
    """Everything a live run needs. ``base_url`` None: the bundled reference server is started."""

    base_url: str | None = None
    api_key: str | None = None
    model: str | None = None
    profile: str = "openai"
    expect: frozenset[str] = frozenset()
    rules: frozenset[str] | None = None  # the rules to judge (None: every live rule)
    scenarios: frozenset[str] | None = None  # an explicit scenario choice (None: what the rules need)
    strict: bool = False
    baseline: Path | None = None
    known_failures: tuple[tuple[str, str], ...] = ()  # (rule, scenario) from the baseline
    report_dir: Path | None = None
    timeout: float = DEFAULT_TIMEOUT
    workers: int = DEFAULT_WORKERS
    wire_log: bool = True
    limits: Limits = field(default_factory=lambda: derive_limits(DEFAULT_TIMEOUT))
    run_timeout: float = field(default_factory=lambda: default_run_timeout(DEFAULT_TIMEOUT))
    headers: tuple[tuple[str, str], ...] = ()  # -H: sent with every request, their values masked like the key
    exclude_scenarios: frozenset[str] = frozenset()  # --exclude-scenario: never run
    exitfirst: bool = False  # -x: stop sending at the first gating failure
    label: str | None = None  # how the matrix and the badge name this run
    wait: float = 0.0  # --wait: seconds to wait for the server to answer before the run
    formats: frozenset[str] = frozenset({"json", "junit", "md", "html"})  # the reports written
    report_paths: tuple[tuple[str, Path], ...] = ()  # a report written elsewhere than the report dir: (format, path)
    protocols: frozenset[str] | None = None  # --protocol: only requests of these protocols are sent (None: every one)
    notices: tuple[str, ...] = ()  # what was changed in the input, said on the terminal before the run (never a secret)

    @property
    def refusal(self) -> Limits:
        """The limits of a request the server must refuse (``refusal_deadline``)."""
        return replace(self.limits, answer=refusal_deadline(self.timeout))

    @property
    def answering(self) -> Limits:
        """The limits of a request the server may answer or refuse, whose status and first event decide (the
        oversized body): the same deadline as a refusal's, cut as ``ANSWER_DEADLINE`` (TRN-010), not ERR-017."""
        return replace(self.limits, answer=refusal_deadline(self.timeout), answer_name=ANSWER_DEADLINE)

    @property
    def secrets(self) -> tuple[str, ...]:
        """Values that must never be written or printed: the key, and the value of every -H header."""
        return ((self.api_key,) if self.api_key else ()) + tuple(v for _, v in self.headers if v)

    def with_target(self, base_url: str, **changes: Any) -> Settings:
        return replace(self, base_url=base_url, **changes)


def _split(value: str | list[str] | tuple[str, ...] | frozenset[str] | None) -> list[str]:
    if value is None:
        return []
    items = value.split(",") if isinstance(value, str) else [p for v in value for p in str(v).split(",")]
    return [v.strip() for v in items if v.strip()]


def _timeout(value: Any, flag: str = "--timeout") -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{flag} {value!r} is not a number of seconds") from None
    if not math.isfinite(number) or number < 1:
        raise ConfigError(f"{flag} {value!r} must be a finite number of seconds, at least 1")
    return number


def _workers(value: Any) -> int:
    try:
        number = int(str(value))
    except ValueError:
        raise ConfigError(f"--workers {value!r} is not a whole number") from None
    if not 1 <= number <= MAX_WORKERS:
        raise ConfigError(f"--workers {value!r} must be between 1 and {MAX_WORKERS}")
    return number


def select_rules(rules: list[str], categories: list[str], exclude_rules: list[str] | None = None,
                 exclude_categories: list[str] | None = None) -> frozenset[str] | None:
    """The rule ids that ``--rule`` and ``--category`` choose, less ``--exclude-rule`` and ``--exclude-category``
    (None: all live rules)."""
    from conformance.rules import RULES

    chosen = _select(rules, categories)
    dropped = _select(exclude_rules or [], exclude_categories or [])
    if dropped is None:
        return chosen
    live = frozenset(r.id for r in RULES if r.category != "fuzz") if chosen is None else chosen
    left = live - dropped
    if not left:
        raise ConfigError("the exclusions leave no rule to judge")
    return left


def protocol_names(names: Any) -> frozenset[str] | None:
    """``--protocol``: the named protocols (None: not given); ``ConfigError`` for a name the registry lacks."""
    from conformance.protocols import REGISTRY

    chosen = _split(names)
    unknown = [n for n in chosen if n not in REGISTRY]
    if unknown:
        raise ConfigError(f"unknown protocol {unknown[0]!r}; choose from {', '.join(REGISTRY)}")
    return frozenset(chosen) or None


def protocol_rules(chosen: frozenset[str] | None) -> list[str]:
    """The rules ``--protocol`` chooses: every rule that applies to an exchange of the named protocols, its own and
    the shared ones (HTTP and transport for any; the WHATWG framing and stream headers for an event-stream protocol)."""
    from conformance.capabilities import CAPABILITY_TABLE
    from conformance.protocols import by_name
    from conformance.rules import RULES

    if not chosen:
        return []
    where = {"http", *chosen} | ({"sse"} if any(by_name(n).framing == "sse" for n in chosen) else set())
    # a capability rule is judged on its probe, a scenario of the protocol that brings it: another protocol's is not run
    elsewhere = {c.rule for c in CAPABILITY_TABLE if c.protocol not in chosen}
    return sorted(r.id for r in RULES if r.protocol in where and r.category != "fuzz" and r.id not in elsewhere)


def _select(rules: list[str], categories: list[str]) -> frozenset[str] | None:
    from conformance.rules import CATEGORIES, RULES, RULES_BY_ID

    for category in categories:
        if category == "fuzz":
            raise ConfigError("the fuzz rules are judged on generated requests: run `conformance fuzz`")
        if category not in CATEGORIES:
            raise ConfigError(f"unknown category {category!r}; choose from "
                              f"{', '.join(c for c in CATEGORIES if c != 'fuzz')}")
    for rule_id in rules:
        if rule_id not in RULES_BY_ID:
            raise ConfigError(f"unknown rule {rule_id!r}; `conformance rules` lists them")
        if RULES_BY_ID[rule_id].category == "fuzz":
            raise ConfigError(f"rule {rule_id} is judged on generated requests: run `conformance fuzz`")
    if not rules and not categories:
        return None
    return frozenset(r.id for r in RULES if r.id in rules or r.category in categories)


def check_writable(directory: Path) -> Path:
    """``directory``, created if needed; ``ConfigError`` when nothing can be written there."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".conformance-probe-"):
            pass
    except OSError as exc:
        raise ConfigError(f"cannot write reports to {str(directory)!r}: {exc.strerror or exc}") from None
    return directory


def build_settings(*, base_url: str | None = None, api_key: str | None = None, model: str | None = None,
                   profile: str | None = None, expect: Any = None, rules: Any = None, categories: Any = None,
                   protocols: Any = None,
                   scenarios: Any = None, strict: bool = False, baseline: str | Path | None = None,
                   report_dir: str | Path | None = None, timeout: Any = None, workers: Any = None,
                   wire_log: bool = True, run_timeout: Any = None, headers: Any = None, exclude_rules: Any = None,
                   exclude_categories: Any = None, exclude_scenarios: Any = None, exitfirst: bool = False,
                   label: str | None = None, wait: Any = None, insecure: bool = False, ca_bundle: Any = None,
                   formats: Any = None, report_paths: dict[str, Any] | None = None, max_body: Any = None) -> Settings:
    """Validate raw option values (strings from flags or the environment) into ``Settings``."""
    from conformance.baseline import load_baseline
    from conformance.scenarios import BY_NAME

    url = normalize_base_url(base_url) if base_url is not None else None
    prof = (profile or "openai").strip()
    if prof not in profile_names():
        raise ConfigError(f"unknown profile {prof!r}; choose from {', '.join(profile_names())}")
    caps = _split(expect)
    unknown = [c for c in caps if c not in capability_names()]
    if unknown:
        raise ConfigError(f"unknown capability {unknown[0]!r}; choose from {', '.join(capability_names())}")
    chosen = _split(scenarios)
    bad = [s for s in chosen if s not in BY_NAME]
    if bad:
        raise ConfigError(f"unknown scenario {bad[0]!r}; `conformance scenarios` lists them")
    seconds = _timeout(DEFAULT_TIMEOUT if timeout in (None, "") else timeout)
    whole = default_run_timeout(seconds) if run_timeout in (None, "") else _timeout(run_timeout, "--run-timeout")
    known: tuple[tuple[str, str], ...] = ()
    base = Path(baseline) if baseline not in (None, "") else None
    if base is not None:
        if not base.is_file():
            raise ConfigError(f"the baseline {str(base)!r} does not exist")
        known = tuple((k["rule"], k["scenario"]) for k in load_baseline(base))
    out = check_writable(Path(report_dir)) if report_dir not in (None, "") else None
    excluded = _split(exclude_scenarios)
    bad = [s for s in excluded if s not in BY_NAME]
    if bad:
        raise ConfigError(f"unknown scenario {bad[0]!r} in --exclude-scenario; `conformance scenarios` lists them")
    bundle = None
    if ca_bundle not in (None, ""):
        bundle = check_ca_bundle(Path(str(ca_bundle)))
    limits = replace(derive_limits(seconds), verify_tls=not insecure, ca_bundle=str(bundle) if bundle else None,
                     max_bytes=parse_size(max_body) if max_body not in (None, "") else DEFAULT_MAX_BYTES)
    key, notices = check_key(api_key)
    chosen_protocols = protocol_names(protocols)
    if chosen_protocols:
        from conformance.capabilities import CAPABILITY_TABLE

        other = [c for c in CAPABILITY_TABLE if c.name in caps and c.protocol not in chosen_protocols]
        if other:
            raise ConfigError(f"--expect {other[0].name} is a capability of the {other[0].protocol} protocol, which "
                              f"--protocol {','.join(sorted(chosen_protocols))} leaves out")
    return Settings(base_url=url, api_key=key, model=model or None, profile=prof, notices=notices,
                    expect=frozenset(caps),
                    rules=select_rules(_split(rules) + protocol_rules(chosen_protocols), _split(categories),
                                       _split(exclude_rules), _split(exclude_categories)),
                    protocols=chosen_protocols,
                    scenarios=frozenset(chosen) or None, strict=bool(strict), baseline=base, known_failures=known,
                    report_dir=out, timeout=seconds,
                    workers=_workers(DEFAULT_WORKERS if workers in (None, "") else workers),
                    wire_log=wire_log, limits=limits, run_timeout=whole, headers=parse_headers(headers),
                    exclude_scenarios=frozenset(excluded), exitfirst=bool(exitfirst), label=label or None,
                    wait=_wait(wait), formats=_formats(formats), report_paths=_report_paths(report_paths or {}))


SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([KMG]i?B?|B)?\s*", re.IGNORECASE)
SIZE_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}
MIN_MAX_BODY = 64 * 1024  # a smaller cap would cut the suite's own short answers


def parse_size(value: Any) -> int:
    """--max-body: bytes, or a number with K, M or G (KiB, MiB, GiB: ``64M``, ``512KiB``), at least 64 KiB."""
    match = SIZE.fullmatch(str(value))
    if match is None:
        raise ConfigError(f"--max-body must be a size such as 64M or 8388608, not {str(value)[:40]!r}")
    size = int(float(match.group(1)) * SIZE_UNITS[(match.group(2) or "").lower()[:1]])
    if size < MIN_MAX_BODY:
        raise ConfigError(f"--max-body must be at least 64K (the suite's own answers are kilobytes), not {value}")
    return size


HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an RFC 9110 token
CONTROL = re.compile(r"[\x00-\x1f\x7f]")
LINE_END = re.compile(r"\r?\n\Z")


def check_key(value: str | None) -> tuple[str | None, tuple[str, ...]]:
    """The API key as it can be sent in a header, and what was changed in it (said on the terminal). A pasted CI
    secret often ends with a line break: one trailing line break is removed, and said. Anything else that no HTTP
    header can carry (a line break inside, another control, a character that is not ASCII, bytes that are not
    UTF-8) is a ``ConfigError`` before anything is sent; no message shows the key."""
    if value in (None, ""):
        return None, ()
    key = str(value)
    notices: tuple[str, ...] = ()
    if LINE_END.search(key) and key.strip():
        key = LINE_END.sub("", key, count=1)
        notices = ("the API key ended with a line break (a pasted secret often does): it was removed, and the key "
                   "is sent without it",)
    check_header_value(key, "the API key")
    return key, notices


def check_header_value(value: str, what: str) -> None:
    """``ConfigError`` when ``value`` cannot be an HTTP header's value: a control character (a line break, NUL), a
    character that is not ASCII, or bytes that were not UTF-8. The sentence names ``what`` and where, not the value."""
    if any("\udc80" <= c <= "\udcff" for c in value):
        raise ConfigError(f"{what} is not valid UTF-8 (it came with bytes that are no text); give it as ASCII text")
    if (bad := CONTROL.search(value)) is not None:
        kind = "a line break" if bad.group() in "\r\n" else "NUL" if bad.group() == "\0" else "a control character"
        raise ConfigError(f"{what} has {kind} at character {bad.start() + 1} of {len(value)}: an HTTP header value is "
                          "one line of printable ASCII (check the secret for a stray line break)")
    if not value.isascii():
        at = next(i for i, c in enumerate(value) if not c.isascii())
        raise ConfigError(f"{what} has a character that is not ASCII at character {at + 1} of {len(value)}: an HTTP "
                          "header value is printable ASCII (was the secret copied with a typographic quote or space?)")


def check_ca_bundle(bundle: Path) -> Path:
    """``--ca-bundle``: a file of PEM certificates that TLS can load, else a ``ConfigError``."""
    import ssl

    if not bundle.is_file():
        raise ConfigError(f"the CA bundle {str(bundle)!r} does not exist")
    try:
        ssl.create_default_context(cafile=str(bundle))
    except (ssl.SSLError, ValueError, OSError) as exc:
        why = getattr(exc, "reason", None) or exc.__class__.__name__
        raise ConfigError(f"the CA bundle {str(bundle)!r} holds no certificate TLS can load ({why}): give a file of "
                          "PEM certificates (-----BEGIN CERTIFICATE-----)") from None
    return bundle
REPORT_FORMATS = {"json": "results.json", "junit": "junit.xml", "md": "report.md", "html": "report.html"}


def parse_headers(values: Any) -> tuple[tuple[str, str], ...]:
    """``-H "Name: value"`` options as (name, value) pairs; ``ConfigError`` for one that is not a header line."""
    out = []
    for number, raw in enumerate([values] if isinstance(values, str) else list(values or ()), 1):
        name, sep, value = str(raw).partition(":")
        name, value = name.strip(), value.strip()
        if not sep or HEADER_NAME.fullmatch(name) is None:  # the line may be a secret: never shown
            shown = repr(name) if sep and name.isascii() and name.isprintable() and len(name) <= 40 else f"number {number}"
            raise ConfigError(f"--header {shown} is not a header line: write it as 'Name: value' (a name of letters, "
                              "digits and -, then a colon)")
        check_header_value(value, f"the value of --header {name!r}")
        if name.lower() in ("host", "content-length", "transfer-encoding", "connection"):
            raise ConfigError(f"--header {name!r} is set by the suite for each request; it cannot be given")
        out.append((name, value))
    return tuple(out)


def _wait(value: Any) -> float:
    if value in (None, "", 0):
        return 0.0
    return _timeout(value, "--wait")


def _formats(value: Any) -> frozenset[str]:
    names = _split(value)
    if not names:
        return frozenset(REPORT_FORMATS)
    bad = [n for n in names if n not in REPORT_FORMATS]
    if bad:
        raise ConfigError(f"unknown report format {bad[0]!r}; choose from {', '.join(REPORT_FORMATS)}")
    return frozenset(names)


def _report_paths(paths: dict[str, Any]) -> tuple[tuple[str, Path], ...]:
    out = []
    for fmt, where in paths.items():
        if where in (None, ""):
            continue
        path = Path(str(where))
        check_writable(path.parent if str(path.parent) else Path("."))
        out.append((fmt, path))
    return tuple(out)


CONFIG_KEYS = ("base-url", "api-key", "model", "profile", "expect", "category", "protocol", "rule", "scenario", "strict",
               "baseline", "report-dir", "timeout", "workers", "run-timeout", "header", "exclude-rule",
               "exclude-category", "exclude-scenario", "exitfirst", "label", "wait", "insecure", "ca-bundle",
               "report-format", "junit-xml", "results-json", "markdown", "html", "max-body")
CONFIG_FILE = "conformance.toml"


def load_config(directory: Path | None = None, path: str | Path | None = None) -> tuple[dict[str, Any], str | None]:
    """The ``run`` options from a config file: ``path`` (``--config-file``), else the nearest
    ``conformance.toml`` or ``pyproject.toml`` with ``[tool.conformance]`` in ``directory`` (the working
    directory by default) or a parent of it, up to the repository's root (a folder with ``.git``); ({}, None)
    when there is none. ``${VAR}`` in a string value is the environment variable's value. An unknown key, an
    unset variable or a file that is not TOML is a ``ConfigError``."""
    if path not in (None, ""):
        chosen = Path(str(path))
        if not chosen.is_file():
            raise ConfigError(f"the config file {str(chosen)!r} does not exist")
        table = ("tool", "conformance") if chosen.name == "pyproject.toml" else None
        found = _read_config(chosen, table)
        if found is None:
            raise ConfigError(f"{str(chosen)!r} has no [tool.conformance] table")
        return found, str(chosen)
    where = (directory or Path.cwd()).resolve()
    for folder in (where, *where.parents):
        for candidate, table in ((folder / CONFIG_FILE, None), (folder / "pyproject.toml", ("tool", "conformance"))):
            if candidate.is_file():
                found = _read_config(candidate, table)
                if found is not None:
                    return found, str(candidate)
        if (folder / ".git").exists():  # the repository's root: a config above it belongs to something else
            break
    return {}, None


def _read_config(path: Path, table: tuple[str, ...] | None) -> dict[str, Any] | None:
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    try:
        doc: Any = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {str(path)!r} as TOML: {exc}") from None
    for key in table or ():
        doc = doc.get(key, {}) if isinstance(doc, dict) else {}
    if table is not None and not doc:
        return None
    if not isinstance(doc, dict):
        raise ConfigError(f"{str(path)!r}: [tool.conformance] is not a table")
    unknown = sorted(k for k in doc if k.replace("_", "-") not in CONFIG_KEYS)
    if unknown:
        raise ConfigError(f"unknown key {unknown[0]!r} in {str(path)!r}; the keys are {', '.join(CONFIG_KEYS)}")
    return {k.replace("_", "-"): _expand(_typed(k.replace("_", "-"), v, path), path) for k, v in doc.items()}


VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _expand(value: Any, path: Path) -> Any:
    """``${VAR}`` in a string (or a list of strings) replaced by the environment variable's value."""
    import os

    if isinstance(value, list):
        return [_expand(v, path) for v in value]
    if not isinstance(value, str):
        return value

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in os.environ:
            raise ConfigError(f"{str(path)!r} uses ${{{name}}}, which is not set in the environment")
        return os.environ[name]

    return VARIABLE.sub(one, value)


LIST_KEYS = ("category", "protocol", "rule", "scenario", "expect", "header", "exclude-rule", "exclude-category",
             "exclude-scenario", "report-format")


def _typed(key: str, value: Any, path: Path) -> Any:
    """A config value of the type its flag takes; ``ConfigError`` otherwise."""
    if key in ("strict", "exitfirst", "insecure"):
        if not isinstance(value, bool):
            raise ConfigError(f"{key} in {str(path)!r} must be true or false")
        return value
    if key in LIST_KEYS:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
            raise ConfigError(f"{key} in {str(path)!r} must be a string or a list of strings")
        return ",".join(items) if key in ("expect", "report-format") else items
    if key in ("timeout", "workers", "run-timeout", "wait"):
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ConfigError(f"{key} in {str(path)!r} must be a number")
        return value
    if not isinstance(value, str):
        raise ConfigError(f"{key} in {str(path)!r} must be a string")
    return value


def show(settings: Settings, source: str | None = None) -> str:
    """The resolved settings, one per line, the key masked."""
    lines = [f"# from flags > environment > {source or 'no config file'} > defaults"]
    shown = {"base-url": settings.base_url or "(the bundled reference server)",
             "api-key": "****" if settings.api_key else "(none)", "model": settings.model or "(discovered)",
             "profile": settings.profile, "expect": ",".join(sorted(settings.expect)) or "(none)",
             "rules": ",".join(sorted(settings.rules)) if settings.rules is not None else "(all)",
             "scenarios": ",".join(sorted(settings.scenarios)) if settings.scenarios else "(what the rules need)",
             "strict": str(settings.strict).lower(), "baseline": str(settings.baseline or "(none)"),
             "report-dir": str(settings.report_dir), "timeout": f"{settings.timeout:g}",
             "workers": str(settings.workers), "run-timeout": f"{settings.run_timeout:g}",
             "max-body": f"{settings.limits.max_bytes:,} bytes",
             "headers": ", ".join(f"{k}: ****" for k, _ in settings.headers) or "(none)",
             "exclude-scenarios": ",".join(sorted(settings.exclude_scenarios)) or "(none)",
             "exitfirst": str(settings.exitfirst).lower(), "label": settings.label or "(none)",
             "wait": f"{settings.wait:g}", "tls": ("not verified (--insecure)" if not settings.limits.verify_tls
                                                   else settings.limits.ca_bundle or "the system's CAs"),
             "reports": ",".join(sorted(settings.formats))}
    return "\n".join(lines + [f"{k} = {v}" for k, v in shown.items()])
