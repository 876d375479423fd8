"""`rehearse`'s inputs: the protocol's lines, the settings' text, the grouping of drafts, and
bad input — a command that cannot start, a bad flag, a checkpoint outside the checkpoint
directory, malformed protocol lines — each with a clear message; exit 2 where it is fatal."""

from __future__ import annotations

import json
import shlex
import sys
import tempfile
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from support.cli import no_traceback, run

from contractlang.cli.files import Outputs
from contractlang.codes import CODES
from contractlang.errors import ContractlangError
from contractlang.pipeline.language import load_terms, terms_from_text
from contractlang.rehearse import AllocationSpec, RehearsalSettings, rehearse
from contractlang.rehearse.plan import plan_rehearsals
from contractlang.rehearse.protocol import (
    Checkpoint,
    Malformed,
    Restored,
    Step,
    Total,
    Verdict,
    parse_event,
    parse_line,
)
from contractlang.rehearse.run import _preflight
from contractlang.rehearse.settings import (
    evenly,
    parse_duration,
    parse_progress,
    parse_scale,
    parse_signal,
)

ROOT = Path(__file__).resolve().parents[1]
SHA = "ab" * 32

TERMS = """
contract "c" {
  currency USD
  rate trace.price per gpu_hour
  promise reclaim notice 1 second
}
"""


# --------------------------------------------------------------------------- the protocol


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("contractlang: total 400", Total(400)),
        ("contractlang: step 1200\n", Step(1200)),
        ("contractlang: restored 1000\r\n", Restored(1000)),
        ("contractlang: accepted", Verdict(True)),
        ("contractlang: rejected", Verdict(False)),
        ("contractlang: checkpoint 12 ck/s.pt", Checkpoint(12, "ck/s.pt", None)),
        (f"contractlang: checkpoint 12 ck/s.pt {SHA.upper()}", Checkpoint(12, "ck/s.pt", SHA)),
        (f"contractlang: checkpoint 3 my dir/a.pt {SHA}", Checkpoint(3, "my dir/a.pt", SHA)),
        ("epoch 3: loss 0.1", None),
        ("  contractlang: step 1", None),  # only at the start of a line
    ],
)
def test_protocol_lines(line: str, message: object) -> None:
    assert parse_line(line) == message


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("contractlang: step ten", "`step` needs a whole number of steps"),
        ("contractlang: step -1", "`step` needs a whole number of steps"),
        ("contractlang: step 1 2", "`step` needs a whole number of steps"),
        ("contractlang: step 1000000000000001", "`step` is beyond the largest step a trace"),
        ("contractlang: total " + "9" * 5000, "`total` is beyond the largest step a trace"),
        ("contractlang: checkpoint 1" + "0" * 19 + " p", "`checkpoint` is beyond the largest"),
        ("contractlang: total 0", "`total` needs at least 1 step"),
        ("contractlang: checkpoint 5", "`checkpoint` needs a step and a path"),
        ("contractlang: accepted now", "`accepted` takes nothing after it"),
        ("contractlang: epoch 3", "`epoch` is not a protocol message"),
        ("contractlang:", "the line names no message"),
    ],
)
def test_malformed_protocol_lines_say_why(line: str, reason: str) -> None:
    found = parse_line(line)
    assert isinstance(found, Malformed)
    assert reason in found.reason


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"event": "step", "step": 7}', Step(7)),
        ('{"event": "total", "steps": 9}', Total(9)),
        ('{"event": "checkpoint", "step": 2, "path": "p"}', Checkpoint(2, "p", None)),
        ('{"event": "accepted"}', Verdict(True)),
        ("   ", None),
        ("[1]", "an object with an"),
        ('{"event": "step", "step": "7"}', '`step` needs `"step"`, a whole number'),
        ('{"event": "step", "step": true}', '`step` needs `"step"`, a whole number'),
        ('{"event": "checkpoint", "step": 2}', '`checkpoint` needs `"path"`'),
        ('{"event": "checkpoint", "step": 2, "path": "p", "sha256": "x"}', "64 hexadecimal"),
        ('{"event": "launch"}', "`launch` is not a protocol event"),
        ("{oops", "not JSON"),
        ('{"event": "step", "step": ' + "9" * 5000 + "}", "a number in it is too large"),
        ('{"event": "restored", "step": 10000000000000000}', "beyond the largest step"),
        ("[" * 100_000, "nested too deeply"),
    ],
)
def test_events_file_lines(text: str, expected: object) -> None:
    found = parse_event(text)
    if isinstance(expected, str):
        assert isinstance(found, Malformed)
        assert expected in found.reason
    else:
        assert found == expected


