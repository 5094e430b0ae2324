"""The Python API: Simulation (build, run, step, observe, set knobs), Result, and the
energy bookkeeping checked against the physics.

Expectations are derived here, not read back from the package: capacities from the raw
platform files with the kernel's arch_topology.c rule, energies from residencies times
the per-OPP / per-idle-state powers of the PlatformSpec the engine was given, work from
"run N µs = N µs at capacity 1024 and f_max" (docs/engine-interface.md).
"""

from __future__ import annotations

import json
import math

import pytest

from hetsched.errors import HetschedError, InputError, UnknownNameError
from hetsched.platforms import load_platform
from hetsched.sim import Result, Simulation, knob_table
from hetsched.workloads import periodic, workload
from hetsched.sim import NO_COSTS

PLATFORMS = ["juno-r0", "hikey960", "rk3399", "exynos5422", "gs101", "sm8150", "sdm845"]


def spec_of(platform: str) -> dict:
    return load_platform(platform).to_spec()


def cluster_table(spec: dict) -> dict[str, dict]:
    return {c["name"]: c for c in spec["clusters"]}


def cpu_energy_from_residency(cpu: dict, cluster: dict) -> float:
    """J: busy time at each OPP x that OPP's per-CPU power + time in each idle state x
    that state's per-CPU power (µW x s = µJ)."""
    opp_p = {o["khz"]: o["power_uw"] for o in cluster["opps"]}
    idle_p = {s["name"]: s["power_uw"] for s in cluster["idle_states"]}
    uj = sum(s * opp_p[int(khz)] for khz, s in cpu["freq_residency_s"].items())
    uj += sum(s * idle_p[name] for name, s in cpu["idle_residency_s"].items())
    return uj * 1e-6


def rel_close(a: float, b: float, rel: float = 1e-9, abs_: float = 1e-15) -> bool:
    return math.isclose(a, b, rel_tol=rel, abs_tol=abs_)


# ------------------------------------------------------------------ construction errors

@pytest.mark.parametrize("kw, exc, needles", [
    ({"scheduler": "cfz"}, UnknownNameError, ["scheduler", "did you mean 'cfs'", "'cfz'"]),
    ({"governor": "performence"}, UnknownNameError, ["governor", "did you mean 'performance'"]),
    ({"platform": "hikey96"}, UnknownNameError, ["platform", "did you mean 'hikey960'"]),
    ({"knobs": {"schedutil.targetload": 0.5}}, UnknownNameError,
     ["knob", "did you mean 'schedutil.target_load'"]),
    ({"knobs": {"schedutil.target_load": 3}}, InputError, ["schedutil.target_load", "expected"]),
    ({"knobs": {"tick_hz": "fast"}}, InputError, ["tick_hz", "expected a number"]),
    ({"seed": -1}, InputError, ["seed", "non-negative integer"]),
    ({"seed": 1.5}, InputError, ["seed"]),
    ({"seed": True}, InputError, ["seed"]),
    ({"workload": "periodic:util=1.5"}, InputError, ["util", "expected"]),
])
def test_constructor_rejects_bad_input(kw, exc, needles):
    base = {"platform": "juno-r0", "workload": "periodic:n=4"}
    with pytest.raises(exc) as e:
        Simulation(**{**base, **kw})
    assert isinstance(e.value, HetschedError)
    for n in needles:
        assert n in str(e.value), (n, str(e.value))


def test_knob_range_error_quotes_the_declared_range():
    k = {k["name"]: k for k in knob_table()}["schedutil.target_load"]
    with pytest.raises(InputError) as e:
        Simulation(platform="juno-r0", workload="periodic:n=4", knobs={"schedutil.target_load": k["max"] + 1})
    assert f"[{k['min']:g}, {k['max']:g}]" in str(e.value)


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf")])
def test_run_rejects_bad_durations(bad):
    sim = Simulation(platform="juno-r0", workload="periodic:n=4")
    with pytest.raises(InputError) as e:
        sim.run(bad)
    assert "duration" in str(e.value)
    assert sim.now_ns == 0


# ------------------------------------------------------------------ stepping

def test_stepping_in_ten_steps_equals_one_run(tools):
    kw = dict(platform="hikey960", workload=["phone-mix", "periodic:n=6,util=0.2"], seed=3, timeseries=True)
    one = Simulation(**kw).run(1.0)

    stepped = Simulation(**kw)
    for i in range(1, 11):
        stepped.run_until(i * 100_000_000)
        assert stepped.now_ns == i * 100_000_000
    by_until = stepped.result()

    chunked = Simulation(**kw)
    for _ in range(10):
        by_run = chunked.run(0.1)

    assert one["sim_duration_s"] == 1.0
    assert one["events"] > 100
    for other in (by_until, by_run):
        assert tools.without_wall(other.doc) == tools.without_wall(one.doc)
        assert other.timeseries == one.timeseries


