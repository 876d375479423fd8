"""Checking the checkpoints a job reports: the file exists, is complete, and its sha256 is
the one the job reported. A checkpoint that fails is recorded with ``valid = false``.

A checkpoint is checked when it is reported (a job that saves, then reports, passes at once)
and, if it did not pass then, again when its allocation has ended and none of its processes
is left to write (a job that reports, then saves — as asynchronous checkpointing does — passes
if the save finished before the reclaim). Without a sha256 the only test of completeness is
that the file is not empty.

>>> import tempfile
>>> d = Path(tempfile.mkdtemp())
>>> _ = (d / "c.pt").write_bytes(b"weights")
>>> check(d / "c.pt", hashlib.sha256(b"weights").hexdigest(), d)
Check(valid=True, reason=None)
>>> check(d / "gone.pt", None, d).reason
'no file at `gone.pt`'
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

CHUNK = 1 << 20


@dataclass(frozen=True)
class Check:
    valid: bool
    reason: str | None = None


def resolve(text: str, cwd: Path) -> Path:
    """The reported path, absolute (relative paths are from the job's working directory)."""
    p = Path(text).expanduser()
    return (p if p.is_absolute() else cwd / p).resolve()


def inside(path: Path, root: Path) -> bool:
    """Whether ``path`` (resolved) lies under the directory ``root``."""
    return path.is_relative_to(root.resolve())


def shown(path: Path, root: Path) -> str:
    """A checkpoint's path as reports show it: relative to the checkpoint directory."""
    try:
        return path.relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.name


def check(path: Path, sha256: str | None, root: Path) -> Check:
    """Exists, is a regular non-empty file, and (when given) its sha256 matches."""
    name = shown(path, root)
    if not path.exists():
        return Check(False, f"no file at `{name}`" + _partial(path, root))
    if not path.is_file():
        return Check(False, f"`{name}` is not a regular file")
    try:
        if path.stat().st_size == 0:
            return Check(False, f"`{name}` is empty")
        if sha256 is None:
            return Check(True)
        digest = _sha256(path)
    except OSError as exc:
        return Check(False, f"cannot read `{name}`: {(exc.strerror or str(exc)).lower()}")
    if digest != sha256:
        return Check(
            False,
            f"the sha256 of `{name}` is `{digest[:12]}…`, not the reported "
            f"`{sha256[:12]}…` (a partial or corrupt file)",
        )
    return Check(True)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _partial(path: Path, root: Path) -> str:
    """`` (a partial `x.tmp` is there: the save was cut short)`` when a file whose name holds
    the checkpoint's is left beside it."""
    if not path.parent.is_dir():
        return ""
    left = sorted(p for p in path.parent.iterdir() if path.name in p.name and p != path)
    if not left:
        return ""
    return f" (a partial `{shown(left[0], root)}` is there: the save was cut short)"