# --------------------------------------------------------------------------- settings


def test_settings_made_in_python_are_bounded_too() -> None:
    with pytest.raises(ContractlangError, match="below 10\\^20"):
        AllocationSpec(price=Decimal("1e30"))
    with pytest.raises(ContractlangError, match="from 1 to 1,000,000"):
        RehearsalSettings(("true",), "true", time_scale=Fraction(10**7))
    with pytest.raises(ContractlangError, match="longer than 365 days"):
        RehearsalSettings(("true",), "true", notice_us=-1)
    # the bounds themselves are allowed
    AllocationSpec(gpus=10_000_000, price=Decimal("99999999999999999999.999999999999999999"))
    assert parse_duration("365 days", "--notice") == 365 * 86_400 * 10**6
    assert parse_scale("1000000") == 10**6


def test_durations_are_exact_microseconds() -> None:
    assert parse_duration("10s", "--notice") == 10_000_000
    assert parse_duration("1.5 hours", "--notice") == 5_400_000_000
    assert parse_duration("2 min", "--notice") == 120_000_000
    assert parse_duration("250ms", "--notice") == 250_000
    assert parse_duration("0s", "--notice") == 0


def test_interrupts_are_fractions_of_progress() -> None:
    assert evenly(2) == (Fraction(1, 3), Fraction(2, 3))
    assert evenly(0) == ()
    assert parse_progress("70%, 30%") == (Fraction(3, 10), Fraction(7, 10))
    assert parse_progress("100%") == (Fraction(1),)
    assert parse_scale("60") == 60
    assert parse_scale("1.5") == Fraction(3, 2)
    assert parse_signal("usr1").name == "SIGUSR1"
    assert parse_signal("15").name == "SIGTERM"


