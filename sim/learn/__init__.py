"""Training the learned player (layer L7): the label collector (``learn_loop``, ``labels``),
the network in JAX (``jaxnet``, training only) and the trainer (``train``). Nothing is
imported here."""
