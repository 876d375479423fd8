"""Command-line values converted without pydantic where typer's conversion is plain.

typer converts every argument and option value through a pydantic ``TypeAdapter``, and builds
one for every parameter of the command that runs, given or not: importing pydantic and building
the adapters were a large part of what ``contractlang check`` takes (``bench/bench_startup.py``).
For the plain annotations — ``str``, ``bool``, an ``Enum`` of choices, and lists of them — the
adapter returns a ``str`` or a ``bool`` as it is and matches a choice as typer's choice helper
does, so those are converted here, the same way. Any other annotation (paths, numbers, a
``parser=``), and any value the plain conversion does not take (a choice that is not one), goes
to typer's own conversion: every result and every error message stays typer's
(``tests/test_cli_values.py`` compares them with it).

typer has no public way to choose how a parameter is converted (a ``parser=`` runs inside a
pydantic adapter too), so :func:`install` takes the one name typer calls to build each
parameter's conversion, :data:`HOOK` in ``typer.core``. What that call passes and expects is
written out below (:class:`Described`, :class:`Conversion`); none of typer's private modules is
imported. When typer has no such name, nothing is installed and typer converts every value
itself (a slower start, the same results). The typer versions this was written for are pinned in
``pyproject.toml`` and checked by ``tests/test_typer_range.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol, get_args, get_origin

import typer.core

__all__ = ["HOOK", "Conversion", "Described", "Hook", "install"]

#: The function of ``typer.core`` that typer calls, when a command runs, to build one
#: parameter's conversion.
HOOK = "build_runtime_param"


class Described(Protocol):
    """What typer tells :data:`HOOK` of one parameter."""

    @property
    def annotation(self) -> Any:
        """Its type (``list[str]``, ``OutputFormat``), ``None`` and ``Annotated`` taken off."""

    @property
    def parameter_info(self) -> Any:
        """Its ``typer.Option(…)`` or ``typer.Argument(…)``: ``parser``, ``case_sensitive``."""

    @property
    def is_file(self) -> bool:
        """Whether typer opens it as a file."""


class Conversion(Protocol):
    """What :data:`HOOK` returns: typer calls ``coerce`` with each value the command gets."""

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        """The value converted, or a ``typer.BadParameter`` (exit 2)."""


class _Declined(Exception):
    """The plain conversion does not take this value: typer's own conversion does."""


def _item_type(annotation: Any) -> Any:
    """``X`` for ``list[X]``, else the annotation itself."""
    return get_args(annotation)[0] if get_origin(annotation) is list else annotation


def _plain(annotation: Any) -> bool:
    """Whether typer's adapter for ``annotation`` returns a value as it is or as a choice.

    >>> _plain(str), _plain(bool), _plain(int), _plain(Enum)
    (True, True, False, True)
    """
    choices = isinstance(annotation, type) and issubclass(annotation, Enum)
    return annotation is str or annotation is bool or choices


def _choice_text(choice: Any, case_sensitive: bool, ctx: Any) -> str:
    """A choice, or a value given for one, as typer compares them: an ``Enum`` member by its
    value, through the context's token normaliser, casefolded unless case counts.

    >>> _choice_text("JSON", False, None), _choice_text("JSON", True, None)
    ('json', 'JSON')
    """
    text = str(choice.value) if isinstance(choice, Enum) else str(choice)
    normalise = getattr(ctx, "token_normalize_func", None)
    if normalise is not None:
        text = normalise(text)
    return text if case_sensitive else text.casefold()


@dataclass(frozen=True)
class _PlainConversion:
    """A ``str``, ``bool`` or ``Enum`` value, or a list of them, converted as typer's adapter
    converts it; typer's own conversion (:attr:`typers`) takes any value declined."""

    described: Described
    typers: Callable[[Described], Conversion]

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        several = param.multiple or param.nargs == -1
        if value is None:  # not given, no default: as typer
            return () if several else None
        annotation = self.described.annotation
        item = _item_type(annotation)
        try:
            if several and isinstance(value, str):  # typer's own error
                raise _Declined
            if item is not annotation:  # a list: one value or several, as the adapter
                values = value if isinstance(value, list | tuple) else [value]
                return [self._item(item, v, ctx) for v in values]
            return self._item(item, value, ctx)
        except _Declined:
            return self.typers(self.described).coerce(value, param=param, ctx=ctx)

    def _item(self, annotation: Any, value: Any, ctx: Any) -> Any:
        if annotation is str or annotation is bool:
            if not isinstance(value, annotation):  # bytes, or a flag's value as text
                raise _Declined
            return value
        if not isinstance(value, str | annotation):
            raise _Declined
        if isinstance(value, annotation):
            return value
        case_sensitive = self.described.parameter_info.case_sensitive
        given = _choice_text(value, case_sensitive, ctx)
        for choice in annotation:
            if _choice_text(choice, case_sensitive, ctx) == given:
                return choice
        raise _Declined  # not one of the choices: typer words the error


@dataclass(frozen=True)
class Hook:
    """Builds each parameter's conversion: a plain one for a plain annotation, typer's own
    (:attr:`typers`: a pydantic adapter, a file opener) for any other."""

    typers: Callable[[Described], Conversion]

    def __call__(self, described: Described) -> Conversion:
        plain = _plain(_item_type(described.annotation))
        if plain and described.parameter_info.parser is None and not described.is_file:
            return _PlainConversion(described, self.typers)
        return self.typers(described)


def install() -> bool:
    """Convert plain parameters with :class:`Hook`: whether it is installed (``False``: typer
    has no :data:`HOOK`, and converts every value itself)."""
    typers = getattr(typer.core, HOOK, None)
    if typers is None:
        return False
    if not isinstance(typers, Hook):
        setattr(typer.core, HOOK, Hook(typers))
    return True