@pytest.mark.parametrize(
    ("flags", "fragment"),
    [
        (["--at", "150%"], "`--at 150%`: `150%` is not a share of the progress"),
        (["--at", "30"], "`30` is not a share of the progress"),
        (["--at", "30%,30%"], "names `30%` twice"),
        (["--interrupts", "2", "--at", "50%"], "give `--interrupts N` or `--at …`, not both"),
        (["--interrupts", "-1"], "`--interrupts -1` must not be negative"),
        (["--interrupts", "1001"], "at most 1,000 times; `--interrupts 1001` is too many"),
        (["--interrupts", "5000000000"], "`--interrupts 5000000000` is too many"),
        (
            ["--at", ",".join(f"{k / 20:g}%" for k in range(1, 1003))],
            "at most 1,000 times; `--at` with more shares than that is too many",
        ),
        (["--notice", "10 parsecs"], "`--notice 10 parsecs` is not a duration"),
        (["--notice", "10"], "`--notice 10` is not a duration"),
        (["--replacement-wait", "0.0000001s"], "finer than a microsecond"),
        (["--time-scale", "0.5"], "`--time-scale 0.5` must be a number from 1 to 1,000,000"),
        (["--time-scale", "fast"], "`--time-scale fast` is not a number"),
        (["--time-scale", "inf"], "`--time-scale inf` must be a number from 1 to 1,000,000"),
        (["--time-scale", "nan"], "`--time-scale nan` must be a number from 1"),
        (["--time-scale", "1e999999999"], "`--time-scale 1e999999999` must be a number from 1"),
        (["--time-scale", "1000001"], "`--time-scale 1000001` must be a number from 1"),
        (["--time-scale", "1.0000001"], "with at most 6 places"),
        (["--notice", "200000000d"], "`--notice 200000000d` is longer than 365 days"),
        (["--notice", "365.000001 days"], "`--notice 365.000001 days` is longer than 365 days"),
        (["--notice", "9" * 5000 + "s"], "`--notice 999999999999999999999999999999999999999…`"),
        (["--replacement-wait", "99999999999d"], "is longer than 365 days"),
        (["--price", "1e30"], "`--price 1e30` must be a decimal of at least 0 and below 10^20"),
        (["--price", "1e400"], "`--price 1e400` must be a decimal of at least 0 and below"),
        (["--price", "100000000000000000000"], "below 10^20, with at most 18 places"),
        (["--price", "0.0000000000000000001"], "with at most 18 places"),
        (["--price", "inf"], "`--price inf` must be a decimal of at least 0"),
        (["--gpus", "99999999999999999999"], "must be at least 1 and at most 10,000,000"),
        (["--gpus", "10000001"], "`--gpus 10000001` must be at least 1 and at most 10,000,000"),
        (["--steps", "1000000000000001"], "at most 1,000,000,000,000,000"),
        (["--notice-signal", "KILL"], "cannot be a notice"),
        (["--notice-signal", "SIGNOPE"], "`--notice-signal SIGNOPE` is not a signal"),
        (["--gpus", "0"], "`--gpus 0` must be at least 1"),
        (["--capacity", "spto"], "unknown capacity `spto`"),
        (["--price", "-1"], "`--price -1` must be a decimal of at least 0"),
        (["--price", "cheap"], "`--price cheap` is not a decimal number"),
        (["--steps", "0"], "`--steps 0` must be at least 1"),
        (["--run-id", " "], "`--run-id` must not be empty"),
        (["--ledger", "out.txt"], "`--ledger out.txt`: the file must end in"),
    ],
)
def test_bad_flags_exit_2_with_a_message(tmp_path: Path, flags: list[str], fragment: str) -> None:
    (tmp_path / "t.spot").write_text(TERMS)
    result = run("rehearse", tmp_path / "t.spot", "--mock", *flags)
    no_traceback(result)
    assert result.exit_code == 2, result.output
    assert fragment in result.output
    assert "error[E" in result.output


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--mock", "--command", "true"], "give `--command` or `--mock`, not both"),
        ([], "nothing to rehearse"),
        (["--command", "no-such-program-xyz --steps 4"], "cannot start `no-such-program-xyz`"),
        (["--command", "'unbalanced"], "cannot be split into words"),
        (["--command", "README.md"], "cannot start `README.md`: no such program"),
    ],
)
def test_a_command_that_cannot_start_exits_2(
    tmp_path: Path, args: list[str], fragment: str
) -> None:
    (tmp_path / "t.spot").write_text(TERMS)
    result = run("rehearse", tmp_path / "t.spot", *args)
    no_traceback(result)
    assert result.exit_code == 2, result.output
    assert fragment in result.output


def test_too_many_interrupts_are_refused_before_they_are_built() -> None:
    with pytest.raises(ContractlangError) as exc:
        RehearsalSettings(("true",), "true", interrupts=(*evenly(1000), Fraction(1)))
    assert "1001 interrupts is too many" in exc.value.diagnostics[0].message
    assert len(RehearsalSettings(("true",), "true", interrupts=evenly(1000)).interrupts) == 1000


def test_no_interrupts_means_none(tmp_path: Path) -> None:
    # `--interrupts 0`: the job runs once, to its end, and is never noticed or reclaimed
    body = "say('total 3')\nfor i in (1, 2, 3): say(f'step {i}')\nsay('accepted')\n"
    (tmp_path / "t.spot").write_text(TERMS)
    argv = shlex.join(job(tmp_path, body))
    result = run("rehearse", tmp_path / "t.spot", "--command", argv, "--interrupts", "0")
    no_traceback(result)
    assert result.exit_code == 0, result.output
    assert "no interrupt planned; run `rehearsal`, 1 allocation\n" in result.stdout
    doc = json.loads(
        run(
            "rehearse",
            tmp_path / "t.spot",
            "--command",
            argv,
            "--interrupts",
            "0",
            "--format",
            "json",
        ).stdout
    )
    assert doc["interrupts_at"] == []
    (r,) = doc["rehearsals"]
    assert [a["end_reason"] for a in r["allocations"]] == ["released"]
    assert "notice" not in [e["event"] for e in r["timeline"]]