def test_run_until_is_absolute_and_run_is_relative():
    sim = Simulation(platform="gs101", workload="phone-mix", seed=1)
    sim.run_until(300_000_000)
    assert sim.now_ns == 300_000_000
    res = sim.run(0.2)
    assert sim.now_ns == 500_000_000
    assert res["sim_duration_s"] == pytest.approx(0.5, abs=1e-12)


# ------------------------------------------------------------------ observe()

def test_observe_reports_cpus_and_counters(tools):
    platform = "juno-r0"
    spec = spec_of(platform)
    clusters = cluster_table(spec)
    caps = tools.expected_capacities(platform)
    sim = Simulation(platform=platform, workload="periodic:n=20,util=0.6", seed=1)
    prev_counters, prev_energy = None, 0.0
    for i in range(1, 11):
        sim.run_until(i * 50_000_000)
        o = sim.observe()
        assert o["now_ns"] == i * 50_000_000
        cpus = o["cpus"]
        assert [c["cpu"] for c in cpus] == sorted(caps)
        per_cluster_freq: dict[str, set] = {}
        for c in cpus:
            cl = clusters[c["cluster"]]
            assert c["cpu"] in cl["cpus"]
            assert c["capacity_orig"] == caps[c["cpu"]]
            assert c["freq_khz"] in {o_["khz"] for o_ in cl["opps"]}
            per_cluster_freq.setdefault(c["cluster"], set()).add(c["freq_khz"])
            assert -1 <= c["idle_state"] < len(cl["idle_states"])
            if c["nr_running"] > 0:
                assert c["idle_state"] == -1, c  # a CPU with work is not in an idle state
            if c["idle_state"] >= 0:
                assert c["nr_running"] == 0, c
            # cpu_util() is clamped to the CPU's capacity (the raw PELT sums are not)
            assert 0 <= c["util"] <= c["capacity_orig"], c
            assert c["util_avg"] >= 0 and c["util_est"] >= 0
        # one frequency per cluster: DVFS is per policy (cluster)
        assert all(len(f) == 1 for f in per_cluster_freq.values()), per_cluster_freq
        cnt = o["counters"]
        for k in ("wakeups", "context_switches", "migrations", "balance_attempts", "balance_successes"):
            assert isinstance(cnt[k], int) and cnt[k] >= 0
        assert cnt["balance_successes"] <= cnt["balance_attempts"]
        if prev_counters is not None:
            for k, v in cnt.items():
                assert v >= prev_counters[k], (k, v, prev_counters[k])
        assert o["energy_j"] >= prev_energy
        prev_counters, prev_energy = cnt, o["energy_j"]

    res = sim.result().doc
    o = sim.observe()
    # 20 tasks on 6 CPUs at 60% of the platform: the balancer must have had work
    assert o["counters"]["balance_attempts"] > 0
    assert o["counters"]["balance_successes"] > 0
    for k in ("wakeups", "context_switches", "migrations", "balance_attempts", "balance_successes"):
        assert o["counters"][k] == res["counters"][k], k
    assert o["energy_j"] == pytest.approx(res["energy_j"], rel=1e-12)
    tasks = res["tasks"]
    # every wakeup of a task is counted, plus at most one first wakeup (fork) per task
    nr_wakeups = sum(t["nr_wakeups"] for t in tasks)
    assert nr_wakeups <= o["counters"]["wakeups"] <= nr_wakeups + len(tasks)
    assert o["counters"]["context_switches"] == sum(c["nr_switches"] for c in res["cpus"])
    assert o["counters"]["migrations"] == sum(t["migrations"] for t in tasks)


@pytest.mark.parametrize("governor, pick", [("performance", max), ("powersave", min)])
def test_fixed_governors_hold_one_opp(governor, pick):
    platform = "sdm845"
    clusters = cluster_table(spec_of(platform))
    sim = Simulation(platform=platform, workload="phone-mix", governor=governor, seed=2)
    for i in range(1, 6):
        sim.run_until(i * 100_000_000)
        for c in sim.observe()["cpus"]:
            assert c["freq_khz"] == pick(o["khz"] for o in clusters[c["cluster"]]["opps"]), c
    for c in sim.result()["cpus"]:
        want = pick(o["khz"] for o in clusters[c["cluster"]]["opps"])
        used = {int(k) for k, v in c["freq_residency_s"].items() if v > 0}
        assert used <= {want}, (c["cpu"], used)


