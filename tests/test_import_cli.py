"""`contractlang import` at the command line: outputs by extension, rejects with their reasons,
nothing overwritten by surprise, bad flags and bad files as exit 2 with a message."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest
from support.cli import no_traceback, run

from contractlang.errors import ContractlangError
from contractlang.importers.frame import validated
from contractlang.trace import load_trace

DATA = Path(__file__).parent / "data"
SACCT = DATA / "sacct_requeue.txt"


def test_import_sacct_writes_the_trace_and_reports(tmp_path: Path) -> None:
    out = tmp_path / "jobs.parquet"
    result = run("import", "sacct", SACCT, "--tz", "America/New_York", "--out", out)
    assert result.exit_code == 0, result.output
    text = result.output
    assert "18 rows read: every one mapped or rejected" in text
    assert "wrote 22 events (5 runs, 7 allocations) to" in text
    assert all(len(line) <= 80 for line in text.splitlines())
    trace = load_trace(out)
    assert trace.summary.allocations == 7
    assert "slurm_state" in trace.extras


@pytest.mark.parametrize("suffix", [".csv", ".ndjson"])
def test_csv_and_ndjson_by_extension_read_back_the_same(tmp_path: Path, suffix: str) -> None:
    out = tmp_path / f"jobs{suffix}"
    assert run("import", "sacct", SACCT, "--tz", "America/New_York", "--out", out).exit_code == 0
    back = load_trace(out).events.select("run_id", "alloc_id", "ts", "event", "gpus")
    ref_path = tmp_path / "ref.parquet"
    run("import", "sacct", SACCT, "--tz", "America/New_York", "--out", ref_path)
    ref = load_trace(ref_path).events.select("run_id", "alloc_id", "ts", "event", "gpus")
    assert back.equals(ref)


def test_rejects_are_written_with_their_reasons(tmp_path: Path) -> None:
    src = tmp_path / "jobs.txt"
    src.write_text(
        "JobID|State|Start|End|AllocTRES\n"
        "1|COMPLETED|2025-01-01T00:00:00|2025-01-01T01:00:00|gres/gpu=8\n"
        "2|COMPLETED|2025-01-01T00:00:00|2025-01-01T01:00:00|cpu=4\n"
    )
    rejects = tmp_path / "rejects.csv"
    result = run("import", "sacct", src, "--tz", "UTC", "--rejects", rejects)
    assert result.exit_code == 0, result.output
    assert "rejected      1  written to" in result.output
    assert "row 2     I016  no GPUs" in result.output
    frame = pl.read_csv(rejects, infer_schema=False)
    assert frame.rows() == [
        (
            "2",
            "I016",
            "no GPUs: `AllocTRES` `cpu=4` has no `gres/gpu`",
            "2|COMPLETED|2025-01-01T00:00:00|2025-01-01T01:00:00|cpu=4",
        )
    ]
    # the default output is the input's name with .parquet ...
    assert (tmp_path / "jobs.parquet").exists()
    # ... and a second import will not overwrite it
    again = run("import", "sacct", src, "--tz", "UTC")
    assert again.exit_code == 2
    assert "already exists" in again.output
    # without --rejects the report says how to keep them
    kept = run("import", "sacct", src, "--tz", "UTC", "--out", tmp_path / "b.parquet")
    assert "pass `--rejects PATH` to keep them" in kept.output


def test_bad_flags_and_files_exit_2_with_a_message(tmp_path: Path) -> None:
    out = tmp_path / "t.parquet"
    ny, utc = ["--tz", "America/New_Yrok"], ["--tz", "UTC"]
    twice = SACCT.with_suffix(".csv")
    inv = tmp_path / "inv.csv"
    inv.write_text("BilledCost,ChargeCategory,ChargePeriodStart,ResourceId\n")
    cases = [
        (["sacct", SACCT, *ny, "--out", out], "did you mean `America/New_York`?"),
        (["sacct", SACCT, *utc, "--out", tmp_path / "t.txt"], "must end in"),
        (["sacct", SACCT, *utc, "--out", tmp_path / "no" / "t.parquet"], "does not exist"),
        (["sacct", SACCT, *utc, "--capacity", "spott", "--out", out], "did you mean `spot`?"),
        (["sacct", SACCT, *utc, "--open-at", "2025-01-01", "--out", out], "no UTC offset"),
        (["sacct", tmp_path / "none.txt", *utc, "--out", out], "error[I001]"),
        (["focus", SACCT, "--run-from", "tags:x", "--out", out], "neither `tag:KEY` nor"),
        (["focus", SACCT, "--run-from", "resource", "--out", out], "error[I003]"),
        (["sacct", SACCT, *utc, "--out", twice, "--rejects", twice], "is the same file as"),
        (["focus", inv, "--run-from", "resource", "--out", inv], "would overwrite the input"),
    ]
    for args, message in cases:
        result = run("import", *args)
        no_traceback(result)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output, (args, result.output)
    assert not out.exists()


def test_import_attempts_and_focus_at_the_command_line(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs.json"
    jobs.write_text(
        '[{"id": "j1", "num_gpus": 4, "attempts": [{"start_time": "2025-01-01 00:00:00",'
        ' "end_time": "2025-01-01 01:00:00"}]}]'
    )
    result = run("import", "attempts", jobs, "--tz", "UTC", "--capacity", "spot")
    assert result.exit_code == 0, result.output
    assert load_trace(tmp_path / "jobs.parquet").summary.allocations == 1
    invoice = tmp_path / "inv.csv"
    invoice.write_text(
        "BilledCost,ChargeCategory,ChargeClass,ChargePeriodStart,Tags\n"
        '12.50,Usage,NULL,2025-01-01T00:00:00Z,"{""run"": ""j1""}"\n'
    )
    result = run("import", "focus", invoice, "--run-from", "tag:run")
    assert result.exit_code == 0, result.output
    lines = load_trace(tmp_path / "inv.parquet").events
    assert lines.select("run_id", "event", "amount").rows() == [("j1", "charge", Decimal("12.50"))]


def test_trace_rule_problems_are_reported_on_the_imported_rows() -> None:
    t = datetime(2025, 1, 1, tzinfo=UTC)
    frame = pl.DataFrame(
        {
            "run_id": ["r1", "r1", "r1"],
            "alloc_id": ["a1", "a1", "a1"],
            "ts": [t, t, t],
            "source": ["scheduler"] * 3,
            "event": ["started", "started", "released"],
            "gpus": [8, 8, None],
            "source_row": [11, 12, 13],
        }
    )
    with pytest.raises(ContractlangError) as exc:
        validated(frame, "jobs.txt", None)
    head, *rest = exc.value.diagnostics
    assert head.code == "I006"
    [d] = [x for x in rest if x.code == "T007"]
    # the second start is imported row 2, from row 12 of jobs.txt; the first from row 11
    assert d.headline() == (
        "jobs.txt: row 12: error[T007]: allocation `a1` starts again; it started at row 11"
    )


def test_values_from_the_file_cannot_steer_the_terminal(tmp_path: Path) -> None:
    invoice = tmp_path / "inv.csv"
    invoice.write_text(
        "BilledCost,ChargeCategory,ChargePeriodStart,Tags\n"
        '"abc\x1b[2J",Usage,2025-01-01T00:00:00Z,"{""run"": ""j1""}"\n'
        '1.00,Usage,2025-01-01T00:00:00Z,"{""run"": ""j\x1b[31m1"\n'
        '2.00,Usage\x07,2025-01-01T00:00:00Z,"{""run"": ""j1""}"\n'
    )
    result = run("import", "focus", invoice, "--run-from", "tag:run")
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output
    assert "\x07" not in result.output
    # each shown as its escape: the reject, the note's detail, the category
    assert "`abc\\x1b[2J` is not a decimal number" in result.output
    assert '`{"run": "j\\x1b[31m1`: not JSON' in result.output
    assert "`Usage\\x07` is not a FOCUS category" in result.output
    jobs = tmp_path / "jobs.txt"
    jobs.write_text(
        "JobID|State|Start|End|AllocTRES\n"
        "1|DONE\x1b[8m|2025-01-01T00:00:00|2025-01-01T01:00:00|gres/gpu=8\n"
    )
    result = run("import", "sacct", jobs, "--tz", "UTC", "--out", tmp_path / "j.parquet")
    assert "\x1b" not in result.output
    assert "unknown job state `DONE\\x1b[8m`" in result.output


def test_a_file_cut_short_is_not_imported(tmp_path: Path) -> None:
    # a copy that stopped mid-line: the last line has fewer fields than the header
    whole = SACCT.read_text()
    cut = tmp_path / "cut.txt"
    cut.write_text(whole[: whole.index("gres/gpu=8") + 10])
    result = run("import", "sacct", cut, "--tz", "UTC", "--out", tmp_path / "c.parquet")
    no_traceback(result)
    assert result.exit_code == 2, result.output
    # the 13 fields of line 2 are cut inside the 11th, AllocTRES
    assert (
        f"error[I003]: `{cut}` ends mid-line, on line 2 (cut short?): its last record has 11 "
        "fields, the header 13"
    ) in result.output
    inv = tmp_path / "inv.csv"
    header = "BilledCost,ChargeCategory,ChargePeriodStart,Tags\n"
    good = '1.00,Usage,2025-01-01T00:00:00Z,"{""run"": ""j1""}"\n'
    for text, message in (
        (header + good + "2.00,Usage,2025-01-0", "ends mid-line, on line 3 (cut short?)"),
        # a quote never closed swallows every line after it into one value, to the file's end
        (header + '2.00,Usage,2025-01-01T00:00:00Z,"{""run"": ""j2""}\n' + good.replace('"', ""),
         "ends inside a quoted value that opens on line 2 (cut short, or a quote never closed?)"),
    ):  # fmt: skip
        inv.write_text(text)
        result = run("import", "focus", inv, "--run-from", "tag:run", "--out", tmp_path / "i.pq")
        no_traceback(result)
        assert result.exit_code == 2, result.output
        assert message in result.output
    assert not (tmp_path / "c.parquet").exists()
    assert not (tmp_path / "i.pq").exists()


def test_blank_lines_are_counted_and_the_rows_keep_their_lines(tmp_path: Path) -> None:
    src = tmp_path / "jobs.txt"
    src.write_text(
        "JobID|State|Start|End|AllocTRES\n"
        "1|COMPLETED|2025-01-01T00:00:00|2025-01-01T01:00:00|gres/gpu=8\n"
        "\n"
        "2|COMPLETED|2025-01-01T00:00:00|2025-01-01T01:00:00|cpu=4\n"
    )
    result = run("import", "sacct", src, "--tz", "UTC")
    assert result.exit_code == 0, result.output
    # 3 rows: row 1 mapped, row 2 blank, row 3 (line 4) rejected
    assert "3 rows read: every one mapped, rejected or blank" in result.output
    assert "  blank         1  nothing on them: row 2\n" in result.output
    assert "row 3     I016  no GPUs" in result.output
    inv = tmp_path / "inv.csv"
    inv.write_text(
        "BilledCost,ChargeCategory,ChargePeriodStart,Tags\r\n"
        "\r\n"
        '1.00,Usage,2025-01-01T00:00:00Z,"{""run"":\r\n""j1""}"\r\n'
        "\r\n"
        '"x",Usage,2025-01-01T00:00:00Z,"{""run"": ""j1""}"\r\n'
    )
    rejects = tmp_path / "rejects.csv"
    result = run("import", "focus", inv, "--run-from", "tag:run", "--rejects", rejects)
    assert result.exit_code == 0, result.output
    # rows: 1 blank, 2 the record over lines 3 and 4 (a line break in its Tags), 3 blank, 4
    assert "4 rows read: every one mapped, rejected or blank" in result.output
    assert "  blank         2  nothing on them: rows 1, 3\n" in result.output
    # the rejected row is written as it stands in the file, its quotes and all
    [(row, code, _, record)] = pl.read_csv(rejects, infer_schema=False).rows()
    assert (row, code, record) == (
        "4",
        "I021",
        '"x",Usage,2025-01-01T00:00:00Z,"{""run"": ""j1""}"',
    )


def test_the_report_counts_in_words(tmp_path: Path) -> None:
    # one of everything: 1 event is not "1 events"
    invoice = tmp_path / "inv.csv"
    invoice.write_text(
        "BilledCost,ChargeCategory,ChargePeriodStart,Tags\n"
        '12.50,Usage,2025-01-01T00:00:00Z,"{""run"": ""j1""}"\n'
    )
    result = run("import", "focus", invoice, "--run-from", "tag:run")
    assert "  mapped        1  charge line\n" in result.output
    assert "wrote 1 event (1 run, 0 allocations) to" in result.output
    jobs = tmp_path / "jobs.txt"
    jobs.write_text(
        "JobID|State|Start|End|AllocTRES\n"
        "1|RUNNING|2025-01-01T00:00:00|Unknown|gres/gpu=8\n"
        "1.batch|RUNNING|2025-01-01T00:00:00|Unknown|gres/gpu=8\n"
    )
    result = run("import", "sacct", jobs, "--tz", "UTC", "--open-at", "2025-01-02T00:00:00Z")
    assert result.exit_code == 0, result.output
    assert "  mapped        1  job step (inside its job's allocation)\n" in result.output
    assert "               1  job record (one allocation)\n" in result.output
    assert "1 allocation is still running: read the trace with `--open-at`" in result.output


def test_an_import_that_makes_nothing_fails(tmp_path: Path) -> None:
    # every row rejected: an empty trace would pass for a month with nothing in it
    src = tmp_path / "jobs.txt"
    src.write_text(
        "JobID|State|Start|End|AllocTRES\n"
        "1|COMPLETED|2025-01-01T00:00:00|2025-01-01T01:00:00|cpu=4\n"
        "2|COMPLETED|2025-01-01T00:00:00|2025-01-01T01:00:00|cpu=8\n"
    )
    rejects = tmp_path / "rejects.csv"
    result = run("import", "sacct", src, "--tz", "UTC", "--rejects", rejects)
    no_traceback(result)
    assert result.exit_code == 2, result.output
    assert (
        f"error[I007]: nothing to import: every row of `{src}` was rejected; no trace was written"
    ) in result.output
    assert f"help: the reasons are in `{rejects}`" in result.output
    assert "row 2     I016  no GPUs" in result.output  # the report says why
    assert not (tmp_path / "jobs.parquet").exists()
    assert pl.read_csv(rejects, infer_schema=False)["row"].to_list() == ["1", "2"]
    # a header and nothing else
    inv = tmp_path / "inv.csv"
    inv.write_text("BilledCost,ChargeCategory,ChargePeriodStart,Tags\n\n")
    result = run("import", "focus", inv, "--run-from", "tag:run")
    assert result.exit_code == 2, result.output
    assert f"nothing to import: `{inv}` has no rows that make events" in result.output
    assert not (tmp_path / "inv.parquet").exists()
    # --run-from a tag no row has: every line would be unattributed
    inv.write_text(
        "BilledCost,ChargeCategory,ChargePeriodStart,Tags\n"
        '1.00,Usage,2025-01-01T00:00:00Z,"{""slurm_job"": ""7""}"\n'
    )
    result = run("import", "focus", inv, "--run-from", "tag:slurm-job")
    assert result.exit_code == 2, result.output
    assert "error[I002]: no row's `Tags` has the key `slurm-job`" in result.output
    assert "did you mean `slurm_job`?" in result.output


def test_a_wide_file_name_is_cut_to_80_cells(tmp_path: Path) -> None:
    # a CJK character takes two terminal cells: the first line is cut by cells, not characters
    from rich.cells import cell_len  # noqa: PLC0415

    src = tmp_path / ("作业记录" * 12 + ".txt")
    src.write_bytes(SACCT.read_bytes())
    result = run(
        "import", "sacct", src, "--tz", "America/New_York", "--out", tmp_path / "j.parquet"
    )
    assert result.exit_code == 0, result.output
    first = result.output.splitlines()[0]
    assert first.endswith("…")
    assert cell_len(first) <= 80
    # (the last line names the output's path, which no width can promise to hold)
    assert all(cell_len(line) <= 80 for line in result.output.splitlines()[:-1])


# --------------------------------------------------------------------------- pricing flags

AUDIT = Path(__file__).resolve().parents[1] / "examples" / "audit" / "sacct-2025-03.txt"


def _started(path: Path) -> pl.DataFrame:
    return (
        load_trace(path)
        .events.filter(pl.col("event") == "started")
        .select("alloc_id", "gpus", "sku", "capacity", "price", "zone")
        .sort("alloc_id")
    )


def test_sku_price_capacity_and_zone_are_written_on_every_start(tmp_path: Path) -> None:
    src = tmp_path / "jobs.txt"
    src.write_text(
        "JobID|State|Start|End|AllocTRES|Partition\n"
        "1|COMPLETED|2025-01-01T00:00:00|2025-01-01T01:00:00|gres/gpu:a100_80=8,gres/gpu=8|spot\n"
        "2|COMPLETED|2025-01-01T00:00:00|2025-01-01T01:00:00|gres/gpu:h100=8,gres/gpu=8|od\n"
        "3|COMPLETED|2025-01-01T00:00:00|2025-01-01T01:00:00|gres/gpu=8|spot\n"
        "4|COMPLETED|2025-01-01T00:00:00|2025-01-01T01:00:00|gres/gpu:l4=2|debug\n"
    )
    out = tmp_path / "j.parquet"
    result = run(
        "import", "sacct", src, "--tz", "UTC", "--out", out,
        "--sku-map", "a100_80=A100-80G", "--sku-map", "h100=H100-80G", "--sku", "GENERIC",
        "--capacity-map", "spot=spot", "--capacity-map", "od=on_demand", "--capacity", "reserved",
        "--price", "2.123456789012345678", "--zone", "us-east-1a",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = _started(out).rows()
    price = Decimal("2.123456789012345678")  # exact: 18 places, no float between
    assert rows == [
        # typed GPUs by the map; a type the map does not name keeps Slurm's name (`l4`);
        # untyped `gres/gpu=8` has no type: `--sku`
        ("1#1", 8, "A100-80G", "spot", price, "us-east-1a"),
        ("2#1", 8, "H100-80G", "on_demand", price, "us-east-1a"),
        ("3#1", 8, "GENERIC", "spot", price, "us-east-1a"),
        # a partition the map does not name gets `--capacity`
        ("4#1", 2, "l4", "reserved", price, "us-east-1a"),
    ]
    words = " ".join(result.output.split())  # the figures' column is as wide as its longest
    assert "allocations of a GPU type `--sku-map` does not map 1 (l4)" in words
    assert "allocations in a partition `--capacity-map` does not map 1" in words
    assert "allocations without a sku 0" in words


def test_sku_alone_names_every_allocation(tmp_path: Path) -> None:
    out = tmp_path / "j.parquet"
    result = run("import", "sacct", AUDIT, "--tz", "America/New_York", "--out", out,
                 "--sku", "H100-80G")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert set(_started(out)["sku"].to_list()) == {"H100-80G"}


def test_import_attempts_takes_sku_price_and_zone(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs.json"
    jobs.write_text(
        '[{"id": "j1", "num_gpus": 4, "attempts": [{"start_time": "2025-01-01 00:00:00",'
        ' "end_time": "2025-01-01 01:00:00"}]}]'
    )
    out = tmp_path / "a.parquet"
    result = run("import", "attempts", jobs, "--tz", "UTC", "--out", out, "--capacity", "spot",
                 "--sku", "V100", "--price", "0.90", "--zone", "eu-west")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert _started(out).rows() == [("j1#1", 4, "V100", "spot", Decimal("0.90"), "eu-west")]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--sku", ""], "`--sku` is empty"),
        (["--sku", "H100\t80G"], "`--sku 'H100\\t80G'` holds a control character"),
        (["--zone", " "], "`--zone` is empty"),
        (["--zone", "us\x1b[2J"], "`--zone 'us\\x1b[2J'` holds a control character"),
        (["--sku-map", "h100"], "`--sku-map h100` is not `TYPE=SKU`"),
        (["--sku-map", "=H100-80G"], "`--sku-map =H100-80G` is not `TYPE=SKU`"),
        (["--sku-map", "h100="], "`--sku-map h100=` is not `TYPE=SKU`"),
        (["--sku-map", "h100=H\x07"], "holds a control character"),
        # a byte that is not UTF-8 in an argument reaches Python as a lone surrogate
        (["--zone", "us\udc85"], "`--zone 'us\\udc85'` holds bytes that are not UTF-8"),
        (["--sku-map", "h100=H\udc85"], "holds bytes that are not UTF-8"),
        (["--sku-map", "h100=A", "--sku-map", "h100=B"],
         "`--sku-map` maps `h100` twice: to `A` and to `B`"),
        # Slurm's types are compared in any case: `H100` is `h100`
        (["--sku-map", "H100=A", "--sku-map", "h100=B"],
         "`--sku-map` maps `h100` twice: to `A` and to `B`"),
        (["--capacity-map", "gpu-spot"], "`--capacity-map gpu-spot` is not `PARTITION=CAPACITY`"),
        (["--capacity-map", "gpu-spot=spott"],
         "`--capacity-map gpu-spot=spott`: `spott` is not a capacity"),
        (["--capacity-map", "a=spot", "--capacity-map", "a=reserved"],
         "`--capacity-map` maps `a` twice: to `spot` and to `reserved`"),
        (["--capacity", "spott"], "`--capacity spott` is not a capacity"),
        (["--price", "-1"], "`--price -1` is not a price per GPU-hour"),
        (["--price", "2,50"], "`--price 2,50` is not a price per GPU-hour"),
        (["--price", "1e3"], "`--price 1e3` is not a price per GPU-hour"),
        (["--price", "0." + "1" * 19], "is not a price per GPU-hour"),
        (["--price", ""], "`--price ` is not a price per GPU-hour"),
        (["--delimiter", ""], "`--delimiter` is empty"),
        (["--delimiter", "|\n"], "`--delimiter '|\\n'` holds a line break"),
        (["--fields", "JobID,,State"], "`--fields JobID,,State` has an empty field name"),
        (["--fields", ""], "`--fields` is empty"),
    ],
)  # fmt: skip
def test_bad_pricing_and_format_flags_are_e502_naming_the_flag(
    tmp_path: Path, flags: list[str], message: str
) -> None:
    out = tmp_path / "j.parquet"
    result = run("import", "sacct", AUDIT, "--tz", "UTC", "--out", out, *flags)
    no_traceback(result)
    assert result.exit_code == 2, result.output
    assert "error[E502]" in result.output
    assert message in result.output
    assert not out.exists()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--sku", ""], "`--sku` is empty"),
        (["--zone", "a\nb"], "holds a control character"),
        (["--sku", "V\udc85"], "`--sku 'V\\udc85'` holds bytes that are not UTF-8"),
        (["--price", "-0.5"], "`--price -0.5` is not a price per GPU-hour"),
    ],
)
def test_bad_attempts_flags_are_e502(tmp_path: Path, flags: list[str], message: str) -> None:
    jobs = tmp_path / "jobs.json"
    jobs.write_text("[]")
    result = run("import", "attempts", jobs, "--tz", "UTC", *flags)
    no_traceback(result)
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_a_capacity_map_needs_a_partition_field(tmp_path: Path) -> None:
    src = tmp_path / "jobs.txt"
    src.write_text("JobID|State|Start|End|AllocTRES\n")
    result = run("import", "sacct", src, "--tz", "UTC", "--capacity-map", "a=spot")
    no_traceback(result)
    assert result.exit_code == 2
    assert "error[I002]: the export has no `Partition` field (needed by `--capacity-map`)" in (
        result.output
    )


@pytest.mark.parametrize(
    ("name", "data", "code", "message"),
    [
        ("noheader.txt", b"7001|COMPLETED|2025-01-01T00:00:00\n", "I003", "has no header"),
        ("cut.txt", b"JobID|State|Start|End|AllocTRES\n1|COMPLETED|2025-01-0", "I003",
         "ends mid-line, on line 2 (cut short?): its last record has 3 fields, the header 5"),
        ("utf16.txt", "JobID|State\n".encode("utf-16"), "I001", "it is UTF-16 text"),
        ("delim.txt", b"JobID;State;Start;End;AllocTRES\n", "I003",
         "is not split at `|`: its first line is field names separated by `;`"),
    ],
)  # fmt: skip
def test_bad_files_exit_2_with_the_code(
    tmp_path: Path, name: str, data: bytes, code: str, message: str
) -> None:
    src = tmp_path / name
    src.write_bytes(data)
    result = run("import", "sacct", src, "--tz", "UTC", "--out", tmp_path / "j.parquet")
    no_traceback(result)
    assert result.exit_code == 2, result.output
    assert f"error[{code}]" in result.output
    assert message in result.output
