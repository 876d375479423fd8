"""The JSON document of ``contractlang simulate --format json`` (schema in docs/simulate.md).

Stable, as ``evaluate``'s: the same inputs give the same bytes — no input paths, no clock
times, every exact number a string. Each contract is the object ``evaluate`` writes for it,
with ``trace`` (which simulated trace it was evaluated on) and ``monte_carlo``: for each
figure its ``value`` and ``ci95`` as ``[low, high]``.
"""

from __future__ import annotations

import json
from decimal import Decimal
from fractions import Fraction
from typing import Any

from contractlang.evaluate.results import DisplayUnit
from contractlang.render.common.numbers import measure, seconds_str
from contractlang.render.evaluate.json import contract_to_json
from contractlang.simulate.results import Interval, MonteCarlo, SimulatedContract, Simulation
from contractlang.simulate.workload import Workload

SCHEMA = "contractlang.simulate/1"


def simulation_to_json(sim: Simulation) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "verdict": sim.verdict,
        "workload": workload_to_json(sim),
        "traces": [
            {
                "trace": t.index,
                "promises": {
                    "notice_seconds": seconds_str(t.promises.notice_us),
                    "restart_seconds": seconds_str(t.promises.restart_us),
                },
                "contracts": list(t.contracts),
                "events": t.events,
                "gave_up": t.gave_up,
            }
            for t in sim.traces
        ],
        "baseline": sim.baseline,
        "ranking": None
        if sim.ranking is None
        else {
            "by": sim.ranking.by,
            "budget": sim.ranking.budget,
            "order": list(sim.ranking.order),
        },
        "contracts": [simulated_contract_to_json(c) for c in sim.contracts],
        "warnings": [w.to_json() for w in sim.warnings],
    }


def render_simulation_json(sim: Simulation) -> str:
    return json.dumps(simulation_to_json(sim), indent=2, ensure_ascii=False) + "\n"


def _text(v: Decimal | None) -> str | None:
    return None if v is None else str(v)


def workload_to_json(sim: Simulation) -> dict[str, Any]:
    w: Workload = sim.workload
    reclaims: dict[str, Any]
    if w.reclaims.rate_per_hour is not None:
        reclaims = {"process": "poisson", "rate_per_hour": str(w.reclaims.rate_per_hour)}
    else:
        a = sim.availability
        reclaims = {
            "process": "availability",
            "format": a.format if a else None,
            "nodes": w.reclaims.nodes,
            "span_seconds": seconds_str(a.span_us) if a else None,
            "available_share": None
            if a is None
            else measure(a.available_fraction(w.reclaims.nodes), _PLAIN),
        }
    reclaims["notice_breach_chance"] = str(w.reclaims.notice_breach_chance)
    rep = w.replacement
    return {
        "runs": w.runs,
        "seed": w.seed,
        "gpus": w.gpus,
        "sku": w.sku,
        "capacity": w.capacity,
        "price": _text(w.price),
        "start": w.start.isoformat(),
        "total_steps": w.total_steps,
        "step_seconds": str(w.step_seconds),
        "checkpoint_every_steps": w.checkpoint_every_steps,
        "save_seconds": str(w.save_seconds),
        "restore_seconds": str(w.restore_seconds),
        "checkpoint_on_notice": w.checkpoint_on_notice,
        "invalid_checkpoint_chance": str(w.invalid_checkpoint_chance),
        "accept_chance": str(w.accept_chance),
        "max_attempts": w.max_attempts,
        "max_allocations": w.max_allocations,
        "reclaims": reclaims,
        "replacement": None
        if rep is None
        else {
            "distribution": rep.distribution,
            "scale_minutes": str(rep.scale_minutes),
            "sigma": str(rep.shape) if rep.distribution == "lognormal" else None,
            "restart_breach_chance": str(rep.restart_breach_chance),
        },
    }


_PLAIN = DisplayUnit("", Fraction(1), "plain")


def simulated_contract_to_json(c: SimulatedContract) -> dict[str, Any]:
    out = contract_to_json(c.result)
    out["trace"] = c.trace.index
    out["monte_carlo"] = monte_carlo_to_json(c)
    out["rank"] = c.rank
    out["delta"] = delta_to_json(c)
    return out


def delta_to_json(c: SimulatedContract) -> dict[str, Any] | None:
    """The contract's figures minus the baseline's, each with the 95 % interval of the paired
    bootstrap and whether that interval holds zero (None for the baseline itself)."""
    d = c.delta
    if d is None:
        return None
    s = c.result.settings
    money = DisplayUnit(s.currency, Fraction(1), "money")

    def diff(i: Interval, unit: DisplayUnit) -> dict[str, Any]:
        return {**_figure(i, unit, s.precision), "within_noise": i.holds_zero}

    return {
        "baseline": d.baseline,
        "cost_per_accepted_run": {"mean": diff(d.mean_cost, money), "p95": diff(d.p95_cost, money)},
        "requirements": [
            {
                "budget": r.budget,
                "require": r.requirement.text,
                "line": r.requirement.line,
                "unit": r.requirement.unit.label,
                **diff(i, r.requirement.unit),
            }
            for r, i in zip(c.monte_carlo.requirements, d.requirements, strict=True)
        ],
    }


def monte_carlo_to_json(c: SimulatedContract) -> dict[str, Any]:
    mc: MonteCarlo = c.monte_carlo
    s = c.result.settings
    money = DisplayUnit(s.currency, Fraction(1), "money")
    return {
        "runs": mc.runs,
        "resamples": mc.resamples,
        "confidence": "0.95",
        "cost_per_accepted_run": {
            "mean": _figure(mc.mean_cost, money, s.precision),
            "p95": _figure(mc.p95_cost, money, s.precision),
        },
        "requirements": [
            {
                "budget": r.budget,
                "require": r.requirement.text,
                "line": r.requirement.line,
                "unit": r.requirement.unit.label,
                **_figure(r.interval, r.requirement.unit, s.precision),
                "verdict": r.requirement.verdict,
                "needs_more_runs": r.needs_more_runs,
            }
            for r in mc.requirements
        ],
    }


def _figure(i: Interval, unit: DisplayUnit, precision: int) -> dict[str, Any]:
    ci = None
    if i.low is not None and i.high is not None:
        ci = [measure(i.low, unit, precision), measure(i.high, unit, precision)]
    return {"value": measure(i.value, unit, precision), "ci95": ci}
