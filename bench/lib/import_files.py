"""FOCUS and ``sacct`` files for the import benchmark: generated, or the real FOCUS sample
repeated."""

from __future__ import annotations

import random
from pathlib import Path

SAMPLE = Path(__file__).resolve().parents[3] / "shared" / "realdata" / "focus" / "focus_sample.csv"

FOCUS_HEADER = [
    "BilledCost", "EffectiveCost", "ListCost", "ChargeCategory", "ChargeClass",
    "ChargePeriodStart", "ChargePeriodEnd", "PricingCategory", "ChargeFrequency",
    "PricingQuantity", "PricingUnit", "ConsumedQuantity", "ConsumedUnit", "BillingCurrency",
    "ResourceId", "SkuId", "ChargeDescription", "ProviderName", "ServiceName", "InvoiceId",
    "BillingAccountId", "RegionId", "AvailabilityZone", "Tags",
]  # fmt: skip


def write_focus(path: Path, rows: int, seed: int) -> None:
    """A month of hourly FOCUS lines for a GPU fleet: 2,000 instances, each tagged with the
    Slurm job it ran; amounts with 10 places; a few credits; nulls written as NULL."""
    rng = random.Random(seed)
    instances = [f"i-{k:08x}" for k in range(2000)]
    with path.open("w", encoding="utf-8", newline="") as fh:
        fh.write(",".join(f'"{h}"' for h in FOCUS_HEADER) + "\n")
        for k in range(rows):
            inst = instances[k % len(instances)]
            hour = (k // len(instances)) % 720
            start = f"2025-03-{1 + hour // 24:02d} {hour % 24:02d}:00:00"
            end = f"2025-03-{1 + (hour + 1) // 24:02d} {(hour + 1) % 24:02d}:00:00"
            if hour == 719:
                end = "2025-04-01 00:00:00"
            credit = rng.random() < 0.01
            cost = f"{rng.uniform(0.5, 40):.10f}"
            billed = f"-{cost}" if credit else cost
            job = 7000 + (k * 7919) % 50_000
            tags = f'{{"slurm_job": "{job}", "team": "ml-{job % 9}", "cluster": "gpu-east"}}'
            values = [
                billed, billed, f"{float(cost) * 1.2:.10f}", "Credit" if credit else "Usage",
                "NULL", start, end, "Dynamic" if k % 3 else "Standard", "Usage-Based",
                "1", "Hours", "1", "Hours", "USD", inst, "p5.48xlarge",
                "H100 spot, per instance-hour", "AWS", "Amazon EC2", "INV-2025-03",
                "123456789012", "us-east-1", "us-east-1a", tags,
            ]  # fmt: skip
            fh.write(",".join('"' + v.replace('"', '""') + '"' for v in values) + "\n")


def write_focus_sample(path: Path, rows: int) -> None:
    """The real FOCUS sample's 1,000 rows, repeated to ``rows`` rows (the review's file)."""
    header, _, body = SAMPLE.read_bytes().partition(b"\n")
    lines = body.splitlines(keepends=True)
    with path.open("wb") as fh:
        fh.write(header + b"\n")
        for k in range(rows):
            fh.write(lines[k % len(lines)])


SACCT_HEADER = (
    "JobID|JobIDRaw|JobName|Partition|QOS|State|Submit|Start|End|Elapsed|AllocTRES|Restarts|"
    "NodeList"
)


def write_sacct(path: Path, rows: int, seed: int) -> None:
    """``sacct --parsable2 --duplicates`` for a month of a GPU cluster in New York time: jobs
    of 1–16 nodes, each record followed by its `.batch` and `.extern` steps; one job in 20
    preempted and requeued, one in 200 hit by a node failure."""
    rng = random.Random(seed)
    t0 = 1_740_805_200  # 2025-03-01 00:00 EST, as a UTC epoch
    written = 0
    job = 100_000
    with path.open("w", encoding="utf-8") as fh:
        fh.write(SACCT_HEADER + "\n")
        while written < rows:
            job += 1
            gpus = 8 * rng.choice([1, 1, 1, 2, 4, 16])
            attempts = 2 if rng.random() < 0.05 else 1
            submit = t0 + rng.randrange(0, 30 * 86_400)
            for a in range(attempts):
                start = submit + rng.randrange(5, 3600)
                end = start + rng.randrange(600, 12 * 3600)
                last = a == attempts - 1
                state = "COMPLETED" if last else "PREEMPTED"
                if last and rng.random() < 0.005:
                    state = "NODE_FAIL"
                tres = (
                    f"billing={gpus * 8},cpu={gpus * 8},gres/gpu:h100={gpus},gres/gpu={gpus},"
                    f"mem=1000G,node={max(1, gpus // 8)}"
                )
                s = end - start
                el = f"{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"
                times = "|".join(_local(x) for x in (submit, start, end))
                record = f"{state}|{times}|{el}|{tres}"
                fh.write(f"{job}|{job}|train-{job}|gpu-spot|normal|{record}|{a}|gpu-a[01-02]\n")
                steps = f"{'COMPLETED' if last else 'CANCELLED'}|{times}|{el}|{tres}"
                for step in ("batch", "extern"):
                    fh.write(f"{job}.{step}|{job}.{step}|{step}|||{steps}||gpu-a01\n")
                written += 3
                submit = end + rng.randrange(1, 600)


def _local(epoch: int) -> str:
    from datetime import UTC, datetime  # noqa: PLC0415
    from zoneinfo import ZoneInfo  # noqa: PLC0415

    return (
        datetime.fromtimestamp(epoch, UTC)
        .astimezone(ZoneInfo("America/New_York"))
        .strftime("%Y-%m-%dT%H:%M:%S")
    )
