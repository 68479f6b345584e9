"""Hypothesis strategies for byte-split fuzzing.

``chunkings(data)`` draws sorted, unique cut points into ``data``. It shrinks towards "no cut" and
removes one cut at a time. Nasty cuts (between CR and LF, inside a UTF-8 sequence, right after
``data:``) are offered behind a ``st.booleans()`` branch the shrinker can switch off.
"""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st

from conformance.wire.sse import pieces

settings.register_profile("ci", max_examples=25, derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile("deep", max_examples=2000, deadline=None)


def nasty_cuts(data: bytes) -> list[int]:
    """Offsets where a cut is most likely to expose a decoder bug."""
    cuts: set[int] = set()
    for i in range(1, len(data)):
        byte = data[i]
        if data[i - 1] == 0x0D and byte == 0x0A:  # between CR and LF
            cuts.add(i)
        elif 0x80 <= byte < 0xC0:  # inside a UTF-8 sequence
            cuts.add(i)
    start = 0
    while (at := data.find(b"data:", start)) >= 0:
        cuts.update((at + 5, at + 6, at + 2))
        start = at + 1
    return sorted(c for c in cuts if 0 < c < len(data))


@st.composite
def chunkings(draw: st.DrawFn, data: bytes, max_cuts: int = 64) -> list[int]:
    """Sorted unique cut points into ``data`` (an empty list feeds it whole)."""
    if len(data) < 2:
        return []
    anywhere: st.SearchStrategy[int] = st.integers(min_value=1, max_value=len(data) - 1)
    nasty = nasty_cuts(data)
    use_nasty: bool = draw(st.booleans()) if nasty else False
    if use_nasty:
        anywhere = st.one_of(anywhere, st.sampled_from(nasty))
    cuts = draw(st.lists(anywhere, max_size=max_cuts, unique=True))
    return sorted(cuts)


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    """The pieces of ``data`` between the cut points."""
    return pieces(data, cuts)
