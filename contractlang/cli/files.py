"""Output files: planned before any work, written so that no file is ever lost.

- :class:`Outputs` checks every output path before a command starts: a known extension, in a
  folder that exists, and never an input or another output (paths compared resolved, so a
  symlink or a second spelling of a file counts as the file): ``E502``, exit 2. Output
  folders (``--trace-out DIR``) are planned the same way and made only once every input and
  flag has been checked (:meth:`Outputs.make_folders`; a folder that cannot be made is
  ``E501``); files may be planned inside them.
- :func:`write_file` writes to a temporary file beside the final target and renames it into
  place, so a failed or interrupted write never leaves a half-written file or replaces a good
  one. A symlink is written through to its target (the link stays); a target that is not a
  regular file (a device such as ``/dev/full``, a FIFO) is made in a temporary folder and
  copied into it through one open. An existing
  file keeps its mode; a file whose mode forbids writing is refused.
- :func:`write_together` writes several files together or not at all (a fixture's
  expectations): every one to its temporary file first, then each renamed into place, the
  ones renamed before a failed rename put back as they were.
- Every failure to write is ``E501`` with the path and the reason, exit 2 — never an internal
  error.

Frames (tables, traces) are written by :mod:`contractlang.cli.tables`; this module imports no
polars, so ``fmt`` starts fast.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from contractlang.cli.inputs import usage_error
from contractlang.diagnostics import NO_SPAN, NOT_UTF8_NAME, RENAME, error, utf8_name
from contractlang.errors import ContractlangError, cannot_write, os_reason

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


@contextlib.contextmanager
def _unusable(path: Path, flag: str) -> Iterator[None]:
    """An output path the system cannot even look at (a name too long, a folder that may not
    be searched) is E502 with the system's reason; it was an OSError, exit 3."""
    try:
        yield
    except OSError as exc:
        raise usage_error(f"`{flag} {path}`: {os_reason(exc)}") from None


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
        for p in inputs:
            self._taken.setdefault(_identity(Path(p)), f"the input `{p}`")
        self._planned: dict[str, str] = {}  # every output's real path → how it was named
        self._kinds: dict[tuple[str, ...], str] = {}  # each output's identity → file or folder
        self._own: dict[str, str] = {}  # folders only the command itself writes into
        self._to_make: list[Path] = []  # planned folders that do not exist yet
        self._made: list[Path] = []

    def add(self, path: Path | None, flag: str, suffixes: tuple[str, ...] = TABLE_SUFFIXES) -> None:
        """Check one output path (``None``: the option was not given)."""
        if path is None:
            return
        with _unusable(path, flag):
            self._add(path, flag, suffixes)

    def _add(self, path: Path, flag: str, suffixes: tuple[str, ...]) -> None:
        _refuse_loop(path, flag)
        _refuse_undecodable(path, flag)
        if path.suffix.lower() not in suffixes:
            kinds = ", ".join(f"`{x}`" for x in suffixes[:-1]) + f" or `{suffixes[-1]}`"
            raise usage_error(f"`{flag} {path}`: the file must end in {kinds}")
        self._check_parent(path, flag)
        if path.is_dir():
            raise usage_error(f"`{flag} {path}`: `{path}` is a folder")
        self._take(path, flag, "file")

    def add_folder(self, path: Path | None, flag: str, *, own: bool = False) -> None:
        """Check one output folder (``None``: the option was not given): an existing folder,
        or one to make in a folder that exists (or is planned); never a file, an input or
        another output. An ``own`` folder is the command's alone: new or empty, and no
        other output may be planned inside it."""
        if path is None:
            return
        with _unusable(path, flag):
            self._add_folder(path, flag, own=own)

    def _add_folder(self, path: Path, flag: str, *, own: bool) -> None:
        _refuse_loop(path, flag)
        _refuse_undecodable(path, flag)
        if path.exists() and not path.is_dir():
            raise usage_error(f"`{flag} {path}` is a file, not a folder")
        if own and path.is_dir() and any(path.iterdir()):
            raise usage_error(
                f"`{flag} {path}` must be a new or empty folder",
                help="give a folder that does not exist yet; it is made for this command",
            )
        if not path.exists():
            self._check_parent(path, flag)
        self._take(path, flag, "folder")
        real = os.path.realpath(path)
        if own:
            inside = [shown for p, shown in self._planned.items() if p != real and _within(p, real)]
            if inside:
                raise _inside(inside[0], f"`{flag} {path}`")
            self._own[real] = f"`{flag} {path}`"
        if not path.exists():
            self._to_make.append(path)

    def make_folders(self) -> None:
        """Make the planned folders that do not exist yet, parents first: call it once
        every input and flag has been checked. A folder that cannot be made is ``E501``
        (the ones made before it are removed again)."""
        for path in self._to_make:
            try:
                path.mkdir()
            except FileExistsError:
                if not path.is_dir():
                    self.remove_empty_folders()
                    raise cannot_write(path, "a file of that name appeared") from None
            except OSError as exc:
                self.remove_empty_folders()
                raise cannot_write(path, os_reason(exc)) from None
            else:
                self._made.append(path)
        self._to_make = []

    def remove_empty_folders(self) -> None:
        """Remove the folders :meth:`make_folders` made that are still empty (a command that
        failed leaves nothing behind it made for nothing)."""
        for path in reversed(self._made):
            with contextlib.suppress(OSError):
                path.rmdir()
        self._made = []

    def _check_parent(self, path: Path, flag: str) -> None:
        parent = path.parent
        if os.path.realpath(parent) in (os.path.realpath(p) for p in self._to_make):
            return  # a folder planned before: made first
        if not parent.exists():
            raise usage_error(f"`{flag} {path}`: the folder `{parent}` does not exist")
        if not parent.is_dir():
            raise usage_error(f"`{flag} {path}`: `{parent}` is a file, not a folder")

    def _take(self, path: Path, flag: str, kind: str) -> None:
        key = _identity(path)
        if key in self._taken:
            other = self._taken[key]
            if other.startswith("the input"):
                raise usage_error(
                    f"`{flag} {path}` would overwrite {other}",
                    help=f"write the output to a {kind} of its own",
                )
            same = kind if self._kinds.get(key) == kind else "path"  # a file and a folder
            raise usage_error(
                f"`{flag} {path}` is the same {same} as {other}",
                help=f"give each output a {same} of its own",
            )
        real = os.path.realpath(path)
        for folder, shown in self._own.items():
            if _within(real, folder):
                raise _inside(f"`{flag} {path}`", shown)
        self._taken[key] = f"`{flag} {path}`"
        self._kinds[key] = kind
        self._planned[real] = f"`{flag} {path}`"


