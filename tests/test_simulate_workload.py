"""The workload file: the example workload reads exactly, and every kind of mistake is reported
with its key and line (exit 2 on the command line), all at once."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from support.cli import no_traceback, run
from support.workloads import Raw, workload, write_workload

from contractlang.diagnostics import render_all
from contractlang.errors import ContractlangError
from contractlang.simulate.workload import load_workload, parse_workload
from contractlang.tomlfile.positions import key_spans

TERMS = 'contract "c" {\n  currency USD\n  rate 2.10 USD per gpu_hour\n}\n'


def problems(text: str, tmp_path: Path | None = None) -> str:
    """The rendered diagnostics of a workload text that must not validate."""
    with pytest.raises(ContractlangError) as info:
        parse_workload(text, "w.toml", base=tmp_path)
    return render_all(info.value.diagnostics, info.value.sources)


def test_the_issue_example_reads_exactly() -> None:
    w = parse_workload(workload(), "w.toml").workload
    assert w.price == Decimal("2.10")  # exact, and at its own scale
    assert str(w.price) == "2.10"
    assert w.step_us == 8_600_000  # 8.6 s
    assert (w.save_us, w.restore_us) == (40_000_000, 90_000_000)
    assert w.reclaims.rate_per_hour == Decimal("0.2")
    assert w.replacement is not None
    assert (w.replacement.distribution, w.replacement.scale_minutes) == ("lognormal", 12)
    assert w.replacement.shape == 1  # the default sigma
    assert (w.max_attempts, w.accept_chance, w.checkpoint_on_notice) == (3, Decimal("0.9"), True)


# each bad file, the headline of its diagnostic (file:line:col: error[CODE]: message)
BAD = {
    "unknown key": (
        workload().replace("checkpoint_on_notice", "chekpoint_on_notice"),
        "w.toml:12:1: error[E602]: unknown key `chekpoint_on_notice`",
        "help: did you mean `checkpoint_on_notice`?",
    ),
    "unknown key in a table": (
        workload().replace("rate_per_hour", "rate_per_hr"),
        "w.toml:18:1: error[E602]: unknown key `rate_per_hr` in `[reclaims]`",
        "help: did you mean `rate_per_hour`?",
    ),
    "wrong type": (
        workload(runs=Raw('"2000"')),
        'w.toml:1:8: error[E604]: `runs` must be a whole number, not `"2000"`',
        "   1 | runs = ",
    ),
    "a float for a whole number": (
        workload(gpus=Raw("64.0")),
        "w.toml:3:8: error[E604]: `gpus` must be a whole number, not `64.0`",
        "",
    ),
    "text for a number": (
        workload(step_seconds=Raw('"8.6"')),
        'w.toml:8:16: error[E604]: `step_seconds` must be a number, not `"8.6"`',
        "",
    ),
    "a boolean is not a number": (
        workload(save_seconds=True),
        "w.toml:10:16: error[E604]: `save_seconds` must be a number, not `true`",
        "",
    ),
    "missing key": (
        workload(total_steps=None),
        "w.toml:1:1: error[E603]: missing key `total_steps`",
        "help: `total_steps`: training steps of one attempt",
    ),
    "missing key in a table": (
        workload(distribution=None, median_minutes=12),
        "w.toml:20:1: error[E603]: missing key `distribution` in `[replacement]`",
        "",
    ),
    "bad distribution": (
        workload(distribution="gama"),
        "w.toml:21:16: error[E606]: `replacement.distribution` must be `exponential`, "
        '`lognormal` or `fixed`, not `"gama"`',
        "",
    ),
    "a parameter of another distribution": (  # at the parameter, not at `distribution`
        workload(distribution="exponential", median_minutes=12),
        "w.toml:22:1: error[E606]: `median_minutes` is not a parameter of `exponential`, "
        "which takes `mean_minutes`",
        "  22 | median_minutes = 12",
    ),
    "a key of a table at the top": (
        workload(notice_breach_chance=None).replace(
            "seed = 7", "seed = 7\nnotice_breach_chance = 0.1"
        ),
        "w.toml:3:1: error[E602]: unknown key `notice_breach_chance`",
        "help: did you mean `reclaims.notice_breach_chance`? it belongs in `[reclaims]`",
    ),
    "a top-level key in a table": (
        workload().replace("rate_per_hour = 0.2", "rate_per_hour = 0.2\nseed = 7"),
        "w.toml:19:1: error[E602]: unknown key `seed` in `[reclaims]`",
        "help: `seed` is a top-level key: write it before the first `[table]`",
    ),
    "a key that is nowhere": (
        workload().replace("seed = 7", "seed = 7\nflavour = 3"),
        "w.toml:3:1: error[E602]: unknown key `flavour`",
        "help: every key is described in docs/simulate.md (“The workload”)",
    ),
    "a number as written": (  # not Python's `1E+9`
        workload(runs=Raw("1e9")),
        "w.toml:1:8: error[E604]: `runs` must be a whole number, not `1e9`",
        "",
    ),
    "a range as written": (
        workload(accept_chance=Raw("15e-1")),
        "w.toml:14:17: error[E605]: `accept_chance` must be at most 1, not `15e-1`",
        "",
    ),
    "a rule's value as written": (
        workload(step_seconds=Raw("1e-7")),
        "w.toml:8:1: error[E605]: `step_seconds` `1e-7` is finer than a microsecond",
        "",
    ),
    "a distribution without its parameter": (
        workload(distribution="fixed"),
        "w.toml:21:1: error[E606]: `fixed` needs `minutes`",
        "",
    ),
    "malformed toml": (
        workload().replace("seed = 7", "seed = [7,"),
        "w.toml:3:1: error[E601]: not valid TOML: invalid value",  # where tomllib notices it
        "",
    ),
    "cut at its end, a U+2028 in a comment": (  # tomllib counts lines at `\n` only
        "# runs \u2028 of the week\n" + workload() + 'x = "',
        "w.toml:24:6: error[E601]: not valid TOML: unterminated string",  # after `x = "`
        "",
    ),
    "nested deeper than Python reads": (  # tomllib recurses: once an internal error
        workload() + "x = " + "[" * 5000 + "]" * 5000 + "\n",
        "w.toml:23:105: error[E601]: not valid TOML: arrays or tables nested too deeply",
        "",
    ),
    "more digits than Python reads": (  # int() refuses 4,301 digits: once an internal error
        workload(runs=Raw("1" * 5000)),
        "w.toml:1:8: error[E601]: not valid TOML: a number of more than 4,300 digits",
        "",
    ),
    "a key twice": (
        workload() + "\n[reclaims]\nrate_per_hour = 1\n",
        "w.toml:24:10: error[E601]: not valid TOML: cannot declare `reclaims` twice",
        "",
    ),
    "out of range": (
        workload(accept_chance="1.5"),
        "w.toml:14:17: error[E605]: `accept_chance` must be at most 1, not `1.5`",
        "",
    ),
    "both processes": (
        workload(trace="a.json"),
        "w.toml:17:1: error[E605]: `[reclaims]` needs one of `rate_per_hour` (Poisson) or "
        "`trace` (an availability trace), not both",
        "",
    ),
    "neither process": (
        workload(rate_per_hour=None, notice_breach_chance=0),
        "w.toml:17:1: error[E605]: `[reclaims]` needs one of",
        "",
    ),
    "finer than a microsecond": (
        workload(step_seconds="8.6000001"),
        "w.toml:8:1: error[E605]: `step_seconds` `8.6000001` is finer than a microsecond",
        "",
    ),
    "no replacement with a rate": (
        workload(replacement=False),
        "w.toml:18:1: error[E603]: missing table `[replacement]`",
        "",
    ),
    "replacement with a trace": (
        workload(rate_per_hour=None, trace="a.json"),
        "w.toml:20:1: error[E605]: `[replacement]` does not apply with `reclaims.trace`",
        "",
    ),
    "nodes without a trace": (
        workload(nodes=4),
        "w.toml:19:1: error[E605]: `nodes` applies only with `reclaims.trace`",
        "",
    ),
    "unknown capacity": (
        workload(capacity="spto"),
        "w.toml:5:1: error[E605]: `capacity` must be one of `spot`, `on_demand`, `reserved`, "
        "not `spto`",
        "",
    ),
    "a naive start": (
        workload(start=Raw("2025-03-01T00:00:00")),
        "w.toml:16:1: error[E605]: `start` `2025-03-01T00:00:00` has no UTC offset",
        "",
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_each_mistake_names_its_key_and_line(case: str) -> None:
    text, headline, extra = BAD[case]
    shown = problems(text)
    assert shown.startswith(headline), shown
    assert extra in shown
    assert "Traceback" not in shown
    # help fits an 80-column terminal
    assert all(len(line) <= 80 for line in shown.splitlines() if line.startswith("help:")), shown


def test_every_mistake_is_reported_at_once() -> None:
    text = workload(runs=Raw('"2000"'), gpus=0).replace("accept_chance", "acept_chance")
    shown = problems(text)
    headlines = [line for line in shown.splitlines() if "error[" in line]
    assert [h.split(": ")[1] for h in headlines] == ["error[E604]", "error[E605]", "error[E602]"]
    assert [h.split(":")[1] for h in headlines] == ["1", "3", "14"]  # in line order


def test_keys_in_inline_tables_and_dotted_keys_have_their_lines() -> None:
    text = workload(replacement=False).replace("[reclaims]\nrate_per_hour = 0.2", "")
    text += 'reclaims = { rate_per_hour = 0.2 }\nreplacement.distribution = "gamma"\n'
    shown = problems(text)
    # the dotted key's value on the last line, with its column
    last = len(text.splitlines())
    assert f"w.toml:{last}:28: error[E606]: `replacement.distribution`" in shown


def test_positions_are_found_in_any_toml() -> None:
    text = (
        '# c\n"a b" = 1\nx = """\nk = 2\n"""\narr = [\n 1, # one\n 2,\n]\n'
        "when = 1979-05-27 07:32:00Z\n[ t . u ]\nv = { w = 'q' }\n[[many]]\nz = 1\n"
    )
    spans = key_spans(text)
    assert spans.keys[("a b",)].line == 2
    assert ("k",) not in spans.keys  # inside a multi-line string
    assert spans.values[("arr",)].end_line == 9
    assert text[spans.values[("when",)].start_pos : spans.values[("when",)].end_pos] == (
        "1979-05-27 07:32:00Z"
    )
    assert spans.tables[("t", "u")].line == 11
    assert spans.keys[("t", "u", "v", "w")].col == 7
    assert spans.keys[("many", "z")].line == 14


def test_the_trace_is_read_relative_to_the_workload(tmp_path: Path) -> None:
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "a.json").write_text(
        json.dumps({"metadata": {"gap_seconds": 60}, "data": [1, 0, 4]})
    )
    path = write_workload(tmp_path, rate_per_hour=None, trace="traces/a.json", replacement=False)
    loaded = load_workload(path)
    assert loaded.availability is not None
    assert loaded.availability.span_us == 180_000_000
    # needing 8 instances of a trace that has at most 4 is E610, at `nodes`
    path = write_workload(
        tmp_path, rate_per_hour=None, trace="traces/a.json", nodes=8, replacement=False
    )
    with pytest.raises(ContractlangError) as info:
        load_workload(path)
    (diag,) = info.value.diagnostics
    assert diag.code == "E610"
    assert diag.span.line == 19
    assert "never has 8 instances available at once (its most is 4)" in diag.message


def test_the_command_line_exits_2_with_the_line(tmp_path: Path) -> None:
    (tmp_path / "c.spot").write_text(TERMS)
    for case in ("unknown key", "wrong type", "missing key", "bad distribution", "malformed toml"):
        text, headline, _ = BAD[case]
        (tmp_path / "w.toml").write_text(text)
        result = run("simulate", tmp_path / "c.spot", "--workload", tmp_path / "w.toml")
        no_traceback(result)
        assert result.exit_code == 2, case
        assert headline.replace("w.toml", str(tmp_path / "w.toml")) in result.output, case


def test_unreadable_workload_and_malformed_availability_exit_2(tmp_path: Path) -> None:
    (tmp_path / "c.spot").write_text(TERMS)
    result = run("simulate", tmp_path / "c.spot", "--workload", tmp_path / "nope.toml")
    no_traceback(result)
    assert result.exit_code == 2
    assert "error[E607]: cannot read" in result.output
    (tmp_path / "a.csv").write_text("0,add,n1\n10,ad,n2\n")
    path = write_workload(tmp_path, rate_per_hour=None, trace="a.csv", replacement=False)
    result = run("simulate", tmp_path / "c.spot", "--workload", path)
    no_traceback(result)
    assert result.exit_code == 2
    assert f"{tmp_path / 'a.csv'}:2:4: error[E609]: unknown event `ad`" in result.output


def test_terms_reading_a_price_the_workload_does_not_give(tmp_path: Path) -> None:
    (tmp_path / "m.spot").write_text(
        'contract "m" {\n  currency USD\n  rate trace.price per gpu_hour\n}\n'
    )
    path = write_workload(tmp_path, runs=5, price=None)
    result = run("simulate", tmp_path / "m.spot", "--workload", path)
    no_traceback(result)
    assert result.exit_code == 2
    # without a price `trace.price` is none: the one rate prices nothing (E401)
    assert "error[E401]: contract `m` prices no rate for " in result.output
    assert "add `price = …` (per GPU-hour)" in result.output
