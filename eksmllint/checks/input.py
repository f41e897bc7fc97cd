"""Family 0xx: input and schema."""

from __future__ import annotations


def produced_by_engine(ctx, target):
    """EML000/EML001/EML006 findings come from the engine, the loader and the suppression pass;
    the rule files exist so that these codes are documented, selectable and explainable."""
    return ()
