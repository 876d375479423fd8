"""Command-line values converted without pydantic where typer's conversion is plain.

typer (0.29) converts every argument and option value through a pydantic ``TypeAdapter``, and
builds one for every parameter of the command that runs, given or not: importing pydantic and
building the adapters were a large part of what ``contractlang check`` takes (issue 9;
``bench/bench_startup.py``). For the plain annotations — ``str``, ``bool``, an ``Enum`` of choices,
and lists of them — the adapter returns a ``str`` or a ``bool`` as it is and converts a choice with
typer's own helper (:func:`typer._param_types.coerce_cli_choice`), so those are converted here, the
same way. Any other annotation (paths, numbers, a ``parser=``), and any value the plain conversion
does not take (a choice that is not one), goes to typer's adapter: every result and every error
message stays typer's (``tests/test_cli_values.py`` compares them with it).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, get_args, get_origin

import typer.core
from typer._click import Context
from typer._coercion import RuntimeParam, TypeDescriptor, build_runtime_param
from typer._param_types import coerce_cli_choice, lenient_issubclass

__all__ = ["install", "runtime_param"]


class _Declined(Exception):
    """The plain conversion does not take this value: typer's adapter converts it."""


def _item_type(annotation: Any) -> Any:
    """``X`` for ``list[X]``, else the annotation itself."""
    return get_args(annotation)[0] if get_origin(annotation) is list else annotation


def _plain(annotation: Any) -> bool:
    return annotation is str or annotation is bool or lenient_issubclass(annotation, Enum)


@dataclass(frozen=True)
class _PlainParam(RuntimeParam):
    """A ``str``, ``bool`` or ``Enum`` value, or a list of them, converted as typer's adapter
    converts it; the adapter takes any value declined."""

    descriptor: TypeDescriptor

    def _coerce_value(self, value: Any, param: typer.core._TyperParameter, ctx: Context) -> Any:
        item = _item_type(self.annotation)
        try:
            if item is not self.annotation:  # a list: one value or several, as the adapter
                values = value if isinstance(value, list | tuple) else [value]
                return [self._item(item, v, ctx) for v in values]
            return self._item(item, value, ctx)
        except _Declined:
            typer_param = build_runtime_param(self.descriptor)
            return typer_param._coerce_value(value, param=param, ctx=ctx)

    def _item(self, annotation: Any, value: Any, ctx: Context) -> Any:
        if annotation is str or annotation is bool:
            if not isinstance(value, annotation):  # bytes, or a flag's value as text
                raise _Declined
            return value
        if not isinstance(value, str | annotation):
            raise _Declined
        try:
            return coerce_cli_choice(
                value,
                choices=list(annotation),
                case_sensitive=self.parameter_info.case_sensitive,
                ctx=ctx,
            )
        except ValueError:  # not one of the choices: the adapter words the error
            raise _Declined from None


def runtime_param(descriptor: TypeDescriptor) -> RuntimeParam:
    """The conversion of one parameter: a plain one for a plain annotation, typer's own (a
    pydantic adapter, a file opener) for any other."""
    info = descriptor.parameter_info
    if info.parser is None and not descriptor.is_file and _plain(_item_type(descriptor.annotation)):
        return _PlainParam(
            parameter_info=info, annotation=descriptor.annotation, descriptor=descriptor
        )
    return build_runtime_param(descriptor)


def install() -> None:
    """Convert parameters with :func:`runtime_param`: typer builds each parameter's conversion
    when the command runs, by ``typer.core.build_runtime_param``."""
    typer.core.build_runtime_param = runtime_param  # type: ignore[attr-defined]