# ------------------------------------------------------------------ set_knob()

def _normalised_freq(doc: dict, clusters: dict) -> float:
    """Busy-time-weighted f / f_max over all CPUs."""
    num = den = 0.0
    for c in doc["cpus"]:
        fmax = max(o["khz"] for o in clusters[c["cluster"]]["opps"])
        for khz, s in c["freq_residency_s"].items():
            num += s * int(khz) / fmax
            den += s
    return num / den


def _delta(after: dict, before: dict) -> dict:
    """The second segment of a stepped run: per-CPU freq residency and energy."""
    out = {"energy_j": after["energy_j"] - before["energy_j"], "cpus": []}
    for a, b in zip(after["cpus"], before["cpus"]):
        out["cpus"].append({"cluster": a["cluster"], "freq_residency_s": {
            k: v - b["freq_residency_s"].get(k, 0.0) for k, v in a["freq_residency_s"].items()}})
    return out


MARKS_SPEC = {"name": "marks", "marks": ["start", "end"], "tasks": [
    {"name": "main", "loop": 1,
     "phases": [{"loop": 2, "events": [{"mark": 0}, {"run": 500_000}, {"fork": 1}, {"mark": 1}]}]},
    {"name": "child", "start": False, "loop": 1, "phases": [{"loop": 1, "events": [{"run": 200_000}, {"mark": 1}]}]}]}


def test_marks_read_between_steps_are_the_results_marks():
    sim = Simulation(platform="juno-r0", workload=MARKS_SPEC, scheduler="cfs")
    assert sim.marks() == []
    seen = []
    for t in range(1_000_000, 10_000_001, 1_000_000):
        sim.run_until(t)
        new = sim.marks(len(seen))
        assert all(m[0] < t for m in new)  # made before the step's end
        seen += new
    doc = sim.result().doc
    names = [t["name"] for t in doc["tasks"]]
    assert seen == [(t, names[ti], MARKS_SPEC["marks"][mi]) for t, ti, mi in doc["marks"]]
    # the program's order: main's two loops (start, end), each forking a child that ends
    assert [(task, m) for _, task, m in seen if task == "main"] == [("main", "start"), ("main", "end")] * 2
    assert sorted(task for _, task, m in seen if task != "main") == ["child-0000", "child-0001"]
    assert sim.marks(len(seen)) == [] and sim.marks(10**6) == []
    assert sim.marks(2) == seen[2:]
    with pytest.raises(InputError, match="since"):
        sim.marks(-1)


def test_set_knob_between_steps_changes_behaviour(tools):
    platform = "gs101"
    clusters = cluster_table(spec_of(platform))
    seg = {}
    prefixes = []
    for target in (0.3, 0.9, None):
        sim = Simulation(platform=platform, workload="phone-mix", seed=1)
        before = sim.run(0.3).doc
        prefixes.append(tools.without_wall(before))
        if target is not None:
            sim.set_knob("schedutil.target_load", target)
            assert sim.knob_values()["schedutil.target_load"] == target
        after = sim.run(1.0).doc
        if target is not None:
            assert after["knobs"]["schedutil.target_load"] == target
        seg[target] = _delta(after, before)
    assert len(set(prefixes)) == 1  # same history up to the knob change
    lo, hi = seg[0.3], seg[0.9]
    # less utilisation per OPP step -> higher OPPs -> more energy for the same work
    assert _normalised_freq(lo, clusters) > _normalised_freq(hi, clusters)
    assert lo["energy_j"] > hi["energy_j"]
    assert seg[None]["energy_j"] != lo["energy_j"]


def test_set_knob_rejects_bad_values_and_keeps_the_old_one():
    sim = Simulation(platform="juno-r0", workload="periodic:n=4")
    old = sim.knob_values()["schedutil.target_load"]
    with pytest.raises(InputError):
        sim.set_knob("schedutil.target_load", 5.0)
    with pytest.raises(UnknownNameError) as e:
        sim.set_knob("schedutil.target_lod", 0.5)
    assert "did you mean 'schedutil.target_load'" in str(e.value)
    assert sim.knob_values()["schedutil.target_load"] == old


# ------------------------------------------------------------------ Result

