"""The harness (layer L4): the compiled deal loops that dispatch to strategies (``loop``,
``plugins``), the runner, configs, tournaments and their results folders, estimates and
benchmarks. Nothing is imported here."""
