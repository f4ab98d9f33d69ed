"""Bots in other processes: the ``shuangkou-bot/1`` protocol (docs/protocol.md) and its runner.

``spec`` (what ``--bot NAME=COMMAND`` names, checked), ``guard`` (the process that bounds a
bot and outlives nothing), ``sandbox`` (the layers a bot runs under, probed once), ``process``
(one bot process: start, messages, bounded waits, faults), ``seat`` (a bot seated as a player:
the messages of its seat, time control, faults scored), ``check`` (``shuangkou bot check``).
"""
