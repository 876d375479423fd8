"""Reports people read: a self-contained HTML page with charts, or Markdown for a pull-request
comment (:mod:`.render`), from one view of a comparison (:mod:`.view`)."""

from __future__ import annotations

from contractlang.render.report.render import (
    REPORT_SUFFIXES,
    markdown_text,
    render_html,
    render_markdown,
    render_report,
)

__all__ = ["REPORT_SUFFIXES", "markdown_text", "render_html", "render_markdown", "render_report"]
