"""The checker: names, units, types, stages and lints over the AST, as diagnostics.

It runs after :mod:`contractlang.syntax.lower` and before anything is compiled. It is pure: it
reads the AST and returns every problem it finds, not only the first, and reports each mistake
once (a sub-expression that already failed has type :data:`~contractlang.lang.types.ERROR`
and is not reported again).

Example::

    >>> from contractlang.pipeline.language import parse
    >>> f = parse('contract "c" { currency USD rate 2 USD per gpu_hour + 1 hour }').file
    >>> [d.code for d in check(f).diagnostics]
    ['E201']

The rules are listed in ``docs/language.md``; in short: names resolve to facts, promises or
enum members (:mod:`~contractlang.check.infer`); units combine by the dimension algebra of
:mod:`contractlang.lang.types`; a clause reads only facts of its level and of earlier stages,
and each clause has its own shape rules (:mod:`~contractlang.check.clauses`,
:mod:`~contractlang.check.settings`); two lints find rates that are never reached (W001) and
replays that could be refunded twice (W002) (:mod:`~contractlang.check.lints`). Contract and
budget names are unique across all the files checked together (E103, E104), here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from contractlang.check.clauses import ClauseChecker
from contractlang.check.context import Reporter
from contractlang.diagnostics import Diagnostic, Related, Span, has_errors, sort_key
from contractlang.lang import ast as A

__all__ = ["CheckResult", "check"]


@dataclass(frozen=True)
class CheckResult:
    """The diagnostics of a check, sorted by file, line and column."""

    diagnostics: tuple[Diagnostic, ...]

    @property
    def ok(self) -> bool:
        """True when there is no error (warnings allowed)."""
        return not has_errors(self.diagnostics)

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.is_error)

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if not d.is_error)


def check(files: A.SpotFile | Sequence[A.SpotFile]) -> CheckResult:
    """Check one file or several together (contract and budget names must be unique across
    all of them). Diagnostics carry each file's ``name``.

    >>> check(A.SpotFile(items=())).ok
    True
    """
    seq = (files,) if isinstance(files, A.SpotFile) else tuple(files)
    report = Reporter()
    _run(report, seq)
    return CheckResult(tuple(sorted(report.diags, key=sort_key)))


def _run(report: Reporter, files: Sequence[A.SpotFile]) -> None:
    clauses = ClauseChecker(report)
    contracts: dict[str, tuple[str, A.Contract]] = {}
    budgets: dict[str, tuple[str, A.Budget]] = {}
    for f in files:
        report.file = f.name
        for item in f.items:
            if isinstance(item, A.Contract):
                _duplicate(report, "contract", "E103", item.name, item.name_span, contracts)
                contracts.setdefault(item.name, (f.name, item))
                clauses.contract(item)
            else:
                _duplicate(report, "budget", "E104", item.name, item.name_span, budgets)
                budgets.setdefault(item.name, (f.name, item))
                clauses.budget(item)


def _duplicate(
    report: Reporter,
    what: str,
    code: str,
    name: str,
    span: Span,
    seen: dict[str, tuple[str, A.Contract]] | dict[str, tuple[str, A.Budget]],
) -> None:
    if name not in seen:
        return
    first_file, first = seen[name]
    message = f"{what} `{name}` is defined more than once"
    if first_file == report.file:
        report.error(
            code,
            message,
            span,
            help=f"give each {what} its own name",
            related=[Related(first.name_span, f"`{name}` is first defined here")],
        )
    else:
        line = first.name_span.line
        report.error(
            code,
            message,
            span,
            help=f"`{name}` is first defined in {first_file} at line {line}; "
            f"give each {what} its own name",
        )
