"""A small real trainer that speaks the rehearsal protocol (`docs/rehearse.md`).

``python -m contractlang.mock_trainer`` (or ``contractlang rehearse --mock``) trains a two-layer
network by SGD on synthetic regression data: real numpy work, paced to 50 ms a step at least
(2 s an epoch by default, however fast the machine). After every epoch it writes a checkpoint
atomically (the bytes to a temporary file, fsync, rename) and reports it with its sha256; on
start it restores the newest checkpoint whose own checksum holds; at the end a validation
loss accepts or rejects the model. The data of step ``s`` depends only on the seed and
``s``, so a run restored from step ``s`` computes the same model as one that never stopped.

``--slow-checkpoint 40`` (or ``CONTRACTLANG_MOCK_SLOW_CHECKPOINT=40``) writes the checkpoint
of step 40 slowly, so a reclaim during the save leaves a partial temporary file and no
checkpoint. The mock keeps its own log (``--log``, default ``mock.log`` in the checkpoint
directory): one JSON object a line for every step computed, restore and save, so a test can
count what was really recomputed without trusting the protocol.

It imports nothing of contractlang: it stands for the user's own job.

>>> Mock(parse_args(["--epochs", "2", "--steps-per-epoch", "3"])).total
6
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]
PREFIX = "contractlang:"
PARAMS = ("w1", "b1", "w2", "b2")
#: The least wall time of a step by default: an epoch of 40 steps takes 2 s at least, so the
#: run's last third (66 steps, 3.3 s) outlasts a 2-minute notice at `--time-scale 60` (2 s)
#: however fast the machine, and each interrupt of `--interrupts 2` ends in a reclaim.
STEP_SECONDS = 0.05


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m contractlang.mock_trainer",
        description="A small real trainer speaking the contractlang rehearsal protocol.",
    )
    p.add_argument("--epochs", type=int, default=5, help="epochs (default 5)")
    p.add_argument("--steps-per-epoch", type=int, default=40, help="steps per epoch (40)")
    p.add_argument("--width", type=int, default=1024, help="hidden units (1024)")
    p.add_argument("--batch", type=int, default=1024, help="examples per step (1024)")
    p.add_argument("--features", type=int, default=256, help="input features (256)")
    p.add_argument(
        "--step-seconds",
        type=float,
        default=STEP_SECONDS,
        help=f"least wall time of a step ({STEP_SECONDS}; 0: no pause)",
    )
    p.add_argument(
        "--slow-checkpoint",
        default=os.environ.get("CONTRACTLANG_MOCK_SLOW_CHECKPOINT", ""),
        help="steps whose checkpoint is written slowly, comma-separated, or `all`",
    )
    p.add_argument("--slow-seconds", type=float, default=2.0, help="a slow save's length (2)")
    p.add_argument(
        "--on-notice",
        choices=("continue", "checkpoint"),
        default="continue",
        help="on SIGTERM: keep training until reclaimed, or save a checkpoint and exit",
    )
    p.add_argument("--accept-loss", type=float, default=0.1, help="accept below this loss (0.1)")
    p.add_argument("--seed", type=int, default=0, help="the data's seed (0)")
    p.add_argument("--checkpoint-dir", default=None, help="default: $CONTRACTLANG_CHECKPOINT_DIR")
    p.add_argument("--log", default=None, help="own log (default: mock.log in the checkpoint dir)")
    p.add_argument(
        "--events", action="store_true", help="report to $CONTRACTLANG_EVENTS, not stdout"
    )
    p.add_argument("--fail-at", type=int, default=None, help="exit 1 after this step (tests)")
    args = p.parse_args(argv)
    if args.epochs < 1 or args.steps_per_epoch < 1:
        p.error("--epochs and --steps-per-epoch must be at least 1")
    return args


@dataclass
class State:
    step: int
    params: dict[str, F64]


def checksum(params: dict[str, F64]) -> str:
    """sha256 over the parameters' bytes, in a fixed order (stored inside each checkpoint)."""
    h = hashlib.sha256()
    for name in PARAMS:
        h.update(np.ascontiguousarray(params[name]).tobytes())
    return h.hexdigest()