def test_result_to_pandas_frames():
    sim = Simulation(platform="juno-r0", workload=["phone-mix:system=none,noise=0", "periodic:n=4,noise=0"], seed=4, timeseries=True,
                     knobs={"timeseries.period_us": 10_000})
    res = sim.run(0.5)
    assert isinstance(res, Result)
    f = res.to_pandas()
    assert {"cpus", "tasks", "clusters", "timeseries"} <= set(f)
    cpus, tasks, clusters, ts = f["cpus"], f["tasks"], f["clusters"], f["timeseries"]
    assert len(cpus) == len(res["cpus"]) == 6
    assert {"cpu", "cluster", "capacity", "busy_s", "energy_j"} <= set(cpus.columns)
    assert len(tasks) == len(res["tasks"]) == 14
    assert {"name", "pid", "runtime_s", "wait_s", "migrations", "nr_wakeups"} <= set(tasks.columns)
    assert list(clusters["cluster"]) == [c["cluster"] for c in res["clusters"]]
    total = cpus["energy_j"].sum() + clusters["cluster_term_energy_j"].sum()
    assert total == pytest.approx(res.energy_j, rel=1e-9)
    assert {"t_s", "t_ns", "cpu", "util", "freq_khz", "idle_state", "power_uw"} <= set(ts.columns)
    assert (ts["t_s"] * 1e9 - ts["t_ns"]).abs().max() < 1e-3
    times = sorted(ts["t_ns"].unique())
    assert times[0] == 0 and len({b - a for a, b in zip(times, times[1:])}) == 1  # evenly spaced
    assert (ts.groupby("t_ns")["cpu"].count() == 6).all()
    # no timeseries asked for: no frame
    plain = Simulation(platform="juno-r0", workload="periodic:n=4").run(0.2).to_pandas()
    assert "timeseries" not in plain
    assert json.loads(res.to_json()) == res.doc


@pytest.mark.parametrize("period_us", [10_000, 1_000])
def test_timeseries_period_knob_sets_the_sampling_period(period_us):
    sim = Simulation(platform="juno-r0", workload="periodic:n=4", seed=4, timeseries=True,
                     knobs={"timeseries.period_us": period_us})
    ts = sim.run(0.1).timeseries
    times = sorted(set(ts["t_ns"]))
    assert {b - a for a, b in zip(times, times[1:])} == {period_us * 1000}


# ------------------------------------------------------------------ seeds

def test_same_seed_same_result_different_seed_different(tools):
    for wl in ("phone-mix", "periodic:n=8,util=0.4"):
        a = Simulation(platform="gs101", workload=wl, seed=11)
        b = Simulation(platform="gs101", workload=wl, seed=11)
        c = Simulation(platform="gs101", workload=wl, seed=12)
        assert a.workload_spec == b.workload_spec
        assert a.workload_spec != c.workload_spec, wl
        ra, rb, rc = (s.run(0.5).doc for s in (a, b, c))
        assert tools.without_wall(ra) == tools.without_wall(rb)
        assert ra["tasks"] != rc["tasks"], wl
        assert ra["energy_j"] != rc["energy_j"], wl


def test_a_workload_resolved_again_is_the_same_and_its_own_copy(tools):
    # a batch builds one workload many times (sim.py keeps its last resolutions): each
    # simulation gets what resolving it anew gives, and a copy of its own
    from hetsched.workloads.builtin import resolve_workloads

    wl = ["browsing:pages=2", "periodic:n=4,util=0.2"]
    fresh = resolve_workloads(wl, spec_of("hikey960"), 3)
    a = Simulation(platform="hikey960", workload=wl, seed=3)
    a.workload_spec["tasks"].pop()
    b = Simulation(platform="hikey960", workload=wl, seed=3)
    assert b.workload_spec == fresh
    ref = Simulation(platform="hikey960", workload=fresh, seed=3)
    assert tools.without_wall(b.run(0.5).doc) == tools.without_wall(ref.run(0.5).doc)


# ------------------------------------------------------------------ energy physics

@pytest.fixture(scope="module")
def platform_runs():
    out = {}
    for p in PLATFORMS:
        out[p] = Simulation(platform=p, workload=["phone-mix", "periodic:n=6,util=0.2"], seed=5).run(0.6).doc
    return out


