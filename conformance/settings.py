"""One typed ``Settings`` for a live run, built from raw option values and validated once.

The CLI, the pytest plugin, the fuzzer and the self-test all build it here, so an option means the
same everywhere and every input error is found before the first request: one sentence
(``ConfigError``), exit 2.
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from conformance.client import Limits
from conformance.errors import ConfigError
from conformance.target import normalize_base_url

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

    @property
    def refusal(self) -> Limits:
        """The limits of a request the server must refuse (``refusal_deadline``)."""
        return replace(self.limits, answer=refusal_deadline(self.timeout))

    @property
    def secrets(self) -> tuple[str, ...]:
        """Values that must never be written or printed."""
        return (self.api_key,) if self.api_key else ()

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


def select_rules(rules: list[str], categories: list[str]) -> frozenset[str] | None:
    """The rule ids that ``--rule`` and ``--category`` choose (None: all live rules)."""
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
                   scenarios: Any = None, strict: bool = False, baseline: str | Path | None = None,
                   report_dir: str | Path | None = None, timeout: Any = None, workers: Any = None,
                   wire_log: bool = True, run_timeout: Any = None) -> Settings:
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
    return Settings(base_url=url, api_key=api_key or None, model=model or None, profile=prof,
                    expect=frozenset(caps), rules=select_rules(_split(rules), _split(categories)),
                    scenarios=frozenset(chosen) or None, strict=bool(strict), baseline=base, known_failures=known,
                    report_dir=out, timeout=seconds,
                    workers=_workers(DEFAULT_WORKERS if workers in (None, "") else workers),
                    wire_log=wire_log, limits=derive_limits(seconds), run_timeout=whole)


CONFIG_KEYS = ("base-url", "api-key", "model", "profile", "expect", "category", "rule", "scenario", "strict",
               "baseline", "report-dir", "timeout", "workers", "run-timeout")
CONFIG_FILE = "conformance.toml"


def load_config(directory: Path | None = None) -> tuple[dict[str, Any], str | None]:
    """The ``run`` options from ``conformance.toml``, else ``[tool.conformance]`` in ``pyproject.toml``, in
    ``directory`` (the working directory by default); ({}, None) when there is neither. An unknown key
    or a file that is not TOML is a ``ConfigError``."""
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    where = directory or Path.cwd()
    for path, table in ((where / CONFIG_FILE, None), (where / "pyproject.toml", ("tool", "conformance"))):
        if not path.is_file():
            continue
        try:
            doc: Any = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read {str(path)!r} as TOML: {exc}") from None
        for key in table or ():
            doc = doc.get(key, {}) if isinstance(doc, dict) else {}
        if table is not None and not doc:
            continue
        if not isinstance(doc, dict):
            raise ConfigError(f"{str(path)!r}: [tool.conformance] is not a table")
        unknown = sorted(k for k in doc if k.replace("_", "-") not in CONFIG_KEYS)
        if unknown:
            raise ConfigError(f"unknown key {unknown[0]!r} in {str(path)!r}; the keys are {', '.join(CONFIG_KEYS)}")
        return {k.replace("_", "-"): _typed(k.replace("_", "-"), v, path) for k, v in doc.items()}, str(path)
    return {}, None


def _typed(key: str, value: Any, path: Path) -> Any:
    """A config value of the type its flag takes; ``ConfigError`` otherwise."""
    if key == "strict":
        if not isinstance(value, bool):
            raise ConfigError(f"{key} in {str(path)!r} must be true or false")
        return value
    if key in ("category", "rule", "scenario", "expect"):
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
            raise ConfigError(f"{key} in {str(path)!r} must be a string or a list of strings")
        return ",".join(items) if key == "expect" else items
    if key in ("timeout", "workers", "run-timeout"):
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
             "workers": str(settings.workers), "run-timeout": f"{settings.run_timeout:g}"}
    return "\n".join(lines + [f"{k} = {v}" for k, v in shown.items()])
