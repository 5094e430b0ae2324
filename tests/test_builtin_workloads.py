"""Built-in workloads (``--workload NAME:k=v``), their parser, merging several
``--workload`` options, and a real rt-app file through the CLI.

Expected numbers come from the definitions (workloads/builtin.py docstring,
docs/engine-interface.md): ``periodic`` total demand = util x sum(capacity_orig)/1024
with capacities computed here from the raw platform files (arch_topology.c rule);
UUniFast (Bini & Buttazzo 2005) draws uniformly from the simplex, so each coordinate
has mean total/n and P(u_i > x) = (1 - x/total)^(n-1).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from hetsched.errors import InputError, UnknownNameError
from hetsched.platforms import load_platform
from hetsched.workloads import load_rtapp
from hetsched.workloads.builtin import WORKLOADS, parse_workload_arg, resolve_workloads, uunifast_discard
from hetsched.sim import NO_COSTS

PHONE_MIX_THREADS = 10


def spec(platform: str) -> dict:
    return load_platform(platform).to_spec()


def own(w: dict) -> list[dict]:
    """The workload's own tasks: without the kernel workers of its run-to-run variation
    (workloads/noise.py), which tests/test_seed_variation.py checks."""
    workers = set(w.get("noise", {}).get("tasks", ()))
    return [t for t in w["tasks"] if t["name"] not in workers]


def task_util(task: dict) -> tuple[float, int]:
    """(run / period, period_ns) of a ``periodic`` task: one run, one timer."""
    (phase,) = task["phases"]
    run = sum(e["run"] for e in phase["events"] if "run" in e)
    (timer,) = [e["timer"] for e in phase["events"] if "timer" in e]
    return run / timer["period_ns"], timer["period_ns"]


# ------------------------------------------------------------------ UUniFast-discard

@pytest.mark.parametrize("n, total, umax", [(1, 0.3, 1.0), (5, 2.0, 0.8), (20, 3.0, 0.5), (512, 10.0, 0.1),
                                            (3, 1.5, 0.55)])
def test_uunifast_discard_sum_and_bound(n, total, umax):
    rng = np.random.default_rng(42)
    for _ in range(20):
        u = uunifast_discard(n, total, umax, rng)
        assert len(u) == n
        assert math.isclose(sum(u), total, rel_tol=1e-9)
        assert all(0 <= x <= umax for x in u), max(u)


def test_uunifast_discard_is_seeded():
    a = uunifast_discard(8, 2.0, 0.6, np.random.default_rng(7))
    b = uunifast_discard(8, 2.0, 0.6, np.random.default_rng(7))
    c = uunifast_discard(8, 2.0, 0.6, np.random.default_rng(8))
    assert a == b
    assert a != c


def test_uunifast_discard_refuses_unreachable_totals():
    with pytest.raises(ValueError):
        uunifast_discard(4, 2.5, 0.6, np.random.default_rng(0))


def test_uunifast_is_uniform_on_the_simplex():
    n, total, draws = 4, 2.0, 4000
    rng = np.random.default_rng(1234)
    u = np.array([uunifast_discard(n, total, total, rng) for _ in range(draws)])
    # exchangeable coordinates, each with mean total/n (sd of the mean ~ 0.006 here)
    assert np.allclose(u.mean(axis=0), total / n, atol=0.03), u.mean(axis=0)
    # marginal of a uniform point on the simplex: P(u_i > total/2) = (1/2)^(n-1)
    tail = (u > total / 2).mean(axis=0)
    assert np.allclose(tail, 0.5 ** (n - 1), atol=0.025), tail


# ------------------------------------------------------------------ periodic

@pytest.mark.parametrize("platform", ["juno-r0", "gs101", "sm8150", "exynos5422", "sdm845"])
def test_periodic_total_demand_matches_platform_capacity(platform, tools):
    caps = tools.expected_capacities(platform)
    s = spec(platform)
    assert {cpu: c["capacity_orig"] for c in s["clusters"] for cpu in c["cpus"]} == caps
    capacity = sum(caps.values()) / 1024
    w = resolve_workloads(["periodic:util=0.5"], s, seed=3)
    n = WORKLOADS["periodic"].params[0].default
    assert len(own(w)) == n
    utils = [task_util(t)[0] for t in own(w)]
    pmin_ns = min(task_util(t)[1] for t in own(w))
    # each run is rounded to a whole µs: at most 0.5 µs / period per task
    assert sum(utils) == pytest.approx(0.5 * capacity, abs=n * 500 / pmin_ns)


def test_periodic_tasks_respect_umax_and_the_period_range():
    s = spec("juno-r0")
    pmin_ms, pmax_ms, umax = 2.0, 20.0, 0.3
    w = resolve_workloads([f"periodic:n=50,util=0.6,umax={umax},pmin_ms={pmin_ms},pmax_ms={pmax_ms}"], s, seed=9)
    assert len(own(w)) == 50
    for t in own(w):
        u, period = task_util(t)
        # periods are whole µs: rounding moves them by at most 500 ns
        assert pmin_ms * 1e6 - 500 <= period <= pmax_ms * 1e6 + 500
        assert u <= umax + 500 / period
    assert max(task_util(t)[0] for t in own(w)) > umax / 3  # not all tiny


def test_periodic_periods_are_log_uniform():
    w = resolve_workloads(["periodic:n=400,util=0.5,umax=0.8,pmin_ms=1,pmax_ms=100"], spec("sdm845"), seed=5)
    periods = np.array([task_util(t)[1] for t in own(w)]) / 1e6
    # log-uniform on [1, 100] ms: half below the geometric mean 10 ms (uniform would give 9 %)
    assert 0.42 <= (periods < 10).mean() <= 0.58
    assert 0.17 <= (periods < math.sqrt(10)).mean() <= 0.33


def test_periodic_task_shape():
    w = resolve_workloads(["periodic:n=5"], spec("juno-r0"), seed=0)
    assert [t["name"] for t in own(w)] == [f"periodic-{i}" for i in range(5)]
    assert w["timers"] == 5
    ids = [e["timer"]["id"] for t in w["tasks"] for e in t["phases"][0]["events"] if "timer" in e]
    assert sorted(ids) == list(range(5))  # each task its own timer
    assert w["duration_ns"] is None
    for t in w["tasks"]:
        assert t["policy"] == "other" and t["loop"] == -1
    # rt-app creates the threads one after another: the first at once, each later one after it
    delays = [t["delay_ns"] for t in own(w)]
    assert delays[0] == 0 and all(a < b for a, b in zip(delays, delays[1:]))
    assert [t["delay_ns"] for t in own(resolve_workloads(["periodic:n=5,noise=0"], spec("juno-r0"), 0))] == [0] * 5


@pytest.mark.parametrize("arg", ["periodic:n=10,util=0.4", "phone-mix"])
def test_builtin_workloads_are_seeded(arg):
    s = spec("gs101")
    a, b, c = (resolve_workloads([arg], s, seed=k) for k in (4, 4, 5))
    assert a == b
    assert a != c


# ------------------------------------------------------------------ phone-mix

def test_phone_mix_load_scales_the_work_only():
    s = spec("gs101")
    one = resolve_workloads(["phone-mix:system=none"], s, seed=1)
    two = resolve_workloads(["phone-mix:load=2,system=none"], s, seed=1)
    assert len(own(one)) == len(own(two)) == PHONE_MIX_THREADS
    for a, b in zip(own(one), own(two)):
        ua, pa = task_util(a)
        ub, pb = task_util(b)
        assert pa == pb and a["delay_ns"] == b["delay_ns"]
        assert ub == pytest.approx(2 * ua, abs=1000 / pa)  # µs rounding
        assert 0 <= a["delay_ns"] <= pa  # a phase within the first period
    rt = [t for t in own(one) if t["policy"] != "other"]
    assert [t["name"] for t in rt] == ["audio-mixer"] and rt[0]["policy"] == "fifo"
    assert 1 <= rt[0]["rt_priority"] <= 99


# ------------------------------------------------------------------ parse errors

@pytest.mark.parametrize("arg, exc, field, says", [
    ("periodic:foo=1", UnknownNameError, "parameter", "one of: n, noise, pmax_ms, pmin_ms, umax, util"),
    ("periodic:utl=0.3", UnknownNameError, "parameter", "did you mean 'util'"),
    ("periodic:n=abc", InputError, "n", "an integer"),
    ("periodic:n=3.5", InputError, "n", "an integer"),
    ("periodic:util=lots", InputError, "util", "a number"),
    ("periodic:n=0", InputError, "n", "[1, 512]"),
    ("periodic:n=513", InputError, "n", "[1, 512]"),
    ("periodic:util=1.01", InputError, "util", "[0.0, 1.0]"),
    ("periodic:util=-0.1", InputError, "util", "[0.0, 1.0]"),
    ("periodic:umax=0", InputError, "umax", "[0.01, 1.0]"),
    ("periodic:pmin_ms=0.01", InputError, "pmin_ms", "[0.1, 10000.0]"),
    ("periodic:pmin_ms=60,pmax_ms=50", InputError, "pmin_ms", "pmin_ms <= pmax_ms"),
    ("periodic:n", InputError, "n", "key=value"),
    ("phone-mix:load=0", InputError, "load", "[0.05, 20.0]"),
    ("phone-mix:load=21", InputError, "load", "[0.05, 20.0]"),
    ("phone-mix:lod=2", UnknownNameError, "parameter", "did you mean 'load'"),
])
def test_parse_errors_name_the_parameter(arg, exc, field, says):
    with pytest.raises(exc) as e:
        parse_workload_arg(arg)
    err = e.value
    assert err.source == f"--workload {arg.partition(':')[0]}"
    assert err.field == field
    assert says in str(err), str(err)


def test_unknown_workload_name_suggests_one():
    with pytest.raises(UnknownNameError) as e:
        parse_workload_arg("phone_mix")
    assert "did you mean 'phone-mix'" in str(e.value)


@pytest.mark.parametrize("arg", ["periodic:n=2,util=0.9,umax=0.2", "periodic:n=8,util=0.7,umax=0.4"])
def test_unreachable_periodic_demand_is_an_input_error(arg):
    # juno-r0: capacity 3.74 CPUs; the first cannot reach util (n*umax = 0.4), the second
    # can in principle (3.2 >= 2.62) but UUniFast-discard practically never finds a set
    with pytest.raises(InputError) as e:
        resolve_workloads([arg], spec("juno-r0"), seed=0)
    assert e.value.field == "util" and "umax" in str(e.value)


def test_defaults_are_in_range():
    for w in WORKLOADS.values():
        for p in w.params:
            if p.choices is not None:
                assert p.default in p.choices, (w.name, p.name)
                continue
            assert isinstance(p.default, p.kind), (w.name, p.name)
            if p.lo is not None:
                assert p.lo <= p.default, (w.name, p.name)
            if p.hi is not None:
                assert p.default <= p.hi, (w.name, p.name)


# ------------------------------------------------------------------ merging and rt-app files

def test_several_workloads_merge(tools):
    example2 = str(tools.rtapp_file("rtapp_example2.json"))
    s = spec("juno-r0")
    args = ["periodic:n=3", "phone-mix:system=none", example2]
    alone = [resolve_workloads([a], s, seed=2) for a in args]
    merged = resolve_workloads(args, s, seed=2)
    # one set of the phone's kernel workers (juno-r0: 6 CPUs), that of the first spec that
    # never ends, after every workload's own tasks
    assert len(merged["tasks"]) == sum(len(own(w)) for w in alone) + 6 == 3 + PHONE_MIX_THREADS + 1 + 6
    names = [t["name"] for w in alone for t in own(w)]
    assert [t["name"] for t in merged["tasks"]] == names + alone[0]["noise"]["tasks"]
    assert merged["noise"] == alone[0]["noise"] and merged["tasks"][-6:] == alone[0]["tasks"][-6:]
    assert merged["timers"] == sum(w["timers"] for w in alone)
    ids = [e["timer"]["id"] for t in merged["tasks"] for ph in t["phases"] for e in ph["events"] if "timer" in e]
    assert len(ids) == len(set(ids)) and max(ids) < merged["timers"]  # no timer shared across specs
    assert merged["name"] == "+".join(w["name"] for w in alone)


def test_several_workload_options_on_the_command_line(tmp_path, tools):
    example2 = tools.rtapp_file("rtapp_example2.json")
    out = tmp_path / "o"
    proc = tools.run_cli(["run", "--platform", "juno-r0", "--workload", "periodic:n=3,util=0.2",
                          "--workload", "phone-mix:system=none", "--workload", example2, "--duration", "0.5",
                          "--out", out])
    assert proc.returncode == 0, proc.stderr
    d = json.loads((out / "result.json").read_text())
    assert len(d["tasks"]) == 3 + PHONE_MIX_THREADS + 1 + 6   # and juno-r0's six kernel workers
    assert "thread0-0" in {t["name"] for t in d["tasks"]}
    assert all(t["runtime_s"] > 0 for t in d["tasks"])


def test_rtapp_file_runs_via_the_cli(tmp_path, tools):
    """rt-app tutorial example2: run 10000 µs, timer period 100000 µs, global duration 2 s.

    With the performance governor every CPU is at f_max, so a CPU of capacity C does
    C/1024 µs of work per µs: the CPU time, weighted by capacity, is the work."""
    path = tools.rtapp_file("rtapp_example2.json")
    raw = load_rtapp(path)
    out = tmp_path / "o"
    # the scheduler's costs off: the CPU time is the work alone
    proc = tools.run_cli(["run", "--platform", "juno-r0", "--workload", path, "--governor", "performance",
                          "--out", out, *(a for k in NO_COSTS for a in ("--set", f"{k}=0"))])
    assert proc.returncode == 0, proc.stderr
    d = json.loads((out / "result.json").read_text())
    assert d["workload"] == raw["name"] == "rtapp_example2"
    assert d["sim_duration_s"] == pytest.approx(2.0)  # the file's global duration
    (task,) = d["tasks"]
    assert task["name"] == "thread0-0"
    jobs = round(2.0 / 0.1)
    assert task["activations"] == jobs
    assert task["nr_wakeups"] == jobs - 1
    caps = {c["cpu"]: c["capacity"] for c in d["cpus"]}
    work_s = sum(s * caps[int(cpu)] / 1024 for cpu, s in task["cpu_time_s"].items())
    assert work_s == pytest.approx(jobs * 0.010, rel=1e-5)
    assert task["missed_activations"] == 0