@pytest.mark.parametrize("platform", PLATFORMS)
def test_energy_bookkeeping(platform, platform_runs, tools):
    d = platform_runs[platform]
    clusters = cluster_table(spec_of(platform))
    caps = tools.expected_capacities(platform)
    T = d["sim_duration_s"]
    assert T == pytest.approx(0.6, abs=1e-12)
    assert d["energy_j"] > 0
    # energy_j is the sum of the per-CPU terms and the clusters' shared terms
    total = sum(c["energy_j"] for c in d["cpus"]) + sum(c["cluster_term_energy_j"] for c in d["clusters"])
    assert rel_close(total, d["energy_j"]), (total, d["energy_j"])
    assert rel_close(d["avg_power_mw"], d["energy_j"] / T * 1000.0)
    for c in d["cpus"]:
        cl = clusters[c["cluster"]]
        assert c["capacity"] == caps[c["cpu"]]
        assert sum(c["freq_residency_s"].values()) == pytest.approx(c["busy_s"], abs=1e-9)
        assert c["busy_s"] + sum(c["idle_residency_s"].values()) == pytest.approx(T, abs=1e-9)
        assert set(c["idle_residency_s"]) == {s["name"] for s in cl["idle_states"]}
        assert {int(k) for k in c["freq_residency_s"]} <= {o["khz"] for o in cl["opps"]}
        assert rel_close(c["energy_j"], cpu_energy_from_residency(c, cl)), c
    for cl in d["clusters"]:
        members = [c for c in d["cpus"] if c["cluster"] == cl["cluster"]]
        assert sorted(cl["cpus"]) == sorted(c["cpu"] for c in members)
        assert rel_close(cl["energy_j"], sum(c["energy_j"] for c in members) + cl["cluster_term_energy_j"])
        spec_cl = clusters[cl["cluster"]]
        no_cluster_power = all(o["cluster_power_uw"] == 0 for o in spec_cl["opps"]) and all(
            s["cluster_power_uw"] == 0 for s in spec_cl["idle_states"])
        if no_cluster_power:
            assert cl["cluster_term_energy_j"] == 0
        else:
            assert cl["cluster_term_energy_j"] > 0


@pytest.mark.parametrize("platform", ["juno-r0", "gs101", "sm8150"])
def test_performance_uses_more_energy_than_powersave(platform):
    e = {}
    for g in ("performance", "powersave"):
        e[g] = Simulation(platform=platform, workload="periodic:n=8,util=0.2", governor=g, seed=2).run(1.0).energy_j
    assert e["performance"] > e["powersave"], e


