"""Benchmark: `import focus` and `import sacct` against hand-written polars readers of the same
files, with peak memory.

    python bench/bench_import.py                      # 1M FOCUS rows, 1M sacct rows
    python bench/bench_import.py --rows 100000        # smaller
    python bench/bench_import.py --sample             # FOCUS: the real sample, repeated
    python bench/bench_import.py --old 100000         # also the row-by-row readers, at 100k

Each step runs in a fresh child process (its peak RSS, ``VmHWM``, is its own), in ``--repeat``
rounds (default 3) of every step, and the table shows the median. The baselines are what a
careful engineer would write in an afternoon with polars: the same columns read, nulls,
decimals, times and run keys mapped to the same trace columns — but none of the checks an
import makes (field counts, exact decimals, DST gaps and repeats, row-by-row reasons, notes),
so the ratio is the price of those. After the rounds the script checks that each import's
events agree with its baseline's (rows, runs, and the exact sum of the amounts).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import polars as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
SAMPLE = ROOT.parent / "shared" / "realdata" / "focus" / "focus_sample.csv"


def peak_rss_gb() -> float:
    """This process's peak resident memory (``VmHWM``)."""
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1e6
    return 0.0


# --------------------------------------------------------------------------- the files

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


# --------------------------------------------------------------------------- the steps


def focus_polars(path: Path, key: str = "slurm_job") -> pl.DataFrame:
    """The hand-written baseline: FOCUS CSV → invoice lines, no checks."""

    def val(name: str) -> pl.Expr:
        c = pl.col(name).str.strip_chars()
        return pl.when(c.str.to_uppercase().is_in(["", "NULL"])).then(None).otherwise(c)

    money = pl.Decimal(38, 18)
    categories = {c.lower(): c for c in ("Usage", "Purchase", "Tax", "Credit", "Adjustment")}
    run = val("Tags").str.json_path_match(f"$.{key}")
    start = val("ChargePeriodStart").str.to_datetime(
        "%Y-%m-%d %H:%M:%S", time_zone="UTC", strict=False
    )
    category = val("ChargeCategory").str.to_lowercase()
    credit = (category == "credit") | val("BilledCost").str.starts_with("-")
    lf = pl.scan_csv(path, infer_schema=False)
    out = lf.select(
        pl.coalesce(run, pl.lit("unattributed")).alias("run_id"),
        pl.lit(None, dtype=pl.String).alias("alloc_id"),
        start.alias("ts"),
        pl.lit("invoice").alias("source"),
        pl.when(credit).then(pl.lit("credit")).otherwise(pl.lit("charge")).alias("event"),
        val("BilledCost").cast(money).alias("amount"),
        category.replace_strict(categories, default=None).alias("charge_category"),
        val("EffectiveCost").cast(money, strict=False).alias("effective_cost"),
        val("ListCost").cast(money, strict=False).alias("list_cost"),
        val("PricingCategory").alias("pricing_category"),
        val("BillingCurrency").alias("billing_currency"),
        val("ResourceId").alias("resource_id"),
        pl.int_range(1, pl.len() + 1).alias("source_row"),
    )
    return out.collect()


def sacct_polars(path: Path) -> pl.DataFrame:
    """The hand-written baseline: sacct → allocation events, no checks."""
    lf = pl.scan_csv(path, separator="|", quote_char=None, infer_schema=False)
    jobs = lf.filter(~pl.col("JobID").str.contains(".", literal=True)).with_row_index("row", 1)

    def ts(name: str) -> pl.Expr:
        return (
            pl.col(name)
            .str.to_datetime("%Y-%m-%dT%H:%M:%S", strict=False)
            .dt.replace_time_zone("America/New_York", ambiguous="earliest", non_existent="null")
            .dt.convert_time_zone("UTC")
        )

    jobs = jobs.with_columns(
        gpus=pl.col("AllocTRES").str.extract(r"gres/gpu=([0-9]+)").cast(pl.Int64),
        attempt=pl.col("row").rank("ordinal").over("JobID"),
        submit=ts("Submit"),
        start=ts("Start"),
        end=ts("End"),
        reason=pl.col("State")
        .str.split(" ")
        .list.first()
        .replace_strict({"PREEMPTED": "reclaimed", "NODE_FAIL": "failed"}, default="released"),
    ).with_columns(alloc_id=pl.format("{}#{}", "JobID", "attempt"))
    base = [pl.col("JobID").alias("run_id"), "alloc_id", pl.lit("scheduler").alias("source")]
    none = pl.lit(None, pl.Int64)
    parts = [
        jobs.select(*base, "row", ts=pl.col("submit"), event=pl.lit("requested"), gpus=none),
        jobs.select(*base, "row", ts=pl.col("start"), event=pl.lit("started"), gpus="gpus"),
        jobs.select(*base, "row", ts=pl.col("end"), event=pl.col("reason"), gpus=none),
    ]
    return pl.concat(parts).sort("row", maintain_order=True).collect()