def _looping(path: Path) -> str | None:
    """What of ``path`` is a symbolic link that never reaches a file or a missing name (it
    points at itself, or round a cycle) — ``it`` or ``a folder on its way`` — or ``None``:
    writing "through" such a link would replace it."""

    def loops(p: Path) -> bool:
        try:
            os.path.realpath(p, strict=True)
        except OSError as exc:
            return exc.errno == errno.ELOOP
        return False

    if not loops(path):
        return None
    return "it" if path.is_symlink() and not loops(path.parent) else "a folder on its way"


def _refuse_loop(path: Path, flag: str) -> None:
    looping = _looping(path)
    if looping:
        raise usage_error(
            f"`{flag} {path}`: {looping} is a symbolic link that loops",
            help="point the link at a file, or give another path",
        )


def _refuse_undecodable(path: Path, flag: str) -> None:
    """E502 for an output whose name is not UTF-8 text (polars, which writes most outputs,
    takes UTF-8 names only; an import's default output inherits its input's name)."""
    if not utf8_name(path):
        raise usage_error(f"`{flag} {path}`: {NOT_UTF8_NAME}", help=RENAME)


def _within(path: str, folder: str) -> bool:
    return Path(path).is_relative_to(folder)


def _inside(output: str, folder: str) -> ContractlangError:
    return usage_error(
        f"{output} is inside {folder}, which holds only the command's own files",
        help="write the output somewhere else",
    )


