"""The language's own words and values, shared by every pass: the typed AST (:mod:`ast`), the
dimension algebra of units (:mod:`types`), the vocabulary of functions, operators and enums
(:mod:`vocabulary`), the catalog of facts (:mod:`facts`), exact arithmetic (:mod:`exact`),
the one printer (:mod:`show`) and checked terms (:mod:`terms`)."""
