"""A workload's seed is a sample of a phone's run-to-run variation (workloads/noise.py,
docs/workloads.md "Run-to-run variation").

* every built-in workload: two seeds give two specs and two runs, one seed the same
  bytes and the same run, and an rt-app file none of it;
* the noise's statistics against the documented parameters, the expected values and
  their sampling error worked out here by hand;
* where the noise goes in each workload, the content draws left as they were, the kernel
  workers of a finite workload ending before it, and merging keeping one set of them.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from hetsched.platforms import load_platform
from hetsched.sim import Simulation
from hetsched.workloads import noise
from hetsched.workloads.builtin import WORKLOADS, resolve_workloads

GS101 = load_platform("gs101").to_spec()


def spec_of(arg: str, seed: int = 0, platform: dict = GS101) -> dict:
    return resolve_workloads([arg], platform, seed)


def own(spec: dict) -> list[dict]:
    workers = set(spec.get("noise", {}).get("tasks", ()))
    return [t for t in spec["tasks"] if t["name"] not in workers]


def workers(spec: dict) -> list[dict]:
    names = set(spec.get("noise", {}).get("tasks", ()))
    return [t for t in spec["tasks"] if t["name"] in names]


def run_doc(arg: str, seed: int, duration: float = 0.3) -> dict:
    doc = dict(Simulation(platform="gs101", workload=arg, scheduler="eas", seed=seed,
                          lower_bound=False).run(duration).doc)
    doc.pop("wall_s")
    return doc


# ------------------------------------------------------------------ seeds, specs and runs

@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_two_seeds_two_specs_one_seed_the_same_bytes(name):
    a, again, b = (json.dumps(spec_of(name, s)) for s in (0, 0, 1))
    assert a == again
    assert a != b


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_two_seeds_two_runs_one_seed_the_same_run(name):
    a, again, b = (run_doc(name, s) for s in (0, 0, 1))
    assert a == again
    assert a != b
    assert a["energy_j"] != b["energy_j"]


@pytest.mark.parametrize("name", ["hackbench", "spec-repeat", "job-stream"])
def test_without_noise_these_draw_nothing(name):
    # hackbench, spec-repeat and job-stream's fixed arrivals draw nothing of their own:
    # their seeds differ only by the noise
    assert spec_of(f"{name}:noise=0", 0) == spec_of(f"{name}:noise=0", 1)
    assert spec_of(name, 0) != spec_of(name, 1)


def test_an_rtapp_file_has_no_randomness(tools):
    path = str(tools.rtapp_file("rtapp_example3.json"))
    assert json.dumps(spec_of(path, 0)) == json.dumps(spec_of(path, 7))
    assert "noise" not in spec_of(path, 0)


# ------------------------------------------------------------------ the draws' statistics

def test_kernel_worker_rate_and_burst_size_match_the_measurement():
    # 250 s on gs101's 8 CPUs at 18.9 bursts per CPU-second: 4725 per CPU (Poisson, sd
    # sqrt(4725) = 68.7), 37800 in all (sd 194.4); 4 sd either side
    rng = np.random.default_rng(11)
    ws = noise.kworker_tasks(GS101, rng, horizon_ns=250_000_000_000)
    assert [w["cpus"] for w in ws] == [[c] for c in range(8)]
    per_cpu = [sum(1 for e in w["phases"][0]["events"] if "run" in e) for w in ws]
    for n in per_cpu:
        assert abs(n - 4725) < 4 * 68.7
    assert abs(sum(per_cpu) - 37800) < 4 * 194.4
    # log-normal work: mean of the logs ln(5100) = 8.5370, sd of that mean 0.58 / sqrt(37800)
    # = 0.00298; the logs' sd 0.58, its sampling sd about 0.58 / sqrt(2 x 37800) = 0.0021
    logs = np.log([e["run"] for w in ws for e in w["phases"][0]["events"] if "run" in e])
    assert abs(logs.mean() - 8.5370) < 4 * 0.00298
    assert abs(logs.std() - 0.58) < 4 * 0.0021
    # the bursts are Poisson times below the horizon: each worker sleeps less than 250 s
    for w in ws:
        assert w["loop"] == 1 and w["policy"] == "other" and w["nice"] == 0
        assert sum(e.get("sleep", 0) for e in w["phases"][0]["events"]) < 250_000_000_000


def test_a_worker_that_never_ends_repeats_a_cycle_of_its_length():
    ws = noise.kworker_tasks(GS101, np.random.default_rng(3), horizon_ns=None)
    for w in ws:
        assert w["loop"] == -1
        # the sleeps add up to the cycle, 4.0013 s: the cycle repeats at the drawn rate
        assert sum(e.get("sleep", 0) for e in w["phases"][0]["events"]) == 4_001_300_000
        # 18.9 x 4.0013 = 75.6 bursts per cycle (Poisson sd 8.7)
        assert abs(sum(1 for e in w["phases"][0]["events"] if "run" in e) - 75.6) < 4 * 8.7


def test_a_workload_of_a_day_has_daemon_workers_repeating_a_cycle():
    # 100,000 s (job-stream at 0.001 jobs/s): a cycle of 4.0013 s, about 76 bursts, repeated
    # by daemons (the run ends with the workload's own tasks), not 1.9 million bursts a CPU
    ws = noise.kworker_tasks(GS101, np.random.default_rng(5), horizon_ns=100_000_000_000_000)
    for w in ws:
        assert w["loop"] == -1 and w["daemon"] is True
        assert sum(e.get("sleep", 0) for e in w["phases"][0]["events"]) == 4_001_300_000
        assert len(w["phases"][0]["events"]) < 300
    # an hour or less is drawn burst by burst, as before, and the workers end
    w = noise.kworker_tasks(GS101, np.random.default_rng(5), horizon_ns=3_600_000_000_000)[0]
    assert w["loop"] == 1 and "daemon" not in w


def test_a_workload_of_a_day_ends_with_its_own_tasks():
    from hetsched.sim import Simulation

    # five jobs 1,000 s apart: a horizon past an hour, so daemon workers; the run ends when
    # the last job does, the workers still cycling
    sim = Simulation(platform="juno-r0", workload="job-stream:rate=0.001,jobs=5", lower_bound=False, seed=0)
    assert sim.workload_spec["noise"]["horizon_ns"] > 3_600_000_000_000
    assert sim.run_until_exited(limit_s=6_000)
    assert 4_000 < sim.now_ns / 1e9 < 4_100


def test_timer_slack_statistics():
    # an interrupt ends the 50 us window first with probability 1 - exp(-41 x 50e-6)
    # = 1 - exp(-0.00205) = 0.0020479; the mean delay is that over 41 /s: 49.949 us.
    # 400000 draws: early ones 819.2 expected (binomial sd 28.6); the delay's sd is at most
    # 50000 x sqrt(0.0020479) = 2263 ns, so the mean's is 2263 / sqrt(400000) = 3.6 ns
    rng = np.random.default_rng(5)
    d = np.array([noise.hrtimer_delay_ns(rng) for _ in range(400_000)])
    assert d.max() == 50_000 and d.min() >= 0
    assert abs((d < 50_000).sum() - 819.2) < 4 * 28.6
    assert abs(d.mean() - 49_949.0) < 4 * 3.6 + 1.0


def test_poll_slack_window_by_hand():
    # fs/select.c: max(50 us, timeout / 1000), / 200 at nice > 0, at most 100 ms
    assert noise.poll_slack_window_ns(40_000_000, -10) == 50_000       # 40 us < 50 us
    assert noise.poll_slack_window_ns(2_000_000_000, 0) == 2_000_000   # 0.1 % of 2 s
    assert noise.poll_slack_window_ns(2_000_000_000, 5) == 10_000_000  # 0.5 % at nice 5
    assert noise.poll_slack_window_ns(1_000_000_000_000, 0) == 100_000_000
    assert noise.hrtimer_delay_ns(np.random.default_rng(0), 0) == 0


def test_process_creation_intervals():
    # 20000 intervals: mean of the logs ln(143000) = 11.8706 (sd of the mean 0.39 /
    # sqrt(20000) = 0.00276), their sd 0.39 (sampling sd 0.39 / sqrt(40000) = 0.00195)
    off = noise.creation_offsets_ns(np.random.default_rng(9), 20_001)
    assert off[0] == 0
    logs = np.log(np.diff(off))
    assert abs(logs.mean() - 11.8706) < 4 * 0.00276
    assert abs(logs.std() - 0.39) < 4 * 0.00195


# ------------------------------------------------------------------ where each workload takes it

def test_app_launch_pauses_end_late_by_the_timer_slack():
    def sleeps(arg):
        (launcher,) = [t for t in own(spec_of(arg, 4)) if t["name"] == "contacts-launcher"]
        return [e["sleep"] for e in launcher["phases"][0]["events"] if "sleep" in e]
    late = np.subtract(sleeps("app-launch:launches=20"), sleeps("app-launch:launches=20,noise=0"))
    assert len(late) == 20 and all(0 <= x <= 50_000 for x in late)
    assert (late == 50_000).sum() >= 18   # 0.2 % of pauses end early


def test_pcmark_pauses_take_the_looper_slack():
    def sleeps(arg):
        (ui,) = [t for t in own(spec_of(arg, 2)) if t["name"] == "pcmark-ui"]
        return [e["sleep"] for e in ui["phases"][0]["events"] if "sleep" in e]
    late = np.subtract(sleeps("pcmark"), sleeps("pcmark:noise=0"))
    # 28 operations, each after a 40 ms pause: its window is max(50 us, 40 us) = 50 us
    assert len(late) == 28 and all(0 <= x <= 50_000 for x in late) and (late == 50_000).sum() >= 26


def test_hackbench_children_start_in_creation_order():
    spec = spec_of("hackbench:groups=2,fds=3,loops=10", 1)
    names = [t["name"] for t in own(spec)]
    # group() order: each group's receivers, then its senders; the parent last
    assert names == [f"hackbench-g{g}-{k}{i}" for g in range(2) for k in "rs" for i in range(3)] + ["hackbench-main"]
    delays = [t["delay_ns"] for t in own(spec)]
    assert delays[0] == 0 and delays[-1] == 0
    assert all(a < b for a, b in zip(delays[:-1], delays[1:-1]))
    # 11 intervals of geometric mean 143 us: between 11 x 40 us and 11 x 600 us
    assert 11 * 40_000 < delays[-2] < 11 * 600_000


def test_game_audio_phase_is_drawn_within_its_period():
    phases = {next(t for t in own(spec_of("game", s)) if t["name"] == "game-audio")["delay_ns"] for s in range(20)}
    assert len(phases) == 20 and all(0 <= x < 10_000_000 for x in phases)
    assert next(t for t in spec_of("game:noise=0") ["tasks"] if t["name"] == "game-audio")["delay_ns"] == 0


@pytest.mark.parametrize("name", ["phone-mix", "browsing", "video", "game", "app-launch", "pcmark"])
def test_the_noise_leaves_the_content_draws_alone(name):
    # the noise has its own random stream: the workload's own tasks are those of noise=0
    # but for the few values the noise moves (timer slack, the audio phase)
    # (the phone workloads' own, without the recorded system they run beside by default)
    alone = "" if name == "video" else ",system=none"
    quiet, noisy = spec_of(f"{name}:noise=0{alone}", 3), spec_of(f"{name}:{alone.lstrip(',')}", 3)
    moved = 0
    for a, b in zip(own(noisy), quiet["tasks"], strict=True):
        for pa, pb in zip(a["phases"], b["phases"], strict=True):
            for ea, eb in zip(pa["events"], pb["events"], strict=True):
                if ea != eb:
                    assert set(ea) == set(eb) == {"sleep"}
                    moved += 1
        if a["delay_ns"] != b["delay_ns"]:
            assert a["name"] == "game-audio"
        assert {k: v for k, v in a.items() if k not in ("phases", "delay_ns")} == \
               {k: v for k, v in b.items() if k not in ("phases", "delay_ns")}
    assert moved == {"app-launch": 5, "pcmark": 28}.get(name, 0)


def test_run_length_lower_bound_by_hand():
    def t(name, phases, loop=1, delay=0, start=True):
        return {"name": name, "loop": loop, "delay_ns": delay, "start": start,
                "phases": [{"loop": n, "events": ev} for n, ev in phases]}
    ms = 1_000_000
    spec = {"timers": 1, "tasks": [
        # 1 + 2 x (3 + 2) = 11 ms of its own
        t("a", [(2, [{"run": 3 * ms}, {"sleep": 2 * ms}])], delay=1 * ms),
        # a timer only it uses, 5 periods of 4 ms: 20 ms
        t("b", [(5, [{"run": ms // 10}, {"timer": {"id": 0, "period_ns": 4 * ms, "mode": "relative"}}])]),
        # a template: whatever it would run is left out
        t("c", [(1, [{"run": 10_000 * ms}])], start=False),
    ]}
    assert noise.run_length_lower_bound_ns(spec, GS101) == 20 * ms
    # 8 tasks of 100 ms: 800 ms over gs101's capacity, (2 x 1024 + 2 x 498 + 4 x 160) / 1024
    # = 3.59766 big cores at f_max: 222.367 ms, more than any one task's 100 ms
    spec8 = {"timers": 0, "tasks": [t(f"w{i}", [(1, [{"run": 100 * ms}])]) for i in range(8)]}
    assert abs(noise.run_length_lower_bound_ns(spec8, GS101) - 222_367_000) < 1_000
    spec8["tasks"].append(t("forever", [(1, [{"run": ms}])], loop=-1))
    assert noise.run_length_lower_bound_ns(spec8, GS101) is None


def test_a_finite_workloads_workers_end_before_it():
    arg = "hackbench:groups=2,loops=200"
    spec = spec_of(arg, 2)
    assert len(workers(spec)) > 0 and spec["noise"]["horizon_ns"] > 0
    sim = Simulation(platform="gs101", workload=arg, scheduler="eas", seed=2, lower_bound=False)
    doc = sim.run().doc
    assert doc["stop_reason"] == "all tasks exited"
    names = spec["marks"]
    ends = [t for t, _, m in doc["marks"] if names[m] == "hackbench.end"]
    # the run ends with the last child, not with a worker
    assert round(doc["sim_duration_s"] * 1e9) == max(ends)
    busy = {t["name"]: t["runtime_s"] for t in doc["tasks"]}
    assert all(busy[w["name"]] > 0 for w in workers(spec))


def test_merged_workloads_keep_one_set_of_workers():
    both = resolve_workloads(["phone-mix:system=none", "game:system=none"], GS101, 1)
    assert [t["name"] for t in both["tasks"]].count("kworker/0:0") == 1
    assert both["tasks"][-8:] == spec_of("phone-mix:system=none", 1)["tasks"][-8:]
    # a finite workload beside another: the longer horizon (app-launch's 4.5 s of pauses)
    hb, app = spec_of("hackbench", 1), spec_of("app-launch:system=none", 1)
    assert hb["noise"]["horizon_ns"] < app["noise"]["horizon_ns"]
    merged = resolve_workloads(["hackbench", "app-launch:system=none"], GS101, 1)
    assert merged["noise"] == app["noise"] and merged["tasks"][-8:] == app["tasks"][-8:]
    # a recorded phone's own kernel workers (android-system) replace the synthetic ones
    with_bg = resolve_workloads(["browsing:system=none", "android-system"], GS101, 1)
    assert "noise" not in with_bg
    # and so do those the phone workloads run beside by default
    with_bg = resolve_workloads(["browsing"], GS101, 1)
    assert "noise" not in with_bg
    assert not any(t["name"].endswith(":0") and t["name"].startswith("kworker/") and "-" not in t["name"]
                   for t in with_bg["tasks"])
