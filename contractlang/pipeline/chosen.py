"""The contracts a command asks for by name exist (E502): checked once, by the driver, before
the trace is read.

    >>> from contractlang import terms_from_text
    >>> terms = terms_from_text('contract "c" { currency USD rate 2 USD per gpu_hour }')
    >>> check_chosen(terms, ["c"])
    >>> try:
    ...     check_chosen(terms, ["d"])
    ... except ContractlangError as exc:
    ...     print(exc.diagnostics[0].message)
    the terms have no contract `d`
"""

from __future__ import annotations

from collections.abc import Sequence

from contractlang.diagnostics import NO_SPAN, did_you_mean, error
from contractlang.errors import ContractlangError
from contractlang.lang.terms import Terms


def check_chosen(terms: Terms, only: Sequence[str] | None) -> None:
    """Every contract asked for by name exists: a misspelt `--contract` must not evaluate
    nothing and report every budget met."""
    names = [c.name for c in terms.contracts]
    if not names:
        raise ContractlangError(
            [
                error(
                    "E502",
                    "the terms define no contract, so there is nothing to evaluate",
                    NO_SPAN,
                    file="contractlang",
                    help="give at least one `.spot` file with a `contract` block "
                    "(budgets apply to the contracts evaluated with them)",
                )
            ],
            terms.sources,
        )
    unknown = [n for n in only or () if n not in names]
    if not unknown:
        return
    diags = []
    for name in unknown:
        guess = did_you_mean(name, names)
        listing = ", ".join(f"`{n}`" for n in names) or "none"
        diags.append(
            error(
                "E502",
                f"the terms have no contract `{name}`",
                NO_SPAN,
                file="contractlang",
                help=f"did you mean `{guess}`?" if guess else f"the contracts are: {listing}",
            )
        )
    raise ContractlangError(diags, terms.sources)
