"""Tournaments (layer L5): the config, the chunk plan and tallies, the results folder, the
worker pool, live standings, swing deals and the run itself (``run``). Imports the loops, never
a command. Nothing is imported here."""
