"""The timeline drawn: where each point, mark and tick of a `ContextTimeline` goes in the SVG
chart (the template `_chart.html` draws it; the web app and the HTML export share both)."""

from __future__ import annotations

from dataclasses import dataclass

from .context_timeline import ContextTimeline, Mark

WIDTH, HEIGHT = 960, 260
LEFT, RIGHT, TOP, BOTTOM = 64, 64, 24, 40  # margins: axes and their labels


@dataclass(frozen=True)
class PlacedMark:
    mark: Mark
    x: float
    y: float


@dataclass(frozen=True)
class Tick:
    at: float  # x or y in the chart
    text: str


@dataclass(frozen=True)
class Chart:
    timeline: ContextTimeline
    width: int = WIDTH
    height: int = HEIGHT

    @property
    def plot_bottom(self) -> float:
        return self.height - BOTTOM

    @property
    def plot_right(self) -> float:
        return self.width - RIGHT

    def x(self, version: float) -> float:
        span = max(self.timeline.head - 1, 1)
        return round(LEFT + (version - 1) / span * (self.plot_right - LEFT), 2)

    def y(self, size: float, top: float | None = None) -> float:
        top = max(self.timeline.largest, 1) if top is None else max(top, 1)
        return round(self.plot_bottom - size / top * (self.plot_bottom - TOP), 2)

    @property
    def line(self) -> str:
        """The context's size as an SVG polyline's points."""
        return " ".join(f"{self.x(p.version)},{self.y(p.size)}" for p in self.timeline.points)

    @property
    def area(self) -> str:
        """The same line closed along the x axis (the filled area under it)."""
        points = self.timeline.points
        if not points:
            return ""
        ends = f"{self.x(points[-1].version)},{self.plot_bottom} {self.x(1)},{self.plot_bottom}"
        return f"{self.line} {ends}"

    @property
    def marks(self) -> list[PlacedMark]:
        return [
            PlacedMark(mark, self.x(mark.version), self.y(mark.after))
            for mark in self.timeline.marks
        ]

    @property
    def largest_tokens(self) -> int:
        return max((point.size for point in self.timeline.tokens), default=0)

    @property
    def token_segments(self) -> list[tuple[float, float, float, float]]:
        """Each compaction's tokens, before to after (or a dot where only one is known),
        on the right axis: (x1, y1, x2, y2)."""
        top, points, segments = self.largest_tokens, self.timeline.tokens, []
        index = 0
        while index < len(points):
            first = points[index]
            pair = index + 1 < len(points) and points[index + 1].version == first.version + 1
            last = points[index + 1] if pair else first
            x1, x2 = self.x(first.version), self.x(last.version)
            segments.append((x1, self.y(first.size, top), x2, self.y(last.size, top)))
            index += 2 if pair else 1
        return segments

    @property
    def x_ticks(self) -> list[Tick]:
        return [Tick(self.x(v), f"v{v:,}") for v in _ticks(1, self.timeline.head)]

    @property
    def y_ticks(self) -> list[Tick]:
        return [Tick(self.y(n), f"{n:,}") for n in _ticks(0, max(self.timeline.largest, 1))]

    @property
    def token_ticks(self) -> list[Tick]:
        top = self.largest_tokens
        return [Tick(self.y(n, top), f"{n:,}") for n in _ticks(0, top)] if top else []


def _ticks(low: int, high: int, count: int = 5) -> list[int]:
    """Round values from `low` to `high` for an axis: the ends and a few in between."""
    if high <= low:
        return [low]
    raw = (high - low) / count
    step = next(s for s in _steps() if s >= raw)
    first = (low // step + 1) * step
    inner = [v for v in range(first, high, step) if high - v > step / 3 and v - low > step / 3]
    return [low, *inner, high]


def _steps() -> list[int]:
    return [m * 10**e for e in range(0, 12) for m in (1, 2, 5)]
