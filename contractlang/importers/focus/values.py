"""Values of a FOCUS billing export (FOCUS 1.0–1.3, ``specification/columns``), read the way
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

import polars as pl

from contractlang.importers.columns import per_value
from contractlang.importers.text import json_kind

#: ChargeCategory's allowed values (FOCUS 1.0–1.3: 1.3 adds none and renames none).
CHARGE_CATEGORIES = ("Usage", "Purchase", "Tax", "Credit", "Adjustment")
#: ChargeClass's one allowed value; null for every other row.
CORRECTION = "Correction"
PRICING_CATEGORIES = ("Standard", "Dynamic", "Committed", "Other")
CHARGE_FREQUENCIES = ("One-Time", "Recurring", "Usage-Based")
COMMITMENT_DISCOUNT_STATUSES = ("Used", "Unused")

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
    is not decimal text or needs more than 18 places (or 20 digits before the point). Trailing
    zeros carry nothing: they are dropped digit by digit, never through a context that could
    round or overflow (``1e1000000`` is too large, not an ``Overflow``).

    >>> exact("-00000000000000000000012.50"), exact("-1.5E+3"), exact("0E+1000000")
    (Decimal('-12.50'), Decimal('-1.5E+3'), Decimal('0'))
    >>> try:
    ...     exact("-1e1000000")
    ... except NotExact as exc:
    ...     print(exc)
    `-1e1000000` is too large to keep exactly
    """
    t = text.strip()
    if not _DECIMAL.match(t):
        raise NotExact(f"`{t}` is not a decimal number")
    d = Decimal(t)  # the pattern admits only finite decimal text
    if _places(d) <= MAX_PLACES and d.adjusted() < MAX_INTEGER_DIGITS:
        return d
    if d == 0:
        return Decimal(0)
    if d.adjusted() >= MAX_INTEGER_DIGITS:  # its first digit, whatever zeros follow it
        raise NotExact(f"`{t}` is too large to keep exactly")
    sign, digits, exponent = d.as_tuple()
    assert isinstance(exponent, int)
    kept = len(digits)
    while digits[kept - 1] == 0:  # some digit is not 0: d is not 0
        kept -= 1
    normal = Decimal((sign, digits[:kept], exponent + len(digits) - kept))
    if _places(normal) > MAX_PLACES:
        raise NotExact(f"`{t}` has more than {MAX_PLACES} decimal places")
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
    out = dict(pairs)
    if len(out) == len(pairs):
        return out  # no key twice: the usual case, at the C parser's speed
    out = {}
    for key, value in pairs:
        if key not in out:
            out[key] = value
        elif out[key] != value:
            seen = out[key] if isinstance(out[key], Ambiguous) else Ambiguous([out[key]])
            out[key] = Ambiguous([*seen, value])
    return out


def _constant(name: str) -> Any:
    raise NotTags(f"not JSON (`{name}` is not a JSON number)")


#: One decoder for every ``Tags`` value (``json.loads`` with options builds one a call).
_DECODER = json.JSONDecoder(
    parse_float=Decimal, object_pairs_hook=_object, parse_constant=_constant
)


def tags(text: str) -> dict[str, Any]:
    """The Tags column (a JSON object, FOCUS KeyValueFormat); :class:`NotTags` saying where the
    JSON breaks, or that it is not an object. Numbers are read exactly (``Decimal``); a key
    named twice with different values maps to :class:`Ambiguous`.

    >>> tags('{"run": 7001.0, "team": "a", "team": "b"}')
    {'run': Decimal('7001.0'), 'team': ['a', 'b']}
    """
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise NotTags(f"not JSON ({exc.msg} at character {exc.pos + 1})") from None
    except RecursionError:
        raise NotTags("not JSON that can be read (arrays or objects nested too deeply)") from None
    except NotTags:
        raise  # a NaN or an infinity (:func:`_constant`): said as it is
    except ValueError:  # a whole number longer than Python reads (4,300 digits)
        raise NotTags("not JSON that can be read (a number in it has too many digits)") from None
    if not isinstance(value, dict):
        raise NotTags(f"JSON, but not an object ({json_kind(value)})")
    if "\\u" in text and not _unicode(value):
        raise NotTags("JSON, but not Unicode text (a `\\u` escape of a lone surrogate)")
    return value


def _unicode(value: Any) -> bool:
    """Whether every string of a JSON value is text a file can hold: ``"\\ud800"`` is JSON,
    but reads as a lone surrogate, half of a character."""
    try:
        json.dumps(value, ensure_ascii=False, default=str).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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


#: Decimal text without an exponent, in its parts: sign, whole digits, fraction digits.
_PLAIN = r"^(?<_sign>[+-]?)(?<_whole>[0-9]*)(?:\.(?<_fraction>[0-9]*))?$"


