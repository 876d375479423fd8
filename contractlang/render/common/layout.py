"""Figures of several contracts laid out to fit the terminal: no number or name is ever split
across lines or cut short, at any width.

The layouts, tried in order until one fits the width:

1. side by side: a row per figure, a column per contract (what a wide terminal shows);
2. grouped: a small table per group of figures (the bill, GPU-hours, …), a row per contract;
3. grouped, with each contract's name shortened to a letter and a legend above;
4. one block per contract: its name, then its figures one per line.

Cells are measured as rich measures them, so wide characters count right.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass

from rich import box
from rich.cells import cell_len
from rich.console import Console, RenderableType
from rich.measure import Measurement
from rich.segment import Segment, Segments
from rich.table import Table
from rich.text import Text


@dataclass(frozen=True)
class Figure:
    """One figure of every contract: ``label`` names its row (side by side, blocks),
    ``short`` its column (grouped, under the ``group``'s title); ``cells`` has one text per
    contract."""

    group: str
    label: str
    short: str
    cells: tuple[str, ...]
    bold: bool = False


_MEASURE = Console(width=1_000_000, color_system=None, legacy_windows=False)


def width_of(renderable: RenderableType) -> int:
    """The width ``renderable`` needs to show every cell on one line."""
    return Measurement.get(_MEASURE, _MEASURE.options, renderable).maximum


def lay_out(names: Sequence[str], figures: Sequence[Figure], width: int) -> list[RenderableType]:
    """The renderables that show ``figures`` of the contracts ``names`` within ``width``."""
    wide: list[RenderableType] = [_side_by_side(names, figures)]
    if _fits(wide, width):
        return wide
    grouped = _grouped(names, figures)
    if _fits(grouped, width):
        return grouped
    letters = _letters(len(names))
    legend = _legend(names, letters)
    shortened = [*legend, *_grouped(letters, figures)]
    if _fits(shortened, width):
        return shortened
    return _blocks(names, figures)


def _fits(parts: Sequence[RenderableType], width: int) -> bool:
    return all(width_of(p) <= width for p in parts)


def _table(title: str | None = None) -> Table:
    return Table(
        title=title,
        title_justify="left",
        title_style="bold",
        show_lines=False,
        header_style="bold",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )


def _side_by_side(names: Sequence[str], figures: Sequence[Figure]) -> Table:
    table = _table()
    table.add_column("", style="dim", no_wrap=True)
    for name in names:
        table.add_column(name, justify="right", no_wrap=True)
    for f in figures:
        table.add_row(Text(f.label), *[Text(c, style="bold" if f.bold else "") for c in f.cells])
    return table


def _grouped(names: Sequence[str], figures: Sequence[Figure]) -> list[RenderableType]:
    groups: dict[str, list[Figure]] = {}
    for f in figures:
        groups.setdefault(f.group, []).append(f)
    tables: list[RenderableType] = []
    for title, members in groups.items():
        table = _table(title)
        table.add_column("", no_wrap=True)
        for f in members:
            table.add_column(f.short, justify="right", no_wrap=True)
        for k, name in enumerate(names):
            table.add_row(
                Text(name), *[Text(f.cells[k], style="bold" if f.bold else "") for f in members]
            )
        tables.append(table)
    return tables


def _letters(n: int) -> list[str]:
    letters = string.ascii_uppercase
    return [letters[k] if n <= len(letters) else f"C{k + 1}" for k in range(n)]


def _legend(names: Sequence[str], letters: Sequence[str]) -> list[RenderableType]:
    return [
        Text(f"{letter}  {name}", no_wrap=True) for letter, name in zip(letters, names, strict=True)
    ]


def _blocks(names: Sequence[str], figures: Sequence[Figure]) -> list[RenderableType]:
    blocks: list[RenderableType] = []
    for k, name in enumerate(names):
        table = _table(name)
        table.add_column("", style="dim", no_wrap=True)
        table.add_column("", justify="right", no_wrap=True)
        table.show_header = False
        for f in figures:
            table.add_row(Text(f.label), Text(f.cells[k], style="bold" if f.bold else ""))
        blocks.append(table)
    return blocks


def wrap(chunks: Sequence[str], width: int, indent: int = 0) -> list[str]:
    """``chunks`` joined by spaces into lines of at most ``width`` cells, breaking only between
    chunks (a chunk wider than a line has a line of its own); lines after the first are
    indented by ``indent`` spaces.

    >>> wrap(["net", "1,234.56 USD", "—", "met"], 16, indent=2)
    ['net 1,234.56 USD', '  — met']
    """
    lines: list[str] = []
    line = ""
    for chunk in chunks:
        if not line:
            line = (" " * indent if lines else "") + chunk
        elif cell_len(line) + 1 + cell_len(chunk) <= width:
            line += " " + chunk
        else:
            lines.append(line)
            line = " " * indent + chunk
    if line or not lines:
        lines.append(line)
    return lines


def words(text: str) -> list[str]:
    """The chunks of plain prose: its words (a line may break after any of them)."""
    return text.split()


def print_trimmed(console: Console, *renderables: RenderableType) -> None:
    """Print each renderable within the console's width, every line without the blanks rich
    pads it with (tables, indented paragraphs), so the output ends its lines where its text
    does.

    >>> import io
    >>> c = Console(file=io.StringIO(), width=20)
    >>> t = Table("a", "b")
    >>> t.add_row("1", "2")
    >>> print_trimmed(c, Text("a short line"), t)
    >>> [line[-1] for line in c.file.getvalue().splitlines()]
    ['e', '┓', '┃', '┩', '│', '┘']
    """
    for renderable in renderables:
        for line in console.render_lines(renderable, console.options, pad=False):
            while line and not line[-1].control and not line[-1].text.rstrip():
                line.pop()
            if line:
                last = line[-1]
                line[-1] = Segment(last.text.rstrip(), last.style, last.control)
            console.print(Segments([*line, Segment.line()]), end="")
