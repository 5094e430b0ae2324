"""The studies' benchmark workloads: ``hackbench``, ``job-stream``, ``spec-repeat``,
``video`` (python/hetsched/workloads/bench.py, docs/workloads-bench.md).

Three kinds of test:

* spec structure, checked against the definitions: hackbench's message conservation
  (every receiver's reads = fds * loops = the posts of its senders) and its buffer sizes
  (fs/pipe.c, include/net/sock.h arithmetic, recomputed here), the arrival processes
  (fixed gaps 1/rate; Poisson gaps with mean 1/rate and coefficient of variation 1), the
  restart counts of spec-repeat, the per-frame decode work of video;
* the metric functions fed hand-made marks, with the expected numbers worked out here;
* runs through the engine (skipped until the engine executes ``sem_wait``): every
  workload on gs101 and exynos5422, and each metric moving the right way when the machine
  is slower (governor powersave vs performance).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from hetsched.errors import InputError, UnknownNameError
from hetsched.platforms import load_platform
from hetsched.workloads import bench
from hetsched.workloads.builtin import WORKLOADS, parse_workload_arg, resolve_workloads
from hetsched.workloads.metrics import RunView, compute_metrics
from hetsched.workloads.spec import merge_workloads
from hetsched.sim import NO_COSTS

NAMES = ("hackbench", "job-stream", "spec-repeat", "video")


def spec_of(arg, platform="gs101", seed=0) -> dict:
    return resolve_workloads([arg], load_platform(platform).to_spec(), seed)


def own(spec: dict) -> dict:
    """The spec without the kernel workers of its run-to-run variation (workloads/noise.py;
    tests/test_seed_variation.py checks them): the workload's own structure."""
    workers = set(spec.get("noise", {}).get("tasks", ()))
    return {**spec, "tasks": [t for t in spec["tasks"] if t["name"] not in workers]}


def flat_events(t: dict):
    """A task's events in execution order (phase loops unrolled; task loop once)."""
    for ph in t["phases"]:
        for _ in range(ph["loop"]):
            yield from ph["events"]


def count_ops(spec: dict) -> dict:
    """Per semaphore id: (posts, waits) summed over every task and its task loop."""
    posts, waits = {}, {}
    for t in spec["tasks"]:
        reps = t["loop"]
        for ev in flat_events(t):
            (k, v), = ev.items()
            if k in ("sem_post", "sem_post_sync"):
                posts[v] = posts.get(v, 0) + reps
            elif k == "sem_wait":
                waits[v] = waits.get(v, 0) + reps
    return {s: (posts.get(s, 0), waits.get(s, 0)) for s in set(posts) | set(waits)}


# ------------------------------------------------------------------ declarations, parsing

def test_registered_with_params():
    for n in NAMES:
        assert n in WORKLOADS
    assert parse_workload_arg("hackbench:ipc=pipe,mode=thread")[1]["ipc"] == "pipe"
    assert parse_workload_arg("job-stream:arrival=poisson")[1]["arrival"] == "poisson"
    assert parse_workload_arg("spec-repeat:nice=8:0:0:0")[1]["nice"] == "8:0:0:0"


@pytest.mark.parametrize("arg, exc", [
    ("hackbench:ipc=udp", UnknownNameError),
    ("hackbench:groups=0", InputError),
    ("job-stream:arrival=bursty", UnknownNameError),
    ("job-stream:profile=gccc", UnknownNameError),
    ("video:fps=0", InputError),
])
def test_bad_params_are_input_errors(arg, exc):
    with pytest.raises(exc) as e:
        parse_workload_arg(arg)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("nice", ["8:x", "25", "0:0:0:0:0"])
def test_spec_repeat_bad_nice(nice):
    with pytest.raises(InputError) as e:
        spec_of(f"spec-repeat:set=int4,nice={nice}")
    assert "nice" in str(e.value) and "\n" not in str(e.value)


# ------------------------------------------------------------------ hackbench structure

