"""The real phones the phone workloads are compared with (workloads/phone_reference.py),
and the phone workloads' figures against them.

The committed traces' figures are measured again here; the runs are checked against what
a phone's load must show (at least 100 threads that run in 3 s, at least 1,600 wakeups a
second, run-queue wait / run between 0.15 and 1.5, and a wakeup latency p50 within a factor
of 2 of today's phones', 30-65 µs, as the median over five seeds), each measured on the
run's own ftrace output.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from hetsched.platforms import load_platform
from hetsched.sim import Simulation, default_policy
from hetsched.traces import load_trace
from hetsched.traces.figures import phone_figures
from hetsched.workloads.phone_reference import (PHONES_OF_TODAY, REAL_PHONES, REFERENCES, figure_values,
                                                reference_range, within_2x)

TRACES = Path(__file__).resolve().parents[2] / "shared" / "realdata" / "traces"


@pytest.mark.parametrize("label", ["Pixel 6a launch", "Catapult 2012"])
def test_the_committed_traces_give_the_recorded_figures(label):
    phone = REAL_PHONES[label]
    path = TRACES / phone.trace
    if not path.is_file():
        pytest.skip(f"{path} is not available")
    got = figure_values(phone_figures(load_trace(path)))
    digits = {"threads_run": 0, "wakeups_per_s": 0, "busy_share": 3, "wait_run": 2, "ui_wait_run": 2,
              "render_wait_run": 2, "wakeup_latency_us": 0}
    assert {k: None if v is None else round(v, digits[k]) for k, v in got.items()} == phone.figures


def test_reference_ranges_and_the_factor_of_two():
    # the scrolling traces' RenderThread wait/run: 0.41, 0.36, 0.51 -> 0.36-0.51, so
    # 0.18 to 1.02 is within a factor of 2
    rng = reference_range("render_wait_run", REFERENCES["browsing"])
    assert rng == (0.36, 0.51)
    assert within_2x(0.18, rng) and within_2x(1.02, rng)
    assert not within_2x(0.17, rng) and not within_2x(1.03, rng)
    assert within_2x(None, rng) is None
    # the 2012 phone has no RenderThread: no range from it alone
    assert reference_range("render_wait_run", ["Catapult 2012"]) is None
    assert reference_range("wakeup_latency_us", PHONES_OF_TODAY) == (30, 65)
    assert set(PHONES_OF_TODAY) == set(REAL_PHONES) - {"Catapult 2012"}


def _run(workload: str, platform: str, knobs: dict, tmp_path, seed: int = 0) -> dict:
    scheduler, governor, _ = default_policy(load_platform(platform))
    sim = Simulation(platform=platform, workload=workload, scheduler=scheduler, governor=governor,
                     trace="ftrace", lower_bound=False, seed=seed, knobs=knobs)
    sim.run(3.0)
    path = tmp_path / f"trace-{seed}.txt"
    path.write_text(sim.take_trace())
    return figure_values(phone_figures(load_trace(path)))


#: the wakeup latency figure is the median of its value over these seeds: it is itself the
#: median of the 30 busiest threads' own medians, which sit on one of two steps (a CPU woken
#: in WFI, 13-24 µs, or in c2, 214-224 µs, on gs101), so one seed's value jumps between them
#: (browsing on gs101: 107, 38, 159, 156 and 148 µs on seeds 0-4; over seeds 0-2 alone the
#: median moved from 121 to 190 to 107 µs with three faithful kernel changes in a day)
LATENCY_SEEDS = (0, 1, 2, 3, 4)


PLACEMENT = ("under mainline's find_energy_efficient_cpu(), which reads neither Android's groups nor "
             "WF_SYNC outside wake_affine(), the busiest threads wake on idle CPUs, many in c2 (218-224 µs "
             "each), where the Pixel 6a woke them on a running CPU, the waker's, or one in WFI (the phone "
             "found 66 % of its wakeups' CPUs in no idle state)")
#: under the Pixel's kernel the game and app-launch pass; beside the browsing model the busiest
#: threads are the model's frame threads, whose uclamp.min of 512 fits only the big CPUs, woken
#: there in c2, and the recorded system threads, held to their cpusets (foreground CPUs 0-5,
#: system-background 0-3), woken on little and mid CPUs in c2
CPUSETS = ("the models' frame threads wake on big CPUs in c2 and the recorded threads, held to gs101's "
           "cpusets, on little and mid CPUs in c2 (214-224 µs each)")


@pytest.mark.parametrize("workload, platform, knobs", [
    pytest.param("browsing", "gs101", {}, marks=pytest.mark.xfail(strict=True, reason=PLACEMENT)),
    ("game", "gs101", {}),
    pytest.param("app-launch", "gs101", {}, marks=pytest.mark.xfail(strict=True, reason=PLACEMENT)),
    ("browsing", "sm8150", {"kernel": "msm-4.14"}), ("game", "sm8150", {"kernel": "msm-4.14"}),
    ("app-launch", "sm8150", {"kernel": "msm-4.14"}),
    pytest.param("browsing", "gs101", {"kernel": "pixel-5.10"}, marks=pytest.mark.xfail(strict=True, reason=CPUSETS)),
    ("game", "gs101", {"kernel": "pixel-5.10"}),
    ("app-launch", "gs101", {"kernel": "pixel-5.10"}),
])
def test_a_phone_workload_shows_a_phones_load(workload, platform, knobs, tmp_path):
    runs = [_run(workload, platform, knobs, tmp_path, seed) for seed in LATENCY_SEEDS]
    f = runs[0]
    assert f["threads_run"] >= 100
    assert f["wakeups_per_s"] >= 1600
    assert 0.15 <= f["wait_run"] <= 1.5
    latencies = [r["wakeup_latency_us"] for r in runs]
    assert within_2x(statistics.median(latencies), reference_range("wakeup_latency_us", PHONES_OF_TODAY)), \
        latencies
