"""Every reference to a page of docs/ leads somewhere: a page the code, the tests or the docs
name exists; a section cited as ``docs/PAGE.md, "Heading"`` is a heading of that page (one
that begins with the quoted words); and a link between pages, ``[text](page.md#anchor)``, names
a heading's anchor as GitHub makes it. The docs stand alone, so these references are how a
reader of a docstring finds the rule the code follows."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

#: `docs/PAGE.md`, in or out of backticks, then, after a comma or an opening parenthesis, a
#: quoted heading (straight or curly quotes), which may run over a line break.
CITATION = re.compile(r'docs/([\w-]+\.md)`{0,2}(?:,\s*|\s*\()["“]([^"”]+)["”]')
#: `docs/PAGE.md` alone.
PAGE = re.compile(r"\bdocs/([\w-]+\.md)\b")
#: A Markdown link to a page of docs/ (or to a heading of the same page).
LINK = re.compile(r"\]\(([\w./-]+\.md)?(?:#([\w-]+))?\)")


def sources() -> list[Path]:
    """The files that cite docs/: the package (Python and the grammar), the tests (but this
    one, whose examples name no page), the docs and the README."""
    found = [*ROOT.joinpath("contractlang").rglob("*.py"), *ROOT.joinpath("tests").rglob("*.py")]
    found += [*ROOT.joinpath("contractlang").rglob("*.lark"), *DOCS.glob("*.md")]
    return sorted({*found, ROOT / "README.md"} - {Path(__file__).resolve()})


def headings(page: Path) -> list[str]:
    """The page's headings, without their ``#`` marks (code blocks skipped).

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = Path(d) / "p.md"
    ...     _ = p.write_text("# A\\n```\\n# not one\\n```\\n## B `c`\\n", encoding="utf-8")
    ...     headings(p)
    ['A', 'B `c`']
    """
    found: list[str] = []
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#{1,6} (.+)", line)):
            found.append(m.group(1).strip())
    return found


def unwrapped(quoted: str) -> str:
    """A quoted heading as one line: a line break, the comment marks that start the next line
    (``#``, ``#:``, ``//``) and the indent collapse to one space.

    >>> unwrapped('none and\\n    three-valued logic')
    'none and three-valued logic'
    >>> unwrapped('`import\\n#: sacct`')
    '`import sacct`'
    """
    return re.sub(r"\s*\n\s*(?:#:?|//)?\s*", " ", quoted).strip()


def anchor(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, each space a
    hyphen (so a space left on each side of dropped punctuation makes two).

    >>> anchor("Order of evaluation, per allocation")
    'order-of-evaluation-per-allocation'
    >>> anchor("JSON: `--format json` (schema `contractlang.compare/1`)")
    'json---format-json-schema-contractlangcompare1'
    >>> anchor("is it worth 15 % more?")
    'is-it-worth-15--more'
    """
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def where(path: Path, text: str, at: int) -> str:
    return f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, at) + 1}"


def test_every_cited_page_exists() -> None:
    missing = [
        f"{where(path, text, m.start())}: docs/{m.group(1)}"
        for path in sources()
        for text in [path.read_text(encoding="utf-8")]
        for m in PAGE.finditer(text)
        if not (DOCS / m.group(1)).is_file()
    ]
    assert missing == []


def test_every_cited_section_is_a_heading_of_its_page() -> None:
    cited = 0
    missing: list[str] = []
    for path in sources():
        text = path.read_text(encoding="utf-8")
        for m in CITATION.finditer(text):
            page, quoted = DOCS / m.group(1), unwrapped(m.group(2))
            cited += 1
            if not page.is_file() or not any(h.startswith(quoted) for h in headings(page)):
                missing.append(f'{where(path, text, m.start())}: docs/{m.group(1)}, "{quoted}"')
    assert missing == []
    assert cited >= 30  # the package's docstrings cite sections of every page they follow


def test_every_link_between_pages_names_a_heading() -> None:
    missing: list[str] = []
    for path in [*sorted(DOCS.glob("*.md")), ROOT / "README.md"]:
        text = path.read_text(encoding="utf-8")
        for m in LINK.finditer(text):
            target = path.parent / m.group(1) if m.group(1) else path
            if not target.is_file():
                missing.append(f"{where(path, text, m.start())}: {m.group(1)}")
            elif m.group(2) and m.group(2) not in {anchor(h) for h in headings(target)}:
                missing.append(f"{where(path, text, m.start())}: {m.group(0)[2:-1]}")
    assert missing == []