def test_hackbench_buffer_sizes_from_kernel_arithmetic():
    # pipe: 16 page slots, floor(4096 / size) messages per page
    assert bench.hackbench_buffer_msgs("pipe", 100) == 16 * 40 == 640
    assert bench.hackbench_buffer_msgs("pipe", 4096) == 16
    # socket: sk_sndbuf = SKB_TRUESIZE(256) * 256 with truesize(256) = 256 + 256 + 320
    assert (256 + 256 + 320) * 256 == bench.SK_WMEM_MAX == 212992
    # 100 B: head 128 + 320 = 448 -> kmalloc-512 -> truesize 192 + 576 = 768
    assert bench.hackbench_buffer_msgs("socket", 100) == math.ceil(212992 / 768) == 278
    # bigger messages fit fewer
    assert bench.hackbench_buffer_msgs("socket", 1000) < bench.hackbench_buffer_msgs("socket", 100)


def test_hackbench_costs_order():
    sp, tp = bench.hackbench_costs_ns("socket", "process", 100)
    st, tt = bench.hackbench_costs_ns("socket", "thread", 100)
    pp, _ = bench.hackbench_costs_ns("pipe", "process", 100)
    assert sp - st == tp - tt == bench.PROCESS_MM_SWITCH_NS > 0
    assert pp < sp
    # ~2 us per message on the socket path (the Han & Lee calibration)
    assert 1_500 <= st + tt <= 3_000


@pytest.mark.parametrize("groups, fds, loops, ipc", [(1, 20, 3, "socket"), (2, 4, 5, "pipe"), (1, 1, 7, "socket")])
def test_hackbench_structure_conserves_messages(groups, fds, loops, ipc):
    spec = own(spec_of(f"hackbench:groups={groups},fds={fds},loops={loops},ipc={ipc}"))
    assert len(spec["tasks"]) == groups * fds * 2 + 1
    cap = bench.hackbench_buffer_msgs(ipc, 100)
    ops = count_ops(spec)
    n = groups * fds * 2
    ready, go = 0, 1
    assert spec["sems"][ready] == spec["sems"][go] == 0
    assert ops[ready] == (n, n) and ops[go] == (n, n)
    # per receiver: a slots sem (initial = capacity) and an items sem (initial 0); the
    # fds senders post fds*loops items in all, the receiver takes as many
    data = [s for s in ops if s not in (ready, go)]
    assert len(data) == groups * fds * 2
    slots = [s for s in data if spec["sems"][s] == cap]
    items = [s for s in data if spec["sems"][s] == 0]
    assert len(slots) == len(items) == groups * fds
    for s in slots + items:
        assert ops[s] == (fds * loops, fds * loops)
    # each sender writes to all fds receivers of its own group, `loops` times
    snd = [t for t in spec["tasks"] if t["name"].split("-")[-1].startswith("s")]
    assert len(snd) == groups * fds
    for t in snd:
        posted = [ev["sem_post_sync"] for ev in flat_events(t) if "sem_post_sync" in ev and ev["sem_post_sync"] != ready]
        assert len(posted) == fds * loops and len(set(posted)) == fds
    # every wakeup is a pipe's or a socket's, with WF_SYNC: no plain post at all
    assert not any("sem_post" in ev for t in spec["tasks"] for ev in flat_events(t))
    d, = spec["metric_defs"]
    assert d["params"]["messages"] == groups * fds * fds * loops
    assert len(d["tasks"]) == n


# ------------------------------------------------------------------ job-stream structure

def test_job_stream_fixed_arrivals():
    spec = spec_of("job-stream:profile=gcc,rate=20,jobs=7,noise=0")
    assert [t["delay_ns"] for t in spec["tasks"]] == [round(i / 20 * 1e9) for i in range(7)]
    # with the generator's run-to-run variation each job starts after its arrival by the
    # generator's timer slack (at most 50 us) and one process creation (77-273 us on the
    # Pixel 6a; a log-normal draw has no upper end, 3 ms is 12 log standard deviations away)
    noisy = own(spec_of("job-stream:profile=gcc,rate=20,jobs=7"))
    late = [a["delay_ns"] - b["delay_ns"] for a, b in zip(noisy["tasks"], spec["tasks"])]
    assert all(0 < x < 3_000_000 for x in late)
    assert noisy["metric_defs"][0]["params"]["arrivals_ns"] == [round(i / 20 * 1e9) for i in range(7)]
    for t in spec["tasks"]:
        run, = [e["run"] for e in flat_events(t) if "run" in e]
        assert run == 56_000_000
        assert t["perf"]["mem_frac"] == bench._PERF["gcc"][1]


