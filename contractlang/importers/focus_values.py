"""Values of a FOCUS billing export (FOCUS 1.0–1.2, ``specification/columns``), read the way
real exports write them: nulls as the literal ``NULL`` or as empty strings, enum values in any
case (``Usage-based`` for ``Usage-Based``), money as decimal text read exactly, tags as a JSON
object in a string.

>>> is_null("NULL"), is_null(" "), is_null("0")
(True, True, False)
>>> exact("-2.61370000000")
Decimal('-2.61370000000')
>>> canonical("usage", CHARGE_CATEGORIES)
'Usage'
>>> tags('{"run": "r-7", "team": "ml"}')
{'run': 'r-7', 'team': 'ml'}
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

from contractlang.lang.numbers import EXACT

#: ChargeCategory's allowed values (FOCUS 1.0–1.2).
CHARGE_CATEGORIES = ("Usage", "Purchase", "Tax", "Credit", "Adjustment")
#: ChargeClass's one allowed value; null for every other row.
CORRECTION = "Correction"
PRICING_CATEGORIES = ("Standard", "Dynamic", "Committed", "Other")
CHARGE_FREQUENCIES = ("One-Time", "Recurring", "Usage-Based")

#: The trace keeps 18 decimal places (and 38 digits in all).
MAX_PLACES = 18
MAX_INTEGER_DIGITS = 20

_DECIMAL = re.compile(r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$")


def is_null(text: str) -> bool:
    """FOCUS writes null as ``NULL``; exports also write empty strings (or blanks)."""
    t = text.strip()
    return not t or t.upper() == "NULL"


class NotExact(ValueError):
    """A money value that is not decimal text, or that the trace cannot hold exactly."""


def exact(text: str) -> Decimal:
    """Decimal text as an exact ``Decimal`` (never through a float); :class:`NotExact` when it
    is not decimal text or needs more than 18 places (or 20 digits before the point)."""
    t = text.strip()
    if not _DECIMAL.match(t):
        raise NotExact(f"`{t}` is not a decimal number")
    d = Decimal(t)  # the pattern admits only finite decimal text
    if _places(d) <= MAX_PLACES and d.adjusted() < MAX_INTEGER_DIGITS:
        return d
    if d == 0:
        return Decimal(0)
    normal = d.normalize(EXACT)  # trailing zeros beyond 18 places carry nothing (and the
    # default context would round to 28 digits)
    if _places(normal) > MAX_PLACES:
        raise NotExact(f"`{t}` has more than {MAX_PLACES} decimal places")
    if normal.adjusted() >= MAX_INTEGER_DIGITS:
        raise NotExact(f"`{t}` is too large to keep exactly")
    return normal


def _places(d: Decimal) -> int:
    exponent = d.as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def canonical(text: str, allowed: tuple[str, ...]) -> str | None:
    """``text`` as FOCUS spells it, matched without regard to case or surrounding blanks;
    None when it is none of ``allowed``."""
    key = text.strip().casefold()
    for value in allowed:
        if value.casefold() == key:
            return value
    return None


class NotTags(ValueError):
    """The Tags value is not a JSON object."""


class Ambiguous(list[Any]):
    """The values of a key an object names twice, with different values (JSON does not say
    which wins: Python's ``json`` keeps the last, others the first)."""


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key not in out:
            out[key] = value
        elif out[key] != value:
            seen = out[key] if isinstance(out[key], Ambiguous) else Ambiguous([out[key]])
            out[key] = Ambiguous([*seen, value])
    return out


def _constant(name: str) -> Any:
    raise NotTags(f"not JSON (`{name}` is not a JSON number)")


def tags(text: str) -> dict[str, Any]:
    """The Tags column (a JSON object, FOCUS KeyValueFormat); :class:`NotTags` saying where the
    JSON breaks, or that it is not an object. Numbers are read exactly (``Decimal``); a key
    named twice with different values maps to :class:`Ambiguous`.

    >>> tags('{"run": 7001.0, "team": "a", "team": "b"}')
    {'run': Decimal('7001.0'), 'team': ['a', 'b']}
    """
    try:
        value = json.loads(
            text, parse_float=Decimal, object_pairs_hook=_object, parse_constant=_constant
        )
    except json.JSONDecodeError as exc:
        raise NotTags(f"not JSON ({exc.msg} at character {exc.pos + 1})") from None
    if not isinstance(value, dict):
        raise NotTags(f"JSON, but not an object ({json_kind(value)})")
    return value


def json_kind(value: Any) -> str:
    """What a JSON value is, in JSON's words.

    >>> json_kind([1]), json_kind(None), json_kind(True), json_kind(2.5)
    ('an array', 'null', 'a boolean', 'a number')
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float, Decimal)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


#: A whole number tag value longer than this many digits is kept as JSON wrote it.
_LONGEST_WHOLE = 40


def tag_text(value: Any) -> str | None:
    """A tag's value as a run key: strings as they are; a number as its value, so ``7001``,
    ``7001.0`` and ``7.001e3`` are all run ``7001`` (an export that wrote job IDs as floats,
    as pandas does for a column with gaps, still names the job), other numbers as written;
    booleans as JSON writes them; null (or an empty string) is no key.

    >>> [tag_text(v) for v in ("r-7", 7001, Decimal("7001.0"), Decimal("7.001E+3"), True)]
    ['r-7', '7001', '7001', '7001', 'true']
    >>> tag_text(Decimal("0.50")), tag_text(Decimal("-0.0")), tag_text(" ")
    ('0.50', '0', None)
    """
    if value is None:
        return None
    if isinstance(value, str):
        return value if value.strip() else None
    if isinstance(value, Decimal):
        whole = value == value.to_integral_value() and value.adjusted() < _LONGEST_WHOLE
        return str(int(value)) if whole else str(value)
    return json.dumps(value, default=str)
