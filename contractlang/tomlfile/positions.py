"""Where each key of a TOML document is written: Python's ``tomllib`` gives values but no
positions, so this small scanner reads a document that ``tomllib`` has already accepted and
records the span of every key (and of its value), by key path.

It knows just enough TOML for that: ``[table]`` and ``[[array]]`` headers, dotted and quoted
keys, basic and literal strings (multi-line too), arrays over several lines, inline tables and
comments. Paths inside arrays of tables leave out the index.

>>> spans = key_spans('runs = 3\\n[reclaims]\\nrate_per_hour = 0.2  # per hour\\n')
>>> spans.keys[("reclaims", "rate_per_hour")].line, spans.values[("runs",)].col
(3, 8)
>>> spans.tables[("reclaims",)].line
2
"""

from __future__ import annotations

import bisect
import re
import tomllib
from dataclasses import dataclass, field

from contractlang.diagnostics import Span

Path = tuple[str, ...]

_BARE = re.compile(r"[A-Za-z0-9_-]+")
#: a number, boolean or date-time (a space may separate a date from its time)
_SCALAR = re.compile(r"[^,\]}\s#]+(?: [0-9][^,\]}\s#]*)?")


@dataclass
class KeySpans:
    """Spans by key path: of each key as written, of its value, and of each table header."""

    keys: dict[Path, Span] = field(default_factory=dict)
    values: dict[Path, Span] = field(default_factory=dict)
    tables: dict[Path, Span] = field(default_factory=dict)

    def of(self, path: Path) -> Span | None:
        """The best place to point at for ``path``: its key, else the nearest table above it
        that has a header."""
        for n in range(len(path), 0, -1):
            prefix = path[:n]
            found = self.keys.get(prefix) or self.tables.get(prefix)
            if found is not None:
                return found
        return None


def key_spans(text: str) -> KeySpans:
    """The spans of every key, value and table header of ``text`` (valid TOML)."""
    return _Scanner(text).run()


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.out = KeySpans()
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    # ---- positions
    def span(self, start: int, end: int) -> Span:
        line = _bisect(self.line_starts, start)
        end_line = _bisect(self.line_starts, max(start, end - 1))
        col = start - self.line_starts[line - 1] + 1
        end_col = end - self.line_starts[end_line - 1] + 1
        return Span(line, col, end_line, end_col, start, end)

    def peek(self, n: int = 1) -> str:
        return self.text[self.i : self.i + n]

    def skip_blank(self, newlines: bool) -> None:
        """Skip spaces and tabs (and newlines and comments when ``newlines``)."""
        while self.i < len(self.text):
            c = self.text[self.i]
            if c in " \t" or (newlines and c in "\r\n"):
                self.i += 1
            elif c == "#" and newlines:
                self.skip_comment()
            else:
                return

    def skip_comment(self) -> None:
        end = self.text.find("\n", self.i)
        self.i = len(self.text) if end < 0 else end

    # ---- document
    def run(self) -> KeySpans:
        table: Path = ()
        while True:
            self.skip_blank(newlines=True)
            if self.i >= len(self.text):
                return self.out
            if self.peek() == "[":
                table = self.header()
            else:
                self.key_value(table)
            self.skip_blank(newlines=False)
            if self.peek() == "#":
                self.skip_comment()

    def header(self) -> Path:
        start = self.i
        double = self.peek(2) == "[["
        self.i += 2 if double else 1
        self.skip_blank(newlines=False)
        path, _ = self.key()
        self.skip_blank(newlines=False)
        self.i += 2 if double else 1
        self.out.tables.setdefault(path, self.span(start, self.i))
        return path

    def key(self) -> tuple[Path, int]:
        """A dotted key at the cursor: its parts and where it starts."""
        start = self.i
        parts: list[str] = []
        while True:
            self.skip_blank(newlines=False)
            c = self.peek()
            if c in "\"'":
                begin = self.i
                self.string()
                raw = self.text[begin + 1 : self.i - 1]
                parts.append(raw if c == "'" else _unescape(raw))
            else:
                m = _BARE.match(self.text, self.i)
                parts.append(m.group(0) if m else "")
                self.i = m.end() if m else self.i + 1
            self.skip_blank(newlines=False)
            if self.peek() != ".":
                return tuple(parts), start
            self.i += 1

    def key_value(self, table: Path) -> None:
        key_start = self.i
        parts, _ = self.key()
        key_end = self.i
        while key_end > key_start and self.text[key_end - 1] in " \t":
            key_end -= 1
        path = table + parts
        self.out.keys.setdefault(path, self.span(key_start, key_end))
        self.skip_blank(newlines=False)
        self.i += 1  # the `=`
        self.skip_blank(newlines=False)
        value_start = self.i
        self.value(path)
        self.out.values.setdefault(path, self.span(value_start, self.i))

    # ---- values
    def value(self, path: Path) -> None:
        c = self.peek()
        if c in "\"'":
            self.string()
        elif c == "[":
            self.array(path)
        elif c == "{":
            self.inline_table(path)
        else:
            m = _SCALAR.match(self.text, self.i)
            self.i = m.end() if m else self.i + 1

    def string(self) -> None:
        q = self.peek()
        if self.peek(3) == q * 3:
            end = self.text.find(q * 3, self.i + 3) if q == "'" else self._basic_end(3)
            self.i = end + 3
            while self.peek() == q:  # up to two quotes may close a multi-line string
                self.i += 1
            return
        end = self.text.find("'", self.i + 1) if q == "'" else self._basic_end(1)
        self.i = end + 1

    def _basic_end(self, width: int) -> int:
        """The index of the closing quote(s) of a basic string opened with ``width`` quotes."""
        j = self.i + width
        closing = '"' * width
        while True:
            if self.text[j] == "\\":
                j += 2
            elif self.text.startswith(closing, j):
                return j
            else:
                j += 1

    def array(self, path: Path) -> None:
        self.i += 1
        while True:
            self.skip_blank(newlines=True)
            if self.peek() == "]":
                self.i += 1
                return
            self.value(path)
            self.skip_blank(newlines=True)
            if self.peek() == ",":
                self.i += 1

    def inline_table(self, path: Path) -> None:
        self.i += 1
        while True:
            self.skip_blank(newlines=True)
            if self.peek() == "}":
                self.i += 1
                return
            self.key_value(path)
            self.skip_blank(newlines=True)
            if self.peek() == ",":
                self.i += 1


def _unescape(raw: str) -> str:
    """A basic string's text with its escapes decoded, as TOML decodes them."""
    if "\\" not in raw:
        return raw
    value = tomllib.loads(f'k = "{raw}"')["k"]
    return value if isinstance(value, str) else raw


def _bisect(starts: list[int], pos: int) -> int:
    """The 1-based line holding character ``pos``."""
    return bisect.bisect_right(starts, pos)
