"""EAS (--scheduler eas) and the Energy Model API, against numbers worked out from the
kernel's formulas (linux-eas.md §4-5) and behaviour the kernel shows on these SoCs."""

import json

import pytest

from hetsched import EnergyModel, InputError, Simulation
from hetsched.platforms import load_platform
from hetsched.workloads import periodic, workload

# ------------------------------------------------------------------ Energy Model API


def two_pd_model():
    return EnergyModel.from_table([{"cpus": [0, 1], "opps": [(256, 100), (512, 300)]},
                                   {"cpus": [2, 3], "opps": [(512, 400), (768, 700), (1024, 1300)]}])


def test_compute_energy_worked_example():
    em = two_pd_model()
    # cost = 10 * power / performance: little 3, 5; big 7, 9, 12
    assert [[s["cost"] for s in d["states"]] for d in em.domains()] == [[7, 9, 12], [3, 5]]
    # utils (100, 50 | 300, 0), headroom 1.25: big max 375 -> the 512 state, 7 x 300;
    # little max 125 -> the 256 state, 3 x 150
    assert em.compute_energy([100, 50, 300, 0]) == 7 * 300 + 3 * 150
    # without headroom the big pd still needs the 512 state; at 2.0 it needs 768 (cost 9)
    assert em.compute_energy([100, 50, 300, 0], headroom=1.0) == 7 * 300 + 3 * 150
    assert em.compute_energy([100, 50, 300, 0], headroom=2.0) == 9 * 300 + 3 * 150


def test_feec_candidates_and_choice():
    em = two_pd_model()
    # a 100-util task last on big CPU 3, everything else idle: on big CPU 3 the big pd runs
    # at 512 (cost 7): energy 700; on little CPU 0 the little pd at 256 (cost 3): 300
    assert em.find_energy_efficient_cpu([0, 0, 0, 0], task_util=100, prev_cpu=3) == (0, {3: 700, 0: 300})
    # with a 2.0 headroom the big pd needs its 512 state still (100 x 2 = 200) and the
    # little pd its 256 state (200 <= 256): the same choice
    assert em.find_energy_efficient_cpu([0, 0, 0, 0], task_util=100, prev_cpu=3, headroom=2.0) == (0, {3: 700, 0: 300})
    # at 3.0 the little pd needs 300 -> its 512 state (cost 5): 500, still below big's 700
    assert em.find_energy_efficient_cpu([0, 0, 0, 0], task_util=100, prev_cpu=3, headroom=3.0) == (0, {3: 700, 0: 500})
    # a 450-util task does not fit a little CPU (450 x 1280 >= 512 x 1024): big
    cpu, cands = em.find_energy_efficient_cpu([0, 0, 0, 0], task_util=450, prev_cpu=0)
    assert cpu == 2 and set(cands) == {2}


def test_em_of_a_platform_matches_the_loader_and_marks_inefficient_states():
    plat = load_platform("sdm845")
    em = EnergyModel.from_platform(plat)
    gold = next(d for d in em.domains() if 4 in d["cpus"])
    cl = next(c for c in plat.clusters if 4 in c.cpus)
    # the engine's EM and the platform loader compute cost independently
    assert [s["cost"] for s in gold["states"]] == [o.cost for o in cl.opps]
    assert [s["inefficient"] for s in gold["states"]] == [o.inefficient for o in cl.opps]
    assert any(s["inefficient"] for s in gold["states"])  # the Pixel 3 table is not monotonic
    # rd->pd order: descending first CPU
    assert [d["cpus"][0] for d in em.domains()] == [4, 0]


def test_em_bad_input():
    with pytest.raises(InputError, match="ascending"):
        EnergyModel.from_table([{"cpus": [0], "opps": [(512, 100), (256, 50)]}])
    with pytest.raises(InputError, match="domains\\[0\\]"):
        EnergyModel.from_table([{"cpus": [0]}])
    with pytest.raises(InputError, match="one per CPU"):
        two_pd_model().compute_energy([1, 2, 3])
    with pytest.raises(InputError, match="prev_cpu"):
        two_pd_model().find_energy_efficient_cpu([0, 0, 0, 0], 10, prev_cpu=7)


