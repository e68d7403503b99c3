"""AST -> IR parser of the `pl` language."""
