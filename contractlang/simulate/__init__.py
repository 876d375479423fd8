"""``contractlang simulate``: the failure budget before any trace exists.

A workload file (TOML) describes the job, the reclaim process and the replacement waits; the
simulated provider keeps each contract's promises; the simulated trace, in the schema of
``docs/trace.md``, is evaluated like any other, and a bootstrap over runs gives the Monte Carlo
error of every figure. See ``docs/simulate.md``::

    from contractlang.simulate import simulate
    sim = simulate(["terms.spot"], "workload.toml")
    sim.contracts[0].monte_carlo.p95_cost    # Interval(value, low, high)
"""

from __future__ import annotations

from contractlang.simulate.results import (
    Interval,
    MonteCarlo,
    RequirementInterval,
    SimulatedContract,
    SimulatedTrace,
    Simulation,
)
from contractlang.simulate.run import simulate
from contractlang.simulate.workload import LoadedWorkload, Workload, load_workload, parse_workload

__all__ = [
    "Interval",
    "LoadedWorkload",
    "MonteCarlo",
    "RequirementInterval",
    "SimulatedContract",
    "SimulatedTrace",
    "Simulation",
    "Workload",
    "load_workload",
    "parse_workload",
    "simulate",
]