# ------------------------------------------------------------------ EAS in the engine


def mix():
    return workload("mix", [periodic(f"small{i}", period_us=16000, run_us=800) for i in range(3)]
                    + [periodic("big", period_us=16000, run_us=9000)])


def little_share(doc, name):
    caps = {c["cpu"]: c["capacity"] for c in doc["cpus"]}
    t = next(t for t in doc["tasks"] if t["name"] == name)
    total = sum(t["cpu_time_s"].values())
    return sum(v for k, v in t["cpu_time_s"].items() if caps[int(k)] < 1024) / total


@pytest.mark.parametrize("platform,fair", [
    ("juno-r0", {"fair.delay_dequeue": 0}),
    ("hikey960", {"fair.delay_dequeue": 0}), ("hikey960", {"fair.eevdf": 0}),
    ("gs101", {}), ("gs101", {"fair.eevdf": 0})])
def test_eas_packs_small_tasks_on_little_and_keeps_the_big_one_big(platform, fair):
    """Three 5%-duty tasks (util ~51) and one 56%-duty task (util ~580): the small ones fit
    a little CPU with room (51 x 1280 < capacity x 1024 on all three SoCs) and cost less
    energy there; the big one fits no little CPU (580 x 1280 > 446 x 1024 on juno, the
    largest little here). EAS saves energy against the baseline placement."""
    eas = Simulation(platform=platform, workload=mix(), scheduler="eas", knobs=fair).run(3.0).doc
    cfs = Simulation(platform=platform, workload=mix(), scheduler="cfs", knobs=fair).run(3.0).doc
    assert eas["eas"] == {"enabled": True}
    for i in range(3):
        assert little_share(eas, f"small{i}") > 0.9
    assert little_share(eas, "big") < 0.05
    assert eas["counters"]["policy"]["feec_calls"] > 100
    assert eas["energy_j"] < cfs["energy_j"]
    assert eas["metrics"]["missed_activation_pct"] < 1.0


def test_a_late_idle_balance_leaves_two_small_tasks_sharing_a_big_cpu_on_juno_with_cfs():
    """juno-r0 under EAS with v6.5's CFS (fair.eevdf 0). At the 32 ms tick the misfit task
    "big" waits on little CPU 3. The kick wakes the first tickless idle CPU, little CPU 4,
    out of its cluster state (1.5 ms), and "big" moves only at 34.6 ms, to big CPU 2 as it
    goes idle. Before the balancer paid that exit, idle big CPU 1 pulled it at the tick
    itself. With "big" on CPU 2, small0 and small1 share CPU 1 from 48 ms, where they wake
    together and take turns waiting. As in the delayed-dequeue case below, their runnable_avg then
    exceeds util_avg by more than the margin, util_est_update() keeps each post-fork
    ewma, above what fits a little CPU, and feec keeps both big; small2 goes little."""
    d = Simulation(platform="juno-r0", workload=mix(), scheduler="eas", knobs={"fair.eevdf": 0}).run(3.0).doc
    assert little_share(d, "small0") < 0.1 and little_share(d, "small1") < 0.1
    assert little_share(d, "small2") > 0.9
    assert little_share(d, "big") < 0.05


def test_delayed_dequeue_keeps_alternating_small_tasks_big_on_juno():
    """v6.12's DELAY_DEQUEUE with EAS on juno-r0: small0 and small1 fork onto big CPU 2 and
    wake together each period. A task that sleeps ineligible keeps its negative lag, so the
    two take turns waiting; each then shows runnable_avg above util_avg by more than 10, and
    util_est_update() keeps its ewma ("the task did not get all the CPU it wanted"), so their
    util_est stays at its post-fork 383 and 429 (0x17f, 0x1ad) above what fits a little CPU,
    446 x 1024 / 1280 = 357: feec keeps them on CPU 2. Without delayed dequeue small0 runs
    first each time, its ewma decays (430, 369, 313) and it goes to little at 97.5 ms."""
    delayed = Simulation(platform="juno-r0", workload=mix(), scheduler="eas").run(3.0).doc
    plain = Simulation(platform="juno-r0", workload=mix(), scheduler="eas",
                       knobs={"fair.delay_dequeue": 0}).run(3.0).doc
    assert delayed["counters"]["delayed_dequeues"] > 0 and plain["counters"]["delayed_dequeues"] == 0
    for i in (0, 1):
        assert little_share(delayed, f"small{i}") < 0.1
        assert little_share(plain, f"small{i}") > 0.9
    assert delayed["energy_j"] > plain["energy_j"]


