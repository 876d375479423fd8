"""What the benchmark scripts share; each script in ``bench/`` is one measurement built from
these (``bench/README.md``). Importing the package imports nothing.

- ``measure``: a process's peak memory and CPU time, a whole process timed from outside,
  contractlang's bytecode compiled before anything is timed;
- ``traces``: traces made with the project's generator, with or without the edge cases;
- ``contract``, ``edge_cases``: the contract the evaluation benchmarks compute and the runs
  whose money is computed by hand;
- ``polars_baseline``, ``duckdb_baseline``: that contract written by hand in polars and in
  DuckDB SQL, from the raw events, and the floors; ``engine``: contractlang's evaluation of
  it; ``outcome``: what a step computed and measured; ``checks``: every step against the
  engine, exactly, and the edge cases against their hand computation;
- ``duckdb_facts``: the facts of every allocation and run by hand in DuckDB SQL;
- ``import_files``, ``import_baselines``: FOCUS and ``sacct`` files, and hand-written polars
  readers of them.
"""