def test_a_program_that_exists_but_cannot_run_says_why(tmp_path: Path) -> None:
    (tmp_path / "t.spot").write_text(TERMS)
    script = tmp_path / "train.sh"
    script.write_text("#!/bin/sh\n")  # not executable
    for command, why in (
        (str(script), "it is not executable"),
        (str(tmp_path), "it is a folder"),
        ("./no-such-script.sh", "no such program"),
    ):
        result = run("rehearse", tmp_path / "t.spot", "--command", command)
        no_traceback(result)
        assert result.exit_code == 2, result.output
        assert f"error[E701]: cannot start `{command}`: {why}" in result.output
    result = run("rehearse", tmp_path / "t.spot", "--command", str(script))
    assert f"chmod +x {script}" in result.output


def test_help_lists_every_exit_code() -> None:
    result = run("rehearse", "--help")
    assert result.exit_code == 0
    said = " ".join(result.output.split())
    for code in ("0 every budget met", "1 a budget not met", "2 bad input", "3 internal error"):
        assert code in said
    assert "130 interrupted (Ctrl-C, SIGTERM or SIGHUP" in said


def test_a_command_that_fails_to_exec_is_e701(tmp_path: Path) -> None:
    script = tmp_path / "job.sh"
    script.write_text("#!/no/such/interpreter\n")
    script.chmod(0o755)
    settings = RehearsalSettings((str(script),), "job.sh")
    with pytest.raises(ContractlangError) as exc:
        rehearse(terms_from_text(TERMS, "t.spot"), settings)
    (d,) = exc.value.diagnostics
    assert d.code == "E701"
    assert d.message.startswith(f"cannot start `{script}`: ")


def test_terms_are_checked_before_anything_runs(tmp_path: Path) -> None:
    (tmp_path / "bad.spot").write_text('contract "x" { currency USD rate 2 USD }')
    result = run("rehearse", tmp_path / "bad.spot", "--mock")
    assert result.exit_code == 2
    assert "error[E206]" in result.output
    result = run("rehearse", tmp_path / "terms.txt", "--mock")
    assert result.exit_code == 2
    assert "is not a `.spot` terms file" in result.output


def test_a_draft_that_cannot_price_the_allocation_fails_before_the_job_starts(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "started"
    command = f"{sys.executable} -c 'open({str(marker)!r}, \"w\")'"
    result = run(
        "rehearse",
        ROOT / "rulesets" / "aws-ec2-spot-linux.spot",
        "--command",
        command,
        "--capacity",
        "on_demand",
        "--sku",
        "B200",
    )
    no_traceback(result)
    assert result.exit_code == 2
    assert "error[E401]" in result.output
    assert not marker.exists()


@pytest.mark.parametrize(
    ("flags", "fragment"),
    [
        (
            ["--interrupts", "1000", "--notice", "365d", "--replacement-wait", "365d"],
            "plans 1,000 interrupts, whose notice leads and replacement waits would be recorded "
            "over 730,000.0 days: a trace of it holds at most",
        ),
        (
            ["--gpus", "10000000", "--notice", "11 days"],
            # 2⁶³ − 1 GPU-µs / 10⁷ GPUs = 922,337,203,685 µs = 10.675 days
            "plans 1 interrupt, whose notice leads and replacement waits would be recorded over "
            "11.0 days: a trace of it holds at most 10.7 days (one run of 10,000,000 GPUs may "
            "hold at most 2,562,047,788 GPU-hours)",
        ),
    ],
)
def test_a_rehearsal_its_trace_cannot_hold_fails_before_the_job_starts(
    tmp_path: Path, flags: list[str], fragment: str
) -> None:
    marker = tmp_path / "started"
    (tmp_path / "t.spot").write_text(TERMS)
    command = f"{sys.executable} -c 'open({str(marker)!r}, \"w\")'"
    result = run("rehearse", tmp_path / "t.spot", "--command", command, *flags)
    no_traceback(result)
    assert result.exit_code == 2, result.output
    assert "error[E705]" in result.output
    assert fragment in " ".join(result.output.split())
    assert not marker.exists()


def test_every_bundled_ruleset_prices_a_rehearsal_from_the_defaults() -> None:
    paths = sorted((ROOT / "rulesets").glob("*.spot"))
    terms = load_terms(paths)
    settings = RehearsalSettings(("true",), "true", allocation=AllocationSpec())
    plans = plan_rehearsals(terms, None, None)
    assert {c.name for c in terms.contracts} == {n for p in plans for n in p.contracts}
    for plan in plans:
        _preflight(terms, plan, settings)  # raises E401/E403 if a draft cannot price it


def test_a_workdir_must_be_new_or_empty(tmp_path: Path) -> None:
    (tmp_path / "t.spot").write_text(TERMS)
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "old").write_text("")
    result = run("rehearse", tmp_path / "t.spot", "--mock", "--workdir", tmp_path / "work")
    assert result.exit_code == 2
    assert "must be a new or empty folder" in result.output


