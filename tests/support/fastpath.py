"""canonicalize's fast path on its own, for the tests of its proof: they must see
where it declines, and canonicalize hides that by taking the exact path."""

from __future__ import annotations

from unittest import mock

from silo_regress.canon import canonical
from silo_regress.canon.canonical import Document


def fast_path(data: bytes) -> Document | None:
    """What the fast path makes of ``data``, or None where it declines (canonicalize
    with its exact path replaced by one that answers None)."""
    with mock.patch.object(canonical, "_canonicalize_exact", return_value=None):
        return canonical.canonicalize(data, source="fast path")