def exact_column(texts: pl.Series) -> pl.DataFrame:
    """:func:`exact` of every value of ``texts`` (stripped text, or null), vectorised: for each,
    the exact ``value`` (``Decimal(38, 18)``), the ``exponent`` Python's ``Decimal`` would give
    it, or 0 where that is above 0 (a sum's places follow the places written: ``1.50`` has 2;
    a sum starts at 0), and ``error`` (the :class:`NotExact` message) when it is not one — all
    null for a null.

    Plain decimal text is read in polars (digits counted, never through a float); text with an
    exponent (``1E-3``, rare) goes through :func:`exact`, once per distinct value.

    >>> for r in exact_column(pl.Series(["1.50", "0.1234567890123456789", "1E-3", "x"])).rows():
    ...     print(r)
    (Decimal('1.500000000000000000'), -2, None)
    (None, None, '`0.1234567890123456789` has more than 18 decimal places')
    (Decimal('0.001000000000000000'), -3, None)
    (None, None, '`x` is not a decimal number')
    """
    t = pl.col("t")
    simple = pl.col("_fast")
    dot = t.str.find(".", literal=True).cast(pl.Int64)
    fast = (
        texts.rename("t")
        .to_frame()
        .with_columns(_fast=t.str.contains(_SIMPLE).fill_null(False))
        .select(
            simple,
            pl.when(simple).then(t).cast(pl.Decimal(38, MAX_PLACES)).alias("value"),
            pl.when(simple)
            .then((dot + 1 - t.str.len_bytes().cast(pl.Int64)).fill_null(0))
            .alias("exponent"),
            pl.lit(None, dtype=pl.String).alias("error"),
        )
    )
    rest = ~fast.get_column("_fast") & texts.is_not_null()
    out = fast.drop("_fast")
    if not rest.any():
        return out
    where = rest.arg_true()
    slow = _exact_column(texts.filter(rest))
    return out.with_columns(
        out.get_column(c).scatter(where, slow.get_column(c)) for c in out.columns
    )


#: Decimal text most amounts are written in: at most 20 digits before the point and 18 after,
#: no exponent — exact as it is (the rest is read by :func:`_exact_column`).
_SIMPLE = r"^[+-]?(?:[0-9]{1,20}(?:\.[0-9]{0,18})?|\.[0-9]{1,18})$"


def _exact_column(texts: pl.Series) -> pl.DataFrame:
    """:func:`exact_column` of values that are not simple decimal text."""
    t = pl.col("t")
    parts = (
        texts.rename("t")
        .to_frame()
        .with_columns(t.str.extract_groups(_PLAIN).alias("_g"))
        .unnest("_g")
        .with_columns(
            # a number: the pattern matched, with a digit before or after the point
            _number=pl.col("_whole").is_not_null()
            & ((pl.col("_whole") != "") | (pl.col("_fraction").fill_null("") != "")),
            _e=(pl.col("_whole").is_null() & t.str.contains(r"[eE]")).fill_null(False),
            _fraction=pl.col("_fraction").fill_null(""),
        )
    )
    trimmed = pl.col("_fraction").str.strip_chars_end("0")
    parts = parts.with_columns(
        _places=pl.col("_fraction").str.len_chars().cast(pl.Int64),
        _trimmed=trimmed,
        _kept=trimmed.str.len_chars().cast(pl.Int64),
        _digits=pl.col("_whole").str.strip_chars_start("0").str.len_chars().cast(pl.Int64),
    )
    places, kept, digits = pl.col("_places"), pl.col("_kept"), pl.col("_digits")
    zero = (digits == 0) & (kept == 0)
    as_written = (places <= MAX_PLACES) & (digits <= MAX_INTEGER_DIGITS)
    shown = pl.concat_str(pl.lit("`"), t, pl.lit("`"))
    parts = parts.with_columns(
        error=pl.when(~pl.col("_number"))
        .then(pl.concat_str(shown, pl.lit(" is not a decimal number")))
        .when(as_written | zero)
        .then(None)
        .when(kept > MAX_PLACES)
        .then(pl.concat_str(shown, pl.lit(f" has more than {MAX_PLACES} decimal places")))
        .when(digits > MAX_INTEGER_DIGITS)
        .then(pl.concat_str(shown, pl.lit(" is too large to keep exactly")))
    )
    good = pl.col("error").is_null() & t.is_not_null()
    canonical = pl.concat_str(
        pl.col("_sign").str.replace("+", "", literal=True),
        pl.when(pl.col("_whole") == "").then(pl.lit("0")).otherwise(pl.col("_whole")),
        pl.lit("."),
        pl.col("_trimmed"),
    )
    plain = parts.select(
        pl.when(good).then(canonical).cast(pl.Decimal(38, MAX_PLACES)).alias("value"),
        pl.when(~good)
        .then(None)
        .when(as_written)
        .then(-places)
        .when(zero)
        .then(0)
        .otherwise(-kept)
        .alias("exponent"),
        "error",
        "_e",
    )
    if not plain.get_column("_e").any():
        return plain.drop("_e")
    # exponent notation: Python's `Decimal` reads it, once per distinct value
    with_e = texts.filter(plain.get_column("_e"))
    read = per_value(with_e, _exact_or_error, pl.Object())
    fixed = pl.DataFrame(
        {
            "value": pl.Series(
                [None if isinstance(r, str) else r for r in read], dtype=pl.Decimal(38, MAX_PLACES)
            ),
            "exponent": pl.Series(
                [None if isinstance(r, str) else _exponent(r) for r in read], dtype=pl.Int64
            ),
            "error": pl.Series([r if isinstance(r, str) else None for r in read], dtype=pl.String),
        }
    )
    where = plain.get_column("_e").arg_true()
    out = plain.drop("_e")
    return out.with_columns(
        out.get_column(c).scatter(where, fixed.get_column(c)) for c in out.columns
    )


def _exact_or_error(text: str) -> Decimal | str:
    try:
        return exact(text)
    except NotExact as exc:
        return str(exc)


def _exponent(d: Decimal) -> int:
    e = d.as_tuple().exponent
    return e if isinstance(e, int) else 0
