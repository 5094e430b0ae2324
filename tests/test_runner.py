"""The runner (python/hetsched/runner.py): the run description's hash (stable across
processes, the sweep's cell hash), results in description order from a process pool, the
store that skips completed runs and locks its directory, a run stepped so that signals
get through (the same result), the one cell parser, and the engine module reached only
through sim.py.

Expected hashes come from the sweep's own hashing before the runner existed (pinned
below) and from the grid loader; expected results from running the same configuration in
this process, never from the runner itself.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import hetsched
from hetsched.errors import InputError
from hetsched.runner import LOCK_FILE, OutLock, RunFailed, Runner, RunSpec, RunStore, execute, parse_cell, run_stepped
from hetsched.sim import Simulation

# cell_hash of these two cells as hetsched.sweep computed it before the runner: stores
# written then must resume now
PINNED = {
    "7daedda015bfdcd2": dict(cell="eas[schedutil.rate_limit_us=2000]", platform="gs101", workload=("phone-mix",),
                             governor="schedutil", seed=1, duration_s=0.3),
    "e02057d6206087ac": dict(cell="cfs", platform="juno-r0", workload=("periodic:n=3", "hackbench:groups=1"),
                             governor="ondemand", seed=0, duration_s=None),
}
SHORT = "periodic:n=3,util=0.2"


def _spec(h: str) -> RunSpec:
    kw = dict(PINNED[h])
    return RunSpec.from_cell(kw.pop("cell"), **kw)


# ------------------------------------------------------------------ the hash

def test_hash_is_pinned_and_stable_across_processes():
    assert {h: _spec(h).hash for h in PINNED} == {h: h for h in PINNED}
    # another interpreter, another string-hash seed: the same digits
    code = ("from hetsched.runner import RunSpec; "
            "print(RunSpec.from_cell('eas[schedutil.rate_limit_us=2000]', platform='gs101', workload='phone-mix', "
            "seed=1, duration_s=0.3).hash)")
    env = {"PYTHONPATH": str(Path(hetsched.__file__).resolve().parents[1]), "PYTHONHASHSEED": "123",
           "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "7daedda015bfdcd2"


def test_hash_covers_the_run_and_nothing_else():
    base = RunSpec(platform="gs101", workload="phone-mix", scheduler="eas", knobs={"schedutil.rate_limit_us": 2000},
                   seed=1, duration_s=0.3)
    # a knob's spelling is not a different run; the label and where paths resolve are not part of it
    for same in (RunSpec(platform="gs101", workload=("phone-mix",), scheduler="eas",
                         knobs=(("schedutil.rate_limit_us", "2000"),), seed=1, duration_s=0.3, label="x"),
                 RunSpec(platform="gs101", workload=["phone-mix"], scheduler="eas",
                         knobs={"schedutil.rate_limit_us": 2000.0}, seed=1, duration_s=0.3, base_dir="/elsewhere")):
        assert same.hash == base.hash and same == base and hash(same) == hash(base)
    # a different knob value, another knob, seed, duration, lower bound: another run
    others = [
        RunSpec(platform="gs101", workload="phone-mix", scheduler="eas", knobs={"schedutil.rate_limit_us": 500},
                seed=1, duration_s=0.3),
        RunSpec(platform="gs101", workload="phone-mix", scheduler="eas",
                knobs={"schedutil.rate_limit_us": 2000, "vendor.task_packing": 1}, seed=1, duration_s=0.3),
        RunSpec(platform="gs101", workload="phone-mix", scheduler="eas", knobs={"schedutil.rate_limit_us": 2000},
                seed=2, duration_s=0.3),
        RunSpec(platform="gs101", workload="phone-mix", scheduler="eas", knobs={"schedutil.rate_limit_us": 2000},
                seed=1, duration_s=0.4),
        RunSpec(platform="gs101", workload="phone-mix", scheduler="eas", knobs={"schedutil.rate_limit_us": 2000},
                seed=1, duration_s=0.3, lower_bound=False),
    ]
    assert len({base.hash, *(o.hash for o in others)}) == 1 + len(others)
    # a study's own function: its arguments are the run
    f1 = RunSpec(fn="m:f", kwargs={"rate": 1.0, "wl": ("a",)}, seed=0)
    assert f1.hash == RunSpec(fn="m:f", kwargs={"wl": ("a",), "rate": 1.0}, seed=0, label="other").hash
    assert f1.hash != RunSpec(fn="m:f", kwargs={"rate": 2.0, "wl": ("a",)}, seed=0).hash


def test_hash_is_the_sweep_cell_hash(tmp_path):
    from hetsched.sweep import load_grid

    grid = tmp_path / "grid.yaml"
    grid.write_text("platforms: [gs101, juno-r0]\nworkloads: [phone-mix, [periodic:n=3, hackbench:groups=1]]\n"
                    "schedulers: [cfs, 'eas[schedutil.rate_limit_us=2000]']\ngovernors: [schedutil, ondemand]\n"
                    "seeds: [0, 1]\nduration: 0.3\n")
    cells = {c.hash: c for c in load_grid(grid).cells()}
    assert len(cells) == 32
    mine = RunSpec.from_cell("eas[schedutil.rate_limit_us=2000]", platform="gs101", workload="phone-mix", seed=1,
                             duration_s=0.3)
    assert mine.hash in cells and cells[mine.hash].label == "eas[schedutil.rate_limit_us=2000]"
    assert "7daedda015bfdcd2" in cells
    # the runner's own description of every cell gives the grid's hash
    for h, c in cells.items():
        assert RunSpec(platform=c.platform, workload=c.workload, scheduler=c.scheduler, governor=c.governor,
                       knobs=dict(c.knobs), seed=c.seed, duration_s=c.duration_s).hash == h


# ------------------------------------------------------------------ the cell parser

def test_parse_cell():
    assert parse_cell("eas", "s", "f") == ("eas", {})
    assert parse_cell("eas[]", "s", "f") == ("eas", {})
    assert parse_cell("eas[ a=1 , b = 2,]", "s", "f") == ("eas", {"a": "1", "b": "2"})


@pytest.mark.parametrize("cell", ["eas[x]", "eas[a=1", "eas[=1]", "[a=1]", "eas[a=1][b=2]", "eas]"])
def test_malformed_cell_is_one_line_naming_it(cell):
    with pytest.raises(InputError) as e:
        parse_cell(cell, "grid.yaml", "schedulers[2]")
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith("grid.yaml: schedulers[2]: expected ") and "NAME[knob=value,...]" in msg
    assert msg.endswith(f"got {cell!r}")


def test_malformed_cell_on_the_command_line(tmp_path, tools):
    grid = tmp_path / "grid.yaml"
    grid.write_text("schedulers: [cfs, 'eas[vendor.task_packing]']\n")
    procs = tools.run_cli_many({
        "compare": ["compare", "--scheduler", "eas[vendor.task_packing=1", "--duration", "0.1", "--seeds", "1"],
        "sweep": ["sweep", grid, "--out", tmp_path / "out"],
    })
    tools.assert_one_line_error(procs["compare"], "--scheduler: scheduler: expected NAME or NAME[knob=value,...]",
                                "'eas[vendor.task_packing=1'")
    tools.assert_one_line_error(procs["sweep"], "grid.yaml: schedulers[1]: expected", "knob=value",
                                "'eas[vendor.task_packing]'")
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------ execution

def test_pool_returns_results_in_description_order():
    # the longest run first: it completes last, yet its result comes first
    durations = [0.8, 0.05, 0.3, 0.1, 0.05]
    specs = [RunSpec(platform="gs101", workload=SHORT, scheduler="eas", seed=i, duration_s=d, lower_bound=False)
             for i, d in enumerate(durations)]
    with Runner(jobs=2) as runner:
        assert runner.description == "2 local workers"
        results = runner.run(specs)
        assert runner.executed == len(specs)
    assert [r["sim_duration_s"] for r in results] == pytest.approx(durations)
    for spec, r in zip(specs, results):
        doc = Simulation(platform="gs101", workload=SHORT, scheduler="eas", seed=spec.seed,
                         lower_bound=False).run(spec.duration_s).doc
        assert r["energy_j"] == doc["energy_j"] and r["counters.migrations"] == doc["counters"]["migrations"]
    # the same run in this process: the same flat result, to the bit
    again = execute(specs[2])
    assert {k: v for k, v in again.items() if k != "wall_s"} == {k: v for k, v in results[2].items() if k != "wall_s"}


def test_a_run_asked_twice_runs_once_and_failures_raise():
    a = RunSpec(platform="gs101", workload=SHORT, scheduler="cfs", duration_s=0.1, lower_bound=False)
    same = RunSpec(platform="gs101", workload=(SHORT,), scheduler="cfs", duration_s=0.1, lower_bound=False,
                   label="again")
    with Runner(jobs=2) as runner:
        res = runner.run([a, same, a])
        assert runner.executed == 1 and res[0] is res[1] is res[2]
        # legacy needs a switcher platform: the engine refuses it in the worker
        bad = RunSpec(platform="gs101", workload=SHORT, scheduler="legacy", duration_s=0.1, label="legacy on gs101")
        with pytest.raises(RunFailed, match=r"^legacy on gs101: .*switcher"):
            runner.run([bad, RunSpec(platform="gs101", workload=SHORT, scheduler="eas", duration_s=0.1)])


def test_store_skips_completed_runs(tmp_path):
    def spec(seed: int, scheduler: str = "eas") -> RunSpec:
        return RunSpec(platform="gs101", workload=SHORT, scheduler=scheduler, seed=seed, duration_s=0.1)

    first = [spec(0), spec(1), spec(0, "legacy")]  # legacy fails on gs101: an error row
    with Runner(jobs=1, store=RunStore(tmp_path), rows=True) as runner:
        rows = runner.run(first)
        assert runner.executed == 3
    assert [r["cell_hash"] for r in rows] == [s.hash for s in first]
    assert rows[0]["error"] is None and "switcher" in rows[2]["error"]
    assert (tmp_path / "runs.parquet").is_file()
    # an existing store is refused unless resumed
    with pytest.raises(InputError, match="--resume"):
        RunStore(tmp_path)
    # resumed: only the new runs run (failures are kept unless retried)
    grown = first + [spec(2), spec(3)]
    with Runner(jobs=1, store=RunStore(tmp_path, resume=True), rows=True) as runner:
        rows2 = runner.run(grown)
        assert runner.executed == 2
    assert [r["cell_hash"] for r in rows2] == [s.hash for s in grown]
    assert rows2[0]["energy_j"] == rows[0]["energy_j"]
    direct = Simulation(platform="gs101", workload=SHORT, scheduler="eas", seed=3).run(0.1).doc
    assert rows2[4]["energy_j"] == direct["energy_j"]
    assert rows2[4]["energy_lower_bound_j"] == direct["energy_lower_bound_j"]
    with Runner(jobs=1, store=RunStore(tmp_path, resume=True), rows=True, retry_failed=True) as runner:
        runner.run(grown)
        assert runner.executed == 1
    with Runner(jobs=1, store=RunStore(tmp_path, resume=True), rows=True) as runner:
        runner.run(grown)
        assert runner.executed == 0
    assert sorted(r["cell_hash"] for r in RunStore(tmp_path, resume=True).rows.values()) == \
        sorted(s.hash for s in grown)


def test_compare_on_a_pool_writes_what_it_writes_in_process(tmp_path, tools):
    args = ["compare", "--platform", "juno-r0", "--workload", "periodic:n=4,util=0.2", "--workload", "hackbench:groups=1",
            "--scheduler", "cfs", "--scheduler", "eas[schedutil.rate_limit_us=2000]", "--governor", "schedutil",
            "--governor", "ondemand", "--duration", "0.2", "--seeds", "2"]
    procs = tools.run_cli_many({"one": args + ["--out", tmp_path / "one"],
                                "pool": args + ["--jobs", "2", "--out", tmp_path / "pool"]})
    for p in procs.values():
        assert p.returncode == 0, p.stderr
    for name in ("compare.json", "compare.csv"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "pool" / name).read_bytes()
    runs = json.loads((tmp_path / "one" / "compare.json").read_text())["runs"]
    assert [(r["scheduler"], r["governor"], r["seed"]) for r in runs] == [
        (s, g, seed) for s in ("cfs", "eas[schedutil.rate_limit_us=2000]") for g in ("schedutil", "ondemand")
        for seed in (0, 1)]
    r = runs[6]  # eas[...] / ondemand / seed 0
    doc = Simulation(platform="juno-r0", workload=["periodic:n=4,util=0.2", "hackbench:groups=1"], scheduler="eas",
                     governor="ondemand", knobs={"schedutil.rate_limit_us": 2000}, seed=0).run(0.2).doc
    assert r["energy_j"] == doc["energy_j"] and r["migrations"] == doc["counters"]["migrations"]
    assert r["hackbench.completion_s"] == doc["metrics"]["hackbench"]["completion_s"]


# ------------------------------------------------------------------ stepping, the directory's lock

def _without_wall(res) -> str:
    doc = json.loads(res.to_json())
    doc.pop("wall_s", None)
    return json.dumps(doc, sort_keys=True)


@pytest.mark.parametrize("kw, duration_s", [
    (dict(platform="gs101", workload=["phone-mix"], scheduler="eas", timeseries=True), 3.0),
    (dict(platform="gs101", workload=["periodic"], scheduler="learning-eas"), 2.0),
    # no duration, every task ends: until the last exit
    (dict(platform="hikey960", workload=["hackbench:groups=2,loops=40"], scheduler="cfs"), None),
], ids=["duration", "controller", "until-exit"])
def test_a_stepped_run_is_the_run_to_the_byte(kw, duration_s):
    whole = Simulation(**kw).run(duration_s)
    steps = []
    stepped = run_stepped(Simulation(**kw), duration_s, on_step=lambda done, total: steps.append(done),
                          step_wall_s=1e-9)
    # a wall budget no step can meet: every step after the first is the shortest, so the
    # run is cut in many places whatever the machine's speed
    assert len(steps) > 3, steps
    assert _without_wall(stepped) == _without_wall(whole)
    assert stepped.timeseries == whole.timeseries


def test_a_locked_directory_is_refused_and_left_clean(tmp_path):
    out = tmp_path / "out"
    with OutLock(out, "writing a test"):
        assert (out / LOCK_FILE).read_text() == f"{os.getpid()} writing a test\n"
        # flock is per open file: a second holder in this process is refused as another would be
        refused = (rf"^{re.escape(str(out))}: --out: expected a directory no other hetsched process is "
                   rf"writing to \(process {os.getpid()}, writing a test,")
        with pytest.raises(InputError, match=refused):
            RunStore(out)
    assert not out.exists()  # the lock made the directory, and nothing else was written
    # a store holds the lock from its start to its close (the runner closes it)
    with Runner(jobs=1, store=RunStore(tmp_path), rows=True) as runner:
        with pytest.raises(InputError, match="no other hetsched process"):
            OutLock(tmp_path, "writing a test").acquire()
        runner.run([RunSpec(platform="gs101", workload=SHORT, duration_s=0.05)])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.parquet"]


# ------------------------------------------------------------------ the engine behind sim.py

def test_only_sim_reaches_the_engine_module():
    pkg = Path(hetsched.__file__).resolve().parent
    offenders = []
    for p in sorted(pkg.rglob("*.py")):
        if p.name in ("sim.py", "__init__.py") and p.parent == pkg:
            continue
        for i, line in enumerate(p.read_text().splitlines(), 1):
            if re.search(r"(?<![A-Za-z0-9])_engine\b", line):
                offenders.append(f"{p.relative_to(pkg)}:{i}: {line.strip()}")
    assert offenders == []
