"""Output files: planned before any work, written so that no file is ever lost.

- :class:`Outputs` checks every output path before a command starts: a known extension, in a
  folder that exists, and never an input or another output (paths compared resolved, so a
  symlink or a second spelling of a file counts as the file): ``E502``, exit 2.
- :func:`write_file` writes to a temporary file beside the final target and renames it into
  place, so a failed or interrupted write never leaves a half-written file or replaces a good
  one. A symlink is written through to its target (the link stays); a target that is not a
  regular file (a device such as ``/dev/full``, a FIFO) is written directly. An existing
  file keeps its mode; a file whose mode forbids writing is refused.
- Every failure to write is ``E501`` with the path and the reason, exit 2 — never an internal
  error.

Frames (tables, traces) are written by :mod:`contractlang.cli.tables`; this module imports no
polars, so ``fmt`` starts fast.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from contractlang.cli.common import os_reason, write_error
from contractlang.cli.inputs import usage_error

TABLE_SUFFIXES = (".parquet", ".csv")
TRACE_SUFFIXES = (".parquet", ".pq", ".csv", ".ndjson", ".jsonl")


def _identity(path: Path) -> tuple[str, ...]:
    """What makes two paths one file: the device and inode of a file that exists, else the
    resolved path."""
    try:
        st = path.stat()
    except OSError:
        return ("path", os.path.realpath(path))
    return ("inode", str(st.st_dev), str(st.st_ino))


class Outputs:
    """The files one command writes, checked against each other and its inputs.

    >>> from contractlang.errors import ContractlangError
    >>> plan = Outputs(inputs=["t.parquet"])
    >>> plan.add(Path("ledger.csv"), "--ledger")
    >>> try:
    ...     plan.add(Path("./ledger.csv"), "--runs")
    ... except ContractlangError as exc:
    ...     print(exc.diagnostics[0].message)
    `--runs ledger.csv` is the same file as `--ledger ledger.csv`
    """

    def __init__(self, inputs: Iterable[Path | str] = ()) -> None:
        self._taken: dict[tuple[str, ...], str] = {}
        self._folders: set[str] = set()  # folders the command will make (`add_folder`)
        for p in inputs:
            self._taken.setdefault(_identity(Path(p)), f"the input `{p}`")

    def add_folder(self, path: Path | None, flag: str) -> None:
        """Check a folder the command writes files into, made when missing: never a file, in
        a folder that exists, and not a file the command reads or writes. Files in it are
        then checked by :meth:`add` as any other (``None``: the option was not given)."""
        if path is None:
            return
        if path.exists() and not path.is_dir():
            raise usage_error(f"`{flag} {path}`: `{path}` is a file, not a folder")
        if not path.parent.exists():
            raise usage_error(f"`{flag} {path}`: the folder `{path.parent}` does not exist")
        if not path.parent.is_dir():
            raise usage_error(f"`{flag} {path}`: `{path.parent}` is a file, not a folder")
        key = _identity(path)
        if key in self._taken:
            raise usage_error(
                f"`{flag} {path}` is the same path as {self._taken[key]}",
                help="give each output a path of its own",
            )
        self._taken[key] = f"`{flag} {path}`"
        self._folders.add(os.path.realpath(path))

    def add(self, path: Path | None, flag: str, suffixes: tuple[str, ...] = TABLE_SUFFIXES) -> None:
        """Check one output path (``None``: the option was not given)."""
        if path is None:
            return
        if path.suffix.lower() not in suffixes:
            kinds = ", ".join(f"`{x}`" for x in suffixes[:-1]) + f" or `{suffixes[-1]}`"
            raise usage_error(f"`{flag} {path}`: the file must end in {kinds}")
        parent = path.parent
        planned = os.path.realpath(parent) in self._folders
        if not parent.exists() and not planned:
            raise usage_error(f"`{flag} {path}`: the folder `{parent}` does not exist")
        if not parent.is_dir() and not planned:
            raise usage_error(f"`{flag} {path}`: `{parent}` is a file, not a folder")
        if path.is_dir():
            raise usage_error(f"`{flag} {path}`: `{path}` is a folder")
        key = _identity(path)
        if key in self._taken:
            other = self._taken[key]
            if other.startswith("the input"):
                raise usage_error(
                    f"`{flag} {path}` would overwrite {other}",
                    help="write the output to a file of its own",
                )
            raise usage_error(
                f"`{flag} {path}` is the same file as {other}",
                help="give each output a file of its own",
            )
        self._taken[key] = f"`{flag} {path}`"


def write_file(
    path: Path,
    write: Callable[[Path], object],
    failures: tuple[type[Exception], ...] = (OSError,),
) -> None:
    """Write ``path`` by calling ``write`` with the path to write to (see the module's
    docstring); any failure (``failures``: what ``write`` may raise) is E501 and leaves
    ``path`` as it was."""
    target = Path(os.path.realpath(path))
    try:
        st: os.stat_result | None = target.stat()
    except OSError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        _guarded(path, lambda: write(target), failures)  # a device or a FIFO: no temporary file
        return
    if st is not None and not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise write_error(path, "the file is read-only")
    mode = stat.S_IMODE(st.st_mode) if st is not None else _new_file_mode()
    try:
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise write_error(path, os_reason(exc)) from None
    os.close(fd)
    tmp = Path(name)
    try:
        _guarded(path, lambda: write(tmp), failures)
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except OSError as exc:
        raise write_error(path, os_reason(exc)) from None
    finally:
        tmp.unlink(missing_ok=True)


def _guarded(
    path: Path, action: Callable[[], object], failures: tuple[type[Exception], ...]
) -> None:
    caught: tuple[type[Exception], ...] = (OSError, *failures)
    try:
        action()
    except caught as exc:
        raise write_error(path, os_reason(exc)) from None


def _new_file_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
