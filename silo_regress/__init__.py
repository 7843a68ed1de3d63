"""silo-regress: byte-exact behaviour baselines for Silo agent runs."""

__version__ = "0.2.0.dev0"  # what provenance records name; pyproject reads it here
