"""One run's bill: as plain text, as the `contractlang.explain/1` JSON document, and what each
clause does to it."""
