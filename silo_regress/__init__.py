"""silo-regress: byte-exact behaviour baselines for Silo agent runs."""

__version__ = "0.1.0"
