"""The HTML report as a review page, opened in headless Chromium: layout at two widths,
regressions first, verdict colours readable in both schemes, headings and keyboard reach."""

from __future__ import annotations

import itertools
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from reportfixture import failing_project
from silofixture import SiloProject


@pytest.fixture
def page(tmp_path: Path) -> Path:
    project: SiloProject = failing_project(tmp_path / "project")
    out = tmp_path / "report.html"
    assert project.cli("check", "--format", "html", "--output", str(out)).exit_code == 1
    return out


def _chromium(chromium: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    flags = [
        str(chromium),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
    ]
    return subprocess.run([*flags, *args], check=True, capture_output=True, text=True, timeout=120)


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def test_screenshots_at_desktop_and_phone_width(page: Path, tmp_path: Path, chromium: Path) -> None:
    for width in (1400, 390):
        shot = tmp_path / f"page-{width}.png"
        _chromium(
            chromium, tmp_path, f"--screenshot={shot}", f"--window-size={width},1800", page.as_uri()
        )
        data = shot.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        assert int.from_bytes(data[16:20], "big") == width
        assert len(data) > 10_000, "the screenshot is blank"


def test_regressions_come_first_and_matches_fold(
    page: Path, tmp_path: Path, chromium: Path
) -> None:
    dom = _chromium(chromium, tmp_path, "--dump-dom", page.as_uri()).stdout
    parser = _Tags()
    parser.feed(dom)
    groups = [a.get("id") for t, a in parser.tags if t == "section"]
    assert groups[0] == "regressions" and groups[-1] == "matches", groups
    cards = [a.get("class") or "" for t, a in parser.tags if t == "article"]
    assert cards[0] == "card k-regression", cards
    assert "TASK-003" in dom.split("<details")[1]  # the matching task sits in the fold
    assert "{+" not in dom and "[-" not in dom


def _luminance(colour: str) -> float:
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _contrast(fg: str, bg: str) -> float:
    a, b = sorted((_luminance(fg), _luminance(bg)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def test_verdict_colours_have_contrast_in_both_schemes(page: Path) -> None:
    css = page.read_text().split("<style>")[1].split("</style>")[0]
    light = re.search(r":root \{(.*?)\}", css)
    dark = re.search(r"prefers-color-scheme: dark\) \{ :root \{(.*?)\}", css)
    assert light and dark
    for block in (light.group(1), dark.group(1)):
        values = dict(re.findall(r"--([\w-]+): (#[0-9a-f]{6})", block))
        kinds = [k[: -len("-fg")] for k in values if k.endswith("-fg")]
        assert {"regression", "improvement", "mixed", "drift", "other", "match"} <= set(kinds)
        for kind in kinds:
            ratio = _contrast(values[f"{kind}-fg"], values[f"{kind}-bg"])
            assert ratio >= 4.5, (kind, ratio)
        assert _contrast(values["fg"], values["bg"]) >= 4.5
    # a link inside a badge keeps the verdict colour, not the link colour
    assert re.search(r"a\.k-regression \{ color: var\(--regression-fg\)", css)


def test_one_h1_ordered_headings_and_keyboard_reach(
    page: Path, tmp_path: Path, chromium: Path
) -> None:
    dom = _chromium(chromium, tmp_path, "--dump-dom", page.as_uri()).stdout
    parser = _Tags()
    parser.feed(dom)
    levels = [int(t[1]) for t, _ in parser.tags if re.fullmatch(r"h[1-6]", t)]
    assert levels.count(1) == 1 and levels[0] == 1
    assert all(b <= a + 1 for a, b in itertools.pairwise(levels)), levels
    interactive = [(t, a) for t, a in parser.tags if t in {"a", "summary", "button", "input"}]
    assert interactive
    for tag, attrs in interactive:
        assert attrs.get("tabindex") is None or int(attrs["tabindex"] or 0) >= 0
        if tag == "a":
            assert attrs.get("href"), attrs  # an anchor without href is not focusable
    assert "focus-visible" in page.read_text()
