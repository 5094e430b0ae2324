"""The ``hetsched`` command line, run as a real subprocess.

Covers ``run`` (result.json, --timeseries CSV, --trace Chrome trace), ``compare``,
``platforms`` / ``platforms show``, bad input (one line on stderr, exit status 2, no
output files) and determinism.  Expected values are derived from the raw platform files
(capacities: arch_topology.c rule), the PlatformSpec given to the engine (OPP and idle
powers) and the workload definitions, never from the CLI's own output.
"""

from __future__ import annotations

import csv
import json
import re
from collections import defaultdict
from pathlib import Path

import pytest

from hetsched.platforms import load_platform
from hetsched.sim import knob_table

RESULT_KEYS = {"platform", "workload", "scheduler", "governor", "knobs", "seed", "power_model", "idle_power_model",
               "sim_duration_s", "wall_s", "events", "energy_j", "avg_power_mw", "cpus", "tasks",
               "metrics"}
CPU_KEYS = {"cpu", "cluster", "capacity", "busy_s", "energy_j", "freq_residency_s", "idle_residency_s"}
TASK_KEYS = {"name", "pid", "cpu_time_s", "runtime_s", "wait_s", "migrations", "nr_wakeups"}

# the power model each platform must report (shared/platforms/README.md summary table):
# a published energy table -> "published"; all of DT dpc + OPP voltages -> "dt"; else estimated
POWER_MODEL = {"juno-r0": "published", "hikey960": "published", "rk3399": "published",
               "exynos5422": "dt", "gs101": "dt", "sm8150": "estimated", "sdm845": "published"}

# the threads of the phone-mix workload (docs/workloads.md)
PHONE_MIX_THREADS = {"ui-thread", "RenderThread", "surfaceflinger", "audio-mixer", "binder-1", "binder-2",
                     "gc-daemon", "sync-adapter", "kworker", "location"}

DURATION = 1.0


def spec_clusters(platform: str) -> dict[str, dict]:
    return {c["name"]: c for c in load_platform(platform).to_spec()["clusters"]}


# ------------------------------------------------------------------ one full run, inspected

@pytest.fixture(scope="module")
def juno_run(tmp_path_factory, tools):
    out = tmp_path_factory.mktemp("juno") / "out"
    args = ["run", "--platform", "juno-r0", "--workload", "periodic:n=6,util=0.3,noise=0",
            "--workload", "phone-mix:load=0.5,system=none,noise=0", "--scheduler", "cfs", "--governor", "schedutil",
            "--set", "schedutil.target_load=0.7", "--set", "timeseries.period_us=4000",
            "--duration", str(DURATION), "--seed", "3", "--out", str(out), "--trace", "--trace-format", "chrome",
            "--timeseries"]
    proc = tools.run_cli(args)
    assert proc.returncode == 0, proc.stderr
    return {"proc": proc, "out": out, "doc": json.loads((out / "result.json").read_text())}


def test_run_writes_the_three_files(juno_run):
    out = juno_run["out"]
    assert sorted(p.name for p in out.iterdir()) == ["phases.txt", "result.json", "timeseries.csv", "trace.json"]
    text = juno_run["proc"].stdout
    assert "juno-r0" in text and "energy" in text and "wrote" in text


def test_result_json_fields(juno_run, tools):
    d = juno_run["doc"]
    assert RESULT_KEYS <= set(d), RESULT_KEYS - set(d)
    assert d["platform"] == "juno-r0"
    assert d["workload"] == "periodic:n=6,util=0.3+phone-mix:load=0.5,system=none"  # noise=0 unnamed
    assert (d["scheduler"], d["governor"], d["seed"]) == ("cfs", "schedutil", 3)
    assert d["power_model"] == "published"
    assert d["sim_duration_s"] == pytest.approx(DURATION, abs=1e-12)
    assert isinstance(d["events"], int) and d["events"] > 0
    assert d["wall_s"] > 0
    # every knob, with the two --set values applied and the others at their defaults
    defaults = {k["name"]: k["default"] for k in knob_table()}
    assert set(d["knobs"]) == set(defaults)
    assert d["knobs"]["schedutil.target_load"] == 0.7
    assert d["knobs"]["timeseries.period_us"] == 4000
    for k, v in defaults.items():
        if k not in ("schedutil.target_load", "timeseries.period_us"):
            assert d["knobs"][k] == v, k

    caps = tools.expected_capacities("juno-r0")
    clusters = spec_clusters("juno-r0")
    assert [c["cpu"] for c in d["cpus"]] == sorted(caps)
    for c in d["cpus"]:
        assert CPU_KEYS <= set(c), CPU_KEYS - set(c)
        assert c["capacity"] == caps[c["cpu"]]
        assert c["cpu"] in clusters[c["cluster"]]["cpus"]
        assert {int(k) for k in c["freq_residency_s"]} <= {o["khz"] for o in clusters[c["cluster"]]["opps"]}
        assert set(c["idle_residency_s"]) == {s["name"] for s in clusters[c["cluster"]]["idle_states"]}
        assert c["busy_s"] + sum(c["idle_residency_s"].values()) == pytest.approx(DURATION, abs=1e-9)
    assert {c["capacity"] for c in d["cpus"]} == {446, 1024}

    tasks = d["tasks"]
    assert {t["name"] for t in tasks} == {f"periodic-{i}" for i in range(6)} | PHONE_MIX_THREADS
    assert len({t["pid"] for t in tasks}) == len(tasks)
    busy = {c["cpu"]: c["busy_s"] for c in d["cpus"]}
    on_cpu = defaultdict(float)
    for t in tasks:
        assert TASK_KEYS <= set(t), TASK_KEYS - set(t)
        assert t["runtime_s"] == pytest.approx(sum(t["cpu_time_s"].values()), abs=1e-9)
        assert t["wait_s"] >= 0 and t["migrations"] >= 0 and t["nr_wakeups"] >= 0
        assert t["runtime_s"] > 0, t["name"]
        for cpu, s in t["cpu_time_s"].items():
            assert int(cpu) in busy
            on_cpu[int(cpu)] += s
    for cpu, s in on_cpu.items():
        assert s <= busy[cpu] + 1e-9  # tasks ran only while the CPU was busy
    assert isinstance(d["metrics"], dict) and d["metrics"]