def write_file(
    path: Path,
    write: Callable[[Path], object],
    failures: tuple[type[Exception], ...] = (OSError,),
) -> None:
    """Write ``path`` by calling ``write`` with the path to write to (see the module's
    docstring); any failure (``failures``: what ``write`` may raise) is E501 and leaves
    ``path`` as it was (a symbolic link that loops, E501 too, stays a link)."""
    looping = _looping(path)
    if looping:
        raise cannot_write(path, f"{looping} is a symbolic link that loops")
    target = Path(os.path.realpath(path))
    try:
        st: os.stat_result | None = target.stat()
    except OSError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        _write_through(path, target, write, failures)  # a device or a FIFO
        return
    if st is not None and not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise cannot_write(path, "the file is read-only")
    mode = stat.S_IMODE(st.st_mode) if st is not None else _new_file_mode()
    try:
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise cannot_write(path, os_reason(exc)) from None
    os.close(fd)
    tmp = Path(name)
    try:
        _guarded(path, lambda: write(tmp), failures)
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except OSError as exc:
        raise cannot_write(path, os_reason(exc)) from None
    finally:
        tmp.unlink(missing_ok=True)


@dataclass
class _Replacement:
    """One file of :func:`write_together`: where it goes, its new text's temporary file (and
    that file's identity, to tell whether it is in place), and the old file's second name."""

    path: Path
    target: Path
    mode: int
    exists: bool
    temporary: Path | None = None
    identity: tuple[int, int] | None = None
    kept: Path | None = None


def write_together(
    files: Sequence[tuple[Path, Callable[[Path], object]]],
    failures: tuple[type[Exception], ...] = (OSError,),
) -> None:
    """Write each ``(path, write)`` of ``files`` together or not at all.

    Every file is written to a temporary file beside it first (as :func:`write_file` does;
    a symbolic link is written through), and only then is each renamed into place. Each
    old file keeps a second name (a hard link, or a copy where the file system has none)
    until every rename is done, so when a rename fails — or an exception, a signal's
    among them, arrives between two — the files renamed before it are put back. A target
    that is not a regular file (a folder, a device) or is read-only is refused before
    anything is written. Every failure is E501 naming its file, and no file has changed;
    should putting a file back fail as well, the message says where its old text is kept.

    The renames are one system call each, not one for all: a process killed outright
    between two (SIGKILL, a power cut) leaves the files before the kill new and the others
    old.
    """
    plans = [_replacement(path) for path, _ in files]
    try:
        for plan, (_, write) in zip(plans, files, strict=True):
            _write_aside(plan, write, failures)
        for plan in plans:
            if plan.exists:
                with _reported(plan.path):
                    plan.kept = _second_name(plan.target)
        for plan in plans:
            with _reported(plan.path):
                os.replace(_temporary(plan), plan.target)
    except BaseException as exc:
        lost = _put_back(plans)
        if lost and isinstance(exc, ContractlangError):
            raise _not_put_back(exc, lost) from None
        for plan in lost:
            plan.kept = None  # the old text stays beside it
        raise
    finally:
        for plan in plans:
            if plan.temporary is not None:
                plan.temporary.unlink(missing_ok=True)
            if plan.kept is not None:
                plan.kept.unlink(missing_ok=True)


def _replacement(path: Path) -> _Replacement:
    looping = _looping(path)
    if looping:
        raise cannot_write(path, f"{looping} is a symbolic link that loops")
    target = Path(os.path.realpath(path))
    try:
        st = target.stat()
    except FileNotFoundError:
        return _Replacement(path, target, _new_file_mode(), exists=False)
    except OSError as exc:
        raise cannot_write(path, os_reason(exc)) from None
    if stat.S_ISDIR(st.st_mode):
        raise cannot_write(path, "it is a folder")
    if not stat.S_ISREG(st.st_mode):
        raise cannot_write(path, "it is not a regular file, so it cannot be replaced")
    if not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
        raise cannot_write(path, "the file is read-only")
    return _Replacement(path, target, stat.S_IMODE(st.st_mode), exists=True)


