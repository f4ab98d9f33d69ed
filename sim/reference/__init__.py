"""The independent plain-Python reference engine (beside the layers): ``cards`` (the cards and
their notation, R1–R3), ``oracle`` (the rules, deals and records, written from docs/rules.md;
it re-exports the public names of ``cards``) and ``validator`` (checks a record against them).
It imports nothing of the compiled core. Nothing is imported here."""
