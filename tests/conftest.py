from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.runnerkit import control
from support.silofixture import GIT_IDENTITY, SiloProject, make_project

# The stand-in Silo's control file: a fixture for every test that makes real rollouts.
__all__ = ["control"]


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No user's git config, colour setting or CI variables leak into a test."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for key, value in GIT_IDENTITY.items():
        monkeypatch.setenv(key, value)
    for key in (
        "NO_COLOR",
        "GITHUB_STEP_SUMMARY",
        "GITHUB_ACTIONS",
        "CI",
        "GIT_DIR",
        "GIT_INDEX_FILE",
    ):
        monkeypatch.delenv(key, raising=False)
    yield


@pytest.fixture
def project(tmp_path: Path) -> SiloProject:
    """An empty Silo project with default configuration."""
    return make_project(tmp_path / "project")


@pytest.fixture(scope="session")
def chromium() -> Path:
    """Debian's headless Chromium; installed with apt-get when missing and possible."""
    from support.chromium_setup import find_or_install_chromium

    found = find_or_install_chromium()
    if found is None:
        pytest.skip("chromium is not installed and cannot be installed here (needs root + apt)")
    return found


TIERS = ("unit", "cli", "integration")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each test carries its tier's marker, from the folder it lives in.

    ``-m "not integration"`` (or a tier's folder) then picks a tier without a list
    to keep in step; a test outside the three folders fails the run instead of
    hiding from every tier.
    """
    for item in items:
        tier = item.path.parent.name
        if tier not in TIERS:
            raise pytest.UsageError(f"{item.nodeid}: tests live in tests/{{{','.join(TIERS)}}}/")
        item.add_marker(getattr(pytest.mark, tier))
