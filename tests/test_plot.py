"""hetsched.plot: the pictures of a run, a comparison and a sweep directory, made from
directories the CLI itself wrote (a second of simulated time each).

Checked: the files are real PNG / SVG / HTML, the axes carry their labels with units, the
titles name platform, workload and scheduler, the HTML page needs nothing outside itself,
SVG bytes repeat, what cannot be drawn is said, the energy split adds up to numbers worked
from result.json and the platform's tables, and a directory that is not a result is refused
in one line naming it, with nothing written.
"""

from __future__ import annotations

import html
import json
import math
import os
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from hetsched.errors import InputError, UnknownNameError
from hetsched.plot import PLOTS_DIR, detect_kinds, plot_dir

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def dirs(tmp_path_factory, tools) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("plot")
    grid = root / "grid.yaml"
    grid.write_text("platforms: [gs101]\nworkloads: [phone-mix]\nschedulers: [cfs, eas]\nseeds: 2\nduration: 1\n")
    jobs = {
        "run": ["run", "--platform", "gs101", "--workload", "phone-mix", "--duration", "1", "--timeseries",
                "--out", root / "run"],
        "bare": ["run", "--platform", "gs101", "--workload", "game", "--duration", "1", "--out", root / "bare"],
        # 5,000 samples a CPU: past the point where the series are drawn per time bin
        "dense": ["run", "--platform", "gs101", "--workload", "phone-mix", "--duration", "1", "--timeseries",
                  "--set", "timeseries.period_us=200", "--out", root / "dense"],
        "compare": ["compare", "--platform", "gs101", "--workload", "game", "--scheduler", "cfs", "--scheduler",
                    "eas", "--duration", "1", "--seeds", "2", "--format", "json", "--out", root / "compare"],
        "sweep": ["sweep", grid, "--workers", "1", "--out", root / "sweep"],
    }
    done = tools.run_cli_many(jobs, cwd=root, workers=2)
    for name, proc in done.items():
        assert proc.returncode == 0, (name, proc.stderr)
    return {name: root / name for name in jobs}


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def _svg_texts(path: Path) -> list[str]:
    root = ET.parse(path).getroot()
    assert root.tag == f"{SVG}svg"
    return [t.text for t in root.iter(f"{SVG}text") if t.text]