def test_cluster_term_of_a_pinned_task_from_first_principles():
    """One periodic task pinned to big CPU 1 of juno-r0 (published cluster powers).

    CPU 2 (the other big) and all littles never run, so they sit in their deepest
    state.  The big cluster then pays: the OPP's cluster power while CPU 1 is busy, and
    the idle cluster power of CPU 1's state while it is idle (CPU 2 is deeper).  The
    little cluster pays its deepest idle cluster power for the whole run.
    """
    platform = "juno-r0"
    clusters = cluster_table(spec_of(platform))
    big, little = clusters["big"], clusters["little"]
    period_us, run_us = 10_000, 2_000
    w = workload("pinned", [periodic("p", period_us=period_us, run_us=run_us, cpus=[1])])
    # the scheduler's own costs off: the arithmetic below is the task's work alone
    for gov in ("performance", "schedutil", "powersave"):
        d = Simulation(platform=platform, workload=w, governor=gov, knobs=NO_COSTS).run(1.0).doc
        T = d["sim_duration_s"]
        cpu1 = d["cpus"][1]
        assert cpu1["cpu"] == 1
        opp_c = {o["khz"]: o["cluster_power_uw"] for o in big["opps"]}
        idle_c = {s["name"]: s["cluster_power_uw"] for s in big["idle_states"]}
        want_big = 1e-6 * (sum(s * opp_c[int(k)] for k, s in cpu1["freq_residency_s"].items())
                           + sum(s * idle_c[n] for n, s in cpu1["idle_residency_s"].items()))
        terms = {c["cluster"]: c["cluster_term_energy_j"] for c in d["clusters"]}
        assert rel_close(terms["big"], want_big), (gov, terms, want_big)
        deepest = little["idle_states"][-1]
        assert rel_close(terms["little"], 1e-6 * deepest["cluster_power_uw"] * T), (gov, terms)
        for c in d["cpus"]:
            if c["cpu"] == 1:
                continue
            assert c["busy_s"] == 0
            deepest_name = clusters[c["cluster"]]["idle_states"][-1]["name"]
            if c["cluster"] == "little":
                assert c["idle_residency_s"][deepest_name] == pytest.approx(T, abs=1e-9)
            else:
                # CPU 2 is in the cluster state only while CPU 1 is in it too; while CPU 1
                # runs or sits in a CPU-level state, the cluster is up and CPU 2 counts in a
                # CPU-level state
                assert c["idle_residency_s"][deepest_name] == pytest.approx(
                    T - cpu1["busy_s"] - sum(v for n, v in cpu1["idle_residency_s"].items() if n != deepest_name),
                    abs=1e-9)
        if gov == "performance":
            # menu on CPU 1: its first idle (from t = 0, no timer) ends at once, so the
            # residency is the 1.6 ms exit alone, within twice the exit latency: it enters
            # the history halved, 800 µs. The next 7 idles last 10 - 2 - 1.6 = 6.4 ms each.
            # At the 9th the history is [800, 6400 x 7] µs: no steady pattern (mean 5700,
            # variance 3 430 000 µs²), and dropping the largest value drops all seven 6400s,
            # leaving 800 µs alone (variance 0): the typical interval caps the prediction at
            # 800 µs, under the cluster state's residency: WFI, and under a tick (4 ms), so
            # menu keeps the tick. That idle began at 73.6 ms; the jiffy at 76 ms ends it
            # after 2.4 ms in WFI (1 µs exit). The tick wakeup, its timer 6.4 ms > a tick
            # away, is recorded as 45 ms capped at 6.4 ms: history 6400 x 8; with the timer
            # 3.999 ms away the prediction is 3.999 ms: the cluster state (residency 2.5 ms,
            # exit 1.6 ms) with the tick kept, the next jiffy (80 ms) no sooner than the
            # timer, which ends it.
            assert cpu1["idle_residency_s"]["WFI"] == pytest.approx(2.4e-3, abs=1e-9)
            assert d["counters"]["idle_ticks"] == 1
        task = d["tasks"][0]
        assert task["cpu_time_s"] == {"1": task["runtime_s"]}
        if gov == "performance":
            # f_max on a capacity-1024 CPU: run N µs of work takes N µs
            n = task["activations"]
            assert n == round(T * 1e6 / period_us)
            assert task["runtime_s"] == pytest.approx(n * run_us * 1e-6, rel=1e-6)
            # the CPU sleeps 10 - 2 - exit ms between jobs, past every target residency,
            # so each wakeup pays the deepest state's exit latency as busy time; the 9th
            # idle's tick (above) adds one WFI exit
            lat = big["idle_states"][-1]["exit_latency_ns"] * 1e-9
            wfi_lat = big["idle_states"][0]["exit_latency_ns"] * 1e-9
            assert idle_c[big["idle_states"][-1]["name"]] >= 0
            assert cpu1["busy_s"] - task["runtime_s"] == pytest.approx(n * lat + wfi_lat, rel=1e-6)
        if gov == "powersave":
            # the lowest OPP delivers capacity * f_min / f_max per µs
            fmin, fmax = min(opp_c), max(opp_c)
            assert task["runtime_s"] == pytest.approx(task["activations"] * run_us * 1e-6 * fmax / fmin,
                                                      rel=0.01)


def test_exit_latency_follows_the_state_actually_reached():
    """juno-r0: CPU 1 is kept busy by a hog, so the big cluster never powers down; a
    periodic task on CPU 2 idles 6.4 ms between jobs. CPU 2 reaches cpu-sleep-0 only
    (which is what its idle residency says) and should pay that state's exit latency."""
    big = cluster_table(spec_of("juno-r0"))["big"]
    w = workload("w", [periodic("hog", period_us=100_000, run_us=100_000, cpus=[1]),
                       periodic("p", period_us=10_000, run_us=2_000, cpus=[2])])
    # costs off: the idle periods below are the task's work alone
    d = Simulation(platform="juno-r0", workload=w, governor="performance", knobs=NO_COSTS).run(1.0).doc
    cpu2 = d["cpus"][2]
    cpu_level = [s for s in big["idle_states"] if s["level"] == "cpu"][-1]
    # one idle is spent in WFI: the first (from t = 0, ended at once) measures the exit
    # alone, 1.5 ms, within twice the chosen cluster state's exit latency, so menu keeps it
    # halved, 750 µs; at the 9th idle the history is [750, 6500 x 7] µs and the outlier
    # rule leaves 750 µs as the typical interval, too short for cpu-sleep-0. That idle
    # begins after the job woken at 70 ms (70 ms + the exit + 2 ms of work); the prediction
    # is under a tick, so menu keeps the tick, and the jiffy at 76 ms ends WFI (menu then
    # goes deeper for the rest of the idle)
    wfi = big["idle_states"][0]["name"]
    ninth_idle_begins = 70e-3 + cpu_level["exit_latency_ns"] * 1e-9 + 2e-3
    assert cpu2["idle_residency_s"][wfi] == pytest.approx(76e-3 - ninth_idle_begins, abs=1e-9)
    assert cpu2["idle_residency_s"][cpu_level["name"]] == pytest.approx(
        1.0 - cpu2["busy_s"] - cpu2["idle_residency_s"][wfi], abs=1e-9)
    task = d["tasks"][1]
    # every wakeup pays the exit latency of cpu-sleep-0; the task is enqueued once CPU 2 is
    # out of it, so it never waits as runnable (it is alone on CPU 2)
    assert task["wakeup_latency_us_max"] == pytest.approx(cpu_level["exit_latency_ns"] / 1000, rel=1e-9)
    assert task["wait_s"] == 0.0