def test_eas_cannot_run_without_schedutil_or_asymmetry(tmp_path):
    d = Simulation(platform="gs101", workload=mix(), scheduler="eas", governor="performance").run(0.5).doc
    assert d["eas"]["enabled"] is False and "schedutil" in d["eas"]["reason"]
    assert d["counters"]["policy"].get("feec_calls", 0) == 0
    # a symmetric platform: juno-r0 with the A53s' capacity-dmips-mhz raised to the A57s'
    raw = json.loads(load_platform("juno-r0").path and open(load_platform("juno-r0").path).read())
    for c in raw["clusters"]:
        c["capacity_dmips_mhz"] = 1024
        c["opps"] = [o for o in raw["clusters"][1]["opps"]]
        c.pop("em_table", None)
    f = tmp_path / "sym.json"
    f.write_text(json.dumps(raw))
    d = Simulation(platform=str(f), workload=mix(), scheduler="eas").run(0.5).doc
    assert d["eas"]["enabled"] is False and "asymmetric" in d["eas"]["reason"]


def test_em_command_prints_the_cost_table():
    import subprocess
    import sys

    p = subprocess.run([sys.executable, "-m", "hetsched.cli", "em", "sdm845"], capture_output=True, text=True,
                       env={**__import__("os").environ, "COLUMNS": "160"})
    assert p.returncode == 0, p.stderr
    assert "perf domain CPUs [4, 5, 6, 7] (capacity 1024)" in p.stdout
    assert "inefficient" in p.stdout and "8945" in p.stdout  # cost of the 2.8032 GHz state: 10 x 916000 / 1024
    bad = subprocess.run([sys.executable, "-m", "hetsched.cli", "em", "nosuch"], capture_output=True, text=True)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    # a switcher platform's virtual CPUs all start on the LITTLE cores: the big cluster backs
    # no CPU, so it is no perf domain (it had made the command panic)
    sw = subprocess.run([sys.executable, "-m", "hetsched.cli", "em", "exynos5422:switcher"], capture_output=True,
                        text=True, env={**__import__("os").environ, "COLUMNS": "160"})
    assert sw.returncode == 0, sw.stderr
    assert sw.stdout.count("perf domain CPUs") == 1 and "perf domain CPUs [0, 1, 2, 3]" in sw.stdout


def rt_task(name, util_min=None, cpus=None):
    t = periodic(name, period_us=10_000, run_us=1_000, cpus=cpus)
    t.update(policy="fifo", rt_priority=10, util_min=util_min)
    return t


@pytest.mark.parametrize("scheduler", ["cfs", "eas"])
def test_rt_tasks_go_to_cpus_that_fit_their_uclamp_min(scheduler):
    """select_task_rq_rt with capacity fitness (linux-eas.md §8): an RT task's default
    uclamp_min is 1024, so on gs101 only the X1 CPUs (6, 7; capacity 1024) fit it; with
    util_min 0 every CPU fits and the task stays where it starts (CPU 0, idle)."""
    d = Simulation(platform="gs101", workload=workload("rt", [rt_task("rt-default")]),
                   scheduler=scheduler).run(1.0).doc
    assert set(d["tasks"][0]["cpu_time_s"]) <= {"6", "7"}
    d = Simulation(platform="gs101", workload=workload("rt", [rt_task("rt-any", util_min=0)]),
                   scheduler=scheduler).run(1.0).doc
    assert set(d["tasks"][0]["cpu_time_s"]) == {"0"}
    # an RT task allowed only on little CPUs runs there (fitness falls back to any CPU)
    d = Simulation(platform="gs101", workload=workload("rt", [rt_task("rt-little", cpus=[1, 2])]),
                   scheduler=scheduler).run(1.0).doc
    assert set(d["tasks"][0]["cpu_time_s"]) <= {"1", "2"}