class _Refs(HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs: list[str] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.refs += [v or "" for k, v in attrs if k in ("src", "href", "xlink:href", "action", "srcset")]


def _assert_self_contained(page: Path) -> str:
    text = page.read_text(encoding="utf-8")
    p = _Refs()
    p.feed(text)
    assert p.refs, "the page embeds no figure"
    outside = [r for r in p.refs if not (r.startswith("#") or r.startswith("data:"))]
    assert not outside, outside
    assert not {"script", "link", "iframe", "object"} & p.tags
    assert "url(http" not in text and "@import" not in text
    return text


def test_import_is_cheap():
    code = "import sys, hetsched.plot; print(sorted(m for m in ('matplotlib', 'pandas', 'numpy') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(Path(__import__("hetsched").__file__).parents[1])})
    assert out.stdout.strip() == "[]"


def test_detect_kinds(dirs):
    assert detect_kinds(dirs["run"]) == ["run"]
    assert detect_kinds(dirs["compare"]) == ["compare"]
    assert detect_kinds(dirs["sweep"]) == ["sweep"]


def test_run_directory(dirs):
    d = dirs["run"]
    files = plot_dir(d, ("png", "svg", "html"))
    names = [f.name for f in files]
    assert names == ["run_frequency.png", "run_frequency.svg", "run_cpu_states.png", "run_cpu_states.svg",
                     "run_energy.png", "run_energy.svg", "run_freq_residency.png", "run_freq_residency.svg",
                     "run.html"]
    assert all(f.parent == d / PLOTS_DIR and f.is_file() for f in files)
    for f in files:
        if f.suffix == ".png":
            w, h = _png_size(f)
            assert 300 < w < 2000 and 200 < h < 2000, (f.name, w, h)
    title = "gs101 | phone-mix:load=1.0 | eas/schedutil, menu | 1 s"
    freq = _svg_texts(d / PLOTS_DIR / "run_frequency.svg")
    assert {"simulated time [s]", "frequency [GHz]", title} <= set(freq)
    # one line per cluster, named with its CPUs
    assert {"little (CPUs 0-3)", "mid (CPUs 4-5)", "big (CPUs 6-7)"} <= set(freq)
    states = _svg_texts(d / PLOTS_DIR / "run_cpu_states.svg")
    assert {"simulated time [s]", "utilisation [% of capacity]", "running", "idle 0: WFI", "idle 1: c2",
            "CPU 0 (little)", "CPU 7 (big)"} <= set(states)
    assert {"energy [J]", "cluster"} <= set(_svg_texts(d / PLOTS_DIR / "run_energy.svg"))
    res = _svg_texts(d / PLOTS_DIR / "run_freq_residency.svg")
    assert {"OPP [MHz]", "busy [s]"} <= set(res)
    page = _assert_self_contained(d / PLOTS_DIR / "run.html")
    assert page.count("<svg") == 4 and "Not drawn" not in page


def test_energy_split_is_worked_from_the_residencies(dirs):
    """The legend's running and idle energies are residency x power summed over the CPUs:
    worked here from result.json and the platform's OPP and idle-state tables, and they
    add up to the energy the engine reported."""
    from hetsched.platforms import load_platform

    d = dirs["run"]
    doc = json.loads((d / "result.json").read_text())
    p = load_platform("gs101")
    tables = {c.name: c for c in p.clusters}
    active = idle = 0.0
    for cpu in doc["cpus"]:
        c = tables[cpu["cluster"]]
        active += sum(cpu["freq_residency_s"][str(o.khz)] * o.power_uw for o in c.opps) * 1e-6
        idle += sum(cpu["idle_residency_s"][s.name] * s.power_uw for s in c.idle_states) * 1e-6
    assert math.isclose(active + idle, doc["energy_j"], rel_tol=1e-9)
    assert idle > 0  # WFI draws power on gs101 (an estimate, platform_notes)
    plot_dir(d, ("svg",))
    legend = [t for t in _svg_texts(d / PLOTS_DIR / "run_energy.svg") if t.startswith(("CPUs running", "CPUs idle"))]

    def sig3(x: float) -> str:
        mag = math.floor(math.log10(abs(x)))
        return f"{x:.3g}" if mag >= 6 or mag < -3 else f"{x:.{max(0, 2 - mag)}f}"

    assert legend == [f"CPUs running (busy at an OPP): {sig3(active)} J",
                      f"CPUs idle (in an idle state): {sig3(idle)} J"]


def test_energy_not_split_when_it_does_not_add_up(dirs, tmp_path):
    """A result whose per-CPU energy is not residency x power (here: edited) is drawn whole,
    and the page and the notes say why."""
    d = tmp_path / "edited"
    d.mkdir()
    doc = json.loads((dirs["run"] / "result.json").read_text())
    doc["cpus"][3]["energy_j"] += 0.5
    (d / "result.json").write_text(json.dumps(doc))
    notes: list[str] = []
    plot_dir(d, ("svg", "html"), notes=notes)
    assert any("CPU 3: residency x power" in n for n in notes), notes
    texts = _svg_texts(d / PLOTS_DIR / "run_energy.svg")
    assert "CPUs, running and idle (not split)" in texts
    assert "CPU 3: residency x power" in (d / PLOTS_DIR / "run.html").read_text()


def test_run_without_timeseries_says_what_is_missing(dirs):
    d = dirs["bare"]
    notes: list[str] = []
    files = plot_dir(d, ("svg", "html"), notes=notes)
    assert [f.name for f in files] == ["run_energy.svg", "run_freq_residency.svg", "run.html"]
    assert notes == ["run: not drawn: frequency over time and CPU states: no timeseries.csv (run with --timeseries)"]
    texts = _svg_texts(d / PLOTS_DIR / "run_energy.svg")
    assert any(t.startswith("not drawn: frequency over time") for t in texts), texts
    page = _assert_self_contained(d / PLOTS_DIR / "run.html")
    assert "Not drawn" in page and "no timeseries.csv" in page
    # the game's headline figures in the summary table
    assert "game.fps" in page and "game.frame_drop_pct" in page


def test_dense_series_are_binned(dirs):
    d = dirs["dense"]
    plot_dir(d, ("png", "html"))
    page = (d / PLOTS_DIR / "run.html").read_text()
    assert page.count("More than 4000 samples") == 2  # the frequency and the CPU-state figures
    _png_size(d / PLOTS_DIR / "run_cpu_states.png")


def test_compare_directory(dirs):
    d = dirs["compare"]
    files = plot_dir(d, ("png", "svg", "html"))
    assert [f.name for f in files] == ["compare_energy_quality.png", "compare_energy_quality.svg",
                                       "compare_changes.png", "compare_changes.svg", "compare.html"]
    eq = _svg_texts(d / PLOTS_DIR / "compare_energy_quality.svg")
    # the game's two headline metrics, each against the energy
    assert {"energy [J] (lower is better)", "game.fps [fps]", "game.frame_drop_pct [%]", "cfs/schedutil (baseline)",
            "eas/schedutil"} <= set(eq)
    assert "gs101 | game | 1 s x 2 seeds: energy against quality" in eq
    ch = _svg_texts(d / PLOTS_DIR / "compare_changes.svg")
    assert "change vs cfs/schedutil [%]" in ch and "energy [J]" in ch
    page = _assert_self_contained(d / PLOTS_DIR / "compare.html")
    doc = json.loads((d / "compare.json").read_text())
    energy = next(e for e in doc["summary"] if e["metric"] == "energy_j" and e["cell"] == "eas/schedutil")
    assert f"{energy['rel_change_vs_first'] * 100:+.1f}%" in page  # the summary table's change
    # the stars' test is the one compare.json names (paired t by default), not a fixed one
    assert doc["test"].startswith("Student's paired t") and html.escape(doc["test"]) in page and "Welch" not in page


def test_compare_error_bars_are_the_summary_intervals(dirs):
    """The energy axis' bar of each configuration spans mean ± ci95 of compare.json: read
    back through the SVG's data coordinates is not possible, so the figure is rebuilt and
    its artists' data compared."""
    from hetsched.plot import compare_figures

    d = dirs["compare"]
    doc = json.loads((d / "compare.json").read_text())
    want = {e["cell"]: (e["mean"], e["ci95"]) for e in doc["summary"] if e["metric"] == "energy_j"}
    figs = compare_figures(d)
    name, fig, _cap = figs.figures[0]
    assert name == "energy_quality"
    ax = fig.axes[0]
    got = {}
    for container in ax.containers:
        label = container.get_label().removesuffix(" (baseline)")
        # errorbar() adds the x bars' collection first and the y bars' last; a quality metric
        # equal on every seed gives a zero-width x bar, vertical by its ends
        (seg,) = container.lines[2][-1].get_segments()
        assert seg[0, 0] == seg[1, 0]
        lo, hi = sorted(seg[:, 1])
        got[label] = ((lo + hi) / 2, (hi - lo) / 2)
    assert got.keys() == want.keys()
    for cell, (mean, ci) in want.items():
        assert got[cell] == pytest.approx((mean, ci), rel=1e-12)


def test_sweep_directory(dirs):
    d = dirs["sweep"]
    files = plot_dir(d, ("svg", "html"))
    assert [f.name for f in files] == ["sweep_energy_quality.svg", "sweep.html"]
    texts = _svg_texts(d / PLOTS_DIR / "sweep_energy_quality.svg")
    # phone-mix names no headline: the wakeup latency's tail stands for its quality
    assert {"energy [J] (lower is better)", "wakeup latency p99 [us] (lower is better)", "gs101 | phone-mix | 1 s",
            "cfs", "eas"} <= set(texts)
    page = _assert_self_contained(d / PLOTS_DIR / "sweep.html")
    assert page.count("<tr><td>gs101 | phone-mix | 1 s</td>") == 2


def test_svg_and_html_bytes_repeat(dirs):
    d = dirs["compare"]
    first = {f.name: f.read_bytes() for f in plot_dir(d, ("svg", "html"))}
    second = {f.name: f.read_bytes() for f in plot_dir(d, ("svg", "html"))}
    assert first == second
    run = dirs["run"]
    a = {f.name: f.read_bytes() for f in plot_dir(run, ("svg",))}
    b = {f.name: f.read_bytes() for f in plot_dir(run, ("svg",))}
    assert a == b


def test_not_a_result_directory_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(InputError) as e:
        plot_dir(tmp_path)
    msg = str(e.value)
    assert str(tmp_path) in msg and "result.json" in msg and "\n" not in msg
    assert not (tmp_path / PLOTS_DIR).exists()
    with pytest.raises(InputError, match="an existing result directory"):
        plot_dir(tmp_path / "nowhere")
    with pytest.raises(InputError, match="this is a file"):
        plot_dir(tmp_path / "notes.txt")


@pytest.mark.parametrize("name,text,field", [
    ("result.json", '{"platform": "gs101", ', "json"),
    ("result.json", '{"platform": "gs101", "workload": "w", "scheduler": "eas", "governor": "schedutil", '
                    '"cpus": [], "clusters": []}', "cpus"),
    ("compare.json", '{"platform": "gs101", "workload": ["game"], "seeds": 2, "summary": []}', "summary"),
    ("sweep.parquet", "not parquet", "parquet"),
])
def test_malformed_file_is_one_line_naming_it(tmp_path, name, text, field):
    (tmp_path / name).write_text(text)
    with pytest.raises(InputError) as e:
        plot_dir(tmp_path, ("png", "html"))
    assert e.value.source == str(tmp_path / name) and e.value.field == field
    assert "\n" not in str(e.value)
    assert not (tmp_path / PLOTS_DIR).exists()


def test_malformed_timeseries(dirs, tmp_path):
    d = tmp_path / "run"
    d.mkdir()
    (d / "result.json").write_bytes((dirs["run"] / "result.json").read_bytes())
    (d / "timeseries.csv").write_text("t_s,t_ns,cpu,util\n0.0,0,0,0\n")
    with pytest.raises(InputError) as e:
        plot_dir(d)
    assert e.value.source == str(d / "timeseries.csv") and e.value.field == "header"


def test_unknown_format(dirs):
    with pytest.raises(UnknownNameError) as e:
        plot_dir(dirs["run"], ("pdf",))
    assert e.value.source == "--format" and "png" in str(e.value)


def test_a_failure_part_way_leaves_nothing_written(dirs, tmp_path, monkeypatch):
    """Files are renamed into place only when all are written: a failure while drawing the
    third leaves neither finished files nor temporaries, nor the plots/ it made."""
    import hetsched.plot as plot

    d = tmp_path / "run"
    d.mkdir()
    for f in ("result.json", "timeseries.csv"):
        (d / f).write_bytes((dirs["run"] / f).read_bytes())
    real = plot._render
    calls = []

    def failing(fig, fmt):
        calls.append(fmt)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(fig, fmt)

    monkeypatch.setattr(plot, "_render", failing)
    with pytest.raises(KeyboardInterrupt):
        plot_dir(d, ("png", "svg"))
    assert not (d / PLOTS_DIR).exists()
