"""The mapping report of `contractlang import`."""
