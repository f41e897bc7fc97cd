"""Check code of the built-in rules, one module per family; metadata lives in ``rules/``."""
