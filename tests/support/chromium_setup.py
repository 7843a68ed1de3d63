"""Find Debian's chromium for the HTML report test, installing it with apt-get if needed."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path


def find_or_install_chromium() -> Path | None:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return Path(found)
    if os.name != "posix" or os.geteuid() != 0 or not shutil.which("apt-get"):
        return None
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for command in (
        ["apt-get", "update", "-q"],
        ["apt-get", "install", "-y", "-q", "--no-install-recommends", "chromium"],
    ):
        try:
            subprocess.run(command, check=True, capture_output=True, env=env, timeout=900)
        except (OSError, subprocess.SubprocessError):
            return None
    found = shutil.which("chromium")
    return Path(found) if found else None