def test_job_stream_poisson_arrivals_statistics():
    spec = spec_of("job-stream:profile=gzip,rate=50,arrival=poisson,jobs=2000,noise=0", seed=3)
    gaps = np.diff([t["delay_ns"] for t in spec["tasks"]]) / 1e9
    # exponential gaps: mean 1/rate (std of the mean 1/rate/sqrt(1999) = 2.2 %), CV 1
    assert abs(gaps.mean() - 1 / 50) < 0.1 / 50
    assert 0.9 < gaps.std() / gaps.mean() < 1.1
    fixed = np.diff([t["delay_ns"] for t in spec_of("job-stream:rate=50,jobs=50,noise=0")["tasks"]])
    assert fixed.std() / fixed.mean() < 1e-6


def test_job_stream_h264ref_side_stream_and_profiles():
    spec = spec_of("job-stream:profile=gcc,rate=20,jobs=61,h264ref_rate=0.34,noise=0")
    h = [t for t in spec["tasks"] if t["name"].startswith("job-h264ref")]
    assert [t["delay_ns"] for t in h] == [0, round(1 / 0.34 * 1e9)]   # within the 3 s gcc stream
    assert [e["run"] for e in flat_events(h[0]) if "run" in e] == [1_200_000_000]
    gcc = next(t for t in spec["tasks"] if t["name"].startswith("job-gcc"))
    assert h[0]["perf"]["ipc_exp"] > gcc["perf"]["ipc_exp"]  # compute-bound gains more from a big core
    mcf, gzip = bench._perf("mcf"), bench._perf("gzip")
    assert mcf["mem_frac"] > gzip["mem_frac"] and mcf["ipc_exp"] < gzip["ipc_exp"]


@pytest.mark.parametrize("arg", ["job-stream:arrival=poisson,profile=mix,jobs=30", "video:seconds=1"])
def test_same_seed_same_spec(arg):
    assert spec_of(arg, seed=5) == spec_of(arg, seed=5)
    assert spec_of(arg, seed=5) != spec_of(arg, seed=6)


# ------------------------------------------------------------------ spec-repeat structure

def test_spec_repeat_restarts_and_nice():
    spec = spec_of("spec-repeat:set=spec2000,repeats=5,nice=8:0,copies=1")
    loops = {t["name"]: t["loop"] * t["phases"][0]["loop"] for t in spec["tasks"]}
    ref = bench.SPEC2000_REF_S
    assert loops["spec-twolf-0"] == 5            # the longest (3000 s) runs exactly K times
    for j, r in ref.items():
        assert loops[f"spec-{j}-0"] == max(5, math.ceil(5 * 3000 / r))
    nices = [t["nice"] for t in spec["tasks"]]
    assert nices == [8, 0] * 4
    run = [e["run"] for e in spec["tasks"][0]["phases"][0]["events"] if "run" in e]
    assert run == [round(1400 / 1000 * 100 * 1e6)]   # gzip at scale_ms=100: 140 ms


@pytest.mark.parametrize("platform, ncpu", [("gs101", 8), ("exynos5422", 8), ("juno-r0", 6)])
def test_spec_repeat_default_copies_keep_004_load_per_cpu(platform, ncpu):
    # 004: 8 jobs on 2 CPUs, 4 per CPU
    for set_, n in (("spec2000", 8), ("int4", 4)):
        spec = own(spec_of(f"spec-repeat:set={set_}", platform=platform))
        assert len(spec["tasks"]) == n * max(1, round(4 * ncpu / n))


# ------------------------------------------------------------------ video structure

