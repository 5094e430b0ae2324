"""The msm-4.14 kernel profile (docs/mechanisms/walt.md): every built-in workload runs on
sm8150 with WALT, schedtune and core_ctl active and counted in result.json, and the
profile's knobs reach the engine with the device's init-script values underneath."""

from __future__ import annotations

import pytest

from hetsched.sim import KERNEL_PROFILES, Simulation
from hetsched.workloads.builtin import WORKLOADS


def test_the_profile_is_listed():
    assert "msm-4.14" in KERNEL_PROFILES
    assert "WALT" in KERNEL_PROFILES["msm-4.14"]


@pytest.mark.parametrize("workload", sorted(WORKLOADS))
def test_every_builtin_workload_runs_with_walt_schedtune_and_core_ctl(workload):
    doc = Simulation(platform="sm8150", workload=workload, scheduler="eas",
                     knobs={"kernel": "msm-4.14"}, seed=1, lower_bound=False).run(0.5).doc
    assert doc["kernel"] == "msm-4.14"
    c = doc["counters"]
    # 0.5 s of 20 ms windows: the rollover ran (the first CPU into each window queues it)
    assert c["walt"]["sched_ravg_window_ns"] == 20_000_000
    assert 1 <= c["walt"]["windows"] <= 25
    assert set(c["schedtune"]["groups"]) == {"root", "foreground", "background", "top-app", "rt"}
    assert sum(g["tasks"] for g in c["schedtune"]["groups"].values()) == len(doc["tasks"])
    # core_ctl evaluates at every window (the sm8150 init script enables it on gold and prime)
    assert c["vendor"]["core_ctl_evaluations"] >= 1
    # the sm8150 init script's values are the knobs' values unless set
    k = doc["knobs"]
    assert k["schedutil.hispeed_freq.cluster0"] == 1_209_600
    assert k["schedutil.hispeed_freq.cluster1"] == 1_612_800
    assert k["schedutil.pl"] == 1
    assert k["schedutil.up_rate_limit_us"] == 0


def test_mobile_threads_are_in_their_schedtune_groups():
    doc = Simulation(platform="sm8150", workload="game", scheduler="eas",
                     knobs={"kernel": "msm-4.14"}, seed=1, lower_bound=False).run(0.2).doc
    g = doc["counters"]["schedtune"]["groups"]
    # UnityMain, UnityGfxDeviceW, the job workers and the audio thread; SurfaceFlinger's
    assert g["top-app"]["tasks"] >= 4
    assert g["foreground"]["tasks"] >= 1


def test_a_users_knob_overrides_the_devices_value():
    doc = Simulation(platform="sm8150", workload="periodic", scheduler="eas",
                     knobs={"kernel": "msm-4.14", "schedutil.pl": 0, "schedtune.top-app.boost": 10},
                     seed=1, lower_bound=False).run(0.1).doc
    assert doc["knobs"]["schedutil.pl"] == 0
    assert doc["counters"]["schedtune"]["groups"]["top-app"]["boost"] == 10


def test_walt_knobs_are_validated_with_the_kernels_bounds():
    from hetsched.errors import InputError

    with pytest.raises(InputError, match="sched_ravg_window"):
        Simulation(platform="sm8150", workload="periodic", scheduler="eas",
                   knobs={"kernel": "msm-4.14", "sched_ravg_window": 5_000_000}).run(0.1)


def test_a_workloads_unknown_schedtune_group_is_one_clear_error():
    from hetsched.errors import InputError
    from hetsched.workloads.spec import SpecBuilder, task

    b = SpecBuilder("bad")
    b.add(task("t", [{"loop": 1, "events": [{"run": 1000}]}], stune="topapp"))
    with pytest.raises(InputError, match="stune"):
        Simulation(platform="sm8150", workload=b.build(), scheduler="eas",
                   knobs={"kernel": "msm-4.14"}).run(0.01)


def test_a_vendor_knob_that_never_fires_leaves_the_run_identical():
    """core_ctl at the kernel's own values (busy thresholds 0: every CPU busy) isolates
    nothing, so turning vendor.cpu_isolation on must not move a single placement. It did
    once: with any vendor knob on, a prefer_idle wakeup that found no CPU went to
    select_idle_sibling instead of on to feec as the plain path does."""
    base = {"kernel": "msm-4.14", "schedtune.top-app.boost": 10, "schedtune.top-app.prefer_idle": 1,
            "schedtune.foreground.prefer_idle": 1, "vendor.migration_margins": 0, "vendor.cpu_isolation": 0}
    for c in range(3):
        base |= {f"core_ctl.busy_up_thres.cluster{c}": 0, f"core_ctl.busy_down_thres.cluster{c}": 0,
                 f"core_ctl.min_cpus.cluster{c}": 1}
    off = Simulation("sm8150", ["pcmark", "phone-mix"], "eas", knobs=base, seed=2).run(2.0).doc
    on = Simulation("sm8150", ["pcmark", "phone-mix"], "eas", knobs=base | {"vendor.cpu_isolation": 1},
                    seed=2).run(2.0).doc
    assert on["counters"]["vendor"]["core_ctl_evaluations"] > 0 and on["counters"]["vendor"]["cpu_isolation"] == 0
    assert off["counters"]["schedtune"]["prefer_idle_placements"] > 0
    assert on["energy_fj"] == off["energy_fj"]
    assert [t["cpu_time_s"] for t in on["tasks"]] == [t["cpu_time_s"] for t in off["tasks"]]


PIXEL4 = {"kernel": "msm-4.14", "schedtune.top-app.boost": 10, "schedtune.top-app.prefer_idle": 1,
          "schedtune.foreground.prefer_idle": 1, "schedutil.up_rate_limit_us": 500,
          "schedutil.down_rate_limit_us": 20000}


def test_the_pixel_4s_build_has_no_walt_and_no_core_ctl_but_schedtune():
    """sched_walt=0 is msm-4.14 as floral_defconfig builds it: no CONFIG_SCHED_WALT, no
    CONFIG_SCHED_CORE_CTL, CONFIG_SCHED_TUNE on. sm8150's init-script values still turn
    vendor.cpu_isolation on, but no core_ctl is there to read it."""
    doc = Simulation("sm8150", ["pcmark", "phone-mix"], "eas", knobs=PIXEL4 | {"sched_walt": 0},
                     seed=1, lower_bound=False).run(1.0).doc
    c = doc["counters"]
    assert "walt" not in c
    assert doc["knobs"]["vendor.cpu_isolation"] == 1
    assert c["vendor"]["core_ctl_evaluations"] == 0 and c["vendor"]["cpu_isolation"] == 0
    assert c["schedtune"]["groups"]["top-app"]["boost"] == 10
    assert c["schedtune"]["prefer_idle_placements"] > 0


def test_sched_walt_is_refused_outside_msm_4_14_and_other_than_0_or_1():
    from hetsched.errors import InputError

    for knobs in ({"sched_walt": 0}, {"kernel": "android-4.19", "sched_walt": 0},
                  {"kernel": "msm-4.14", "sched_walt": 0.5}):
        with pytest.raises(InputError, match="sched_walt"):
            Simulation("sm8150", "periodic", "eas", knobs=knobs).run(0.01)