def ramp_task():
    """rt-app-like: 50 periods of 16 ms at 5% duty, 50 at 62%, 50 at 5% again."""
    phase = lambda run_ns: {"loop": 50, "events": [
        {"run": run_ns}, {"timer": {"id": 0, "period_ns": 16_000_000, "mode": "relative"}}]}
    return {"name": "ramp", "policy": "other", "nice": 0, "rt_priority": 0, "cpus": None, "util_min": None,
            "util_max": None, "delay_ns": 0, "loop": 1,
            "phases": [phase(800_000), phase(10_000_000), phase(800_000)]}


@pytest.mark.parametrize("platform", ["juno-r0", "gs101", "rk3399"])
def test_a_task_moves_up_the_capacity_ladder_and_back(platform):
    """The 5%-duty phases (util ~51) cost least on a little CPU; the 62% phase (util ~640)
    fits no little CPU (640 x 1280 > capacity x 1024 for every little cluster here) and
    must run on a big one. (hikey960 is not in this list: its published table, a
    placeholder, makes the big cluster's lowest state the cheapest per unit of util, and
    EAS rightly keeps even small tasks there.)"""
    sim = Simulation(platform=platform, workload=workload("ramp", [ramp_task()]), scheduler="eas",
                     timeseries=True)
    d = sim.run(2.4).doc
    ts = sim.result().to_pandas()["timeseries"]
    caps = {c["cpu"]: c["capacity"] for c in d["cpus"]}
    for lo, hi, big in [(0.3, 0.75, False), (1.05, 1.55, True), (1.9, 2.35, False)]:
        busy = ts[(ts.t_s > lo) & (ts.t_s < hi) & (ts.idle_state == -1)]
        on_big = sum(caps[c] == 1024 for c in busy.cpu) / len(busy)
        assert (on_big > 0.95) if big else (on_big < 0.05), (lo, hi, on_big)


def test_eas_placement_energy_is_near_the_brute_force_optimum():
    """Four periodic tasks on juno-r0; after the first second, each task's CPU is taken as
    where it ran most. The Energy Model's energy of that placement (utils = duty x 1024,
    summed per CPU) stays within 5% of the minimum over all 6^4 placements."""
    import itertools

    runs = [800, 1600, 2400, 3200]  # µs per 16 ms: utils 51, 102, 153, 204
    tasks = [periodic(f"t{i}", period_us=16000, run_us=r) for i, r in enumerate(runs)]
    utils = [round(r / 16000 * 1024) for r in runs]
    sim = Simulation(platform="juno-r0", workload=workload("w", tasks), scheduler="eas")
    sim.run(1.0)
    before = {t["name"]: dict(t["cpu_time_s"]) for t in sim.result()["tasks"]}
    d = sim.run(2.0).doc
    where = []
    for t in d["tasks"]:
        delta = {int(c): s - before[t["name"]].get(c, 0.0) for c, s in t["cpu_time_s"].items()}
        where.append(max(delta, key=delta.get))
    em = EnergyModel.from_platform("juno-r0")

    def energy(assign):
        per_cpu = [0] * em.nr_cpus
        for cpu, u in zip(assign, utils):
            per_cpu[cpu] += u
        return em.compute_energy(per_cpu)

    best = min(energy(a) for a in itertools.product(range(em.nr_cpus), repeat=len(utils)))
    assert energy(where) <= best * 1.05, (where, energy(where), best)


def test_idle_governors_menu_and_oracle():
    """Both cpuidle governors run and are reported; on juno-r0 (published idle power) they
    choose differently on a mixed load, so energy differs; an unknown one is an input
    error naming the option."""
    docs = {g: Simulation(platform="juno-r0", workload="phone-mix", idle_governor=g).run(3.0).doc
            for g in ("menu", "oracle")}
    assert docs["menu"]["idle_governor"] == "menu" and docs["oracle"]["idle_governor"] == "oracle"
    res = {g: docs[g]["cpus"][0]["idle_residency_s"] for g in docs}
    assert res["menu"] != res["oracle"]
    with pytest.raises(InputError, match="--idle-governor"):
        Simulation(platform="juno-r0", workload="phone-mix", idle_governor="ladder")


