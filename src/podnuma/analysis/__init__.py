"""Typed results of re-running the engine: explanations, the nearest-admissible search, compare, advise, rewrite, measure. No click, no rich, no printing."""