class Mock:
    """One allocation's life of the trainer."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.total = args.epochs * args.steps_per_epoch
        env_dir = os.environ.get("CONTRACTLANG_CHECKPOINT_DIR")
        self.dir = Path(args.checkpoint_dir or env_dir or "mock-checkpoints")
        self.log_path = Path(args.log) if args.log else self.dir / "mock.log"
        self.alloc = os.environ.get("CONTRACTLANG_ALLOC_ID", "")
        self.events = os.environ.get("CONTRACTLANG_EVENTS") if args.events else None
        self.slow = _slow_steps(args.slow_checkpoint)
        self.noticed = False
        rng = np.random.default_rng([args.seed, 0])
        self.teacher = rng.standard_normal((args.features, 1)) / np.sqrt(args.features)

    # ------------------------------------------------------------------ reporting

    def report(self, word: str, *rest: object, **fields: object) -> None:
        """One protocol message: a stdout line, or an NDJSON line in the events file."""
        if self.events:
            line = json.dumps({"event": word, **fields}) + "\n"
            with open(self.events, "a", encoding="utf-8") as f:
                f.write(line)
                f.flush()
            return
        text = " ".join([PREFIX, word, *(str(r) for r in rest)]) + "\n"
        os.write(1, text.encode())

    def log(self, event: str, **fields: object) -> None:
        record = {"alloc": self.alloc, "pid": os.getpid(), "event": event, **fields}
        fd = os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, (json.dumps(record) + "\n").encode())
        finally:
            os.close(fd)

    # ------------------------------------------------------------------ training

    def fresh(self) -> State:
        a = self.args
        rng = np.random.default_rng([a.seed, 1])
        return State(
            0,
            {
                "w1": rng.standard_normal((a.features, a.width)) / np.sqrt(a.features),
                "b1": np.zeros(a.width),
                "w2": rng.standard_normal((a.width, 1)) / np.sqrt(a.width),
                "b2": np.zeros(1),
            },
        )

    def batch(self, step: int | None, n: int | None = None) -> tuple[F64, F64]:
        """The batch of ``step`` (``None``: the held-out validation set)."""
        key = [self.args.seed, 3] if step is None else [self.args.seed, 2, step]
        rng = np.random.default_rng(key)
        x = rng.standard_normal((n or self.args.batch, self.args.features))
        return x, np.tanh(x @ self.teacher)

    def loss(self, state: State, x: F64, y: F64) -> float:
        p = state.params
        pred = np.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
        return float(np.mean((pred - y) ** 2))

    def train_step(self, state: State) -> None:
        """One SGD step on the batch of step ``state.step + 1``."""
        p = state.params
        x, y = self.batch(state.step + 1)
        h = np.tanh(x @ p["w1"] + p["b1"])
        err = (h @ p["w2"] + p["b2"] - y) * (2.0 / len(x))
        dh = (err @ p["w2"].T) * (1.0 - h * h)
        lr = 0.05
        p["w2"] -= lr * (h.T @ err)
        p["b2"] -= lr * err.sum(axis=0)
        p["w1"] -= lr * (x.T @ dh)
        p["b1"] -= lr * dh.sum(axis=0)
        state.step += 1

    # ------------------------------------------------------------------ checkpoints

    def path_of(self, step: int) -> Path:
        return self.dir / f"ckpt-{step:06d}.npz"

    def save(self, state: State) -> None:
        """Serialise, report (step, path, sha256), then write atomically: temp file, fsync,
        rename. A slow save writes its bytes in pieces over ``--slow-seconds``."""
        buf = io.BytesIO()
        arrays = {"step": np.array(state.step), "checksum": np.array(checksum(state.params))}
        savez: Any = np.savez  # its stub reads `**arrays` as its own keyword arguments
        savez(buf, **arrays, **state.params)
        data = buf.getvalue()
        digest = hashlib.sha256(data).hexdigest()
        path = self.path_of(state.step)
        self.report(
            "checkpoint", state.step, path, digest, step=state.step, path=str(path), sha256=digest
        )
        self.log("saving", step=state.step, path=path.name)
        tmp = path.with_name(path.name + ".tmp")
        slow = self.slow is True or (isinstance(self.slow, set) and state.step in self.slow)
        pieces = 20 if slow else 1
        size = -(-len(data) // pieces)
        with open(tmp, "wb") as f:
            for i in range(pieces):
                f.write(data[i * size : (i + 1) * size])
                if slow:
                    f.flush()
                    time.sleep(self.args.slow_seconds / pieces)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        self.log("saved", step=state.step, path=path.name)

    def restore(self) -> State:
        """The newest checkpoint whose stored checksum holds, or a fresh start."""
        for stale in self.dir.glob("*.tmp"):
            self.log("removed partial", path=stale.name)
            stale.unlink()
        for path in sorted(self.dir.glob("ckpt-*.npz"), reverse=True):
            try:
                with np.load(path) as z:
                    params = {k: np.array(z[k]) for k in PARAMS}
                    step, stored = int(z["step"]), str(z["checksum"])
            except (OSError, ValueError, KeyError) as exc:
                self.log("unreadable", path=path.name, error=str(exc))
                continue
            if checksum(params) != stored:
                self.log("corrupt", path=path.name)
                continue
            self.log("restored", step=step, path=path.name)
            self.report("restored", step, step=step)
            return State(step, params)
        self.log("fresh start")
        return self.fresh()

    # ------------------------------------------------------------------ the run

    def on_notice(self, _signum: int, _frame: FrameType | None) -> None:
        self.noticed = True

    def run(self) -> int:
        self.dir.mkdir(parents=True, exist_ok=True)
        signal.signal(signal.SIGTERM, self.on_notice)
        self.log("start", total=self.total)
        self.report("total", self.total, steps=self.total)
        state = self.restore()
        pace = self.args.step_seconds
        logged_notice = False
        while state.step < self.total:
            began = time.monotonic()
            self.train_step(state)
            self.log("step", step=state.step)
            self.report("step", state.step, step=state.step)
            if self.args.fail_at is not None and state.step >= self.args.fail_at:
                self.log("failing", step=state.step)
                print(f"mock: failing on purpose after step {state.step}", file=sys.stderr)
                return 1
            if state.step % self.args.steps_per_epoch == 0:
                self.save(state)
            if self.noticed and not logged_notice:
                logged_notice = True
                self.log("notice", step=state.step, action=self.args.on_notice)
                if self.args.on_notice == "checkpoint":
                    if state.step % self.args.steps_per_epoch:
                        self.save(state)
                    self.log("exit on notice", step=state.step)
                    return 0
            rest = pace - (time.monotonic() - began)
            if rest > 0:
                time.sleep(rest)
        x, y = self.batch(None, n=2048)
        val = self.loss(state, x, y)
        ok = val < self.args.accept_loss
        self.log("validation", loss=val, accepted=ok)
        print(f"mock: validation loss {val:.5f} ({'accepted' if ok else 'rejected'})")
        sys.stdout.flush()
        self.report("accepted" if ok else "rejected")
        return 0


def _slow_steps(text: str) -> set[int] | bool:
    """``--slow-checkpoint``: `all`, or comma-separated steps (empty: none)."""
    text = text.strip()
    if text == "all":
        return True
    return {int(s) for s in text.split(",") if s.strip()}


def main(argv: Sequence[str] | None = None) -> int:
    return Mock(parse_args(argv)).run()


if __name__ == "__main__":
    sys.exit(main())
