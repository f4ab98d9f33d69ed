"""Analysis (beside the layers): statistics and reports of a tournament's results. Reads only
the numpy-free tables (no engine, no numba). Nothing is imported here."""