# --------------------------------------------------------------------------- grouping


def test_drafts_are_grouped_by_their_promises_and_flags_override_them() -> None:
    terms = load_terms(sorted((ROOT / "rulesets").glob("*.spot")))
    plans = plan_rehearsals(terms, None, None)
    by = {p.contracts: (p.notice.us, p.replacement_wait.us) for p in plans}
    assert by == {
        ("aws-ec2-spot-linux",): (120_000_000, 0),
        ("azure-spot-vms", "gcp-spot-vms"): (30_000_000, 0),
        ("coreweave-spot",): (0, 0),
        ("northwind-negotiated",): (120_000_000, 900_000_000),
    }
    (one,) = plan_rehearsals(terms, 10_000_000, 60_000_000)
    assert len(one.contracts) == 5
    assert one.notice.origin == "flag"
    assert one.replacement_wait.origin == "flag"


# --------------------------------------------------------------------------- job problems


def job(tmp: Path, body: str) -> tuple[str, ...]:
    script = tmp / "job.py"
    script.write_text(
        "import os, sys, time\nsay = lambda t: print('contractlang: ' + t, flush=True)\n" + body
    )
    return (sys.executable, str(script))


def test_a_checkpoint_outside_the_checkpoint_directory_stops_the_rehearsal(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "elsewhere.pt"
    argv = job(
        tmp_path, f"say('total 4')\nsay('step 1')\nsay('checkpoint 1 {outside}')\ntime.sleep(30)\n"
    )
    (tmp_path / "t.spot").write_text(TERMS)
    result = run("rehearse", tmp_path / "t.spot", "--command", shlex.join(argv))
    no_traceback(result)
    assert result.exit_code == 2
    assert "error[E703]" in result.output
    assert (
        f"allocation `rehearsal-a1`, line 3 of its output: checkpoint `{outside}` is outside "
        "the checkpoint directory"
    ) in result.output
    assert "$CONTRACTLANG_CHECKPOINT_DIR" in result.output


def test_steps_without_a_total_cannot_place_the_interrupts(tmp_path: Path) -> None:
    argv = job(tmp_path, "say('step 1')\ntime.sleep(30)\n")
    (tmp_path / "t.spot").write_text(TERMS)
    result = run("rehearse", tmp_path / "t.spot", "--command", shlex.join(argv))
    assert result.exit_code == 2
    assert "error[E704]" in result.output
    assert "`--steps N`" in result.output
    (tmp_path / "ok").mkdir()
    # reclaimed at step 1 (its notice, SIGTERM, ends the sleep), then runs to its end
    first = "if os.environ['CONTRACTLANG_ALLOC_ID'].endswith('-a1'): time.sleep(30)\n"
    quick = job(tmp_path / "ok", f"say('step 1')\n{first}say('step 2')\nsay('accepted')\n")
    ok = run("rehearse", tmp_path / "t.spot", "--command", shlex.join(quick), "--steps", "2")
    assert ok.exit_code == 0, ok.output
    assert "1 of 1 came" in ok.output  # `--steps 2` put the interrupt (50%) at step 1


def test_no_run_id_or_contract_name_writes_outside_its_folder(tmp_path: Path) -> None:
    # the run ID names the job's files in the work folder, and a contract its trace: `/`
    # and `..` cannot take them elsewhere, and a long name is cut short, not refused late
    long = "n" * 300
    (tmp_path / "t.spot").write_text(TERMS.replace('"c"', f'"{long}"'))
    body = "say('total 2')\nsay('step 1')\nsay('step 2')\nsay('accepted')\n"
    work, traces = tmp_path / "work", tmp_path / "traces"
    result = run(
        "rehearse",
        tmp_path / "t.spot",
        "--command",
        shlex.join(job(tmp_path, body)),
        "--run-id",
        "../../escaped/x",
        "--interrupts",
        "0",
        "--workdir",
        work,
        "--trace-out",
        traces,
        "--format",
        "json",
    )
    no_traceback(result)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["rehearsals"][0]["run_id"] == "../../escaped/x"
    assert not (tmp_path / "escaped").exists()
    assert (work / "rehearsal-1" / ".._.._escaped_x-a1.out").is_file()
    assert [p.name for p in traces.iterdir()] == ["n" * 100 + ".parquet"]


def test_a_nul_in_the_run_id_or_the_command_is_refused() -> None:
    with pytest.raises(ContractlangError, match="must not hold a NUL"):
        RehearsalSettings(("true",), "true", run_id="a\0b")
    with pytest.raises(ContractlangError, match="must not hold a NUL"):
        RehearsalSettings(("echo", "a\0b"), "echo")


def test_malformed_lines_and_a_wrong_restore_are_warnings_not_errors(tmp_path: Path) -> None:
    body = (
        "say('total 2')\nsay('step one')\nsay('restored 5')\nsay('dance')\n"
        "say('step 1')\nsay('step 2')\nsay('accepted')\n"
    )
    settings = RehearsalSettings(job(tmp_path, body), "job", interrupts=())
    report = rehearse(terms_from_text(TERMS, "t.spot"), settings)
    (r,) = report.rehearsals
    assert r.record.result == "accepted"
    warned = [(w.code, w.message) for w in r.record.warnings]
    assert [c for c, _ in warned] == ["W701", "W703", "W701"]
    assert warned[0][1] == (
        "allocation `rehearsal-a1`, line 2 of its output: `contractlang: step one` was ignored: "
        "`step` needs a whole number of steps"
    )
    assert "restored step 5, but the last valid checkpoint is none" in warned[1][1]


def test_a_checkpoint_path_no_file_can_have_is_a_malformed_line(tmp_path: Path) -> None:
    # a 300-character name, or a NUL, raised OSError / ValueError when the path was read (exit
    # 3): it is a malformed line, warned about and ignored as the others are
    long = "a" * 300
    body = (
        f"say('total 2')\nsay('checkpoint 1 ' + os.environ['CONTRACTLANG_CHECKPOINT_DIR']"
        f" + '/{long}')\nsay('checkpoint 2 a' + chr(0) + 'b')\nsay('step 1')\nsay('step 2')\n"
        "say('accepted')\n"
    )
    (tmp_path / "t.spot").write_text(TERMS)
    result = run("rehearse", tmp_path / "t.spot", "--command", shlex.join(job(tmp_path, body)),
                 "--interrupts", "0")  # fmt: skip
    no_traceback(result)
    assert result.exit_code == 0, result.output
    assert result.output.count("warning[W701]") == 2, result.output
    assert "is longer than a file name may be" in result.output
    assert "holds a NUL" in result.output
    for path in ("a\0b", f"d/{long}", "d/" * 2100):
        assert isinstance(parse_line(f"contractlang: checkpoint 2 {path}"), Malformed)
        event = json.dumps({"event": "checkpoint", "step": 2, "path": path})
        assert isinstance(parse_event(event), Malformed)


def test_every_rehearsal_code_is_registered() -> None:
    assert {c for c in CODES if c.startswith(("E7", "W7"))} == {
        "E701",
        "E702",
        "E703",
        "E704",
        "E705",
        "E706",
        "W701",
        "W703",
        "W704",
        "W705",
        "W706",
    }


def test_the_terminal_report_fits_80_columns_and_says_what_happened(tmp_path: Path) -> None:
    body = (
        "d = os.environ['CONTRACTLANG_CHECKPOINT_DIR']\n"
        "start = 2 if os.path.exists(d + '/c2') else 0\n"
        "say('total 6')\n"
        "if start: say('restored 2')\n"
        "for i in range(start + 1, 7):\n"
        "    time.sleep(0.03)\n"
        "    say(f'step {i}')\n"
        "    if i == 2:\n"
        "        open(d + '/c2', 'w').write('x')\n"
        "        say(f'checkpoint 2 {d}/c2')\n"
        "say('accepted')\n"
    )
    (tmp_path / "t.spot").write_text(TERMS.replace("1 second", "30 seconds"))
    result = run(
        "rehearse",
        tmp_path / "t.spot",
        "--command",
        shlex.join(job(tmp_path, body)),
        "--at",
        "50%",
        "--time-scale",
        "100",
        "--replacement-wait",
        "1 min",
        "--ledger",
        tmp_path / "ledger.csv",
        "--trace-out",
        tmp_path / "traces",
    )
    no_traceback(result)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(len(x) for x in lines) <= 80
    assert [x for x in lines if x != x.rstrip()] == []  # no line padded with blanks
    text = "\n".join(lines)
    # the closing hints name only the flags not given
    assert lines[-1] == "per-run figures: --runs PATH · data: --format json"
    assert "--ledger PATH" not in text
    assert "--trace-out DIR" not in text
    for said in (
        "notice 30 s by SIGTERM (the draft's promise); replacement wait 1 min (set by",
        "time scale 100: notice leads and waits ran 100× faster than recorded",
        "checkpoint 2 ✓",
        "waited 1 min for a replacement",
        "restored step 2",
        "failure path",
        "final result: accepted",
        "net billed",
    ):
        assert said in text, said


@pytest.mark.parametrize("flag", ["--trace-out", "--workdir"])
@pytest.mark.parametrize(
    ("folder", "reason"),
    [("/sys/contractlang-x", "operation not permitted"), ("/proc/x", "no such file")],
)
def test_an_output_folder_that_cannot_be_made_is_e501(
    tmp_path: Path, flag: str, folder: str, reason: str
) -> None:
    if not Path(folder).parent.is_dir() or sys.platform != "linux":
        pytest.skip("needs Linux's /sys and /proc")
    marker = tmp_path / "started"
    (tmp_path / "t.spot").write_text(TERMS)
    command = f"{sys.executable} -c 'open({str(marker)!r}, \"w\")'"
    result = run("rehearse", tmp_path / "t.spot", "--command", command, flag, folder)
    no_traceback(result)
    assert result.exit_code == 2, result.output
    assert f"error[E501]: cannot write `{folder}`: {reason}" in result.output
    assert not marker.exists()


def test_nothing_is_made_before_every_flag_is_checked(tmp_path: Path) -> None:
    (tmp_path / "t.spot").write_text(TERMS)
    out, work = tmp_path / "leftover", tmp_path / "work"
    folders = ["--trace-out", out, "--workdir", work]
    result = run("rehearse", tmp_path / "t.spot", "--mock", *folders, "--time-scale", "0")
    assert result.exit_code == 2
    assert not out.exists()
    assert not work.exists()
    # nor when a draft cannot price the allocation (found before any job starts)
    aws = ROOT / "rulesets" / "aws-ec2-spot-linux.spot"
    result = run("rehearse", aws, "--mock", *folders, "--capacity", "on_demand", "--sku", "B200")
    assert "error[E401]" in result.output
    assert not out.exists()
    assert not work.exists()


def test_a_rehearsal_that_fails_leaves_no_empty_trace_folder(tmp_path: Path) -> None:
    # the job breaks the protocol (E704) after the folders were made: the empty --trace-out
    # goes again; the work folder, which holds what the job left, stays
    (tmp_path / "t.spot").write_text(TERMS)
    argv = job(tmp_path, "say('step 1')\ntime.sleep(30)\n")
    out, work = tmp_path / "traces", tmp_path / "work"
    result = run(
        "rehearse",
        tmp_path / "t.spot",
        "--command",
        shlex.join(argv),
        "--trace-out",
        out,
        "--workdir",
        work,
    )
    assert "error[E704]" in result.output
    assert not out.exists()
    assert (work / "rehearsal-1" / "rehearsal-a1.out").is_file()


@pytest.mark.parametrize(
    ("flags", "fragment"),
    [
        (
            ["--trace-out", "x", "--workdir", "x"],
            "`--workdir x` is the same folder as `--trace-out x`",
        ),
        (["--trace-out", "./x/", "--workdir", "x"], "is the same folder as `--trace-out x`"),
        (["--trace-out", "w/t", "--workdir", "w"], "`--trace-out w/t` is inside `--workdir w`"),
        (["--ledger", "w/l.csv", "--workdir", "w"], "`--ledger w/l.csv` is inside `--workdir w`"),
        (["--trace-out", "t.spot"], "`--trace-out t.spot` is a file, not a folder"),
        (["--workdir", "t.spot"], "`--workdir t.spot` is a file, not a folder"),
        (["--workdir", "full"], "`--workdir full` must be a new or empty folder"),
        (["--trace-out", "no/such/dir"], "`--trace-out no/such/dir`: the folder `no/such` does"),
    ],
)
def test_output_folders_are_planned_with_every_other_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: list[str], fragment: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.spot").write_text(TERMS)
    (tmp_path / "w").mkdir()  # an empty work folder, allowed
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "old.pt").write_text("")
    result = run("rehearse", "t.spot", "--mock", *flags)
    no_traceback(result)
    assert result.exit_code == 2, result.output
    assert "error[E502]" in result.output
    assert fragment in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full", "t.spot", "w"]