# ------------------------------------------------------------------ kernel profiles


def test_android_4_19_profile_energy_model_costs():
    """v4.19/5.4's em_create_pd(): cost = power x f_max / f, no inefficient states."""
    plat = load_platform("juno-r0")
    big = next(c for c in plat.clusters if 1 in c.cpus)
    fmax = big.opps[-1].khz
    em = EnergyModel.from_platform(plat, kernel="android-4.19")
    dom = next(d for d in em.domains() if 1 in d["cpus"])
    assert [s["cost"] for s in dom["states"]] == [o.power_uw * fmax // o.khz for o in big.opps]
    assert not any(s["inefficient"] for s in dom["states"])
    with pytest.raises(InputError, match="kernel"):
        EnergyModel.from_platform(plat, kernel="android-3.18")


def test_kernel_profile_is_a_set_option_and_changes_behaviour():
    """--set kernel=android-4.19: schedutil's default rate limit becomes min(1000 x 100 µs,
    10 ms) = 10 ms instead of 150 µs, so far fewer frequency changes; feec's 6% margin
    keeps tasks on prev_cpu more often."""
    new = Simulation(platform="gs101", workload="phone-mix", scheduler="eas").run(3.0).doc
    old = Simulation(platform="gs101", workload="phone-mix", scheduler="eas",
                     knobs={"kernel": "android-4.19"}).run(3.0).doc
    assert new["kernel"] == "mainline-6.12" and old["kernel"] == "android-4.19"
    assert old["counters"]["freq_changes"] < new["counters"]["freq_changes"] / 2
    assert old["counters"]["policy"]["feec_moves"] < new["counters"]["policy"]["feec_moves"]
    with pytest.raises(InputError, match="kernel"):
        Simulation(platform="gs101", workload="phone-mix", knobs={"kernel": "linux-2.6"})


@pytest.mark.parametrize("platform", ["juno-r0", "hikey960", "gs101"])
@pytest.mark.parametrize("scheduler", ["cfs", "eas"])
def test_a_misfit_does_not_starve_on_a_little_cpu(platform, scheduler):
    """A 70%-duty task (util ~717: it fits no little CPU, 717 x 1280 > capacity x 1024 for
    every little cluster here) started among small ones: after the first half second it
    runs on a big CPU (misfit detection and active balance, or the wakeup path), and it
    misses (almost) no activation. Without EAS, when both big CPUs of juno-r0 are busy with
    small tasks at its wakeup (they drift there through misfit and newidle balancing while
    their initial util is high, and select_idle_sibling keeps them on their prev CPU), the
    heavy task wakes on the best idle CPU, a little one, and the misfit active balance moves
    it at the next tick: about 2 ms of its 11.2 ms there, 0.83 of its time on a big CPU."""
    tasks = [periodic(f"small{i}", period_us=16000, run_us=800) for i in range(3)]
    tasks.append(periodic("heavy", period_us=16000, run_us=11200))
    sim = Simulation(platform=platform, workload=workload("w", tasks), scheduler=scheduler)
    sim.run(0.5)
    before = next(t for t in sim.result()["tasks"] if t["name"] == "heavy")["cpu_time_s"]
    d = sim.run(1.5).doc
    caps = {c["cpu"]: c["capacity"] for c in d["cpus"]}
    heavy = next(t for t in d["tasks"] if t["name"] == "heavy")
    delta = {int(c): s - before.get(c, 0.0) for c, s in heavy["cpu_time_s"].items()}
    on_big = sum(s for c, s in delta.items() if caps[c] == 1024) / sum(delta.values())
    assert on_big > (0.95 if scheduler == "eas" else 0.75), (platform, scheduler, delta)
    assert heavy["missed_activations"] <= 3
