"""The registry of diagnostic codes. Every code used anywhere is listed here with a title.

Codes are stable: a code, once published, keeps its meaning. `docs/language.md` and
`docs/trace.md` list each with an example; a test checks that every code here is documented.

- E0xx syntax and input, E1xx names, E2xx types and units, E3xx contract structure,
  E4xx evaluation, E5xx command line and output files, E7xx rehearsals (`docs/rehearse.md`),
  T0xx trace validation; W-codes are warnings.
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
    # rehearsals
    "E701": "the job's command cannot start",
    "E702": "invalid rehearsal setting",
    "E703": "checkpoint outside the checkpoint directory",
    "E704": "interrupts cannot be placed without the job's total steps",
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
    # warnings
    "W001": "rate never reached",
    "W002": "replay may be refunded twice",
    "W003": "comparison with `none` is never true",
    "W101": "checkpoint step goes back",
    "W102": "money column stored as floating point",
    "W401": "credit computed a negative amount",
    "W701": "protocol line ignored",
    "W702": "planned interrupt never came",
    "W703": "job restored another step than the last valid checkpoint",
    "W704": "job failed",
    "W705": "job process outlived its allocation",
    "W706": "job ended without a verdict",
}
