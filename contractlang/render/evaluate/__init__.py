"""An evaluation: the terminal summary and the `contractlang.evaluate/1` JSON document."""
