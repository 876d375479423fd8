"""The HTML report in a real browser: headless Chromium (Debian's `chromium` and
`chromium-driver`, which `.ci/run` installs when missing) driven by selenium. The page loads
with no console error and makes no network request, and every chart has a size.

The screenshot is kept at ``$CONTRACTLANG_SCREENSHOT`` when that is set (to look at it)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from support.compared import rulesets_report_html

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")

pytestmark = pytest.mark.skipif(
    CHROMIUM is None or DRIVER is None,
    reason="Chromium and ChromeDriver are not installed (Debian: chromium chromium-driver)",
)


def _browser(profile: str):  # type: ignore[no-untyped-def]
    from selenium import webdriver  # noqa: PLC0415 — only where a browser exists
    from selenium.webdriver.chrome.service import Service  # noqa: PLC0415

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM  # type: ignore[assignment]
    for flag in (
        "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage", "--window-size=1280,2000", f"--user-data-dir={profile}",
    ):  # fmt: skip
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    return webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)


def test_the_report_renders_in_chromium_offline_with_every_chart_drawn(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    page.write_text(rulesets_report_html(), encoding="utf-8")
    profile = tempfile.mkdtemp(prefix="chromium-", dir=tmp_path)
    driver = _browser(profile)
    try:
        driver.get("about:blank")
        driver.get_log("performance")  # what the browser loaded for itself at start
        driver.get_log("browser")
        driver.get(page.as_uri())
        assert driver.title.endswith("contractlang report")
        verdict = driver.find_element("id", "verdict")
        assert verdict.text.startswith("None of the 5 drafts meets fy27-pretraining")
        charts = driver.find_elements("css selector", "figure.chart")
        assert [c.get_attribute("id") for c in charts] == [
            "chart-cost", "chart-usage", "chart-lost", "chart-clauses", "chart-price",
        ]  # fmt: skip
        for chart in charts:
            svg = chart.find_element("css selector", "svg")
            size = svg.size
            assert size["width"] > 100, (chart.get_attribute("id"), size)
            assert size["height"] > 50, (chart.get_attribute("id"), size)
        shot = tmp_path / "report.png"
        assert driver.save_screenshot(str(shot))
        assert shot.stat().st_size > 10_000
        if os.environ.get("CONTRACTLANG_SCREENSHOT"):
            shutil.copy(shot, os.environ["CONTRACTLANG_SCREENSHOT"])
        errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        assert errors == []
        requested = [
            json.loads(e["message"])["message"]["params"]["request"]["url"]
            for e in driver.get_log("performance")
            if json.loads(e["message"])["message"]["method"] == "Network.requestWillBeSent"
        ]
        assert requested == [page.as_uri()]  # the page itself, and nothing else
    finally:
        driver.quit()