def test_a_workdir_given_in_python_is_checked_too(tmp_path: Path) -> None:
    (tmp_path / "old.pt").write_text("")
    settings = RehearsalSettings(("true",), "true", workdir=tmp_path)
    with pytest.raises(ContractlangError, match="must be a new or empty folder"):
        rehearse(terms_from_text(TERMS, "t.spot"), settings)


def test_planned_folders_are_made_together_or_not_at_all(tmp_path: Path) -> None:
    if not Path("/proc").is_dir():
        pytest.skip("needs /proc")
    outputs = Outputs()
    outputs.add_folder(tmp_path / "a", "--trace-out")
    outputs.add(tmp_path / "a" / "c.parquet", "--trace-out", (".parquet",))
    outputs.add_folder(Path("/proc/contractlang-x"), "--workdir", own=True)
    assert not (tmp_path / "a").exists()  # planning makes nothing
    with pytest.raises(ContractlangError) as exc:
        outputs.make_folders()
    assert exc.value.diagnostics[0].code == "E501"
    assert not (tmp_path / "a").exists()  # the one made first is gone again


def test_a_temporary_folder_that_cannot_be_made_is_e501(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "gone"))
    settings = RehearsalSettings(("true",), "true", interrupts=())
    with pytest.raises(ContractlangError) as exc:
        rehearse(terms_from_text(TERMS, "t.spot"), settings)
    (d,) = exc.value.diagnostics
    assert d.code == "E501"
    assert d.message == f"cannot write `{tmp_path / 'gone'}`: no such file or directory"
    assert d.help is not None
    assert "TMPDIR" in d.help


def test_trace_out_files_are_outputs_like_any_other(tmp_path: Path) -> None:
    # `--trace-out DIR` writes DIR/c.parquet for contract `c`: the ledger may not be that file
    (tmp_path / "t.spot").write_text(TERMS)
    out = tmp_path / "out"
    out.mkdir()
    result = run(
        "rehearse",
        tmp_path / "t.spot",
        "--mock",
        "--trace-out",
        out,
        "--ledger",
        out / "c.parquet",
    )
    no_traceback(result)
    assert result.exit_code == 2
    assert "is the same file as `--ledger" in result.output
