"""The rehearsal protocol: what a job says about itself, as lines on stdout or as NDJSON.

Stdout lines start with ``contractlang:`` (other lines are the job's own output)::

    contractlang: total 400                      # the steps the job will run in all
    contractlang: step 120                       # step 120 is done
    contractlang: checkpoint 120 PATH [SHA256]   # the state after step 120 is (being) saved
    contractlang: restored 100                   # resumed from the checkpoint of step 100
    contractlang: accepted                       # or `rejected`: the final validation

The events file named by ``CONTRACTLANG_EVENTS`` holds the same messages, one JSON object a
line: ``{"event": "step", "step": 120}``, ``{"event": "checkpoint", "step": 120, "path":
"…", "sha256": "…"}``, ``{"event": "total", "steps": 400}``, ``{"event": "accepted"}``.

>>> parse_line("contractlang: checkpoint 40 ck/a b.pt")
Checkpoint(step=40, path='ck/a b.pt', sha256=None)
>>> parse_line("epoch 3 done") is None
True
>>> parse_line("contractlang: step ten")
Malformed(text='contractlang: step ten', reason='`step` needs a whole number of steps')
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any

from contractlang.trace.limits import MAX_STEP

PREFIX = "contractlang:"
SHA256 = re.compile(r"[0-9a-fA-F]{64}")
VERDICTS = ("accepted", "rejected")
FORMS = "`total N`, `step N`, `checkpoint N PATH [SHA256]`, `restored N`, `accepted`, `rejected`"


@dataclass(frozen=True)
class Total:
    steps: int


@dataclass(frozen=True)
class Step:
    step: int


@dataclass(frozen=True)
class Checkpoint:
    step: int
    path: str
    sha256: str | None


@dataclass(frozen=True)
class Restored:
    step: int


@dataclass(frozen=True)
class Verdict:
    accepted: bool


@dataclass(frozen=True)
class Malformed:
    """A message that tried to speak the protocol and did not; reported, then ignored."""

    text: str
    reason: str


Message = Total | Step | Checkpoint | Restored | Verdict


def parse_line(line: str) -> Message | Malformed | None:
    """A stdout line: a message, a malformed one, or ``None`` for the job's own output."""
    text = line.rstrip("\r\n")
    if not text.startswith(PREFIX):
        return None
    words = text[len(PREFIX) :].split()
    if not words:
        return Malformed(text, f"the line names no message; the forms are {FORMS}")
    word, rest = words[0], words[1:]
    found = _message(word, rest)
    return found if not isinstance(found, str) else Malformed(text, found)


def _message(word: str, rest: list[str]) -> Message | str:
    if word in VERDICTS:
        return Verdict(word == "accepted") if not rest else f"`{word}` takes nothing after it"
    if word in ("total", "step", "restored"):
        if len(rest) != 1 or _count(rest[0]) is None:
            return f"`{word}` needs a whole number of steps"
        n = _count(rest[0])
        assert n is not None
        if n > MAX_STEP:
            return _too_many_steps(word)
        if word == "total":
            return Total(n) if n > 0 else "`total` needs at least 1 step"
        return Step(n) if word == "step" else Restored(n)
    if word == "checkpoint":
        if len(rest) < 2 or _count(rest[0]) is None:
            return "`checkpoint` needs a step and a path (and may end with a sha256)"
        n = _count(rest[0])
        assert n is not None
        if n > MAX_STEP:
            return _too_many_steps(word)
        sha = rest[-1].lower() if len(rest) > 2 and SHA256.fullmatch(rest[-1]) else None
        path = " ".join(rest[1:-1] if sha else rest[1:])
        return _path_problem(path) or Checkpoint(n, path, sha)
    return f"`{word}` is not a protocol message; the forms are {FORMS}"


def parse_event(text: str) -> Message | Malformed | None:
    """A line of the events file (``None`` for a blank line).

    >>> parse_event('{"event": "step", "step": 7}')
    Step(step=7)
    """
    if not text.strip():
        return None
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        return Malformed(text, f"not JSON ({exc.msg.lower()})")
    except ValueError:  # an integer of more than 4,300 digits
        return Malformed(text, "a number in it is too large")
    except RecursionError:
        return Malformed(text, "nested too deeply")
    if not isinstance(obj, dict) or not isinstance(obj.get("event"), str):
        return Malformed(text, 'each line must be an object with an `"event"`')
    found = _event(obj["event"], obj)
    return found if not isinstance(found, str) else Malformed(text, found)


def _event(word: str, obj: dict[str, Any]) -> Message | str:
    if word in VERDICTS:
        return Verdict(word == "accepted")
    key = "steps" if word == "total" else "step"
    n = obj.get(key)
    if word not in ("total", "step", "restored", "checkpoint"):
        return (
            f"`{word}` is not a protocol event; the events are `total`, `step`, "
            "`checkpoint`, `restored`, `accepted`, `rejected`"
        )
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        return f'`{word}` needs `"{key}"`, a whole number'
    if n > MAX_STEP:
        return _too_many_steps(word)
    if word == "total":
        return Total(n) if n > 0 else '`total` needs `"steps"` of at least 1'
    if word == "step":
        return Step(n)
    if word == "restored":
        return Restored(n)
    path, sha = obj.get("path"), obj.get("sha256")
    if not isinstance(path, str) or not path:
        return '`checkpoint` needs `"path"`, a string'
    if sha is not None and not (isinstance(sha, str) and SHA256.fullmatch(sha)):
        return '`"sha256"` must be 64 hexadecimal digits'
    return _path_problem(path) or Checkpoint(n, path, sha.lower() if sha else None)


#: The longest file name and path the system takes, in bytes (Linux's NAME_MAX, PATH_MAX).
NAME_MAX = 255
PATH_MAX = 4095


def _path_problem(path: str) -> str | None:
    """Why no file can have this checkpoint path (it would raise when read), or ``None``."""
    if "\0" in path:
        return "the checkpoint's path holds a NUL, which no file name may"
    try:
        os.fsencode(path)
    except UnicodeEncodeError:  # a lone surrogate from JSON's `\ud800`
        return "the checkpoint's path is not text a file name can hold"
    if len(os.fsencode(path)) > PATH_MAX:
        return f"the checkpoint's path is longer than a path may be ({PATH_MAX:,} bytes)"
    if any(len(os.fsencode(part)) > NAME_MAX for part in path.split("/")):
        return (
            f"a name in the checkpoint's path is longer than a file name may be ({NAME_MAX} bytes)"
        )
    return None


def _count(word: str) -> int | None:
    """A whole number of steps; one beyond :data:`MAX_STEP` (however many digits) is read as
    ``MAX_STEP + 1``."""
    if not (word.isdigit() and word.isascii()):
        return None
    return int(word) if len(word.lstrip("0")) <= 16 else MAX_STEP + 1


def _too_many_steps(word: str) -> str:
    return f"`{word}` is beyond the largest step a trace holds ({MAX_STEP:,})"
