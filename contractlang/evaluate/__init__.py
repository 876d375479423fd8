"""The evaluation pass: contracts applied to derived facts (design §6), one module per step.

- :mod:`~contractlang.evaluate.settings`: a contract's currency, rounding, billing, promises
- :mod:`~contractlang.evaluate.contract_run`: one contract as every stage reads it, made once
- :mod:`~contractlang.evaluate.billing`: steps 2–6 per allocation (exclusions, billable time,
  rate, charge, credits)
- :mod:`~contractlang.evaluate.caps`: step 7 at every level, and cap limits
- :mod:`~contractlang.evaluate.runs`: per-run sums, net, totals, promise breaches
- :mod:`~contractlang.evaluate.budget`: budget requirements, exactly
- :mod:`~contractlang.evaluate.trace_checks`: what only the trace can tell (E401–E405, W401)
- :mod:`~contractlang.evaluate.ledger`: the line items and the per-run table
- :mod:`~contractlang.evaluate.results`: what all of it returns
- :mod:`~contractlang.evaluate.stages`: the steps in order, as data (``STAGES``), each from
  one ``Staged`` to the next
- :mod:`~contractlang.evaluate.engine`: every stage of one contract (again the careful way
  where the quick one overflows), then every contract, over the facts
"""