def test_timeseries_csv(juno_run):
    d = juno_run["doc"]
    clusters = spec_clusters("juno-r0")
    cpu_cluster = {c["cpu"]: clusters[c["cluster"]] for c in d["cpus"]}
    with open(juno_run["out"] / "timeseries.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert {"cpu", "util", "freq_khz", "idle_state", "power_uw"} <= set(rows[0])
    assert "t_s" in rows[0] or "t_ns" in rows[0]
    by_time = defaultdict(dict)
    for r in rows:
        t = float(r["t_s"]) if "t_s" in r else int(r["t_ns"]) / 1e9
        by_time[t][int(r["cpu"])] = r
    times = sorted(by_time)
    assert times[0] == 0.0 and times[-1] <= DURATION + 1e-9
    steps = {round(b - a, 9) for a, b in zip(times, times[1:])}
    assert steps == {0.004}  # timeseries.period_us=4000 (a whole number of 4 ms ticks)
    for t in times:
        row = by_time[t]
        assert sorted(row) == sorted(cpu_cluster)  # one row per CPU per sample
        per_cluster = defaultdict(set)
        for cpu, r in row.items():
            cl = cpu_cluster[cpu]
            khz, idle, power = int(r["freq_khz"]), int(r["idle_state"]), int(r["power_uw"])
            assert khz in {o["khz"] for o in cl["opps"]}
            per_cluster[cl["name"]].add(khz)
            assert -1 <= idle < len(cl["idle_states"])
            assert 0 <= int(r["util"]) <= 1024
            # the power column is the CPU's own power in its current state
            if idle < 0:
                assert power == {o["khz"]: o["power_uw"] for o in cl["opps"]}[khz]
            else:
                assert power == cl["idle_states"][idle]["power_uw"]
        assert all(len(v) == 1 for v in per_cluster.values())  # one OPP per cluster


def test_trace_and_timeseries_written_as_the_run_goes_are_the_whole_documents(juno_run):
    """`run` writes trace.json and timeseries.csv from what the engine recorded since its
    last step (so memory stays flat however long the run): the files must hold exactly
    what one undrained run of the same configuration keeps and hands over at its end."""
    from hetsched.sim import Simulation

    sim = Simulation(platform="juno-r0",
                     workload=["periodic:n=6,util=0.3,noise=0", "phone-mix:load=0.5,system=none,noise=0"],
                     scheduler="cfs", governor="schedutil", seed=3, trace=True, timeseries=True,
                     knobs={"schedutil.target_load": 0.7, "timeseries.period_us": 4000})
    res = sim.run(DURATION)
    out = juno_run["out"]
    assert (out / "trace.json").read_text() == sim.take_trace()
    with open(out / "timeseries.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    ts = res.timeseries
    assert len(rows) == len(ts["t_ns"]) > 1000
    for col in ts:
        assert [int(r[col]) for r in rows] == ts[col], col
    assert [float(r["t_s"]) for r in rows] == [t / 1e9 for t in ts["t_ns"]]


def test_trace_is_chrome_trace_json(juno_run):
    d = juno_run["doc"]
    trace = json.loads((juno_run["out"] / "trace.json").read_text())
    events = trace["traceEvents"]
    cpus = {c["cpu"] for c in d["cpus"]}
    slices = [e for e in events if e["ph"] == "X"]
    counters = [e for e in events if e["ph"] == "C"]
    assert slices and counters
    assert {e["tid"] for e in slices} <= cpus
    assert len({e["tid"] for e in slices}) >= 2
    task_names = {t["name"] for t in d["tasks"]}
    assert {e["name"] for e in slices} <= task_names
    names = " ".join(sorted({e["name"] for e in counters}))
    for what in ("freq", "util", "power"):
        assert what in names, (what, names)
    for e in counters:
        assert isinstance(e["args"], dict) and e["args"]

    # per CPU: slices never overlap, stay inside the run, and add up to the tasks'
    # CPU time there; the CPU's busy time is that plus idle-exit time (each slice is
    # preceded by at most one exit from an idle state)
    max_exit_s = {c["cpu"]: max(s["exit_latency_ns"] for s in cl["idle_states"]) / 1e9
                  for cl in spec_clusters("juno-r0").values() for c in d["cpus"] if c["cpu"] in cl["cpus"]}
    on_cpu = defaultdict(float)
    for t in d["tasks"]:
        for cpu, s in t["cpu_time_s"].items():
            on_cpu[int(cpu)] += s
    by_cpu = defaultdict(list)
    for e in slices:
        by_cpu[e["tid"]].append((e["ts"], e["ts"] + e["dur"]))
    for c in d["cpus"]:
        sl = sorted(by_cpu[c["cpu"]])
        for (_, end), (start, _) in zip(sl, sl[1:]):
            assert end <= start + 1e-3, (c["cpu"], end, start)  # µs, ns resolution
        assert all(0 <= a <= b <= DURATION * 1e6 + 1e-3 for a, b in sl)
        total_s = sum(b - a for a, b in sl) / 1e6
        assert total_s == pytest.approx(on_cpu[c["cpu"]], abs=1e-6)
        exit_s = c["busy_s"] - total_s
        assert -1e-6 <= exit_s <= len(sl) * max_exit_s[c["cpu"]] + 1e-6, (c["cpu"], exit_s, len(sl))


def test_run_without_trace_or_timeseries_writes_result_and_phase_log(tmp_path, tools):
    out = tmp_path / "o"
    proc = tools.run_cli(["run", "--platform", "gs101", "--workload", "phone-mix:system=none,noise=0", "--duration", "0.2",
                          "--out", out])
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["phases.txt", "result.json"]
    # one row per thread and phase, as rt-app logs them (phone-mix: 10 one-phase threads)
    rows = (out / "phases.txt").read_text().splitlines()
    assert rows[0].split()[:3] == ["thread", "phase", "loops"] and len(rows) == 1 + 10


# ------------------------------------------------------------------ built-in platforms

@pytest.fixture(scope="module")
def platform_runs(tmp_path_factory, tools):
    base = tmp_path_factory.mktemp("platforms")
    jobs = {p: ["run", "--platform", p, "--workload", "phone-mix:system=none,noise=0", "--workload",
                "periodic:n=4,util=0.2,noise=0",
                "--duration", "0.5", "--seed", "1", "--out", base / p] for p in POWER_MODEL}
    procs = tools.run_cli_many(jobs)
    return {p: (procs[p], base / p) for p in POWER_MODEL}


@pytest.mark.parametrize("platform", sorted(POWER_MODEL))
def test_run_on_builtin_platform(platform, platform_runs, tools):
    proc, out = platform_runs[platform]
    assert proc.returncode == 0, proc.stderr
    d = json.loads((out / "result.json").read_text())
    assert d["platform"] == platform
    assert d["power_model"] == POWER_MODEL[platform]
    assert f"power model: {POWER_MODEL[platform]}" in proc.stdout
    caps = tools.expected_capacities(platform)
    assert {c["cpu"]: c["capacity"] for c in d["cpus"]} == caps
    assert max(caps.values()) == 1024
    assert len(d["tasks"]) == len(PHONE_MIX_THREADS) + 4
    assert d["energy_j"] > 0
    total = sum(c["energy_j"] for c in d["cpus"]) + sum(c["cluster_term_energy_j"] for c in d["clusters"])
    assert total == pytest.approx(d["energy_j"], rel=1e-9)
    assert d["avg_power_mw"] == pytest.approx(d["energy_j"] / d["sim_duration_s"] * 1000, rel=1e-9)


# ------------------------------------------------------------------ determinism

def test_same_inputs_same_seed_identical_result(tmp_path, tools):
    args = ["run", "--platform", "gs101", "--workload", "phone-mix", "--workload", "periodic:n=5,util=0.3",
            "--duration", "0.5", "--seed", "7", "--timeseries"]
    jobs = {k: args + ["--out", tmp_path / k] for k in ("a", "b")}
    jobs["c"] = [a if a != "7" else "8" for a in args] + ["--out", tmp_path / "c"]
    procs = tools.run_cli_many(jobs)
    for k, p in procs.items():
        assert p.returncode == 0, (k, p.stderr)
    text = {k: (tmp_path / k / "result.json").read_text() for k in jobs}
    docs = {k: json.loads(t) for k, t in text.items()}
    assert tools.without_wall(docs["a"]) == tools.without_wall(docs["b"])
    # byte-identical apart from the wall_s line
    strip = lambda t: re.sub(r'"wall_s": [^,\n]+', '"wall_s": X', t)  # noqa: E731
    assert strip(text["a"]) == strip(text["b"])
    assert (tmp_path / "a" / "timeseries.csv").read_bytes() == (tmp_path / "b" / "timeseries.csv").read_bytes()
    # another seed: other phases (phone-mix) and another task set (periodic)
    assert docs["c"]["seed"] == 8
    assert docs["c"]["tasks"] != docs["a"]["tasks"]
    assert docs["c"]["energy_j"] != docs["a"]["energy_j"]


# ------------------------------------------------------------------ compare

def test_compare_without_arguments_prints_a_table(tools):
    proc = tools.run_cli(["compare"])
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    from hetsched.sim import SWITCHER_SCHEDULERS
    from hetsched.sim import SCHEDULERS

    # every registered scheduler, with schedutil (the governor EAS runs with), except paper
    # 001's, which run only on a switcher platform
    scheds = [s for s in SCHEDULERS if s not in SWITCHER_SCHEDULERS]
    for s in scheds:
        assert f"{s}/schedutil" in out
    for s in SWITCHER_SCHEDULERS:
        assert f"{s}/" not in out
    for label in ("energy", "avg power", "missed activations", "wakeup latency p99", "migrations"):
        assert label in out, label
    assert "gs101" in out and "phone-mix" in out
    assert "5 s x 3 seeds" in out
    assert f"{len(scheds) * 3} runs" in out


def test_compare_writes_csv_and_json(tmp_path, tools):
    out = tmp_path / "cmp"
    proc = tools.run_cli(["compare", "--platform", "juno-r0", "--workload", "periodic:n=6,util=0.3", "--scheduler", "cfs",
                          "--governor", "performance", "--governor", "powersave", "--duration", "0.4",
                          "--seeds", "2", "--out", out])
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["compare.csv", "compare.json"]
    assert "cfs/performance" in proc.stdout and "cfs/powersave" in proc.stdout
    with open(out / "compare.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert {(r["scheduler"], r["governor"], r["seed"]) for r in rows} == {
        ("cfs", g, s) for g in ("performance", "powersave") for s in ("0", "1")}
    assert {"energy_j", "avg_power_mw", "power_model"} <= set(rows[0])
    doc = json.loads((out / "compare.json").read_text())
    assert doc["platform"] == "juno-r0" and doc["seeds"] == 2 and doc["duration_s"] == 0.4
    assert len(doc["runs"]) == 4
    energy = {(r["governor"], r["seed"]): float(r["energy_j"]) for r in rows}
    for s in ("0", "1"):
        assert energy[("performance", s)] > energy[("powersave", s)]
    # a cell of the table is the same simulation as `run` with that seed
    from hetsched.sim import Simulation

    direct = Simulation(platform="juno-r0", workload=["periodic:n=6,util=0.3"], governor="powersave",
                        seed=1).run(0.4)
    assert energy[("powersave", "1")] == pytest.approx(direct.energy_j, rel=1e-12)
    mean = [s for s in doc["summary"] if s["metric"] == "energy_j" and s["cell"] == "cfs/performance"][0]
    assert mean["mean"] == pytest.approx((energy[("performance", "0")] + energy[("performance", "1")]) / 2)


def test_compare_rejects_unknown_governor_before_running(tmp_path, tools):
    out = tmp_path / "cmp"
    proc = tools.run_cli(["compare", "--governor", "schedutl", "--duration", "0.2", "--out", out])
    tools.assert_one_line_error(proc, "--governor", "did you mean 'schedutil'")
    tools.assert_no_outputs(out)


# ------------------------------------------------------------------ platforms

def test_platforms_lists_all_fifteen(tools):
    proc = tools.run_cli(["platforms"])
    assert proc.returncode == 0, proc.stderr
    expected = sorted(p.stem for p in tools.PLATFORM_DATA.glob("*.json"))
    assert len(expected) == 17  # 15 SoCs + paper 004's hetero-2cpu pair
    rows = {}
    for line in proc.stdout.splitlines():
        cells = [c.strip() for c in line.strip("│ ").split("│")]
        if cells and cells[0] in expected:
            rows[cells[0]] = line
    assert sorted(rows) == expected
    assert "not runnable" in rows["sm8350"]
    for name, line in rows.items():
        if name != "sm8350":
            assert "not runnable" not in line, name
    assert "estimated" in rows["sm8150"] and "published" in rows["juno-r0"]
    # the idle power column: where each built-in's idle-state power comes from
    idle = {n: [c.strip() for c in line.strip("│ ").split("│")][4] for n, line in rows.items()}
    assert idle["gs101"] == "estimated" and idle["sm8150"] == "published" and idle["hikey960"] == "published"
    assert idle["sm8350"] == "-"


def test_platforms_show_juno_opp_table(tools):
    proc = tools.run_cli(["platforms", "show", "juno-r0"])
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "capacity_orig 446" in out and "capacity_orig 1024" in out
    raw = tools.raw_platform("juno-r0")
    caps = tools.expected_capacities("juno-r0")
    # one section per cluster, each opening with "<name> <core>: CPUs [...], capacity_orig N"
    sections = re.split(r"^(?=\S+ \S+: CPUs \[)", out, flags=re.M)[1:]
    assert len(sections) == len(raw["clusters"])
    for cl, sec in zip(raw["clusters"], sections):
        cap = caps[cl["cpus"][0]]
        assert sec.startswith(f"{cl['name']} ") and f"CPUs {cl['cpus']}" in sec
        assert f"capacity_orig {cap}" in sec
        rows = {r[0]: r for r in ([c.strip() for c in line.strip("│ ").split("│")]
                                  for line in sec.splitlines() if line.startswith("│"))}
        fmax = max(o["khz"] for o in cl["opps"])
        for o in cl["opps"]:
            row = rows[str(o["khz"])]
            # the EM performance of an OPP: capacity scaled by frequency
            assert int(row[2]) == cap * o["khz"] // fmax, (o["khz"], row)
        assert rows[str(fmax)][2] == str(cap)


def test_platforms_show_unknown_name(tools):
    proc = tools.run_cli(["platforms", "show", "juno-r9"])
    tools.assert_one_line_error(proc, "juno-r9", "did you mean")


# ------------------------------------------------------------------ bad input

def _bad_platform_files(d: Path) -> dict[str, Path]:
    d.mkdir(parents=True, exist_ok=True)
    syntax = d / "syntax.json"
    syntax.write_text('{"name": "x", "clusters": [')
    field = d / "field.json"
    doc = json.loads((Path(__file__).parents[1] / "python/hetsched/platforms/data/gs101.json").read_text())
    doc["clusters"][1]["opps"][2]["khz"] = -5
    field.write_text(json.dumps(doc))
    rt_syntax = d / "rt_syntax.json"
    rt_syntax.write_text('{"tasks": {"t": {"run": 100,')
    rt_field = d / "rt_field.json"
    rt_field.write_text('{"tasks": {"t": {"run": "abc", "timer": {"ref": "a", "period": 1000}}}}')
    return {"syntax": syntax, "field": field, "rt_syntax": rt_syntax, "rt_field": rt_field}


def _knob_range(name: str) -> str:
    k = {k["name"]: k for k in knob_table()}[name]
    return f"[{k['min']:g}, {k['max']:g}]"


BAD = {
    # id: (extra args, needles in the one stderr line); {x} are files made by the fixture
    "platform-json-syntax": (["--platform", "{syntax}"], ["{syntax}", "JSON", "expected"]),
    "platform-json-field": (["--platform", "{field}"], ["{field}", "clusters[1].opps[2].khz", "expected", "-5"]),
    "rtapp-syntax": (["--workload", "{rt_syntax}"], ["{rt_syntax}", "JSON", "expected"]),
    "rtapp-field": (["--workload", "{rt_field}"], ["{rt_field}", "tasks.t.run", "expected", "'abc'"]),
    "rtapp-missing-file": (["--workload", "{dir}/nope.json"], ["nope.json", "expected"]),
    "unknown-platform": (["--platform", "hikey96"], ["--platform", "did you mean 'hikey960'", "'hikey96'"]),
    "unrunnable-platform": (["--platform", "sm8350"], ["sm8350", "clusters[0].opps", "expected"]),
    "unknown-scheduler": (["--scheduler", "cfss"], ["--scheduler", "did you mean 'cfs'"]),
    "unknown-governor": (["--governor", "schedutl"], ["--governor", "did you mean 'schedutil'"]),
    "unknown-knob": (["--set", "schedutil.target_lod=0.5"], ["--set", "did you mean 'schedutil.target_load'"]),
    "knob-out-of-range": (["--set", "schedutil.target_load=3"],
                          ["--set", "schedutil.target_load", "expected", _knob_range("schedutil.target_load")]),
    "knob-not-a-number": (["--set", "tick_hz=fast"], ["--set", "tick_hz", "expected a number"]),
    "set-without-equals": (["--set", "tick_hz"], ["--set", "knob=value"]),
    "negative-duration": (["--duration", "-1"], ["--duration", "expected a positive"]),
    "zero-duration": (["--duration", "0"], ["--duration", "expected a positive"]),
    "duration-not-a-number": (["--duration", "abc"], ["--duration"]),
    "negative-seed": (["--seed", "-1"], ["--seed", "expected a non-negative integer"]),
    "workload-param-out-of-range": (["--workload", "periodic:util=2"],
                                    ["--workload periodic", "util", "expected a value in [0.0, 1.0]"]),
    "workload-param-bad-value": (["--workload", "periodic:n=abc"], ["--workload periodic", "n", "integer"]),
    "workload-param-unknown": (["--workload", "periodic:utl=0.3"], ["--workload periodic", "did you mean 'util'"]),
    "workload-unknown": (["--workload", "periodc"], ["--workload", "did you mean 'periodic'"]),
    "workload-unreachable-util": (["--workload", "periodic:n=2,util=0.9,umax=0.2"],
                                  ["--workload periodic", "util", "umax"]),
    "workload-uunifast-gives-up": (["--workload", "periodic:n=8,util=0.7,umax=0.4"],
                                   ["--workload periodic", "util", "umax"]),
    "workload-pmin-above-pmax": (["--workload", "periodic:pmin_ms=60,pmax_ms=50"], ["pmin_ms", "pmax_ms"]),
}


@pytest.fixture(scope="module")
def bad_runs(tmp_path_factory, tools):
    base = tmp_path_factory.mktemp("bad")
    files = {k: str(v) for k, v in _bad_platform_files(base / "inputs").items()}
    files["dir"] = str(base / "inputs")
    jobs = {}
    for key, (extra, _) in BAD.items():
        extra = [a.format(**files) for a in extra]
        args = ["run", "--platform", "juno-r0", "--duration", "0.2", "--workload", "periodic:n=4"]
        # later options of a kind replace the default ones given above (lists add up, so
        # --workload is given once)
        if "--workload" in extra:
            args = ["run", "--platform", "juno-r0", "--duration", "0.2"]
        args = args + extra + ["--out", str(base / key)]
        jobs[key] = args
    procs = tools.run_cli_many(jobs)
    return {k: (procs[k], base / k, files) for k in BAD}


@pytest.mark.parametrize("key", sorted(BAD))
def test_bad_input_one_line_exit_2_no_outputs(key, bad_runs, tools):
    proc, out, files = bad_runs[key]
    needles = [n.format(**files) for n in BAD[key][1]]
    tools.assert_one_line_error(proc, *needles)
    tools.assert_no_outputs(out)


def test_out_is_an_existing_file(tmp_path, tools):
    blocker = tmp_path / "taken"
    blocker.write_text("not a directory")
    proc = tools.run_cli(["run", "--platform", "juno-r0", "--workload", "periodic:n=4", "--duration", "0.1",
                          "--out", blocker])
    tools.assert_one_line_error(proc, "--out", "taken")
    assert blocker.read_text() == "not a directory"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


def test_failure_while_writing_leaves_no_partial_files(tmp_path, monkeypatch, capsys):
    """The trace is written after result.json: if it fails, result.json must not appear
    and the temporary files must be gone (in-process, with the trace made to fail)."""
    import sys

    from hetsched import cli
    from hetsched.errors import EngineError
    from hetsched.sim import Simulation

    def boom(self):
        raise EngineError("trace failed")

    monkeypatch.setattr(Simulation, "take_trace_bytes", boom)
    out = tmp_path / "o"
    monkeypatch.setattr(sys, "argv", ["hetsched", "run", "--platform", "juno-r0", "--workload", "periodic:n=4",
                                      "--duration", "0.1", "--trace", "--timeseries", "--out", str(out)])
    with pytest.raises(SystemExit) as e:
        cli.main()
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "trace failed" in err
    if out.exists():
        assert list(out.iterdir()) == []


@pytest.mark.parametrize("fmt", ["perfetto", "ftrace", "chrome"])
def test_trace_and_timeseries_keep_memory_flat_in_the_runs_length(tmp_path, fmt):
    """Ten times the simulated time with --trace and --timeseries (together some 40 MB of
    files a simulated minute of phone-mix) must not take ten times the memory: the files
    are written as the run goes. Before, 600 s took 514 MB against 95 MB for 60 s."""
    import subprocess
    import sys

    from hetsched.sim import TRACE_FORMATS

    probe = ("import resource, sys\n"
             "from hetsched.cli import main\n"
             "sys.argv = ['hetsched', *sys.argv[1:]]\n"
             "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
             "print('maxrss_kb', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n")
    peaks = {}
    for seconds in (15, 150):
        out = tmp_path / f"s{seconds}"
        proc = subprocess.run([sys.executable, "-c", probe, "run", "--duration", str(seconds), "--trace",
                               "--trace-format", fmt, "--timeseries", "--no-lower-bound", "--out", str(out)],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        peaks[seconds] = int(proc.stdout.split("maxrss_kb")[-1])
        assert (out / TRACE_FORMATS[fmt]).stat().st_size > seconds * 100_000
    # the longer run writes ten times the text; its peak may differ by allocator noise only
    assert peaks[150] < peaks[15] + 20_000, peaks


# ------------------------------------------------------------------ compare's table

def test_compare_statistics_by_hand():
    """The interval and the test, worked by hand: [1, 2, 3] against a baseline [4, 5, 6]:
    sd 1 each, so the 95 % CI's half-width is t(0.975, 2) / sqrt(3) = 4.3027 / 1.7321 =
    2.4841; Welch's t = (2 - 5) / sqrt(1/3 + 1/3) = -3.674 with (2/3)^2 / (2 (1/3)^2 / 2) =
    4 degrees of freedom, two-sided p = 0.0213 (< 0.05: one star). Paired by seed instead,
    the same runs differ by -3 at every seed: no spread, a certain difference (p = 0)."""
    import pandas as pd

    from hetsched.cli import _compare_summary
    from hetsched.compare_stats import welch_p as _welch_p

    groups = {"base/g": pd.DataFrame({"energy_j": [4.0, 5.0, 6.0]}), "new/g": pd.DataFrame({"energy_j": [1.0, 2.0, 3.0]})}
    base, new = _compare_summary(groups, ["base/g", "new/g"], ["energy_j"], "welch")
    assert base["p_value"] is None and base["rel_change_vs_first"] is None
    assert new["ci95"] == pytest.approx(2.4841, abs=1e-4)
    assert new["p_value"] == pytest.approx(0.0213, abs=1e-4)
    assert new["rel_change_vs_first"] == pytest.approx(-0.6)
    assert new["significance"] == "*" and new["unit"] == "J"
    # Welch's interval of the difference: t(0.975, 4) sqrt(1/3 + 1/3) = 2.7764 x 0.8165 = 2.2669, / 5
    assert new["rel_change_ci95"] == pytest.approx(2.2669 / 5, abs=1e-4)
    _, paired = _compare_summary(groups, ["base/g", "new/g"], ["energy_j"])
    assert paired["p_value"] == 0.0 and paired["rel_change_ci95"] == 0.0 and paired["significance"] == "**"
    # without variance: equal means do not differ, different ones surely do
    assert _welch_p([2.0, 2.0], [2.0, 2.0]) == 1.0 and _welch_p([2.0, 2.0], [3.0, 3.0]) == 0.0


def test_compare_reads_at_80_columns(tools):
    """The first command of the README, in an 80-column terminal: no cell or header cut
    (Rich marks a cut with an ellipsis), units shown, the interval and the test named."""
    proc = tools.run_cli(["compare", "--duration", "1", "--seeds", "2"], columns=80)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert "…" not in proc.stdout
    for unit in ("energy [J]", "avg power [mW]", "wakeup latency p99 [us]", "missed activations [%]"):
        assert unit in proc.stdout, unit
    assert "95 % confidence interval" in proc.stdout and "paired t-test" in proc.stdout


def test_compare_formats_and_metrics(tools):
    base = ["compare", "--workload", "game", "--scheduler", "cfs", "--scheduler", "eas", "--duration", "0.5",
            "--seeds", "2", "--metric", "energy_j", "--metric", "game.fps"]
    procs = tools.run_cli_many({f: base + ["--format", f] for f in ("csv", "json", "markdown")})
    for f, p in procs.items():
        assert p.returncode == 0, (f, p.stderr)
    rows = list(csv.DictReader(procs["csv"].stdout.splitlines()))
    assert [(r["metric"], r["cell"]) for r in rows] == [("energy_j", "cfs/schedutil"), ("energy_j", "eas/schedutil"),
                                                       ("game.fps", "cfs/schedutil"), ("game.fps", "eas/schedutil")]
    doc = json.loads(procs["json"].stdout)
    assert doc["baseline"] == "cfs/schedutil" and len(doc["summary"]) == 4
    assert [float(r["mean"]) for r in rows] == [s["mean"] for s in doc["summary"]]
    md = procs["markdown"].stdout.splitlines()
    assert "| metric | cfs/schedutil | eas/schedutil |" in md
    assert any(line.startswith("| energy [J] |") for line in md) and any(line.startswith("| game.fps [fps] |") for line in md)


def test_compare_document_on_stdout_stays_whole_with_out_and_plot(tools, tmp_path):
    """With --format json, stdout is the document alone: the files written (compare's and
    the plots') are listed on stderr; the notes on mechanisms that never acted are in it."""
    out = tmp_path / "cmp"
    # the app's threads alone, where hcs-td finds nothing to move (beside the recorded
    # system it moves threads, and says nothing)
    proc = tools.run_cli(["compare", "--workload", "phone-mix:system=none", "--scheduler", "cfs", "--scheduler",
                          "hcs-td", "--duration", "0.5", "--seeds", "2", "--format", "json", "--out", str(out),
                          "--plot"])
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert any(n.startswith("hcs-td/schedutil: ") for n in doc["notes"])
    for name in ("compare.csv", "compare.json", "plots/compare_energy_quality.png"):
        assert (out / name).is_file() and f"wrote {out / name}" in proc.stderr


def test_compare_headline_metrics_by_default(tools):
    proc = tools.run_cli(["compare", "--workload", "game", "--scheduler", "cfs", "--duration", "0.5", "--seeds", "1"])
    assert proc.returncode == 0, proc.stderr
    assert "game.fps" in proc.stdout and "game.frame_drop_pct" in proc.stdout
    assert "game.current_ma" not in proc.stdout  # a figure of the game, not its headline
    # a line a finished run on stderr when it is not a terminal
    assert "compare: 1/1 runs, cfs/schedutil seed 0 done" in proc.stderr


def test_run_prints_the_workloads_headline(tools):
    proc = tools.run_cli(["run", "--workload", "app-launch", "--duration", "2", "--out", "/dev/null/x"])
    assert proc.returncode == 2  # --out is checked before the run
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        proc = tools.run_cli(["run", "--workload", "app-launch", "--duration", "2", "--out", d])
    assert proc.returncode == 0, proc.stderr
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("app-launch.entry_ms_mean"))
    assert line.endswith(" ms")


def test_the_default_scheduler_is_the_kernels_choice(tmp_path, tools):
    """build_perf_domains enables EAS only with an Energy Model, asymmetric capacities and
    schedutil: gs101 (160/498/1024, powers in its EM) gets eas; one capacity, or another
    governor, gets cfs; a switcher platform its own scheduler under ondemand."""
    from hetsched.sim import default_policy

    assert default_policy(load_platform("gs101"))[:2] == ("eas", "schedutil")
    assert default_policy(load_platform("gs101"), "ondemand")[:2] == ("cfs", "ondemand")
    sched, gov, why = default_policy(load_platform("hetero-2cpu-homogeneous"))
    assert (sched, gov) == ("cfs", "schedutil") and "capacities are all equal" in why
    assert default_policy(load_platform("exynos5422:switcher"))[:2] == ("legacy", "ondemand")
    proc = tools.run_cli(["run", "--duration", "0.5", "--out", tmp_path / "o"])
    assert proc.returncode == 0, proc.stderr
    assert "scheduler eas and governor schedutil by default on gs101" in proc.stdout
    assert json.loads((tmp_path / "o" / "result.json").read_text())["scheduler"] == "eas"


@pytest.mark.parametrize("guided", [False, True])
def test_reproduce_names_a_plain_engine_build_and_the_faster_one(tmp_path, monkeypatch, capsys, guided):
    """A reproduction takes minutes to an hour: with a plain engine build it says, in one
    line on stderr before it starts, that scripts/build-pgo.sh gives the same results
    sooner; with a profile-guided build it says nothing of it (in-process, the studies
    replaced by a stub that records its call)."""
    import sys

    import hetsched.reproduce as rep
    from hetsched import cli, sim

    calls = []
    monkeypatch.setattr(sim, "PROFILE_GUIDED", guided)
    monkeypatch.setattr(rep, "reproduce", lambda *a, **k: calls.append((a, k)))
    monkeypatch.setattr(sys, "argv", ["hetsched", "reproduce", "fa-cfs", "--quick", "--out", str(tmp_path / "o")])
    try:
        cli.main()
    except SystemExit as e:
        assert not e.code
    assert len(calls) == 1 and calls[0][1]["level"] == "quick"
    err = capsys.readouterr().err
    hint = "plain build; " + str(Path(cli.__file__).resolve().parents[2] / "scripts" / "build-pgo.sh")
    assert (hint in err) is (not guided)
    if not guided:
        assert err.count("\n") == 1


def test_every_commands_help_prints_plain_brackets():
    """--help shows "[default: ...]" and "[required]" as they read, not Rich's escaped
    "\\[" (typer escapes them whenever Rich is installed, even with markup off)."""
    import click
    import typer.main
    from typer.testing import CliRunner

    from hetsched.cli import app

    group = typer.main.get_command(app)
    paths = []
    for name, cmd in group.commands.items():
        if isinstance(cmd, click.Group):
            paths += [[name, sub] for sub in cmd.commands]
        paths.append([name])
    runner = CliRunner()
    shown = 0
    for path in paths:
        out = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "100"}).output
        assert "\\[" not in out, (path, out)
        shown += "[default: " in out
    assert len(paths) > 10 and shown > 5
