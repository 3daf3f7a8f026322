"""Runnable reference programs, one self-contained module per research system.

Each module uses NumPy and the standard library only, seeds its randomness and exposes
``run(seed=0) -> dict`` (the measurements as data) and ``main(argv=None) -> int``
(a short printed report), so ``python -m deepdives.reference.<name>`` runs it.
"""
