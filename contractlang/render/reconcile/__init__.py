"""A reconciliation: the terminal summary, the `contractlang.reconcile/1` JSON document and the
dispute table, and the words both use."""
