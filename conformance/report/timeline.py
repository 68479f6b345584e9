"""A small inline SVG per streamed scenario: when its bytes arrived, the time to the first one, the
widest gap (a stall), and whether everything came at once (buffering). No script, no network."""

from __future__ import annotations

from typing import Any

WIDTH, HEIGHT, PAD = 360, 46, 4
STALL_S = 1.0  # a gap this long between reads is drawn as a stall


def describe(points: list[list[float]], elapsed: float) -> dict[str, Any]:
    """Time to first byte, the widest gap and where, whether the stream was buffered to the end."""
    times = [p[0] for p in points]
    gaps = [(times[i] - times[i - 1], times[i - 1]) for i in range(1, len(times))]
    widest, at = max(gaps, default=(0.0, 0.0))
    buffered = len(points) <= 2 and times[0] > 0.5 and elapsed > 0.5
    return {"ttfb": times[0], "gap": widest, "gap_at": at, "buffered": buffered, "reads": len(points)}


def svg(points: list[list[float]], elapsed: float) -> str:
    """The timeline of one stream as an inline SVG element."""
    if not points:
        return ""
    span = max(elapsed, points[-1][0], 1e-3)
    total = max(points[-1][1], 1)

    def x(t: float) -> float:
        return PAD + (WIDTH - 2 * PAD) * t / span

    def y(n: float) -> float:
        return HEIGHT - PAD - (HEIGHT - 2 * PAD) * n / total

    info = describe(points, elapsed)
    path = " ".join(f"{'M' if i == 0 else 'L'}{x(t):.1f},{y(n):.1f}" for i, (t, n) in enumerate(points))
    ticks = "".join(f'<line x1="{x(t):.1f}" y1="{HEIGHT - PAD}" x2="{x(t):.1f}" y2="{HEIGHT - PAD - 4}" '
                    'stroke="#888" stroke-width="0.6"/>' for t, _ in points)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
             f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img">',
             f"<title>first byte {info['ttfb'] * 1000:.0f} ms, {info['reads']} reads, widest gap "
             f"{info['gap'] * 1000:.0f} ms{', buffered to the end' if info['buffered'] else ''}</title>",
             f'<rect x="{PAD}" y="{PAD}" width="{x(info["ttfb"]) - PAD:.1f}" height="{HEIGHT - 2 * PAD}" '
             'fill="#eee"/>']
    if info["gap"] >= STALL_S:
        left, right = x(info["gap_at"]), x(info["gap_at"] + info["gap"])
        parts.append(f'<rect x="{left:.1f}" y="{PAD}" width="{right - left:.1f}" height="{HEIGHT - 2 * PAD}" '
                     'fill="#dde3ec"/>')  # neutral: a pause is information, not a failure
    color = "#b3261e" if info["buffered"] else "#1e7b34"
    parts += [ticks, f'<path d="{path}" fill="none" stroke="{color}" stroke-width="1.5"/>', "</svg>"]
    return "".join(parts)