def test_video_structure():
    spec = own(spec_of("video:threads=21,fps=30,seconds=4", seed=2))
    frames = 120
    assert len(spec["tasks"]) == 22
    ops = count_ops(spec)
    for s, (p, w) in ops.items():
        assert p == w     # every post is consumed
    done = len(spec["sems"]) - 1
    assert ops[done] == (frames * 21, frames * 21)
    workers = spec["tasks"][1:]
    per_frame = np.sum([[e["run"] for e in flat_events(t) if "run" in e] for t in workers], axis=0)
    assert per_frame.shape == (frames,)
    # mean decode work per frame = VIDEO_FRAME_MS (GOP-normalised, lognormal(0, .1) noise
    # has mean exp(.005)); 120 frames: within 5 %
    assert abs(per_frame.mean() / (bench.VIDEO_FRAME_MS * 1e6) - 1) < 0.05
    kinds = np.array([bench.GOP[i % len(bench.GOP)] for i in range(frames)])
    assert per_frame[kinds == "I"].mean() > per_frame[kinds == "P"].mean() > per_frame[kinds == "B"].mean()
    timer, = {e["timer"]["period_ns"] for e in flat_events(spec["tasks"][0]) if "timer" in e}
    assert timer == round(1e9 / 30)


def test_video_long_clip_repeats_the_unrolled_frames():
    spec = own(spec_of("video:threads=3,fps=30,seconds=25"))   # 750 = 2 x 300 + 150 frames
    ops = count_ops(spec)
    done = len(spec["sems"]) - 1
    assert ops[done] == (750 * 3, 750 * 3)
    master = spec["tasks"][0]
    assert [ph["loop"] for ph in master["phases"]] == [2, 1]
    assert sum(1 for e in flat_events(master) if e == {"mark": 1}) == 750
    w0 = [e["run"] for e in flat_events(spec["tasks"][1]) if "run" in e]
    assert len(w0) == 750 and w0[:300] == w0[300:600] and w0[600:] == w0[:150]


# ------------------------------------------------------------------ metric functions (synthetic)

def view(marks) -> RunView:
    return RunView(doc={"sim_duration_s": 10.0, "tasks": []}, marks=sorted(marks))


def test_hackbench_metric_formula():
    d = {"workload": "hackbench", "key": "hackbench", "params": {"messages": 8, "buffer_msgs": 640, "main": "main"},
         "tasks": ["a", "b"], "marks": []}
    m = bench.hackbench_metric(d, view([(1_000_000_000, "main", "hackbench.go"),
                                        (500_000_000, "other-main", "hackbench.go"),
                                        (2_000_000_000, "a", "hackbench.end"),
                                        (3_500_000_000, "b", "hackbench.end"),
                                        (9_000_000_000, "other", "hackbench.end")]))
    assert m["completion_s"] == 2.5 and m["completed"] == 1
    assert m["msgs_per_s"] == 8 / 2.5
    m = bench.hackbench_metric(d, view([(1_000_000_000, "main", "hackbench.go"),
                                        (2_000_000_000, "a", "hackbench.end")]))
    assert m["completion_s"] is None and m["completed"] == 0 and m["tasks_done"] == 1


def test_job_stream_metric_formula():
    d = {"params": {"arrivals_ns": [0, 100_000_000, 200_000_000], "profiles": ["gcc", "gcc", "mcf"]},
         "tasks": ["j0", "j1", "j2"]}
    marks = [(0, "j0", "job.start"), (300_000_000, "j0", "job.end"),
             (150_000_000, "j1", "job.start"), (600_000_000, "j1", "job.end"),
             (250_000_000, "j2", "job.start"), (1_200_000_000, "j2", "job.end")]
    m = bench.job_stream_metric(d, view(marks))
    # response times 0.3, 0.5, 1.0
    assert m["completed"] == 3
    assert math.isclose(m["mean_s"], 0.6) and m["min_s"] == 0.3 and m["max_s"] == 1.0
    assert math.isclose(m["std_s"], np.std([0.3, 0.5, 1.0]))
    assert math.isclose(m["gcc.mean_s"], 0.4) and m["mcf.n"] == 1
    assert math.isclose(m["throughput_jobs_per_s"], 3 / 1.2)
    assert math.isclose(m["start_delay_mean_s"], (0 + 0.05 + 0.05) / 3)