def test_a_measured_wake_latency_replaces_the_dt_worst_case():
    """gs101's mid CPUs: c2's cpuidle exit_latency is the DT's entry + exit, 150 + 190 =
    340 µs, while a Pixel 6a took 224 µs (median) from waking a task onto a mid CPU in c2
    to running it. A periodic task alone on CPU 4 (2 ms of work every 10 ms) sleeps 8 ms,
    long enough for c2 (2.5 ms target residency): its wakeups pay 224 µs, the governor
    still weighs 340."""
    mid = cluster_table(spec_of("gs101"))["mid"]
    c2 = mid["idle_states"][1]
    assert (c2["name"], c2["exit_latency_ns"], c2["measured_wakeup_ns"]) == ("c2", 340_000, 224_000)
    w = workload("w", [periodic("p", period_us=10_000, run_us=2_000, cpus=[4])])
    d = Simulation(platform="gs101", workload=w, governor="performance", knobs=NO_COSTS).run(1.0).doc
    assert d["cpus"][4]["idle_residency_s"]["c2"] > 0.5
    task = d["tasks"][0]
    # enqueued once CPU 4 can run it, alone there: no wait as runnable
    assert task["wakeup_latency_us_max"] == pytest.approx(224.0, abs=1e-6)
    assert task["wait_s"] == 0.0


def test_convenience_run_function():
    from hetsched.sim import run

    res = run(platform="juno-r0", workload=["periodic:n=3"], duration_s=0.2, seed=1)
    assert res["platform"] == "juno-r0" and res["sim_duration_s"] == pytest.approx(0.2)


def test_finite_workload_without_duration_runs_until_every_task_ends(tmp_path):
    """rt-app's `duration: -1` with finite loops: the run ends at the last task's exit.
    One task pinned to juno's big CPU 1, 5 x (1 ms of work, then a 10 ms timer): its last
    timer fires at 50 ms; the task exits when it runs again, after the CPU leaves its idle
    state. The big cluster is all idle then, in cluster-sleep-0 (predicted idle ~9 ms >
    its 2.5 ms target residency), whose exit latency is entry + exit (400 + 1200 µs)."""
    f = tmp_path / "fin.json"
    f.write_text('{"global": {"duration": -1}, "tasks": {"t": {"loop": 5, "run": 1000, "cpus": [1],'
                 ' "timer": {"ref": "unique", "period": 10000}}}}')
    # the scheduler's own costs off: the expected end is the work and the idle exit
    sim = Simulation(platform="juno-r0", workload=str(f), governor="performance",
                     knobs=NO_COSTS)
    d = sim.run().doc
    big = cluster_table(spec_of("juno-r0"))["big"]
    cluster_sleep = [s for s in big["idle_states"] if s["level"] == "cluster"][0]
    assert d["stop_reason"] == "all tasks exited"
    assert d["tasks"][0]["state"] == "exited" and d["tasks"][0]["activations"] == 5
    assert d["sim_duration_s"] == pytest.approx(0.050 + cluster_sleep["exit_latency_ns"] * 1e-9, abs=1e-9)
    # a workload that never ends runs for the default 10 s instead
    forever = Simulation(platform="juno-r0", workload="periodic:n=4,util=0.3").run().doc
    assert forever["stop_reason"] == "duration" and forever["sim_duration_s"] == pytest.approx(10.0)


