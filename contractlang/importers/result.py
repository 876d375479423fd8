"""What an import did, row by row: the mapping report shared by every adapter.

Every input row is accounted for: it was *mapped* (it became events, or was folded into the
events of another row, as a Slurm job step is into its job), it was *rejected* with a code and
a reason, or it was *blank* (a line with nothing on it: counted and numbered, so that row N is
still the N-th line after the header, but nothing to import). ``rows_read == Σ mapped +
rejected + blank``, always (:attr:`ImportReport.accounted`). Notes
flag rows that were imported with a caveat (a time without an offset read as UTC, tags that are
not JSON): they are counted, with their first rows, and never stop the import.

>>> c = Collector("sacct", "jobs.txt")
>>> c.mapped("job records", 2)
>>> c.reject(Reject(3, "I014", "unknown job state `DONE`", "7|x|DONE"))
>>> c.rows_read = 3
>>> c.report(events=6, runs=1, allocations=2).accounted
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import polars as pl

from contractlang.trace.model import Trace

#: How many example rows a note or the rejects summary keeps.
FIRST_ROWS = 5
#: The longest value a note's detail shows whole.
SHOWN = 40


def shortened(value: str) -> str:
    """A value as a note's detail shows it: whole up to :data:`SHOWN` characters, else its
    start and ``…``.

    >>> shortened("gres/gpu=8"), shortened("x" * 41)
    ('gres/gpu=8', 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…')
    """
    return value if len(value) <= SHOWN else value[: SHOWN - 3] + "…"


def last_line_detail(line: int, value: str) -> str:
    """The detail of an ``I044`` note: the file's last line and the value it ends with.

    >>> last_line_detail(1204, "gpu-d01")
    'line 1,204 ends `gpu-d01`'
    """
    return f"line {line:,} ends `{shortened(value)}`"


@dataclass(frozen=True, slots=True)
class Reject:
    """A row that could not be mapped: its row number in the source (data rows from 1; a
    header is not a row), the code and reason, and the row as written in the file."""

    row: int
    code: str
    reason: str
    record: str


@dataclass(frozen=True, slots=True)
class Note:
    """Rows imported with the same caveat: the code, what it means, how many rows, and the
    first few as ``(row, detail)``."""

    code: str
    message: str
    count: int
    examples: tuple[tuple[int, str], ...]


@dataclass(frozen=True, slots=True)
class Mapped:
    """A kind of row that was mapped (``job records``, ``job steps folded into their job``),
    how many, and the label for one (``job record``)."""

    label: str
    rows: int
    one: str = ""

    @property
    def shown(self) -> str:
        """The label for this many rows."""
        return self.one if self.rows == 1 and self.one else self.label


@dataclass(frozen=True)
class ImportReport:
    """The mapping report of one import."""

    adapter: str
    source: str
    rows_read: int
    mapped: tuple[Mapped, ...]
    rejects: tuple[Reject, ...]
    notes: tuple[Note, ...]
    events: int
    runs: int
    allocations: int
    open_allocations: int = 0
    facts: tuple[tuple[str, str], ...] = ()  # adapter-specific figures, e.g. sums
    blank: int = 0  # rows with nothing on them
    blank_rows: tuple[int, ...] = ()  # the first of them

    @property
    def rows_mapped(self) -> int:
        return sum(m.rows for m in self.mapped)

    @property
    def accounted(self) -> bool:
        """Every row read was mapped, rejected or blank."""
        return self.rows_read == self.rows_mapped + len(self.rejects) + self.blank


@dataclass(frozen=True)
class ImportResult:
    """An import: the events (a trace, docs/trace.md, with the adapter's extra columns), the
    same events loaded and validated as a :class:`Trace`, and the mapping report.
    ``open_at`` is the time that closes allocations still running (``--open-at``), if any;
    later commands need it too."""

    events: pl.DataFrame
    trace: Trace
    report: ImportReport
    open_at: datetime | None = None


@dataclass
class _NoteBuilder:
    message: str
    count: int = 0
    examples: list[tuple[int, str]] = field(default_factory=list)


class Collector:
    """Collects what an adapter does while it reads: the rows mapped by kind, the rejects, the
    notes. ``rows_read`` is set by the adapter."""

    def __init__(self, adapter: str, source: str) -> None:
        self.adapter = adapter
        self.source = source
        self.rows_read = 0
        self._mapped: dict[str, int] = {}
        self._one: dict[str, str] = {}
        self._rejects: list[Reject] = []
        self._notes: dict[str, _NoteBuilder] = {}
        self.facts: list[tuple[str, str]] = []
        self._blank = 0
        self._blank_rows: list[int] = []
        self._done: dict[str, Note] = {}

    def mapped(self, label: str, rows: int = 1, *, one: str = "") -> None:
        """``rows`` more rows of the kind ``label`` (``one``: the label for a single row)."""
        self._mapped[label] = self._mapped.get(label, 0) + rows
        self._one.setdefault(label, one)

    def blank(self, row: int) -> None:
        """Row ``row`` has nothing on it."""
        self.blanks(1, (row,))

    def blanks(self, count: int, first: tuple[int, ...]) -> None:
        """``count`` more rows with nothing on them, the first of them ``first``."""
        self._blank += count
        self._blank_rows.extend(first[: FIRST_ROWS - len(self._blank_rows)])

    def noted(self, note: Note) -> None:
        """A note gathered elsewhere (every row of a code at once)."""
        if note.code in self._notes or note.code in self._done:
            raise ValueError(f"note {note.code} is given twice")
        self._done[note.code] = note

    def reject(self, reject: Reject) -> None:
        self._rejects.append(reject)

    def note(self, code: str, message: str, row: int, detail: str) -> None:
        """One more row with caveat ``code``; ``message`` says what it means (the first
        message given for a code is kept)."""
        b = self._notes.setdefault(code, _NoteBuilder(message))
        b.count += 1
        if len(b.examples) < FIRST_ROWS:
            b.examples.append((row, detail))

    @property
    def rejects(self) -> tuple[Reject, ...]:
        return tuple(sorted(self._rejects, key=lambda r: r.row))

    def report(
        self, *, events: int, runs: int, allocations: int, open_allocations: int = 0
    ) -> ImportReport:
        return ImportReport(
            adapter=self.adapter,
            source=self.source,
            rows_read=self.rows_read,
            mapped=tuple(Mapped(k, v, self._one[k]) for k, v in self._mapped.items()),
            rejects=self.rejects,
            notes=tuple(
                sorted(
                    [
                        *(
                            Note(code, b.message, b.count, tuple(b.examples))
                            for code, b in self._notes.items()
                        ),
                        *self._done.values(),
                    ],
                    key=lambda n: n.code,
                )
            ),
            events=events,
            runs=runs,
            allocations=allocations,
            open_allocations=open_allocations,
            facts=tuple(self.facts),
            blank=self._blank,
            blank_rows=tuple(self._blank_rows),
        )


def rejects_frame(rejects: tuple[Reject, ...]) -> pl.DataFrame:
    """The rejects as a table for ``--rejects``: the row, the code, the reason, the row as
    written.

    >>> rejects_frame((Reject(3, "I014", "unknown job state `DONE`", "7|x|DONE"),)).row(0)
    (3, 'I014', 'unknown job state `DONE`', '7|x|DONE')
    """
    return pl.DataFrame(
        {
            "row": [r.row for r in rejects],
            "code": [r.code for r in rejects],
            "reason": [r.reason for r in rejects],
            "record": [r.record for r in rejects],
        },
        schema={
            "row": pl.Int64(),
            "code": pl.String(),
            "reason": pl.String(),
            "record": pl.String(),
        },
    )