def test_spec_repeat_metric_reads_first_k_runs():
    d = {"params": {"repeats": 2, "nice": [0, 0, 0], "benchmarks": ["gzip", "mcf"]},
         "tasks": ["spec-gzip-0", "spec-mcf-0", "spec-gzip-1"]}
    s = 1_000_000_000
    marks = [(0, "spec-gzip-0", "job.start"), (1 * s, "spec-gzip-0", "job.end"),
             (1 * s, "spec-gzip-0", "job.start"), (3 * s, "spec-gzip-0", "job.end"),
             (3 * s, "spec-gzip-0", "job.start"), (3 * s + 10, "spec-gzip-0", "job.end"),   # third: not read
             (0, "spec-gzip-1", "job.start"), (4 * s, "spec-gzip-1", "job.end"),
             (0, "spec-mcf-0", "job.start"), (4 * s, "spec-mcf-0", "job.end"),
             (0, "spec-mcf-9", "job.start"), (9 * s, "spec-mcf-9", "job.end")]       # not ours
    m = bench.spec_repeat_metric(d, view(marks))
    # gzip: copy 0 runs 1 s and 2 s, copy 1 runs 4 s
    assert m["gzip.n"] == 3 and m["gzip.min_s"] == 1.0 and m["gzip.max_s"] == 4.0
    assert math.isclose(m["gzip.mean_s"], 7 / 3) and math.isclose(m["gzip.std_s"], np.std([1, 2, 4]))
    assert math.isclose(m["gzip.max_over_mean"], 4 / (7 / 3))
    assert math.isclose(m["gzip.cv"], np.std([1, 2, 4]) / (7 / 3))
    assert m["mcf.n"] == 1 and m["mcf.cv"] == 0.0 and m["all_reached_repeats"] == 0
    assert math.isclose(m["mean_cv"], m["gzip.cv"] / 2)
    assert m["completed_runs"] == 5
    assert math.isclose(m["throughput_jobs_per_s"], 5 / 4)


