"""Every exception a front-end turns into an exit code, and the exit codes themselves (one place).

0 pass; 1 conformance failures; 2 usage or configuration error; 3 target unreachable or not an
HTTP server; 4 an internal error (a bug of the suite's own: one sentence, its traceback in crash.txt),
never confused with a server's failure.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """What ``conformance`` and the pytest plugin exit with."""

    OK = 0
    FAILED = 1
    USAGE = 2
    UNREACHABLE = 3
    INTERNAL = 4


EXIT_CODES_HELP = ("Exit codes: 0 pass (no gating failure); 1 conformance failures (must, and should with "
                   "--strict; a stale baseline entry); 2 usage or configuration error; 3 target unreachable; 4 an internal "
                   "error of the suite (please report it).")


class ConformanceError(Exception):
    """Base of the errors a front-end reports in one sentence."""

    exit_code = ExitCode.USAGE


class ConfigError(ConformanceError):
    """A usage or configuration error: one sentence, exit 2."""

    exit_code = ExitCode.USAGE


class Unreachable(ConformanceError):
    """The target cannot be reached or is not an HTTP server: exit 3."""

    exit_code = ExitCode.UNREACHABLE


class InputError(ConformanceError):
    """Bad input to a command (a capture, a header block): one clear sentence for the user, exit 2."""

    exit_code = ExitCode.USAGE
