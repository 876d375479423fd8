"""Reports: `--report PATH.html` (one self-contained page: inline CSS, charts as inline SVG,
no script, nothing fetched) and `--report PATH.md` (the same verdict, tables and top clauses,
fitting a pull-request comment: no HTML). jinja2 templates, package data; the HTML
autoescapes, the Markdown escapes every string from a trace or a contract itself."""

from __future__ import annotations

from pathlib import Path

import jinja2

from contractlang.compare.model import Comparison
from contractlang.errors import InternalError
from contractlang.render.report.charts import render_svg
from contractlang.render.report.figures import report_charts
from contractlang.render.report.view import TOP_CLAUSES, build_view

REPORT_SUFFIXES = (".html", ".md")
_MARKS = {"met": "✓ ", "not met": "✗ ", "not measurable": "? ", "": ""}
#: Characters Markdown gives a meaning wherever they stand, written with a backslash
#: (CommonMark escapes any ASCII punctuation this way), so a name can neither format the text,
#: end a table cell, make a link nor open an HTML tag. (Text from a trace or a contract never
#: starts a line, where `#`, `+` or `-` would matter.)
_MARKDOWN_SPECIAL = "\\`*_[]<>|~&"


def markdown_text(text: str) -> str:
    r"""Plain text for a Markdown paragraph or table cell: every special character escaped,
    line breaks as spaces.

    >>> print(markdown_text("<script>|a*b"))
    \<script\>\|a\*b
    """
    out = "".join("\\" + ch if ch in _MARKDOWN_SPECIAL else ch for ch in text)
    return " ".join(out.splitlines())


def environment(autoescape: bool) -> jinja2.Environment:
    """The reports' jinja2 environment (templates in ``templates/``, package data)."""
    return jinja2.Environment(
        loader=jinja2.PackageLoader("contractlang.render.report", "templates"),
        autoescape=autoescape,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def _safe_svg(svg: str) -> str:
    """An SVG from the chart renderer, checked to hold no script and no link to fetch."""
    lowered = svg.lower()
    if "<script" in lowered or "foreignobject" in lowered or 'href="http' in lowered:
        raise InternalError("a chart's SVG holds a script or an external reference")
    return svg.removeprefix('<?xml version="1.0" encoding="UTF-8"?>').strip()


def render_html(cmp: Comparison) -> str:
    view = build_view(cmp, lambda s: s)
    charts = [(c, _safe_svg(render_svg(c))) for c in report_charts(cmp)]
    template = environment(True).get_template("report.html.j2")
    return template.render(v=view, charts=charts)


def render_markdown(cmp: Comparison) -> str:
    view = build_view(cmp, markdown_text)
    template = environment(False).get_template("report.md.j2")
    return template.render(v=view, md=markdown_text, mark=_MARKS, top=TOP_CLAUSES)


def render_report(cmp: Comparison, path: Path) -> str:
    """The report for ``path``'s extension."""
    return render_html(cmp) if path.suffix.lower() == ".html" else render_markdown(cmp)
