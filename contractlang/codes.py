"""The registry of diagnostic codes. Every code used anywhere is listed here with a title.

Codes are stable: a code, once published, keeps its meaning. `docs/language.md` and
`docs/trace.md` list each with an example; a test checks that every code here is documented.
A code whose case goes away is retired: it leaves :data:`CODES` and is never reused for
another case (each retired code is a comment where it stood; its docs say what became of it).

- E0xx syntax and input, E1xx names, E2xx types and units, E3xx contract structure,
  E4xx evaluation, E5xx command line and output files, E6xx workload and availability files
  (`simulate`), E7xx rehearsals (`docs/rehearse.md`), T0xx trace validation, I0xx import (I00x
  a file that cannot be imported, I01x–I02x why a row was rejected, I03x–I04x notes on rows
  imported with a caveat; ``docs/import.md``), R0xx reconciliation (``docs/reconcile.md``),
  F0xx regression fixtures (``docs/fixtures.md``); W-codes are warnings (W0xx the
  language, W1xx the trace, W4xx evaluation, W6xx simulations, W7xx rehearsals, W8xx
  reconciliation).
"""

from __future__ import annotations

CODES: dict[str, str] = {
    # syntax and input
    "E001": "unexpected input",
    "E002": "expected `when` before a condition",
    "E003": "unclosed block",
    "E004": "expected a number",
    "E005": "misspelled keyword",
    "E006": "unterminated string",
    "E007": "unexpected character",
    "E008": "input is not UTF-8 text",
    "E009": "expression nested too deeply",
    "E010": "unexpected end of file",
    "E011": "unbalanced parenthesis or bracket",
    "E012": "formatter would change the meaning",
    "E013": "cannot read file",
    # names
    "E101": "unknown name",
    "E102": "unknown unit",
    "E103": "duplicate contract name",
    "E104": "duplicate budget name",
    "E105": "promise not declared",
    "E106": "fact of a later stage",
    "E107": "fact of the wrong level",
    "E108": "unknown function or wrong number of arguments",
    "E109": "aggregate in the wrong place",
    # types and units
    "E201": "incompatible units",
    "E202": "incompatible comparison",
    "E203": "type mismatch",
    "E204": "condition is not true/false",
    "E205": "currency mismatch",
    "E206": "rate is not money per GPU-time",
    "E207": "credit is not money",
    "E208": "expected a duration",
    "E209": "invalid cap limit",
    "E210": "cap over 100%",
    "E211": "aggregate over a value that is not numeric",
    "E212": "`require` is not a comparison",
    "E213": "invalid value",
    # contract structure
    "E301": "missing `when`",
    "E302": "missing or repeated currency",
    "E303": "repeated setting",
    "E304": "duplicate term name",
    "E305": "contract has no rate",
    # evaluation
    "E401": "allocation not priced by any rate",
    "E402": "budget currency differs from the contract's",
    "E403": "trace column missing",
    "E404": "trace column is not numeric",
    "E405": "value out of range",
    # command line and files
    "E501": "cannot write file",
    "E502": "invalid command-line input",
    "E503": "the Ray engine cannot run",
    # workload and availability files (simulate)
    "E601": "workload is not valid TOML",
    "E602": "unknown key in the workload",
    "E603": "missing key in the workload",
    "E604": "wrong type in the workload",
    "E605": "invalid value in the workload",
    "E606": "invalid replacement distribution",
    "E607": "cannot read a workload or availability file",
    "E608": "malformed availability trace",
    "E609": "invalid value in an availability trace",
    "E610": "availability trace never has the capacity the job needs",
    # rehearsals
    "E701": "the job's command cannot start",
    "E702": "invalid rehearsal setting",
    "E703": "checkpoint outside the checkpoint directory",
    "E704": "interrupts cannot be placed without the job's total steps",
    "E705": "rehearsal longer than its trace can hold",
    "E706": "planned interrupt could not be delivered",
    # trace validation
    "T001": "missing required column",
    "T002": "column has the wrong type",
    "T003": "unknown source",
    "T004": "unknown event",
    "T005": "event from the wrong source",
    "T006": "invalid timestamp",
    "T007": "allocation started twice",
    "T008": "allocation ended more than once",
    "T009": "end before start",
    "T010": "event outside the allocation's lifetime",
    "T011": "gpus not positive",
    "T012": "duplicate row",
    "T013": "allocation under two runs",
    "T014": "allocation never ends",
    "T015": "missing value",
    "T016": "allocation events without a start",
    "T017": "unreadable trace",
    "T018": "reserved column name",
    "T019": "more problems than shown",
    "T020": "value outside the supported range",
    "T021": "negative value where none can be",
    # import: a file that cannot be imported (docs/import.md)
    "I001": "cannot read the file to import",
    "I002": "missing required column",
    "I003": "not in the expected format",
    "I004": "local time in a daylight-saving gap",
    "I005": "local time in a repeated hour",
    "I006": "imported events break a trace rule",
    "I007": "nothing to import",
    # import: why a row was rejected
    "I010": "wrong number of fields",
    "I011": "unreadable job ID",
    "I012": "row repeats an earlier row",
    "I013": "job step without its job",
    "I014": "unknown job state",
    "I015": "unreadable time",
    "I016": "no GPUs allocated",
    "I017": "job still running",
    "I018": "times out of order",
    "I019": "nothing to import",
    "I020": "missing required value",
    "I021": "not an exact decimal",
    "I022": "unknown category",
    "I023": "malformed job record",
    "I024": "job revoked",
    "I025": "conflicting records of one attempt",
    "I026": "GPU counts that disagree",
    "I027": "unreadable bytes in a field the import reads",
    # import: notes on rows imported with a caveat
    "I030": "tags are not JSON",
    "I031": "no run key",
    "I032": "time without offset read as UTC",
    "I033": "elapsed time disagrees with the times",
    "I034": "request after start not imported",
    "I035": "allocation left open",
    "I036": "value outside the format's list kept as written",
    "I037": "typed GPU counts differ from the total",
    "I038": "several GPU types",
    "I039": "optional value unreadable",
    "I040": "value respelled",
    "I041": "run key named twice in the tags",
    "I042": "one attempt in two records, merged",
    "I043": "bytes that are not UTF-8 replaced",
    "I044": "last line without a line break",
    "I045": "amount stored as floating point",
    "I046": "provider names that differ",
    # reconciliation
    "R001": "invoice in another currency",
    "R002": "unreadable billing period start",
    # regression fixtures (docs/fixtures.md)
    "F001": "cannot read a fixture manifest",
    "F002": "fixture manifest is not valid TOML",
    "F003": "unknown key in a fixture manifest",
    "F004": "missing key in a fixture manifest",
    "F005": "wrong type in a fixture manifest",
    "F006": "invalid value in a fixture manifest",
    "F007": "a file the manifest names does not exist",
    "F008": "no fixture found",
    "F009": "an expected output cannot be read",
    # warnings
    "W001": "rate never reached",
    "W002": "replay may be refunded twice",
    "W003": "comparison with `none` is never true",
    "W101": "checkpoint step goes back",
    "W102": "money column stored as floating point",
    "W103": "unusually many GPUs in one allocation",
    "W104": "allocation longer than a year",
    "W105": "unusually high price",
    "W106": "events moved to their allocation's edge by the clock skew",
    "W401": "credit computed a negative amount",
    "W601": "a verdict flips inside its 95% interval: needs more runs",
    "W602": "simulated runs gave up",
    "W701": "protocol line ignored",
    # W702 ("planned interrupt never came") is retired: its case is now the error E706; never
    # reuse it (docs/rehearse.md, "Retired codes")
    "W703": "job restored another step than the last valid checkpoint",
    "W704": "job failed",
    "W705": "job process outlived its allocation",
    "W706": "job ended without a verdict",
    "W801": "invoice credit line of positive amount",
}

#: The message of ``I044`` wherever it is given — a note of ``import sacct``, ``import focus``
#: and ``import availability``, the warning of ``simulate`` on a Bamboo trace — and what the
#: help of another problem on that line adds: one wording for one case.
LAST_LINE_OPEN = "the last line has no line break: it may have been cut"