def step(name: str, path: Path, size: int) -> dict[str, Any]:
    """In a child process: one step (its imports done before the clock starts), its events
    summarised for the check."""
    key = "tag:application" if "sample" in path.name else "tag:slurm_job"
    run: Any
    if name == "focus polars":

        def run(p: Path) -> pl.DataFrame:
            return focus_polars(p, key.removeprefix("tag:"))
    elif name == "focus contractlang":
        from contractlang.importers import import_focus  # noqa: PLC0415

        def run(p: Path) -> pl.DataFrame:
            return import_focus(p, key).events
    elif name == "focus row by row":
        from support.focus_rowwise import import_focus_rowwise  # noqa: PLC0415

        def run(p: Path) -> pl.DataFrame:
            return import_focus_rowwise(p, key).events
    elif name == "sacct polars":
        run = sacct_polars
    elif name == "sacct contractlang":
        from contractlang.importers import import_sacct  # noqa: PLC0415

        def run(p: Path) -> pl.DataFrame:
            return import_sacct(p, "America/New_York").events
    elif name == "sacct row by row":
        from support.sacct_rowwise import import_sacct_rowwise  # noqa: PLC0415

        def run(p: Path) -> pl.DataFrame:
            return import_sacct_rowwise(p, "America/New_York").events
    else:
        raise ValueError(name)
    from contractlang.trace.sums import exact_column_total  # noqa: PLC0415

    t = time.perf_counter()
    ev = run(path)
    seconds = time.perf_counter() - t
    amount = None
    if "amount" in ev.columns:
        amount = str(exact_column_total(ev, "amount").normalize())
    return {
        "step": name,
        "size": size,
        "seconds": seconds,
        "peak_rss_gb": peak_rss_gb(),
        "events": ev.height,
        "runs": ev.get_column("run_id").n_unique(),
        "amount": amount,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="FOCUS and sacct rows")
    parser.add_argument(
        "--old", type=int, default=0, help="also the row-by-row readers, at this many rows"
    )
    parser.add_argument("--sample", action="store_true", help="FOCUS: the real sample, repeated")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--only", choices=["focus", "sacct"], help="one adapter only")
    parser.add_argument("--step", help=argparse.SUPPRESS)
    parser.add_argument("--file", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.step:
        print(json.dumps(step(args.step, args.file, args.size)))
        return
    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        work = Path(tmp)
        plan: list[tuple[str, Path, int]] = []
        for adapter in ("focus", "sacct"):
            if args.only and adapter != args.only:
                continue
            sizes = [args.rows] + ([args.old] if args.old else [])
            for size in sizes:
                sample = "sample-" if args.sample and adapter == "focus" else ""
                path = work / f"{adapter}-{sample}{size}.{'csv' if adapter == 'focus' else 'txt'}"
                t = time.perf_counter()
                if adapter == "sacct":
                    write_sacct(path, size, args.seed)
                elif args.sample:
                    write_focus_sample(path, size)
                else:
                    write_focus(path, size, args.seed)
                mb = path.stat().st_size / 1e6
                print(f"wrote {path.name}: {mb:,.0f} MB in {time.perf_counter() - t:.0f} s")
                names = [f"{adapter} polars", f"{adapter} contractlang"]
                if size == args.old:
                    names.append(f"{adapter} row by row")
                plan += [(n, path, size) for n in names]
        results: dict[tuple[str, int], list[dict[str, Any]]] = {}
        for r in range(args.repeat):
            for name, path, size in plan:
                if name.endswith("row by row") and r > 0:
                    continue  # minutes a round: once is enough
                cmd = [
                    sys.executable,
                    __file__,
                    "--step",
                    name,
                    "--file",
                    str(path),
                    "--size",
                    str(size),
                ]
                proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
                if proc.returncode != 0:
                    sys.exit(f"{name} failed:\n{proc.stderr}")
                results.setdefault((name, size), []).append(
                    json.loads(proc.stdout.splitlines()[-1])
                )
        print(f"\n{'step':<22} {'rows':>10} {'seconds':>8} {'× polars':>9} {'peak RSS GB':>12}")
        for (name, size), runs in results.items():
            adapter = name.split()[0]
            base = statistics.median(r["seconds"] for r in results[(f"{adapter} polars", size)])
            s = statistics.median(r["seconds"] for r in runs)
            rss = max(r["peak_rss_gb"] for r in runs)
            print(f"{name:<22} {size:>10,} {s:>8.2f} {s / base:>9.1f} {rss:>12.2f}")
        for (name, size), runs in results.items():
            adapter = name.split()[0]
            base = results[(f"{adapter} polars", size)][0]
            mine = runs[0]
            if mine["events"] != base["events"] or mine["amount"] != base["amount"]:
                sys.exit(f"{name} at {size:,} rows disagrees with the baseline: {mine} vs {base}")
        print("\nevery import agrees with its baseline (events, amounts)")
        for runs in results.values():
            for r in runs:
                print(json.dumps(r))


if __name__ == "__main__":
    main()