def _write_aside(
    plan: _Replacement, write: Callable[[Path], object], failures: tuple[type[Exception], ...]
) -> None:
    """Write ``plan``'s temporary file beside its target, with the target's mode."""
    target = plan.target
    with _reported(plan.path):
        fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        os.close(fd)
        plan.temporary = Path(name)
    _guarded(plan.path, lambda: write(_temporary(plan)), failures)
    with _reported(plan.path):
        os.chmod(plan.temporary, plan.mode)
        st = plan.temporary.stat()
        plan.identity = (st.st_dev, st.st_ino)


def _temporary(plan: _Replacement) -> Path:
    assert plan.temporary is not None
    return plan.temporary


def _second_name(target: Path) -> Path:
    """A new name beside ``target`` for the file it holds now: a hard link, or a copy."""
    for _ in range(100):
        kept = target.with_name(f".{target.name}.{secrets.token_hex(4)}.old")
        try:
            os.link(target, kept)
        except FileExistsError:
            continue
        except OSError:  # a file system without hard links
            fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent)
            os.close(fd)
            shutil.copy2(target, name)
            return Path(name)
        return kept
    raise FileExistsError(errno.EEXIST, "no free name for the old file beside it")


def _put_back(plans: Sequence[_Replacement]) -> list[_Replacement]:
    """Put every file already renamed into place back as it was; those that could not be."""
    lost = []
    for plan in reversed(plans):
        try:
            st = plan.target.stat()
        except OSError:
            continue
        if (st.st_dev, st.st_ino) != plan.identity:
            continue  # not renamed into place
        try:
            if plan.kept is not None:
                os.replace(plan.kept, plan.target)
                plan.kept = None
            else:
                plan.target.unlink()
        except OSError:
            lost.append(plan)
    return lost


def _not_put_back(exc: ContractlangError, lost: Sequence[_Replacement]) -> ContractlangError:
    """``exc``'s E501, saying which files were written all the same and where their old text
    is kept (those files are not removed)."""
    said = "; ".join(
        f"`{p.path}` was written and could not be put back"
        + (f" (its old text is in `{p.kept}`)" if p.kept is not None else "")
        for p in lost
    )
    for p in lost:
        p.kept = None  # the old text stays beside it, for the user
    first = exc.diagnostics[0]
    return ContractlangError(
        [error("E501", f"{first.message}; {said}", NO_SPAN, file="contractlang")]
    )


@contextlib.contextmanager
def _reported(path: Path) -> Iterator[None]:
    """An ``OSError`` in the block is E501 naming ``path``."""
    try:
        yield
    except OSError as exc:
        raise cannot_write(path, os_reason(exc)) from None


def _write_through(
    path: Path,
    target: Path,
    write: Callable[[Path], object],
    failures: tuple[type[Exception], ...],
) -> None:
    """Write a device or a FIFO (``target``, not a regular file): the output is made in a
    temporary folder, then copied into ``target`` through one open of ours. A writer that
    opened it twice (polars may) would end a FIFO's reader at its first close, and block for
    ever at its second; nothing is left beside ``target``, which may not even be writable
    (``/dev``)."""
    with tempfile.TemporaryDirectory(prefix="contractlang-") as folder:
        made = Path(folder) / target.name
        _guarded(path, lambda: write(made), failures)

        def copy() -> None:
            with made.open("rb") as source, target.open("wb") as sink:
                shutil.copyfileobj(source, sink, _COPY_CHUNK)

        _guarded(path, copy, failures)


#: How much of a made output is copied into a device or a FIFO at a time.
_COPY_CHUNK = 1 << 20


def _guarded(
    path: Path, action: Callable[[], object], failures: tuple[type[Exception], ...]
) -> None:
    caught: tuple[type[Exception], ...] = (OSError, *failures)
    try:
        action()
    except caught as exc:
        raise cannot_write(path, os_reason(exc)) from None


def _new_file_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask
