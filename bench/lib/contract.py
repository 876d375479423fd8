"""The contract the evaluation benchmarks compute, and its hand translation's constants.

:data:`CONTRACT` is what ``contractlang`` evaluates; the baselines (:mod:`lib.polars_baseline`,
:mod:`lib.duckdb_baseline`) compute the same contract from the constants below, written by hand.
The K-contract steps add :data:`VARIANTS` (:func:`terms_text`).
"""

from __future__ import annotations

#: The contract every engine computes. It exercises the main machinery: a rate from
#: ``trace.price`` with fallbacks, an increment and a minimum, a whole-allocation exclusion, a
#: duration exclusion of a derived fact against a promise, a credit on ``charge`` and one on a
#: duration, a money cap per run (so the implicit cap at the run's gross bites too) and a cap
#: per month (a cut shared among the month's runs by largest remainder).
CONTRACT = """\
contract "bench" {
  currency USD
  rate trace.price per gpu_hour when capacity == spot
  rate 3.90 USD per gpu_hour when sku == "H100-80G"
  rate 1.60 USD per gpu_hour
  billing increment 1 minute
  billing minimum 10 minutes
  promise reclaim notice 30 seconds
  promise restart within 15 minutes
  exclude "reclaimed in the first hour" allocation
    when end_reason == reclaimed and runtime < 1 hour
  exclude "replay after short notice" replayed_time
    when end_reason == reclaimed and notice_lead < promised_notice
  credit "slow replacement" 10% of charge when replacement_wait > promised_restart
  credit "restart delay" 2.10 USD per gpu_hour * gpus * (replacement_wait - 15 minutes)
    when replacement_wait > 15 minutes
  cap credits at 150 USD per run
  cap credits at 5000 USD per month
}
"""

# The same contract, translated by hand for the baselines. Money is in integer cents and time
# in integer microseconds: `rate_cents × gpus × billable_us` is a charge in cent-µs-per-hour,
# so its line in cents is that ÷ 3_600_000_000, rounded once, half away from zero (every
# amount here is ≥ 0, so that is ⌊(2n + d) / 2d⌋).
US = 1_000_000
HOUR_US = 3600 * US
INCREMENT_US = 60 * US  # billing increment 1 minute
MINIMUM_US = 10 * 60 * US  # billing minimum 10 minutes
NOTICE_US = 30 * US  # promise reclaim notice 30 seconds
RESTART_US = 15 * 60 * US  # promise restart within 15 minutes
H100_CENTS = 390  # rate 3.90 USD per gpu_hour when sku == "H100-80G"
OTHER_CENTS = 160  # rate 1.60 USD per gpu_hour
DELAY_CENTS = 210  # credit 2.10 USD per gpu_hour × gpus × (replacement_wait − 15 minutes)
RUN_CAP_CENTS = 150_00  # cap credits at 150 USD per run
MONTH_CAP_CENTS = 5000_00  # cap credits at 5000 USD per month
LOST = ("reclaimed", "failed")
ENDS = ("released", "reclaimed", "failed")

#: Variants for the K-contract step: (name, increment, minimum or None, H100 rate, spot rate or
#: None for ``trace.price``, run cap). Contract i > 0 is variant (i − 1) mod 4.
VARIANTS: tuple[tuple[str, str, str | None, str, str | None, str], ...] = (
    ("per-second", "1 second", None, "4.25", None, "30% of gross"),
    ("per-hour", "1 hour", "1 hour", "3.50", "2.45", "500 USD"),
    ("five-minutes", "5 minutes", "5 minutes", "2.95", None, "10% of gross"),
    ("list-price", "1 minute", "1 minute", "4.10", "2.60", "20 USD"),
)


def contract_text(i: int) -> str:
    """Contract ``i`` of the K-contract step: 0 is :data:`CONTRACT`, then the variants.

    >>> contract_text(1).splitlines()[0]
    'contract "bench-1-per-second" {'
    """
    if i == 0:
        return CONTRACT
    name, increment, minimum, h100, spot, run_cap = VARIANTS[(i - 1) % len(VARIANTS)]
    spot_rate = f"{spot} USD" if spot else "trace.price"
    lines = [
        f'contract "bench-{i}-{name}" {{',
        "  currency USD",
        f"  rate {spot_rate} per gpu_hour when capacity == spot",
        f'  rate {h100} USD per gpu_hour when sku == "H100-80G"',
        "  rate 1.75 USD per gpu_hour",
        f"  billing increment {increment}",
        *([f"  billing minimum {minimum}"] if minimum else []),
        "  promise reclaim notice 2 minutes",
        "  promise restart within 30 minutes",
        '  exclude "reclaimed early" allocation',
        "    when end_reason == reclaimed and runtime < 30 minutes",
        '  exclude "replay after short notice" replayed_time',
        "    when end_reason == reclaimed and notice_lead < promised_notice",
        '  credit "replayed work" 50% of replayed_cost when end_reason == failed',
        '  credit "slow replacement" 5% of charge when replacement_wait > promised_restart',
        f"  cap credits at {run_cap} per run",
        "  cap credits at 20000 USD per contract",
        "}",
    ]
    return "\n".join(lines) + "\n"


def terms_text(contracts: int) -> str:
    return "\n".join(contract_text(i) for i in range(contracts))
