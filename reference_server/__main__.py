"""python -m reference_server: the bundled reference server (see reference_server.app)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any


def serve(model_dir: Path | None = None, host: str = "127.0.0.1", port: int = 8080, max_context: int = 65536,
          queue_limit: int = 4, api_key: str | None = None, fault: str | None = None,
          request_timeout: float = 10.0, max_connections: int = 256, pace: Any = None,
          prompt_reuse: bool = True, protocols: frozenset[str] | None = None, request_log: Path | None = None) -> None:
    """Load the model, then serve until interrupted."""
    from reference_server.app import run_server

    run_server(model_dir=model_dir, host=host, port=port, max_context=max_context, queue_limit=queue_limit,
               api_key=api_key, fault=fault, request_timeout=request_timeout, max_connections=max_connections,
               pace=pace, prompt_reuse=prompt_reuse, protocols=protocols, request_log=request_log)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m reference_server", description=__doc__)
    parser.add_argument("--model", type=Path, help="an mlx-lm model folder (default: the bundled bigram model)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--max-context", type=int, default=65536)
    parser.add_argument("--queue-limit", type=int, default=4)
    parser.add_argument("--api-key")
    parser.add_argument("--request-timeout", type=float, default=10.0,
                        help="seconds a client has to send a whole request head, and its body (default 10)")
    parser.add_argument("--max-connections", type=int, default=256,
                        help="connections served at once; more get 503 (default 256)")
    parser.add_argument("--prompt-cache-mode", choices=("on", "off"), default="on",
                        help="single-prefix KV reuse, reported as usage.prompt_tokens_details.cached_tokens (seed 001)")
    slow = parser.add_argument_group("pace", "behave like a slower server (benchmarks/slow_server.py)")
    slow.add_argument("--slots", type=int, default=1, help="generations at once (default 1)")
    slow.add_argument("--prefill-delay", type=float, default=0.0, metavar="SECONDS",
                      help="wait before each answer's first token (default 0)")
    slow.add_argument("--token-rate", type=float, metavar="TOKENS_PER_S", help="at most this many tokens a second")
    parser.add_argument("--protocol", action="append", metavar="NAME",
                        help="serve only this protocol's routes (repeatable; default: every one): "
                        "a server of one protocol")
    parser.add_argument("--request-log", type=Path, metavar="FILE",
                        help="append a line per request received (METHOD PATH) to FILE")
    parser.add_argument("--fault", help=argparse.SUPPRESS)  # self-test only: one deliberate defect
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"--port {args.port} is not a port (0 to 65535)")
    if not 1 <= args.slots <= 64:
        parser.error(f"--slots {args.slots} must be between 1 and 64")
    if not 0 <= args.prefill_delay <= 600 or args.token_rate is not None and not 0 < args.token_rate <= 100_000:
        parser.error("--prefill-delay must be 0 to 600 seconds and --token-rate above 0")
    if args.model is not None and not (args.model / "config.json").is_file():
        parser.error(f"--model {str(args.model)!r} is not a model folder (no config.json)")
    if args.fault is not None:
        from reference_server.fault_catalog import BY_NAME

        if args.fault not in BY_NAME:
            parser.error(f"unknown fault {args.fault!r}")
    from conformance.protocols import REGISTRY

    unknown = [p for p in args.protocol or () if p not in REGISTRY]
    if unknown:
        parser.error(f"unknown protocol {unknown[0]!r}; choose from {', '.join(REGISTRY)}")
    from reference_server.engine import Pace

    pace = Pace(slots=args.slots, prefill_s=args.prefill_delay, token_rate=args.token_rate)
    try:
        serve(args.model, args.host, args.port, args.max_context, args.queue_limit, args.api_key, args.fault,
              args.request_timeout, args.max_connections, pace, args.prompt_cache_mode == "on",
              frozenset(args.protocol) if args.protocol else None, args.request_log)
    except OSError as exc:
        print(f"python -m reference_server: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}",
              file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
