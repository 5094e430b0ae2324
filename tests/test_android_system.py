"""``android-system``: the background threads of a real phone, replayed window after window
from the Pixel 6a trace (hetsched.workloads.android)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from hetsched.sim import Simulation
from hetsched.workloads.android import EXCLUDED_COMMS, EXCLUDED_KTHREAD_PREFIXES, TIMER_SLACK_NS, _load
from hetsched.workloads.builtin import WORKLOADS

ROOT = Path(__file__).resolve().parents[1]
PIXEL = ROOT.parent / "shared" / "realdata" / "traces" / "pixel6a_tensor_warm_startup.perfetto-trace"


def _events(spec):
    for t in spec["tasks"]:
        for ph in t["phases"]:
            for ev in ph["events"]:
                yield t, ev


def test_the_shipped_background_is_what_the_trace_derives():
    if not PIXEL.is_file():
        pytest.skip(f"{PIXEL} is not available")
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "derive_android_background.py"), str(PIXEL),
                           "--check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("variant", ["recorded", "none"])
def test_every_window_posts_what_it_waits_for(variant):
    """A window's program posts each semaphore as often as it waits on it (each wakeup by a
    traced thread became one post and one wait), so window after window nothing is left
    over and nothing is waited for in vain; with SurfaceFlinger left out too (its wakeups
    became timed sleeps)."""
    spec = _load("pixel6a-launch")["surfaceflinger"][variant]["spec"]
    post, wait, sync = Counter(), Counter(), 0
    for _, ev in _events(spec):
        for kind in ("sem_post", "sem_post_sync"):
            if kind in ev:
                post[ev[kind]] += 1
                sync += kind == "sem_post_sync"
        if "sem_wait" in ev:
            wait[ev["sem_wait"]] += 1
    assert post == wait and sum(post.values()) > 3000
    # binder's transactions and replies between kept threads wake with WF_SYNC
    assert sync > 300
    assert all(t["loop"] == -1 and t["daemon"] for t in spec["tasks"])


def test_the_background_keeps_the_phone_and_leaves_the_harness_out():
    bg = _load("pixel6a-launch")
    rec = bg["surfaceflinger"]["recorded"]
    names = [t["name"].rsplit("-", 1)[0] for t in rec["spec"]["tasks"]]
    assert rec["threads"] == len(names) >= 250
    assert not any(n in EXCLUDED_COMMS or n.startswith(EXCLUDED_KTHREAD_PREFIXES) for n in names)
    assert not any(n.startswith(("traced", "roidJUnitRunner")) for n in names)
    for wanted in ("surfaceflinger", "system_server", "RenderEngine", "rcu_preempt", "HeapTaskDaemon"):
        assert wanted in names, wanted
    # SurfaceFlinger's main thread is SCHED_FIFO priority 2 (prio 97 in the trace, 99 - 97)
    sf = [t for t in rec["spec"]["tasks"] if t["name"] == "surfaceflinger-513"]
    assert sf and sf[0]["policy"] == "fifo" and sf[0]["rt_priority"] == 2
    assert bg["excluded"]["recording harness"] >= 30
    # without the composition pipeline: SurfaceFlinger's 18 threads and the composer HAL's 4
    left = {t["name"] for t in rec["spec"]["tasks"]} - \
        {t["name"] for t in bg["surfaceflinger"]["none"]["spec"]["tasks"]}
    assert "surfaceflinger-513" in left and "RenderEngine-603" in left and "HwBinder:515_2-604" in left
    assert len(left) == 22


def test_seeds_redraw_the_timer_slack_of_normal_threads_only():
    params = {"source": "pixel6a-launch", "surfaceflinger": "recorded", "phase": 0.0, "noise": 1}
    a, b, a2 = (WORKLOADS["android-system"].build(params, {}, s) for s in (1, 2, 1))
    assert a == a2 and a != b
    base = _load("pixel6a-launch")["surfaceflinger"]["recorded"]["spec"]
    quiet = WORKLOADS["android-system"].build({**params, "noise": 0}, {}, 1)
    assert quiet.pop("system")["tasks"] == [t["name"] for t in base["tasks"]] and quiet == base
    moved = []
    for ta, tb, t0 in zip(a["tasks"], b["tasks"], base["tasks"]):
        for ea, e0 in zip(ta["phases"][0]["events"], t0["phases"][0]["events"]):
            if "sleep" in e0:
                if ta["policy"] != "other":
                    assert ea == e0
                else:
                    moved.append(ea["sleep"] - e0["sleep"])
    # uniform over [-25 us, +25 us): mean 0, standard deviation 50 us / sqrt(12) = 14.4 us
    n = len(moved)
    assert n > 500
    mean = sum(moved) / n
    sd = (sum((m - mean) ** 2 for m in moved) / n) ** 0.5
    assert abs(mean) < 4 * 14_434 / n ** 0.5
    assert abs(sd - TIMER_SLACK_NS / 12 ** 0.5) < 0.1 * TIMER_SLACK_NS / 12 ** 0.5
    assert min(moved) >= -TIMER_SLACK_NS // 2 - 1 and max(moved) < TIMER_SLACK_NS // 2
    assert min(ev["sleep"] for _, ev in _events(a) if "sleep" in ev) >= 1_000


def test_the_background_repeats_without_stalling():
    """Wakeups in each of three windows of the recording within 15 % of one another: the
    loop neither stalls on a wait nor runs away on leftover posts."""
    bg = _load("pixel6a-launch")
    window = bg["window_ns"]
    sim = Simulation(platform="gs101", workload="android-system", trace="ftrace", lower_bound=False)
    assert not sim.runs_until_exit()  # daemons alone: the run takes its duration
    sim.run(3 * window / 1e9)
    per_window = Counter()
    for line in sim.take_trace().splitlines():
        if ": sched_waking: " in line:
            ts = float(line.split(": sched_waking:")[0].rsplit(None, 1)[-1])
            per_window[min(2, int(ts * 1e9 // window))] += 1
    counts = [per_window[i] for i in range(3)]
    assert min(counts) > 0.85 * max(counts), counts
    # the recording's background: 4,015 wakeups by traced threads and the timed ones in 1.92 s
    assert min(counts) > 4000, counts


def test_one_phone_runs_one_system():
    """Two phone workloads together (or one beside android-system) run beside one recorded
    system: the first spec's; the others' are left out, and no task id moves."""
    from hetsched.platforms import load_platform
    from hetsched.workloads.builtin import resolve_workloads

    ps = load_platform("gs101").to_spec()
    one, both = resolve_workloads(["browsing"], ps, 1), resolve_workloads(["browsing", "game"], ps, 1)
    game_alone = resolve_workloads(["game:system=none"], ps, 1)
    names = [t["name"] for t in both["tasks"]]
    assert len(names) == len(one["tasks"]) + len(game_alone["tasks"]) - len(game_alone.get("noise", {}).get("tasks", ()))
    noise = set(game_alone.get("noise", {}).get("tasks", ()))
    assert names.count("system_server-1858") == 1
    assert set(names) == {t["name"] for t in one["tasks"]} | {t["name"] for t in game_alone["tasks"]} - noise
    assert both["system"]["tasks"] == one["system"]["tasks"]
    # game's forks (none) and browsing's ids are where they were: the first spec is unchanged
    assert both["tasks"][:len(one["tasks"])] == one["tasks"]
    with_bg = resolve_workloads(["browsing", "android-system"], ps, 1)
    assert [t["name"] for t in with_bg["tasks"]] == [t["name"] for t in one["tasks"]]


def test_phone_workloads_run_beside_the_recorded_system_and_end_with_the_app():
    """browsing models its own SurfaceFlinger: the background comes without the recorded
    one; pcmark does not: it keeps it. app-launch still ends with its launches: the
    background's threads are daemons."""
    def names(w):
        sim = Simulation(platform="gs101", workload=w, lower_bound=False)
        return sim, [t["name"] for t in sim.workload_spec["tasks"]]

    _, browsing = names("browsing")
    assert "web-surfaceflinger" in browsing and "surfaceflinger-513" not in browsing
    assert "system_server-1858" in browsing and len(browsing) > 250
    assert not any(n.startswith("kworker/") and "-" not in n for n in browsing)  # the recorded ones stand
    _, pcmark = names("pcmark")
    assert "surfaceflinger-513" in pcmark
    _, alone = names("browsing:system=none")
    assert len(alone) < 20 and not any(n.startswith("system_server") for n in alone)
    sim, _ = names("app-launch:launches=2")
    assert sim.runs_until_exit()
    res = sim.run()
    assert res.doc["stop_reason"] == "all tasks exited"
    assert res.doc["metrics"]["app-launch"]["launches"] == 2


def test_android_system_runs_beside_an_app_workload(tmp_path):
    out = tmp_path / "o"
    proc = subprocess.run([sys.executable, "-m", "hetsched.cli", "run", "--workload", "browsing:system=none",
                           "--workload", "android-system", "--platform", "gs101", "--duration", "1", "--out",
                           str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((out / "result.json").read_text())
    assert len(doc["tasks"]) > 250
    assert doc["metrics"]["browsing"]["frame_ms_mean"] > 0