def test_video_metric_formula():
    d = {"params": {"fps": 30, "period_ns": 33_333_333, "frames": 300, "skip_s": 1}, "tasks": ["video-master"]}
    s = 1_000_000_000
    # 30 frames in second 0 and 1, 20 in seconds 2 and 3 (each decoded in 10 ms), then
    # the run is cut at 10 s of simulation (100 of the clip's 300 frames done)
    marks = []
    for sec, n in ((0, 30), (1, 30), (2, 20), (3, 20)):
        for i in range(n):
            t = sec * s + i * (s // n) + 20_000_000
            marks += [(t - 10_000_000, "video-master", "frame.start"), (t, "video-master", "frame.done")]
    m = bench.video_metric(d, view(marks))
    # windows 1..9 (skip 1): 30, 20, 20, 0 x 6
    counts = [30, 20, 20] + [0] * 6
    assert m["windows"] == 9
    assert math.isclose(m["mean_fps"], np.mean(counts)) and math.isclose(m["std_fps"], np.std(counts))
    assert m["frames"] == 100 and m["frames_expected"] == 300 and m["late_frames"] == 0
    assert math.isclose(m["frame_time_ms_mean"], 10.0)
    # had the clip 100 frames, the windows would end at its last frame (3.97 s): 1 and 2
    m = bench.video_metric({**d, "params": {**d["params"], "frames": 100}}, view(marks))
    assert m["windows"] == 2 and m["mean_fps"] == 25.0 and m["std_fps"] == 5.0


def test_video_metric_all_frames_done_stops_at_last_frame():
    d = {"params": {"fps": 30, "period_ns": 33_333_333, "frames": 90, "skip_s": 0}, "tasks": ["video-master"]}
    s = 1_000_000_000
    marks = []
    for i in range(90):
        t = i * (s // 30) + 5_000_000
        marks += [(t - 40_000_000 if i else 0, "video-master", "frame.start"), (t, "video-master", "frame.done")]
    m = bench.video_metric(d, view(marks))
    assert m["windows"] == 2 and m["mean_fps"] == 30.0 and m["std_fps"] == 0.0
    assert m["late_frames"] == 89    # 40 ms > one period


def test_metric_defs_survive_merging():
    """Merge hackbench with video and job-stream; write engine-style marks with the merged
    indices; compute_metrics must give each workload its own numbers."""
    ps = load_platform("gs101").to_spec()
    a = resolve_workloads(["hackbench:groups=1,fds=2,loops=1"], ps, 0)
    b = resolve_workloads(["video:seconds=1,threads=2"], ps, 0)
    c = resolve_workloads(["job-stream:jobs=2"], ps, 0)
    m = merge_workloads([b, a, c])
    names = [t["name"] for t in m["tasks"]]
    assert len(m["marks"]) == 6 and m["marks"].count("hackbench.go") == 1
    # the go mark's index was shifted past video's two marks, in the tasks' events too
    main = m["tasks"][names.index("hackbench-main")]
    assert {"mark": 2} in [e for ph in main["phases"] for e in ph["events"]]

    def mk(t, task, mark):
        return [t, names.index(task), m["marks"].index(mark)]
    s = 1_000_000_000
    marks = [mk(s, "hackbench-main", "hackbench.go")]
    marks += [mk(s + s // 4 * (i + 1), nm, "hackbench.end") for i, nm in
              enumerate(n for n in names if n.startswith("hackbench-g"))]
    marks += [mk(i * s // 30, "video-master", "frame.done") for i in range(30)]
    marks += [mk(0, c["tasks"][0]["name"], "job.end"), mk(2 * s, c["tasks"][1]["name"], "job.end")]
    doc = {"tasks": [{"name": n} for n in names], "marks": sorted(marks), "sim_duration_s": 3.0}
    out = compute_metrics(doc, m)
    assert set(out) == {"hackbench", "video", "job-stream"}
    assert out["hackbench"]["completion_s"] == 1.0 and out["hackbench"]["completed"] == 1
    assert out["video"]["frames"] == 30
    assert out["job-stream"]["completed"] == 2
    # a second copy of a workload gets its own key
    assert [d["key"] for d in merge_workloads([a, a])["metric_defs"]] == ["hackbench", "hackbench#2"]


# ------------------------------------------------------------------ through the engine

def _engine_runs_sems() -> bool:
    from hetsched import Simulation
    from hetsched.errors import HetschedError
    probe = {"name": "probe", "duration_ns": None, "timers": 0, "sems": [0], "tasks": [
        {"name": "a", "policy": "other", "nice": 0, "rt_priority": 0, "cpus": None, "util_min": None,
         "util_max": None, "delay_ns": 0, "loop": 1, "phases": [{"loop": 1, "events": [{"sem_post": 0}]}]},
        {"name": "b", "policy": "other", "nice": 0, "rt_priority": 0, "cpus": None, "util_min": None,
         "util_max": None, "delay_ns": 0, "loop": 1, "phases": [{"loop": 1, "events": [{"sem_wait": 0}]}]}]}
    try:
        Simulation(platform="gs101", workload=probe).run()
    except HetschedError:
        return False
    return True


engine = pytest.mark.skipif(not _engine_runs_sems(), reason="the engine does not execute sem_wait yet")


def run_metrics(workload, platform="gs101", governor="performance", seed=0, duration_s=None, **kw):
    """The workload metrics of result.json (Simulation.result() runs compute_metrics)."""
    from hetsched import Simulation
    sim = Simulation(platform=platform, workload=workload, governor=governor, seed=seed, **kw)
    res = sim.run(duration_s)
    keys = [d["key"] for d in sim.workload_spec.get("metric_defs", [])]
    return {k: res.metrics[k] for k in keys}, res


SMALL = {
    "hackbench": "hackbench:groups=1,fds=10,loops=10",
    "job-stream": "job-stream:profile=gcc,rate=40,jobs=8",
    "spec-repeat": "spec-repeat:set=int4,repeats=2,scale_ms=10",
    "video": "video:seconds=3,threads=8",
}


@engine
@pytest.mark.parametrize("platform", ["gs101", "exynos5422"])
def test_every_workload_runs_and_reports(platform):
    m, res = run_metrics(list(SMALL.values()), platform=platform, governor="schedutil")
    assert res["stop_reason"] == "all tasks exited"
    assert m["hackbench"]["completed"] == 1 and m["hackbench"]["completion_s"] > 0
    assert m["job-stream"]["completed"] == 8 and m["job-stream"]["mean_s"] > 0.056 / 1.01
    assert m["spec-repeat"]["all_reached_repeats"] == 1
    assert m["video"]["frames"] == 90 and m["video"]["mean_fps"] > 0


@engine
@pytest.mark.parametrize("platform", ["gs101", "exynos5422"])
def test_hackbench_slower_machine_longer(platform):
    arg = "hackbench:groups=1,loops=20"
    fast, _ = run_metrics(arg, platform=platform, governor="performance")
    slow, _ = run_metrics(arg, platform=platform, governor="powersave")
    assert fast["hackbench"]["completed"] == slow["hackbench"]["completed"] == 1
    assert slow["hackbench"]["completion_s"] > 1.5 * fast["hackbench"]["completion_s"]
    # the real program's work: 20 x 20 x 20 messages of ~2 us on up to 8 CPUs
    assert 8000 * 2e-6 / 8 < fast["hackbench"]["completion_s"] < 8000 * 2e-6 * 10


@engine
def test_job_stream_and_spec_repeat_slower_machine_longer():
    fast, _ = run_metrics(SMALL["job-stream"], governor="performance")
    slow, _ = run_metrics(SMALL["job-stream"], governor="powersave")
    assert slow["job-stream"]["mean_s"] > 1.5 * fast["job-stream"]["mean_s"]
    assert fast["job-stream"]["min_s"] >= 0.056 * 0.99     # never faster than the big core at f_max
    fast, _ = run_metrics(SMALL["spec-repeat"], platform="exynos5422", governor="performance")
    slow, _ = run_metrics(SMALL["spec-repeat"], platform="exynos5422", governor="powersave")
    for j in ("gzip", "mcf"):
        assert slow["spec-repeat"][f"{j}.mean_s"] > fast["spec-repeat"][f"{j}.mean_s"]
    assert slow["spec-repeat"]["throughput_jobs_per_s"] < fast["spec-repeat"]["throughput_jobs_per_s"]


@engine
def test_video_fps_drops_when_machine_cannot_keep_up():
    arg = "video:seconds=4"
    fast, _ = run_metrics(arg, governor="performance")
    slow, _ = run_metrics(arg, governor="powersave")
    f, s = fast["video"], slow["video"]
    assert f["mean_fps"] >= 29.0 and f["late_frames"] <= 2
    assert s["mean_fps"] < f["mean_fps"] - 3
    assert s["std_fps"] > f["std_fps"]          # frames of unequal cost show once it falls behind
    assert s["late_frames"] > f["late_frames"]
    assert s["frame_time_ms_mean"] > f["frame_time_ms_mean"]


@engine
@pytest.mark.parametrize("governor, cpu", [("performance", 7), ("powersave", 7), ("performance", 0), ("powersave", 0)])
def test_hackbench_on_one_cpu_matches_the_perf_formula(governor, cpu):
    """Pinned to one CPU nothing runs in parallel, so the completion time is the sum of the
    per-message work through the documented perf formula
    t = w * ((1 - mem_frac) * F / (u_c^ipc_exp * f) + mem_frac), u_c = cap * F / (1024 * fmax_c)."""
    import copy
    from hetsched import Simulation
    sp = copy.deepcopy(spec_of("hackbench:groups=1,fds=4,loops=50"))
    for t in sp["tasks"]:
        t["cpus"] = [cpu]
    # the scheduler's costs off: the formula is the messages' work alone
    res = Simulation(platform="gs101", workload=sp, governor=governor, knobs=NO_COSTS).run()
    m = res.metrics["hackbench"]
    plat = load_platform("gs101").to_spec()
    cl, = [c for c in plat["clusters"] if cpu in c["cpus"]]
    big_fmax = max(c["opps"][-1]["khz"] for c in plat["clusters"])
    fmax = cl["opps"][-1]["khz"]
    f = fmax if governor == "performance" else cl["opps"][0]["khz"]
    u = cl["capacity_orig"] * big_fmax / (1024 * fmax)
    perf = bench.HACKBENCH_PERF
    w, r = bench.hackbench_costs_ns("socket", "process", 100)
    pred = 4 * 4 * 50 * (w + r) * ((1 - perf["mem_frac"]) * big_fmax / (u ** perf["ipc_exp"] * f) + perf["mem_frac"])
    assert m["completion_s"] == pytest.approx(pred / 1e9, rel=0.01)


def test_profiles_core_preference_order():
    """Little-core slowdown per the perf formula at both clusters' f_max on exynos5422
    (u = 377 * 2000 / (1024 * 1400)): compute-bound h264ref loses the most, DRAM-bound
    mcf the least."""
    u, F, f = 377 * 2000 / (1024 * 1400), 2000, 1400

    def slowdown(name):
        p = bench._perf(name)
        return ((1 - p["mem_frac"]) * F / (u ** p["ipc_exp"] * f) + p["mem_frac"]) / 1.0
    s = {n: slowdown(n) for n in bench.PROFILES}
    assert s["h264ref"] > s["gcc"] > s["mcf"]
    assert s["mesa"] > s["equake"] and s["gzip"] > s["art"]
    assert all(1.0 < v < 6.0 for v in s.values())


@engine
def test_h264ref_gains_more_from_the_big_core_than_mcf():
    from hetsched import Simulation
    out = {}
    for prof in ("h264ref", "mcf"):
        for cpu in (0, 4):
            sp = spec_of(f"job-stream:profile={prof},jobs=1,scale_ms=400", platform="exynos5422")
            sp["tasks"][0]["cpus"] = [cpu]
            res = Simulation(platform="exynos5422", workload=sp, governor="performance").run()
            out[prof, cpu] = res.metrics["job-stream"]["mean_s"]
    assert out["h264ref", 0] / out["h264ref", 4] > out["mcf", 0] / out["mcf", 4] > 1.0


def test_cli_bad_workload_param_is_one_line(tools, tmp_path):
    proc = tools.run_cli(["run", "--workload", "spec-repeat:nice=8:x", "--out", tmp_path / "o"])
    tools.assert_one_line_error(proc, "spec-repeat", "nice")
    tools.assert_no_outputs(tmp_path / "o")


@engine
def test_spec_repeat_jitter_is_larger_on_heterogeneous_cores():
    """Paper 004 §2.2: the same job mix restarted on a heterogeneous core set has more
    completion-time jitter than on a homogeneous one.  exynos5422: four A15s (homogeneous)
    vs two A7s + two A15s, at f_max (performance)."""
    from hetsched import Simulation
    cv = {}
    for label, cpus in (("homogeneous", [4, 5, 6, 7]), ("heterogeneous", [0, 1, 4, 5])):
        sp = spec_of("spec-repeat:set=spec2000,repeats=5,scale_ms=20,copies=2", platform="exynos5422")
        for t in sp["tasks"]:
            t["cpus"] = cpus
        m = Simulation(platform="exynos5422", workload=sp, governor="performance").run().metrics["spec-repeat"]
        assert m["all_reached_repeats"] == 1
        cv[label] = m["mean_cv"]
    assert cv["heterogeneous"] > 2 * cv["homogeneous"]


@engine
def test_merged_behind_another_workload_still_reports():
    """Behind phone-mix (10 tasks, 10 timers, no marks) every id of the video and hackbench
    specs is shifted (hackbench's also past video's); their metrics still come out."""
    m, res = run_metrics(["phone-mix", "video:seconds=2,threads=4", "hackbench:groups=1,fds=5,loops=5"],
                         platform="exynos5422", governor="schedutil", duration_s=3.0)
    assert res["stop_reason"] == "duration"
    assert m["hackbench"]["completed"] == 1 and m["hackbench"]["tasks_done"] == 10
    assert m["video"]["frames"] == 60 and m["video"]["mean_fps"] > 0


# ------------------------------------------------------------------ run-to-run variation on a switcher

def test_switcher_job_stream_workers_end_before_its_jobs():
    # On a switcher platform a cluster lists only the virtual CPUs it backs at the start (the
    # A15 none), but every vCPU may run on the A15: the lower bound of the run's length
    # counts 4 vCPUs at the A15's speed. 400 gcc jobs of 69.93 ms: 27.972 s of work / 4 =
    # 6.993 s, more than the last arrival (3.99 s) plus one job; the kernel workers stop
    # there, so the run until every task ends stops with the last job
    spec = spec_of("job-stream:profile=gcc,rate=100,jobs=400,job_ms=69.93", platform="exynos5422:switcher")
    assert spec["noise"]["horizon_ns"] == 6_993_000_000
    from hetsched.sim import Simulation

    sim = Simulation(platform="exynos5422:switcher", workload=spec, scheduler="legacy", governor="ondemand",
                     seed=0, lower_bound=False)
    assert sim.run_until_exited()
    doc = sim.result().doc
    ends = [t for t, _, m in doc["marks"] if spec["marks"][m] == "job.end"]
    assert len(ends) == 400 and round(doc["sim_duration_s"] * 1e9) == max(ends)
