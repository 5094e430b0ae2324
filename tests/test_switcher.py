"""Paper 001: the big.LITTLE switcher platform mode (``NAME:switcher``) and the ``legacy`` /
``util-aware`` schedulers.  Expectations come from the raw platform file (which cores pair)
and from the paper's rules, not from the engine's output."""

from __future__ import annotations

import pytest

from hetsched import Simulation
from hetsched.platforms import load_platform

JOBS = "job-stream:profile=gcc,rate=20,jobs=60,h264ref_rate=0.3333"


def test_switcher_platform_pairs_the_clusters(tools):
    raw = tools.raw_platform("exynos5422")
    k = len(raw["clusters"][0]["cpus"])
    p = load_platform("exynos5422:switcher")
    assert p.switcher and p.nr_cpus == k == 4
    spec = p.to_spec()
    assert spec["switcher"] is True
    little, big = spec["clusters"]
    assert little["cpus"] == list(range(k)) and big["cpus"] == []
    assert little["capacity_orig"] < big["capacity_orig"] == 1024
    # the plain platform is untouched
    assert "switcher" not in load_platform("exynos5422").to_spec()


@pytest.mark.parametrize("platform", ["gs101:switcher", "juno-r0:switcher"])
def test_switcher_needs_a_big_little_pairing(tools, tmp_path, platform):
    out = tmp_path / "out"
    proc = tools.run_cli(["run", "--platform", platform, "--scheduler", "legacy", "--governor", "ondemand",
                          "--workload", "video:seconds=1", "--out", out])
    tools.assert_one_line_error(proc, platform, "big/little pairing")
    tools.assert_no_outputs(out)


@pytest.mark.parametrize("args,needles", [
    (["--platform", "exynos5422", "--scheduler", "util-aware", "--governor", "ondemand"], ["switcher platform"]),
    (["--platform", "exynos5422:switcher", "--scheduler", "cfs", "--governor", "ondemand"], ["legacy or util-aware"]),
    (["--platform", "exynos5422:switcher", "--scheduler", "legacy", "--governor", "schedutil"], ["ondemand"]),
    (["--platform", "exynos5422:switcher", "--scheduler", "util-aware", "--governor", "ondemand",
      "--set", "util_aware.estimator=c"], ["util_aware.estimator", "a or b"]),
])
def test_bad_policy_one_line(tools, tmp_path, args, needles):
    proc = tools.run_cli(["run", *args, "--workload", "video:seconds=1", "--out", tmp_path / "o"])
    tools.assert_one_line_error(proc, *needles)


def _run(scheduler: str, est: str | None = None, workload: str = JOBS):
    knobs = {"util_aware.estimator": est} if est else {}
    return Simulation(platform="exynos5422:switcher", workload=workload, scheduler=scheduler,
                      governor="ondemand", knobs=knobs).run()


def test_util_aware_counters_and_energy_per_core():
    legacy, a, b = _run("legacy"), _run("util-aware", "a"), _run("util-aware", "b")
    assert b["util_aware"]["estimator"] == "b" and a["util_aware"]["estimator"] == "a"
    # every job and both h264ref runs leave the wait queue through Fig. 3
    assert b["counters"]["policy"]["placements_estimator_b"] >= 60 and b["counters"]["policy"]["placements_estimator_a"] == 0
    assert "leveling_moves" in b["counters"]["policy"] and "leveling_moves" not in legacy["counters"]["policy"]
    for r in (legacy, a, b):
        sw = r["switcher"]
        assert sw["switches_up"] > 0 and sw["switches_down"] <= sw["switches_up"]
        assert r["counters"]["switches_up"] == sw["switches_up"]
        # a vCPU's energy is the sum of what its two cores drew while they backed it
        for cpu, v in zip(r["cpus"], sw["vcpus"]):
            cores = v["cores"]
            assert cores["little"]["energy_j"] + cores["big"]["energy_j"] == pytest.approx(cpu["energy_j"], rel=1e-9)
            assert cores["little"]["busy_s"] + cores["big"]["busy_s"] == pytest.approx(cpu["busy_s"], rel=1e-9)
    # the baseline differs from the method
    assert legacy.energy_j != a.energy_j
    assert legacy["policy"]["placement"] == "switcher-legacy"


def test_deterministic():
    assert _run("util-aware", "b").energy_j == _run("util-aware", "b").energy_j
