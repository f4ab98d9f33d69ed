"""The commands built on the loops and tournaments (layer L6): ``ladder``, ``tune``,
``estimate``, ``bench``, ``analyze``. They import the floors below and never each other
(tests/test_layers.py); a new command goes here. Nothing is imported here."""
