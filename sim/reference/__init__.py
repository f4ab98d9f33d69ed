"""The independent plain-Python reference engine (beside the layers): ``oracle`` (the rules,
deals and records, written from docs/rules.md) and ``validator`` (checks a record against
them). It imports nothing of the compiled core. Nothing is imported here."""
