"""Learning EAS's power consumption test: the networks it starts from (learning.initial,
hetsched.learning.power_test, scripts/learning_power_test.py; docs/learning.md). The observing
mode the test runs in (learning.apply=0) is tested in test_learning_eas.py."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hetsched import Simulation
from hetsched.errors import HetschedError
from hetsched.learning import LearningConfig, LearningEAS
from hetsched.learning import power_test as pt
from hetsched.sim import DEFAULT_KERNEL

ROOT = Path(__file__).resolve().parents[1]


def test_initial_is_checked():
    with pytest.raises(HetschedError) as e:
        Simulation(platform="gs101", workload="game", scheduler="learning-eas", knobs={"learning.initial": "boot"})
    assert "learning.initial" in str(e.value)
    sim = Simulation(platform="gs101", workload="game", scheduler="eas")
    with pytest.raises(HetschedError) as e:
        LearningEAS(sim, LearningConfig(initial="boot"))
    assert "initial" in str(e.value)
    assert LearningConfig.from_knobs({"initial": "fresh"}).initial == "fresh"
    assert LearningConfig().initial == "power-test"


def _nets(ctl):
    return {a.cluster: a.net.state() for a in ctl.tl_agents}, ctl.mc_agent.net.state()


def test_learning_eas_starts_from_the_platforms_power_test(tmp_path):
    shipped = json.loads(pt.data_path("gs101").read_text())
    sim = Simulation(platform="gs101", workload="game", scheduler="learning-eas", lower_bound=False)
    ctl = sim.learning
    assert (ctl.initial, ctl.initial_state, ctl.initial_note, ctl.restored) == (
        "power-test", "power-test-gs101.json", None, False)
    start = _nets(ctl)
    tl, mc = start
    for c, v in shipped["target_load"].items():
        assert tl[c]["w1"] == v["net"]["w1"] and tl[c]["b2"] == v["net"]["b2"]
    assert mc["w2"] == shipped["migration_cost"]["net"]["w2"]
    # the knobs start from the kernel's values, not the file's
    assert sim.knob_values()["schedutil.target_load.cluster2"] == 0.8
    doc = sim.run(0.3).doc["learning"]
    assert (doc["initial"], doc["initial_state"]) == ("power-test", "power-test-gs101.json")
    # learning.initial=fresh: the seeded network of before
    fresh = Simulation(platform="gs101", workload="game", scheduler="learning-eas",
                       knobs={"learning.initial": "fresh"}).learning
    assert fresh.initial == "fresh" and fresh.initial_note is None
    eas = Simulation(platform="gs101", workload="game", scheduler="eas")
    seeded = LearningEAS(eas, LearningConfig(initial="fresh"))
    assert _nets(fresh) == _nets(seeded) != start
    # a state file the user gives wins; one that does not exist yet is a first boot
    st = tmp_path / "s.json"
    first = Simulation(platform="gs101", workload="game", scheduler="learning-eas",
                       knobs={"learning.state": str(st), "learning.initial": "fresh"})
    first.run(0.2)
    again = Simulation(platform="gs101", workload="game", scheduler="learning-eas",
                       knobs={"learning.state": str(st)}).learning
    assert again.initial == "state" and again.restored and _nets(again) == _nets(first.learning)
    boot = Simulation(platform="gs101", workload="game", scheduler="learning-eas",
                      knobs={"learning.state": str(tmp_path / "none.json")}).learning
    assert boot.initial == "power-test" and _nets(boot) == start


def test_where_there_is_no_power_test_the_network_is_fresh_with_a_note(tmp_path):
    # a built-in platform without a file
    assert not pt.data_path("rk3399").exists()
    ctl = Simulation(platform="rk3399", workload="game", scheduler="learning-eas").learning
    assert ctl.initial == "fresh" and "no power-test state for platform rk3399" in ctl.initial_note
    assert Simulation(platform="rk3399", workload="game", scheduler="learning-eas").run(0.2).doc["learning"][
        "initial_note"] == ctl.initial_note
    # a user's platform file of a shipped name is another platform
    user = tmp_path / "gs101.json"
    shutil.copy(ROOT / "python" / "hetsched" / "platforms" / "data" / "gs101.json", user)
    ctl = Simulation(platform=str(user), workload="game", scheduler="learning-eas").learning
    assert ctl.initial == "fresh" and "not a built-in one" in ctl.initial_note
    # a network reading another input than the test's
    ctl = Simulation(platform="gs101", workload="game", scheduler="learning-eas",
                     knobs={"learning.tl.input": "eq8"}).learning
    assert ctl.initial == "fresh" and "'util' reading" in ctl.initial_note


def test_the_power_test_files_say_how_they_were_made():
    for name in pt.PLATFORMS:
        st = json.loads(pt.data_path(name).read_text())
        meta = st["power_test"]
        assert st["platform"] == name and meta["kernel"] == {"sm8150": "msm-4.14"}.get(name, DEFAULT_KERNEL)
        assert [s["paper"] for s in meta["scenes"]] == ["Music Play", "Home Idle State", "Train Sim"]
        assert all(s["seconds"] == 300.0 and s["steps"]["target_load"] == 3000 * len(st["target_load"])
                   for s in meta["scenes"])
        # observed, not applied: the knobs it leaves are the kernel's
        assert all(v["target_load"] == 0.8 for v in st["target_load"].values())
        assert st["migration_cost"]["cost_ns"] == 500_000


def test_power_test_kernels_are_the_studys():
    from hetsched.reproduce import learning_eas as le

    for name in pt.PLATFORMS:
        assert le.kernel_knobs(name).get("kernel") == pt.KERNELS.get(name)


def test_settle_time_by_hand():
    assert pt.settle_time([0, 5000, 9000, 9500, 9400], 1000, 10) == 20
    assert pt.settle_time([1, 1, 1], 1000, 10) == 0


def test_the_shipped_gs101_power_test_is_what_the_script_derives():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "learning_power_test.py"), "--platform", "gs101",
                           "--check"], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
