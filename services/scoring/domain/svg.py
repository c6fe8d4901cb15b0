"""Small server-side SVG charts for the HTML report. Every text is escaped; no scripts, no
external assets. Values are shares in [0, 1] unless a domain is given."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

LABEL_WIDTH = 170
ROW_HEIGHT = 30
TOP = 28
RIGHT = 24


@dataclass(frozen=True)
class Point:
    """One value of a chart, with its interval when it has one."""

    value: float | None
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class Series:
    """A named series of a chart, with its colour."""

    name: str
    color: str


def clip(text: str, limit: int = 21) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _text(x: float, y: float, content: str, anchor: str = "start", css: str = "") -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" class="{css}">'
        f"{escape(content)}</text>"
    )


def _label(y: float, content: str) -> str:
    """A row label, shortened to fit the label column; the full text is its tooltip."""
    return (
        f'<text x="{LABEL_WIDTH - 10}" y="{y:.1f}" text-anchor="end" class="label">'
        f"<title>{escape(content)}</title>{escape(clip(content))}</text>"
    )


def _svg(width: int, height: int, body: list[str], title: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="100%" role="img" aria-label="{escape(title)}" class="chart">'
        f"<title>{escape(title)}</title>{''.join(body)}</svg>"
    )


def percent(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{value * 100:.{digits}f}%"


def _axis(x0: float, x1: float, y0: float, y1: float, domain: tuple[float, float]) -> list[str]:
    low, high = domain
    parts = []
    steps = 4
    for step in range(steps + 1):
        share = step / steps
        x = x0 + share * (x1 - x0)
        value = low + share * (high - low)
        label = f"{value * 100:.0f}%" if low >= 0 else f"{value:+.1f}".replace("+0.0", "0")
        parts.append(f'<line x1="{x:.1f}" y1="{y0}" x2="{x:.1f}" y2="{y1}" class="grid"/>')
        parts.append(_text(x, y0 - 8, label, "middle", "axis"))
    return parts


def _scale(value: float, domain: tuple[float, float], x0: float, x1: float) -> float:
    low, high = domain
    clipped = min(max(value, low), high)
    return x0 + (clipped - low) / (high - low) * (x1 - x0)


def legend(series: Sequence[Series]) -> str:
    chips = "".join(
        f'<span class="chip"><i style="background:{s.color}"></i>{escape(s.name)}</span>'
        for s in series
    )
    return f'<div class="legend">{chips}</div>'


def dot_plot(
    rows: Sequence[tuple[str, Sequence[Point]]],
    series: Sequence[Series],
    title: str,
    width: int = 760,
    domain: tuple[float, float] = (0.0, 1.0),
) -> str:
    """One row per model, one dot with its interval per series, on a shared axis."""
    band = max(ROW_HEIGHT, 12 * len(series) + 10)
    height = TOP + band * len(rows) + 8
    x0, x1 = LABEL_WIDTH, width - RIGHT
    body = _axis(x0, x1, TOP, height - 4, domain)
    for index, (label, points) in enumerate(rows):
        top = TOP + index * band
        if index % 2 == 0:
            body.append(f'<rect x="0" y="{top}" width="{width}" height="{band}" class="band"/>')
        body.append(_label(top + band / 2 + 4, label))
        for offset, (point, style) in enumerate(zip(points, series, strict=True)):
            if point.value is None:
                continue
            y = top + 10 + offset * 12
            if point.low is not None and point.high is not None:
                lx = _scale(point.low, domain, x0, x1)
                hx = _scale(point.high, domain, x0, x1)
                body.append(
                    f'<line x1="{lx:.1f}" y1="{y}" x2="{hx:.1f}" y2="{y}" '
                    f'stroke="{style.color}" class="whisker"/>'
                )
            x = _scale(point.value, domain, x0, x1)
            tip = f"{style.name}: {percent(point.value)}"
            if point.low is not None and point.high is not None:
                tip += f" (95% CI {percent(point.low)}–{percent(point.high)})"
            body.append(
                f'<circle cx="{x:.1f}" cy="{y}" r="4.5" fill="{style.color}">'
                f"<title>{escape(label)} · {escape(tip)}</title></circle>"
            )
    return _svg(width, height, body, title)


def bar_chart(
    rows: Sequence[tuple[str, Sequence[Point]]],
    series: Sequence[Series],
    title: str,
    width: int = 760,
) -> str:
    """Grouped horizontal bars with interval whiskers and the value written at the end."""
    bar = 14
    band = bar * len(series) + 14
    height = TOP + band * len(rows) + 8
    x0, x1 = LABEL_WIDTH, width - RIGHT - 40
    body = _axis(x0, x1, TOP, height - 4, (0.0, 1.0))
    for index, (label, points) in enumerate(rows):
        top = TOP + index * band
        body.append(_label(top + band / 2 + 4, label))
        for offset, (point, style) in enumerate(zip(points, series, strict=True)):
            y = top + 7 + offset * bar
            if point.value is None:
                body.append(_text(x0 + 4, y + bar - 4, f"{style.name}: n/a", "start", "note"))
                continue
            x = _scale(point.value, (0.0, 1.0), x0, x1)
            body.append(
                f'<rect x="{x0}" y="{y}" width="{max(x - x0, 1):.1f}" height="{bar - 3}" '
                f'fill="{style.color}" rx="2"><title>{escape(label)} · {escape(style.name)}: '
                f"{percent(point.value)}</title></rect>"
            )
            end = x
            if point.low is not None and point.high is not None:
                lx = _scale(point.low, (0.0, 1.0), x0, x1)
                hx = _scale(point.high, (0.0, 1.0), x0, x1)
                middle = y + (bar - 3) / 2
                body.append(
                    f'<line x1="{lx:.1f}" y1="{middle}" x2="{hx:.1f}" y2="{middle}" '
                    'class="whisker dark"/>'
                )
                end = max(x, hx)
            body.append(_text(end + 6, y + bar - 4, percent(point.value), "start", "value"))
    return _svg(width, height, body, title)


def stacked_bars(
    rows: Sequence[tuple[str, Sequence[float]]],
    series: Sequence[Series],
    title: str,
    width: int = 760,
) -> str:
    """One bar per row split into shares (they should sum to 1)."""
    height = TOP + ROW_HEIGHT * len(rows) + 8
    x0, x1 = LABEL_WIDTH, width - RIGHT
    body = _axis(x0, x1, TOP, height - 4, (0.0, 1.0))
    for index, (label, shares) in enumerate(rows):
        y = TOP + index * ROW_HEIGHT + 6
        body.append(_label(y + 13, label))
        start = 0.0
        for share, style in zip(shares, series, strict=True):
            if share <= 0:
                continue
            left = _scale(start, (0.0, 1.0), x0, x1)
            right = _scale(start + share, (0.0, 1.0), x0, x1)
            body.append(
                f'<rect x="{left:.1f}" y="{y}" width="{max(right - left, 0.5):.1f}" height="18" '
                f'fill="{style.color}"><title>{escape(label)} · {escape(style.name)}: '
                f"{percent(share)}</title></rect>"
            )
            if right - left > 34:
                body.append(
                    _text((left + right) / 2, y + 13, percent(share, 0), "middle", "inside")
                )
            start += share
    return _svg(width, height, body, title)


def _heat_color(value: float) -> str:
    """White → deep red as the share grows."""
    share = min(max(value, 0.0), 1.0)
    red, green, blue = 255 - round(share * 40), 255 - round(share * 190), 255 - round(share * 190)
    return f"rgb({red},{green},{blue})"


def heatmap(
    row_labels: Sequence[str],
    column_labels: Sequence[str],
    cells: Sequence[Sequence[Point | None]],
    title: str,
    width: int = 760,
) -> str:
    """Rows × columns of shares, the value and its count written in each cell."""
    columns = max(1, len(column_labels))
    cell_width = (width - LABEL_WIDTH - RIGHT) / columns
    height = TOP + ROW_HEIGHT * len(row_labels) + 8
    body = []
    for column, name in enumerate(column_labels):
        x = LABEL_WIDTH + (column + 0.5) * cell_width
        limit = max(6, int(cell_width / 7))
        body.append(_text(x, TOP - 10, clip(name, limit), "middle", "axis"))
    for row, name in enumerate(row_labels):
        y = TOP + row * ROW_HEIGHT
        body.append(_label(y + ROW_HEIGHT / 2 + 4, name))
        for column, point in enumerate(cells[row]):
            x = LABEL_WIDTH + column * cell_width
            if point is None or point.value is None:
                body.append(
                    f'<rect x="{x + 1:.1f}" y="{y + 1}" width="{cell_width - 2:.1f}" '
                    f'height="{ROW_HEIGHT - 2}" class="empty"/>'
                )
                continue
            body.append(
                f'<rect x="{x + 1:.1f}" y="{y + 1}" width="{cell_width - 2:.1f}" '
                f'height="{ROW_HEIGHT - 2}" fill="{_heat_color(point.value)}" rx="3"/>'
            )
            body.append(
                _text(
                    x + cell_width / 2,
                    y + ROW_HEIGHT / 2 + 4,
                    percent(point.value, 0),
                    "middle",
                    "cell",
                )
            )
    return _svg(width, height, body, title)


def diverging(
    rows: Sequence[tuple[str, Point]],
    title: str,
    left_label: str,
    right_label: str,
    width: int = 760,
) -> str:
    """Signed values in [-1, 1] as bars from a centre line, with intervals."""
    height = TOP + ROW_HEIGHT * len(rows) + 26
    x0, x1 = LABEL_WIDTH, width - RIGHT
    domain = (-1.0, 1.0)
    body = _axis(x0, x1, TOP, height - 22, domain)
    centre = _scale(0.0, domain, x0, x1)
    for index, (label, point) in enumerate(rows):
        y = TOP + index * ROW_HEIGHT + 7
        body.append(_label(y + 12, label))
        if point.value is None:
            body.append(_text(centre + 6, y + 12, "no complete pairs", "start", "note"))
            continue
        x = _scale(point.value, domain, x0, x1)
        color = "#c2410c" if point.value > 0 else "#1d4ed8"
        body.append(
            f'<rect x="{min(x, centre):.1f}" y="{y}" width="{max(abs(x - centre), 1.5):.1f}" '
            f'height="16" fill="{color}" rx="2"><title>{escape(label)}: PF '
            f"{point.value:+.3f}</title></rect>"
        )
        left, right = min(x, centre), max(x, centre)
        if point.low is not None and point.high is not None:
            lx, hx = _scale(point.low, domain, x0, x1), _scale(point.high, domain, x0, x1)
            body.append(
                f'<line x1="{lx:.1f}" y1="{y + 8}" x2="{hx:.1f}" y2="{y + 8}" '
                'class="whisker dark"/>'
            )
            left, right = min(left, lx), max(right, hx)
        text = f"{point.value:+.2f}"
        if point.value >= 0:
            body.append(_text(right + 6, y + 12, text, "start", "value"))
        else:
            body.append(_text(left - 6, y + 12, text, "end", "value"))
    body.append(
        f'<line x1="{centre:.1f}" y1="{TOP}" x2="{centre:.1f}" y2="{height - 22}" class="centre"/>'
    )
    body.append(_text(x0, height - 6, f"← {left_label}", "start", "note"))
    body.append(_text(x1, height - 6, f"{right_label} →", "end", "note"))
    return _svg(width, height, body, title)
