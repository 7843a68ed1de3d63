"""Helpers shared by every tier: projects, git repositories, the stand-in Silo, faults."""
