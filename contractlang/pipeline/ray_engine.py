"""`evaluate --engine ray`: every shard as a Ray task (``docs/scale.md``).

Each task is :func:`~contractlang.pipeline.shards.run_shard`: it reads its own rows straight
from the trace's files (paths the workers must reach: a shared file system or an object
store URL polars reads), derives their facts and bills them, and returns its runs' sums; the
driver does only the global step. Ray is an optional extra (``pip install
'contractlang[ray]'``), imported here only, inside functions, so nothing else pays for it.

Never a silent fallback: Ray not installed, or an address where no cluster answers, is
E503 (exit 2).
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Sequence
from typing import Any

from contractlang.diagnostics import NO_SPAN, error
from contractlang.errors import ContractlangError
from contractlang.pipeline.shards import Runner, ShardResult, ShardTask, run_shard

#: How long to wait for a cluster's address to answer before saying none does.
CONNECT_TIMEOUT_S = 5.0


def ray_unavailable(message: str, help: str | None = None) -> ContractlangError:
    return ContractlangError([error("E503", message, NO_SPAN, file="contractlang", help=help)])


def _ray() -> Any:
    try:
        # optional and heavy (about 1 s to import): only `--engine ray` loads it
        import ray  # noqa: PLC0415
    except ImportError:
        raise ray_unavailable(
            "`--engine ray` needs Ray, which is not installed",
            help="install it with `pip install 'contractlang[ray]'`, or leave out `--engine ray`",
        ) from None
    return ray


def connect(address: str | None) -> Any:
    """Ray, connected: to the cluster at ``address`` (``host:port`` of its head, ``auto``
    for the one this machine belongs to, or a ``ray://`` client address), else to the Ray
    already started in this process, else a new local one."""
    ray = _ray()
    if address and "://" not in address and address != "auto":
        _answers(address)
    if ray.is_initialized():
        return ray
    try:
        ray.init(address=address, logging_level="ERROR", log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
        raise ray_unavailable(
            f"no Ray cluster answers at `{address or 'a new local Ray'}`: {_first_line(exc)}",
            help="start one (`ray start --head`, `ray up`, or a KubeRay RayCluster) and pass "
            "its head's address with `--ray-address HOST:PORT`",
        ) from None
    return ray


def _answers(address: str) -> None:
    """E503 unless something listens at ``host:port`` (so a wrong address fails at once,
    not after Ray's own minute of retries)."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ray_unavailable(
            f"`--ray-address` must be HOST:PORT, `auto` or a `ray://` address, not `{address}`"
        )
    try:
        with socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        raise ray_unavailable(
            f"no Ray cluster answers at `{address}` ({exc.strerror or 'no answer'})",
            help="check the head's address and port (`ray status` on the head shows them)",
        ) from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def ray_runner(address: str | None = None) -> Runner:
    """A :data:`~contractlang.pipeline.shards.Runner` that runs each shard as a Ray task."""
    ray = connect(address)
    task = ray.remote(run_shard)

    def run(tasks: Sequence[ShardTask], done: Callable[[ShardResult], None]) -> None:
        pending = [task.remote(t) for t in tasks]
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            done(ray.get(ready[0]))

    return run


def cluster_cpus(address: str | None = None) -> int:
    """The CPUs of the cluster (at least 1): Ray runs one task per CPU at once."""
    ray = connect(address)
    return max(1, int(ray.cluster_resources().get("CPU", 1)))
