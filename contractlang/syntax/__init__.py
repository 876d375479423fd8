"""The syntax pass: text → lark tree (:mod:`~contractlang.syntax.parser`, with syntax errors by
example in :mod:`~contractlang.syntax.errors`) → typed AST (:mod:`~contractlang.syntax.lower`,
the only module that knows lark's tree). The grammar is ``spot.lark``."""
