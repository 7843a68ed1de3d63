"""The HTML report as a review page, opened in headless Chromium: layout at two widths,
regressions first, verdict colours readable in both schemes (from the styles Chromium
computes), headings in order, keyboard reach and a visible focus on everything
interactive."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from support.reportfixture import failing_project, history_project
from support.silofixture import SiloProject


@pytest.fixture
def page(tmp_path: Path) -> Path:
    project: SiloProject = failing_project(tmp_path / "project")
    out = tmp_path / "report.html"
    assert project.cli("check", "--format", "html", "--output", str(out)).exit_code == 1
    return out


@pytest.fixture(params=["every-kind", "with-history"])
def any_page(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """The page of every kind of result, and the page with the history chart."""
    make = failing_project if request.param == "every-kind" else history_project
    project: SiloProject = make(tmp_path / "project")
    out = tmp_path / "report.html"
    assert project.cli("check", "--format", "html", "--output", str(out)).exit_code == 1
    if request.param == "with-history":
        assert "<svg" in out.read_text(encoding="utf-8")
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


def test_screenshots_at_desktop_and_phone_width(
    any_page: Path, tmp_path: Path, chromium: Path
) -> None:
    for width, scheme in itertools.product((1400, 390), (1, 0)):  # light, dark
        shot = tmp_path / f"page-{width}-{scheme}.png"
        size = f"--window-size={width},1800"
        dark = f"--blink-settings=preferredColorScheme={scheme}"
        _chromium(chromium, tmp_path, f"--screenshot={shot}", size, dark, any_page.as_uri())
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


# Runs in the page: every folded part opened, then what a reader sees, measured from
# the styles Chromium computed. Text on the nearest painted background (WCAG 1.4.3),
# the chart's lines (1.4.11), and each link and summary focused from the keyboard (2.4.7).
PROBE = """
<pre id="a11y-probe"></pre>
<script>
const probe = () => {
  document.querySelectorAll("details").forEach((d) => { d.open = true; });
  const rgb = (s) => {
    const p = s.match(/rgba?\\(([^)]+)\\)/)[1].split(",").map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const background = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) return c;
    }
    return rgb(getComputedStyle(document.documentElement).backgroundColor);
  };
  const lum = (c) => {
    const l = c.slice(0, 3).map((v) => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2];
  };
  const ratio = (a, b) => {
    const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
    return (x + 0.05) / (y + 0.05);
  };
  const named = (e) => e.tagName.toLowerCase() + "." + (e.getAttribute("class") || "")
    + " " + e.textContent.trim().slice(0, 40);
  const owners = [...document.body.querySelectorAll("*")].filter((e) =>
    [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim())
    && !e.closest("svg") && e.id !== "a11y-probe" && e.tagName !== "SCRIPT");
  const text = owners.map((e) => ({
    what: named(e), kind: e.closest("[class*=k-]")?.className.match(/k-[a-z]+/)?.[0] || "",
    ratio: ratio(rgb(getComputedStyle(e).color), background(e)),
    colours: getComputedStyle(e).color + " on " + background(e).join(","),
  }));
  const graphics = [...document.querySelectorAll("svg.chart .line")].map((e) => ({
    what: e.getAttribute("class"),
    ratio: ratio(rgb(getComputedStyle(e).stroke), background(e.closest("svg"))),
  }));
  const focus = [...document.querySelectorAll("a[href], summary")].map((e) => {
    e.focus({ focusVisible: true });
    const s = getComputedStyle(e);
    return {
      what: named(e), focused: document.activeElement === e,
      visible: e.matches(":focus-visible"), outline: s.outlineStyle,
      width: parseFloat(s.outlineWidth), ratio: ratio(rgb(s.outlineColor), background(e)),
    };
  });
  document.getElementById("a11y-probe").textContent = JSON.stringify({
    dark: matchMedia("(prefers-color-scheme: dark)").matches, text, graphics, focus,
    pageFocused: document.hasFocus(),
  });
};
addEventListener("load", probe);
</script>
"""


def _probe(page: Path, tmp_path: Path, chromium: Path, *, dark: bool) -> dict[str, Any]:
    probed = tmp_path / f"probed-{'dark' if dark else 'light'}.html"
    probed.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"))
    # Blink's own setting: 0 is dark, 1 light (--force-dark-mode also darkens, but
    # then programmatic focus no longer counts as keyboard focus).
    scheme = f"--blink-settings=preferredColorScheme={0 if dark else 1}"
    for _ in range(5):
        dom = _chromium(chromium, tmp_path, scheme, "--dump-dom", probed.as_uri()).stdout
        found = re.search(r'<pre id="a11y-probe">(.*?)</pre>', dom, re.DOTALL)
        assert found and found.group(1), "the probe did not run"
        result: dict[str, Any] = json.loads(html_unescape(found.group(1)))
        assert result["dark"] is dark
        # Now and then a headless window starts without focus, and then no focus
        # counts as keyboard focus: that says nothing about the page, so try again.
        if result["pageFocused"]:
            return result
    raise AssertionError("headless Chromium never gave the page focus")


def html_unescape(text: str) -> str:
    from html import unescape

    return unescape(text)


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_computed_colours_have_contrast(
    any_page: Path, tmp_path: Path, chromium: Path, dark: bool
) -> None:
    probe = _probe(any_page, tmp_path, chromium, dark=dark)
    text = probe["text"]
    assert isinstance(text, list) and len(text) > 30
    kinds = {item["kind"] for item in text}
    assert {"k-regression", "k-match"} <= kinds, kinds  # the verdict colours were measured
    low = [(t["what"], round(t["ratio"], 2)) for t in text if t["ratio"] < 4.5]
    assert not low, low
    graphics = probe["graphics"]
    assert isinstance(graphics, list)
    assert all(g["ratio"] >= 3 for g in graphics), graphics


def test_keyboard_focus_is_visible_on_every_link_and_summary(
    any_page: Path, tmp_path: Path, chromium: Path
) -> None:
    for dark in (False, True):
        focus = _probe(any_page, tmp_path, chromium, dark=dark)["focus"]
        assert isinstance(focus, list) and focus
        assert {f["what"].split(".")[0] for f in focus} == {"a", "summary"}
        for item in focus:
            assert item["focused"] and item["visible"], (item, focus)
            assert item["outline"] != "none" and item["width"] >= 2, item
            assert item["ratio"] >= 3, item  # WCAG 1.4.11: the ring stands out


# Headless Chromium lays --dump-dom out at least 500 px wide, so the page is measured
# in a frame of the exact width (same directory: file access between the two allowed).
FRAME = """<!DOCTYPE html>
<html><body style="margin:0">
<iframe id="frame" src="{page}" style="width:{width}px;height:1200px;border:0"></iframe>
<pre id="layout"></pre>
<script>
addEventListener("load", () => {{
  const w = document.getElementById("frame").contentWindow;
  const chart = w.document.querySelector("svg.chart");
  document.getElementById("layout").textContent = JSON.stringify({{
    width: w.innerWidth, scrollWidth: w.document.documentElement.scrollWidth,
    chart: chart ? chart.getBoundingClientRect().width : null,
  }});
}});
</script>
</body></html>
"""


@pytest.mark.parametrize("width", [1400, 390])
def test_the_page_fits_the_width_and_the_chart_fills_it(
    any_page: Path, tmp_path: Path, chromium: Path, width: int
) -> None:
    frame = any_page.with_name(f"frame-{width}.html")
    frame.write_text(FRAME.format(page=any_page.name, width=width), encoding="utf-8")
    flags = ("--allow-file-access-from-files", "--dump-dom", frame.as_uri())
    dom = _chromium(chromium, tmp_path, *flags).stdout
    found = re.search(r'<pre id="layout">(.*?)</pre>', dom)
    assert found and found.group(1), "the frame was not measured"
    layout = json.loads(html_unescape(found.group(1)))
    assert layout["width"] == width
    # wide diffs scroll inside their own box; the page itself never scrolls sideways
    assert layout["scrollWidth"] <= width, layout
    if "<svg" in any_page.read_text(encoding="utf-8"):
        assert 0.6 * min(width, 900) <= layout["chart"] <= 900, layout
