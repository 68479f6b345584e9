"""The engine: ``run(settings)`` yields events and ends in one ``RunResult``; ``rejudge`` does the same
from a saved wire log. See ``conformance.engine.run``."""

from __future__ import annotations

from conformance.engine.run import execute, rejudge, run

__all__ = ["execute", "rejudge", "run"]