def test_eevdf_is_deterministic_and_differs_from_cfs(tools):
    """EEVDF is the mainline-6.12 fair class (fair.eevdf=-1 resolves to it; 1 asks for it):
    same inputs give the same result, and under contention (periodic tasks at 80% of the
    platform) the schedule differs from CFS's (fair.eevdf=0) while every task still gets
    CPU time. android-4.19 resolves to CFS."""
    kw = dict(platform="gs101", workload="periodic:n=40,util=0.8", seed=2)
    cfs = Simulation(**kw, knobs={"fair.eevdf": 0}).run(1.0).doc
    e0 = Simulation(**kw).run(1.0).doc
    e1 = Simulation(**kw, knobs={"fair.eevdf": 1}).run(1.0).doc
    e2 = Simulation(**kw, knobs={"fair.eevdf": 1}).run(1.0).doc
    assert e0["knobs"]["fair.eevdf"] == -1.0 and e1["knobs"]["fair.eevdf"] == 1.0
    assert (e0["policy"]["fair_class"], e1["policy"]["fair_class"], cfs["policy"]["fair_class"]) == ("eevdf", "eevdf", "cfs")
    assert tools.without_wall(e1) == tools.without_wall(e2)
    assert e0["tasks"] == e1["tasks"]
    assert e1["tasks"] != cfs["tasks"]
    legacy = Simulation(platform="gs101", workload="periodic:n=4", knobs={"kernel": "android-4.19"}).run(0.1).doc
    assert legacy["policy"]["fair_class"] == "cfs" and legacy["counters"]["delayed_dequeues"] == 0
    assert all(sum(t["cpu_time_s"].values()) > 0 for t in e1["tasks"])


@pytest.mark.parametrize("fair_class, eevdf, switches", [
    # EEVDF: the slice (base_slice 0.75 ms x (1 + ilog2(8)) = 3 ms on gs101's 8 CPUs) is
    # shorter than a tick (HZ=250: 4 ms), so every tick finds curr past its deadline and
    # the other task eligible: one switch a tick, 250 in the second
    ("eevdf", 1, 250),
    # CFS: two tasks share sched_latency 6 ms x 4 = 24 ms, a 12-ms ideal slice, which
    # check_preempt_tick() finds used up at the fourth tick of a stint: 16-ms stints,
    # 1000 / 16 = 62.5, so 63 switches
    ("cfs", 0, 63),
])
def test_a_slice_ends_at_the_tick_however_the_work_is_split(fair_class, eevdf, switches):
    """The end of an rt-app run event is userspace's: the kernel sees nothing there, so
    without hrtick a fair slice ends at a tick. Two CPU-bound tasks share CPU 0, one
    running 10 ms at a time, the other the same work in 10-us pieces: the schedule is the
    one worked out by hand from the tick, whichever way the second task's work is written
    (before the end of a run event stopped calling update_curr(), EEVDF ended the pieced
    task's slices at its first piece past the deadline, between ticks, and the two tasks'
    CPU times differed from the unsplit run's)."""
    def task(name, work):
        return {"name": name, "policy": "other", "cpus": [0], "loop": -1,
                "phases": [{"loop": -1, "events": [{"run": work}]}]}

    docs = []
    for piece in (10_000_000, 10_000):
        wl = {"name": "two", "tasks": [task("whole", 10_000_000), task("pieces", piece)]}
        d = Simulation(platform="gs101", workload=wl, scheduler="cfs", knobs={"fair.eevdf": eevdf, **NO_COSTS},
                       lower_bound=False).run(1.0).doc
        assert d["policy"]["fair_class"] == fair_class
        docs.append(d)
    for d in docs:
        assert d["counters"]["context_switches"] == switches
    assert [t["cpu_time_s"] for t in docs[0]["tasks"]] == [t["cpu_time_s"] for t in docs[1]["tasks"]]


def test_ctrl_c_stops_one_long_engine_call_and_the_run_goes_on_unchanged():
    """A signal's handler runs while the engine is inside one long run_until (it asks
    Python between events); its exception stops the call between two events, and running
    on from there gives the run that was never stopped, to the byte."""
    import signal

    def make():
        return Simulation(platform="sm8150", workload=["hackbench:groups=1,loops=10000000"], scheduler="eas",
                          seed=3, lower_bound=False)

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    end = 3_000_000_000  # hackbench's 3 simulated s take about a second of wall time
    sim = make()
    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        with pytest.raises(KeyboardInterrupt):
            sim.run_until(end)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert 0 < sim.now_ns < end
    sim.run_until(end)
    whole = make()
    whole.run_until(end)
    a, b = sim.result().doc, whole.result().doc
    for d in (a, b):
        d.pop("wall_s")
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
