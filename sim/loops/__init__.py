"""The compiled drivers and what runs them (layer L4): the deal loops (``loop``,
``plugin_loop``), each player's kernel by address and the plug-in guard (``plugins``), the
helper thread, the runner, ``sim.Batch`` (``batch``), ``shuangkou compile`` (``precompile``).
A new compiled loop goes here. Nothing is imported here."""
