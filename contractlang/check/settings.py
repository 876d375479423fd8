"""A contract's settings: one currency, a rounding mode, a precision, a billing period in a
known time zone; no setting twice (E303) and no term name twice (E304)."""

from __future__ import annotations

import re
import zoneinfo
from functools import cache

from contractlang.check.context import Reporter, suggest, tail
from contractlang.diagnostics import Related, Span
from contractlang.lang import ast as A
from contractlang.lang.types import is_currency_code
from contractlang.lang.vocabulary import MAX_PRECISION, ROUNDING_MODES

_TIME_RE = re.compile(r"^([0-9]{1,2}):([0-9]{2})$")


def check_settings(report: Reporter, c: A.Contract) -> tuple[str | None, Span | None]:
    """Currency, rounding, precision, billing period; repeated settings and term names.
    Returns the contract's currency (None when missing or invalid) and its clause's span."""
    first: dict[str, A.Clause] = {}
    terms: dict[str, A.Clause] = {}
    currency: str | None = None
    currency_span: Span | None = None
    currency_clauses = [cl for cl in c.clauses if isinstance(cl, A.Currency)]
    for cl in c.clauses:
        key = _setting_key(cl)
        if key is not None and not isinstance(cl, A.Currency):
            if key in first:
                report.error(
                    "E303",
                    f"`{key}` is set more than once in contract `{c.name}`",
                    cl.span,
                    help="keep one of them",
                    related=[Related(first[key].span, "it is first set here")],
                )
            else:
                first[key] = cl
        if isinstance(cl, (A.ExcludeAllocation, A.ExcludeDuration, A.Credit)):
            kind = "credit" if isinstance(cl, A.Credit) else "exclusion"
            if cl.name in terms:
                report.error(
                    "E304",
                    f'the name "{cl.name}" is used by two terms of contract `{c.name}`',
                    cl.span,
                    help=f"give this {kind} its own name; the ledger names each term",
                    related=[Related(terms[cl.name].span, "it is first used here")],
                )
            else:
                terms[cl.name] = cl
        match cl:
            case A.Rounding(mode=mode) if mode not in ROUNDING_MODES:
                report.error(
                    "E213",
                    f"`{mode}` is not a rounding mode; use `half_up` or `half_even`",
                    tail(cl.span, len(mode)),
                    help=suggest(mode, ROUNDING_MODES),
                )
            case A.Precision(digits=digits) if not 0 <= digits <= MAX_PRECISION:
                report.error(
                    "E213",
                    f"`precision {digits}` is out of range; use 0 to {MAX_PRECISION} "
                    "decimal places",
                    cl.span,
                )
            case A.BillingPeriod():
                _billing_period(report, cl)
            case _:
                pass

    if not currency_clauses:
        report.error(
            "E302",
            f"contract `{c.name}` has no `currency`",
            c.name_span,
            help="add `currency USD` (or the contract's currency code) to the contract",
        )
    for i, cl in enumerate(currency_clauses):
        if i > 0:
            report.error(
                "E302",
                f"contract `{c.name}` sets its currency more than once",
                cl.span,
                help="a contract is in one currency; keep one `currency` clause",
                related=[Related(currency_clauses[0].span, "the currency is first set here")],
            )
            continue
        if is_currency_code(cl.code):
            currency, currency_span = cl.code, cl.span
        else:
            suggestion = cl.code.upper() if is_currency_code(cl.code.upper()) else None
            report.error(
                "E213",
                f"`{cl.code}` is not a currency code; a currency code is three capital "
                "letters, such as `USD`",
                tail(cl.span, len(cl.code)),
                help=f"did you mean `{suggestion}`?" if suggestion else None,
            )
    return currency, currency_span


def _billing_period(report: Reporter, cl: A.BillingPeriod) -> None:
    m = _TIME_RE.match(cl.time)
    if m is None or int(m.group(1)) > 23 or int(m.group(2)) > 59:
        report.error(
            "E213",
            f"`{cl.time}` is not a time of day; write it as HH:MM from 00:00 to 23:59",
            cl.span,
        )
    if not _known_zone(cl.zone):
        report.error(
            "E213",
            f'"{cl.zone}" is not a known time zone',
            tail(cl.span, len(cl.zone) + 2),
            help=suggest(cl.zone, _zones(), quote='"')
            or 'use an IANA time zone name, such as "America/New_York" or "UTC"',
        )


def _setting_key(cl: A.Clause) -> str | None:
    match cl:
        case A.Currency():
            return "currency"
        case A.Rounding():
            return "rounding"
        case A.Precision():
            return "precision"
        case A.BillingIncrement():
            return "billing increment"
        case A.BillingMinimum():
            return "billing minimum"
        case A.BillingPeriod():
            return "billing period"
        case A.Promise(kind="notice"):
            return "promise reclaim notice"
        case A.Promise():
            return "promise restart within"
        case _:  # caps may repeat at a level: the tightest binds ("the lesser of …")
            return None


@cache
def _zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def _known_zone(zone: str) -> bool:
    if zone in _zones():
        return True
    try:
        zoneinfo.ZoneInfo(zone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return False
    return True
