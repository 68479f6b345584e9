"""The limits every request is sent under (``--timeout``, ``--max-body``) and the names of the limits that cut an
exchange: data the client, the settings and the checks share, so a check never imports the client to read them."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_MAX_BYTES = 64 * 1024 * 1024  # a long reasoning answer is judged whole; past 2 MiB it is spooled to disk
MAX_HEADER_BYTES = 64 * 1024


REFUSAL_DEADLINE = "refusal deadline"
# a request a server may answer or refuse, whose status and first event decide (the oversized body): a server still
# reading or thinking past this is cut and reported (TRN-010), never waited out to T
ANSWER_DEADLINE = "answer deadline"
SIZE_ABORTS = ("byte cap", "line cap", "decompression cap", "header cap")  # an exchange cut at a size limit


@dataclass(frozen=True)
class Limits:
    """Time limits in seconds and byte caps for one exchange."""

    connect: float = 5.0
    first_byte: float = 60.0
    idle: float = 30.0
    total: float = 120.0
    max_bytes: int = DEFAULT_MAX_BYTES  # raw bytes on the wire, and the decoded body, each
    max_header_bytes: int = MAX_HEADER_BYTES
    answer: float | None = None  # the refusal deadline: a status, and for a 2xx its first event, within this
    answer_name: str = REFUSAL_DEADLINE  # how a request cut there is labelled (ANSWER_DEADLINE: it may be answered)
    total_name: str = "total timeout"  # "run timeout" when the run's own bound clipped the total
    # how the connection is made, carried with the limits since every request takes both: TLS verification
    # (--insecure, --ca-bundle) and whether HTTP(S)_PROXY / NO_PROXY from the environment are honoured
    verify_tls: bool = True
    ca_bundle: str | None = None
    use_proxy: bool = True


ABANDONED = "queue wait"  # the suite stopped waiting (Request.abandon): its choice, not a limit the server broke
