"""The one driver every command uses, pass by pass.

- :mod:`contractlang.pipeline.language`: text → tree → AST (``parse``), files parsed and
  checked together (``check_paths``, ``load_terms``), and ``format_source``, which lays a file
  out and reparses its own output. It imports no data-frame library, so ``check`` and ``fmt``
  start fast.
- :mod:`contractlang.pipeline.evaluation`: terms and a trace → facts → evaluation
  (``evaluate``, its options in one ``EvaluateOptions``).
- :mod:`contractlang.pipeline.chosen`: the contracts asked for by name exist (E502), checked
  once, before the trace is read.
"""
