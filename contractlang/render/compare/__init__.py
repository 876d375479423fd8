"""A comparison: the terminal summary, the `contractlang.compare/1` JSON document, its CSV rows,
and the comparison in words."""
