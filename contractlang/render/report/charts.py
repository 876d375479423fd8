"""The report's charts: Vega-Lite specifications rendered offline to inline SVG by
`vl-convert` (no browser, no network: external data is refused).

Chart values are floats — positions on a drawing, never money anyone adds up; every figure a
reader can quote is in the report's tables, exact. Labels from a trace or a contract reach the
charts through :func:`~contractlang.diagnostics.printable` (a control character would break
the SVG) and are escaped in the SVG by the renderer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"
WIDTH = 720
FONT = "DejaVu Sans, Helvetica, Arial, sans-serif"
CONFIG: dict[str, Any] = {
    "font": FONT,
    "view": {"stroke": None},
    "axis": {"labelFontSize": 11, "titleFontSize": 11, "grid": True, "gridColor": "#e8e8e8"},
    "legend": {"labelFontSize": 11, "titleFontSize": 11, "orient": "bottom"},
    "title": {"fontSize": 13, "anchor": "start", "fontWeight": "bold"},
    "range": {
        "category": ["#1f5fa8", "#e07b00", "#2a9d5b", "#c0392b", "#7d4fb0", "#7a7a7a", "#b8860b"]
    },
}


@dataclass(frozen=True)
class Chart:
    """One chart: an id for the page, its title and caption, its Vega-Lite spec."""

    id: str
    title: str
    caption: str
    spec: dict[str, Any]


def render_svg(chart: Chart) -> str:
    """The chart as an SVG document (a string to inline in HTML)."""
    import vl_convert  # noqa: PLC0415 — a heavy dependency, loaded only to draw a report

    spec = {"$schema": SCHEMA, "config": CONFIG, **chart.spec}
    return str(vl_convert.vegalite_to_svg(spec, allowed_base_urls=[]))


def cost_distribution(
    points: Sequence[dict[str, Any]], limit: float | None, limit_label: str, currency: str
) -> dict[str, Any]:
    """Cost per accepted run at each percentile, one line per draft, with the budget's limit
    (``points``: ``draft``, ``percentile``, ``cost``). The cost axis is logarithmic when
    every cost is above zero, so a limit far above the costs leaves their shape readable."""
    log = all(p["cost"] > 0 for p in points) and (limit is None or limit > 0)
    scale = {"type": "log"} if log else {}
    lines: dict[str, Any] = {
        "mark": {"type": "line", "strokeWidth": 2},
        "encoding": {
            "x": {
                "field": "percentile",
                "type": "quantitative",
                "title": "percentile of accepted runs",
                "scale": {"domain": [0, 100]},
            },
            "y": {
                "field": "cost",
                "type": "quantitative",
                "scale": scale,
                "title": f"cost per accepted run ({currency}{', log scale' if log else ''})",
            },
            "color": {"field": "draft", "type": "nominal", "title": "draft", "sort": None},
        },
    }
    p95 = {
        "data": {"values": [{"percentile": 95}]},
        "mark": {"type": "rule", "strokeDash": [2, 3], "color": "#555"},
        "encoding": {"x": {"field": "percentile", "type": "quantitative"}},
    }
    layers: list[dict[str, Any]] = [lines, p95]
    if limit is not None:
        layers.append(
            {
                "data": {"values": [{"limit": limit, "label": limit_label}]},
                "layer": [
                    {
                        "mark": {
                            "type": "rule",
                            "color": "#c0392b",
                            "strokeWidth": 2,
                            "strokeDash": [6, 4],
                        },
                        "encoding": {"y": {"field": "limit", "type": "quantitative"}},
                    },
                    {
                        "mark": {
                            "type": "text",
                            "align": "left",
                            "dx": 4,
                            "dy": -6,
                            "color": "#c0392b",
                            "fontSize": 11,
                        },
                        "encoding": {
                            "y": {"field": "limit", "type": "quantitative"},
                            "x": {"datum": 0},
                            "text": {"field": "label"},
                        },
                    },
                ],
            }
        )
    return {"width": WIDTH, "height": 280, "data": {"values": list(points)}, "layer": layers}


def grouped_bars(
    rows: Sequence[dict[str, Any]], measures: Sequence[str], unit: str, title: str
) -> dict[str, Any]:
    """Bars per draft, one per measure, side by side (``rows``: ``draft``, ``measure``,
    ``value``)."""
    return {
        "title": title,
        "width": WIDTH // 2 - 60,
        "height": {"step": 14},
        "data": {"values": list(rows)},
        "mark": {"type": "bar"},
        "encoding": {
            "y": {"field": "draft", "type": "nominal", "title": None, "sort": None},
            "yOffset": {"field": "measure", "type": "nominal", "sort": list(measures)},
            "x": {"field": "value", "type": "quantitative", "title": unit},
            "color": {"field": "measure", "type": "nominal", "title": None, "sort": list(measures)},
        },
    }


def side_by_side(left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
    return {"hconcat": [left, right], "resolve": {"scale": {"color": "independent"}}}


def stacked_bars(rows: Sequence[dict[str, Any]], parts: Sequence[str], unit: str) -> dict[str, Any]:
    """One bar per draft cut into ``parts`` (``rows``: ``draft``, ``part``, ``value``)."""
    return {
        "width": WIDTH,
        "height": {"step": 24},
        "data": {"values": list(rows)},
        "mark": {"type": "bar"},
        "encoding": {
            "y": {"field": "draft", "type": "nominal", "title": None, "sort": None},
            "x": {"field": "value", "type": "quantitative", "title": unit, "stack": "zero"},
            "color": {"field": "part", "type": "nominal", "title": None, "sort": list(parts)},
            "order": {"field": "order", "type": "quantitative"},
        },
    }


def clause_bars(rows: Sequence[dict[str, Any]], currency: str) -> dict[str, Any]:
    """How much each clause moves the net: with it − without it, one bar per draft and clause
    (``rows``: ``draft``, ``clause``, ``label``, ``change``)."""
    return {
        "width": WIDTH - 120,
        "height": {"step": 16},
        "data": {"values": list(rows)},
        "layer": [
            {
                "mark": {"type": "bar"},
                "encoding": {
                    "y": {
                        "field": "label",
                        "type": "nominal",
                        "title": None,
                        "sort": None,
                        "axis": {"labelLimit": 320},
                    },
                    "x": {
                        "field": "change",
                        "type": "quantitative",
                        "title": f"net with the clause − without it ({currency})",
                    },
                    "color": {"field": "draft", "type": "nominal", "title": "draft", "sort": None},
                },
            },
            {"mark": {"type": "rule", "color": "#333"}, "encoding": {"x": {"datum": 0}}},
        ],
    }


def price_ranges(rows: Sequence[dict[str, Any]], drafts: Sequence[str]) -> dict[str, Any]:
    """The price multipliers at which each draft passes, as ranges on [0, 10], with m = 1 (the
    draft as written) marked (``rows``: ``draft``, ``lo``, ``hi``, ``label``)."""
    axis = {"scale": {"domain": [0, 10]}, "title": "multiplier m on every rate's price"}
    return {
        "width": WIDTH,
        "height": {"step": 26},
        "layer": [
            {
                "data": {"values": list(rows)},
                "mark": {"type": "bar", "height": 14, "color": "#2a9d5b", "opacity": 0.8},
                "encoding": {
                    "y": {
                        "field": "draft",
                        "type": "nominal",
                        "title": None,
                        "sort": list(drafts),
                        "scale": {"domain": list(drafts)},
                    },
                    "x": {"field": "lo", "type": "quantitative", **axis},
                    "x2": {"field": "hi"},
                },
            },
            {
                "data": {"values": list(rows)},
                "mark": {"type": "text", "align": "left", "dx": 4, "fontSize": 11},
                "encoding": {
                    "y": {"field": "draft", "type": "nominal", "sort": list(drafts)},
                    "x": {"field": "hi", "type": "quantitative"},
                    "text": {"field": "label"},
                },
            },
            {
                "data": {"values": [{"m": 1}]},
                "mark": {
                    "type": "rule",
                    "color": "#c0392b",
                    "strokeDash": [6, 4],
                    "strokeWidth": 2,
                },
                "encoding": {"x": {"field": "m", "type": "quantitative"}},
            },
        ],
    }
