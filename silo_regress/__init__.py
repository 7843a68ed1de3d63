"""silo-regress: byte-exact behaviour baselines for Silo agent runs."""

__version__ = "0.3.0"  # what provenance records name; pyproject reads it here
