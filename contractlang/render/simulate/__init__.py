"""A simulation: the terminal summary with every figure's Monte Carlo error, and the
`contractlang.simulate/1` JSON document."""
