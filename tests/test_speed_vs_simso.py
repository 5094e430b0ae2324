"""benchmarks/speed/vs_simso.py: the task sets it hands to the other simulators are the
ones hetsched runs (SimSo and Schedsim themselves are not installed here)."""

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _load():
    path = ROOT / "benchmarks" / "speed" / "vs_simso.py"
    spec = importlib.util.spec_from_file_location("vs_simso", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_hetsched_side_runs(capsys):
    mod = _load()
    assert mod.main(["--no-simso", "--sizes", "2x4", "--durations", "0.5",
                     "--hetsched-repeat", "1", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["rows"]
    assert set(row["runs"]) == {f"hetsched {v}" for v in mod.HETSCHED_VARIANTS}
    assert abs(row["sum_u"] - 0.5 * 2) < 1e-3    # util 0.5 of two 1024-capacity CPUs
    for r in row["runs"].values():
        assert r["jobs"] > 0 and r["x_realtime"] > 0
    assert row["ratios"] == {}


def test_same_task_set_for_every_simulator(tmp_path):
    mod = _load()
    pfile = tmp_path / "p.json"
    pfile.write_text(json.dumps(mod.homogeneous_platform(4)))
    from hetsched.platforms import load_platform

    platform = load_platform(str(pfile))
    spec, tasks = mod.task_set(platform, 10, 0.5, 0)
    assert len(tasks) == 10 and abs(sum(t["run_ns"] / t["period_ns"] for t in tasks) - 2.0) < 1e-3
    dl = mod.as_policy(spec, tasks, "deadline")["tasks"]
    assert all(t["policy"] == "deadline" and t["dl_period_ns"] == p["period_ns"]
               and p["run_ns"] <= t["dl_runtime_ns"] <= p["period_ns"] for t, p in zip(dl, tasks))
    rm = mod.as_policy(spec, tasks, "fifo-rm")["tasks"]
    by_period = sorted(zip(tasks, rm), key=lambda x: x[0]["period_ns"])
    prios = [t["rt_priority"] for _, t in by_period]
    assert prios == sorted(prios, reverse=True)
    plat, scen = mod.schedsim_inputs(tmp_path, 4, tasks, 1.0)
    assert json.loads(plat.read_text())["clusters"][0]["procs"] == 4
    st = json.loads(scen.read_text())["tasks"]
    for t, s in zip(tasks, st):
        assert s["period"] == t["period_ns"] / 1e9 and s["wcet"] == t["run_ns"] / 1e9
        # releases at 0, P, 2P, ... strictly before the end, as in SimSo and hetsched
        assert len(s["jobs"]) == -(-1_000_000_000 // t["period_ns"])
