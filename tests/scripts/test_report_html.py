"""report-html: the page of a multirun A/B and of a ladder, rendered in headless Chromium: it
loads with no console message and no broken image, needs no network, and its screenshot is
not blank. Also the kinds it recognises and its one-line errors."""

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image

import fakes
from apiary_tools.commands import compare, ladder, report_html

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# Injected into a copy of the page: records errors (scripts, resources that fail to load) and
# the images that did not decode, into attributes --dump-dom shows.
PROBE = """<script>
window.__errors = [];
window.addEventListener("error", e => window.__errors.push(String(e.message || e.type)), true);
window.addEventListener("load", () => {
  const images = Array.from(document.images), root = document.documentElement.dataset;
  root.images = images.length;
  root.broken = images.filter(i => !(i.complete && i.naturalWidth > 0)).length;
  root.errors = window.__errors.length;
});
</script>"""


def chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        if shutil.which(name):
            return shutil.which(name)
    pytest.fail("chromium is missing: run scripts/install-deps.sh")


def render(page: Path, tmp_path: Path) -> tuple[dict[str, str], str, np.ndarray]:
    """The probe's findings, Chromium's log and the screenshot of the page."""
    probed = tmp_path / f"probed-{page.name}"
    probed.write_text(page.read_text().replace("<head>", "<head>" + PROBE, 1))
    shot = tmp_path / f"{page.stem}.png"
    with tempfile.TemporaryDirectory(prefix="apiary-chromium-") as profile:
        proc = subprocess.run([chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--enable-logging=stderr",
                               "--v=0", "--window-size=1280,1600", "--dump-dom", f"--screenshot={shot}",
                               probed.as_uri()], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    html_tag = re.search(r"<html[^>]*>", proc.stdout)
    assert html_tag, proc.stdout[:500]
    found = dict(re.findall(r'data-(\w+)="([^"]*)"', html_tag.group(0)))
    return found, proc.stderr, image.imread(shot)


def check_page(page: Path, tmp_path: Path, min_images: int) -> str:
    text = page.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text), "the page loads something from outside"
    assert "<script" not in text and "<link" not in text
    found, log, shot = render(page, tmp_path)
    assert int(found["images"]) >= min_images and found["broken"] == "0" and found["errors"] == "0", found
    assert "CONSOLE" not in log, [line for line in log.splitlines() if "CONSOLE" in line]
    pixels = shot[..., :3].reshape(-1, 3)
    assert np.ptp(pixels) > 0.5 and len(np.unique(pixels, axis=0)) > 50, "the screenshot is blank"
    return text


def test_multirun_ab_page(tmp_path):
    out = tmp_path / "multirun"
    fakes.write_set(out / "a", [20000, 20100, 19900, 20050])
    fakes.write_set(out / "b", [21000, 21100, 20900, 21050])
    assert compare.main([str(out / "a"), str(out / "b"), "--labels", "a,b", "--json", str(out / "comparison.json"),
                         "--quiet"]) == 1
    page = report_html.write_page(out)
    assert page == out / "report.html"
    text = check_page(page, tmp_path, min_images=2)
    assert "Verdicts" in text and "<strong>slower</strong>" in text and "Transaction latency" in text


def test_multirun_ab_page_with_counters_and_profiles(tmp_path):
    """An A/B whose runs were counted and profiled, compared with --profile: the page holds the
    counters' table, the functions that moved, and the three flame graphs as SVG images."""
    out = tmp_path / "multirun"
    fakes.write_profiled_set(out / "a", [20000, 20100, 19900, 20050])
    fakes.write_profiled_set(out / "b", [20000, 20100, 19900, 20050], slow="apiary::core::chain::find_comment",
                             writer_ns_per_tx=4400, seed=1)
    assert compare.main([str(out / "a"), str(out / "b"), "--labels", "a,b", "--profile", "--json",
                         str(out / "comparison.json"), "--quiet"]) == 0
    text = check_page(report_html.write_page(out), tmp_path, min_images=5)
    assert text.count('src="data:image/svg+xml;base64,') == 3
    assert "Counters per transaction" in text and "<td>task_clock_ns</td>" in text
    functions = text[text.index("Profile: the functions whose self share moved most"):]
    assert functions.index("find_comment") < functions.index("apply_vote")
    assert "Profiles: B against A" in text and "not shown" not in text


def test_run_page_with_its_flame_graph(tmp_path):
    out = fakes.write_profiled_set(tmp_path / "set", [20000])
    page = report_html.write_page(out / "run-001.json", tmp_path / "run.html")
    text = check_page(page, tmp_path, min_images=3)
    assert text.count('src="data:image/svg+xml;base64,') == 1 and "apiary run --profile" in text
    assert "| writer | task_clock_ns |" not in text and "<td>writer</td>" in text


def test_ladder_page(tmp_path, repo):
    binary = tmp_path / "apiary"
    binary.write_text(f"#!/bin/sh\nexec {sys.executable} {repo / 'tests' / 'scripts' / 'fake_apiary.py'} \"$@\"\n")
    binary.chmod(0o755)
    out = tmp_path / "ladder"
    assert ladder.main(["--apiary", str(binary), "--runs", "1", "--instructions", "off", "--out", str(out)]) == 0
    page = report_html.write_page(out / "ladder.json", tmp_path / "ladder.html")
    text = check_page(page, tmp_path, min_images=3)
    assert "7 volatile RC" in text and "Full block cycle per block" in text


def test_kinds_and_bad_input(tmp_path, capsys):
    report = fakes.write_report(tmp_path / "run.json", fakes.make_report([20000] * 5))
    assert report_html.detect(report) == ("run", report)
    assert report_html.detect(tmp_path) == ("multirun", tmp_path)
    assert report_html.main([str(report)]) == 0 and (tmp_path / "run.html").is_file()
    (tmp_path / "other.json").write_text("{}")
    for bad, message in ((tmp_path / "nothing", "no such file"), (tmp_path / "other.json", "not a run report")):
        assert report_html.main([str(bad)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("report-html: ") and message in err and "\n" not in err
