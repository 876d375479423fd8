"""The syntax pass: text → typed AST (:mod:`~contractlang.syntax.parser`, with syntax errors by
example in :mod:`~contractlang.syntax.errors`), the AST built as lark parses by
:mod:`~contractlang.syntax.lower`, the only module that knows the grammar's rules. The grammar
is ``spot.lark``."""
