"""A rehearsal: the terminal report, its timeline and failure path, and the
`contractlang.rehearse/1` JSON document."""
