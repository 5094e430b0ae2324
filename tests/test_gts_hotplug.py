"""GTS and MediaTek's hot plug strategy: ``--scheduler gts`` and ``--set hotplug=hps`` from
the CLI and the Python API.

What the policies do is tested in crates/hetsched-core/tests/gts_hotplug.rs; here: the
names reach the engine, the alias equals the knob, result.json carries the counters and the
hotplug section, bad names are one-line errors.
"""

from __future__ import annotations

import json

import pytest

from hetsched import Simulation
from hetsched.errors import InputError
from hetsched.sim import SCHEDULERS


def test_gts_is_registered():
    assert "gts" in SCHEDULERS


def _run(**kw):
    sim = Simulation(platform="exynos5422", workload="game:fps=30,level=1", governor="schedutil", seed=0, **kw)
    return sim.run(1.0).doc


def test_gts_counters_and_intra_cluster_balancing():
    d = _run(scheduler="gts")
    c, pc = d["counters"], d["counters"]["policy"]
    assert d["policy"]["placement"] == "gts"
    assert pc["hmp_fork_boosts"] > 0
    assert pc["hmp_up_migrations"] + pc["hmp_down_migrations"] > 0
    assert c["balance_domains"]["PKG"]["attempts"] == 0
    assert "hotplug" not in d


def test_hotplug_alias_equals_knob_and_offline_cpus_are_reported():
    a = _run(scheduler="gts", knobs={"hotplug": "hps"})
    b = _run(scheduler="gts", knobs={"hotplug.hps": 1})
    assert a["energy_fj"] == b["energy_fj"] and a["hotplug"] == b["hotplug"]
    hp = a["hotplug"]
    assert hp["policy"] == "hps" and hp["period_ms"] == 40.0
    assert hp["cpu_down"] >= 1
    assert hp["mean_online_cpus"] < 8
    online = [c["online_s"] for c in a["cpus"]]
    assert online == hp["online_s"]
    assert online[0] == pytest.approx(1.0)  # CPU 0 never goes offline
    # an offline CPU did no work: its busy time fits in its online time
    for c in a["cpus"]:
        assert c["busy_s"] <= c["online_s"] + 1e-9
    off = _run(scheduler="gts", knobs={"hotplug": "none"})
    assert "hotplug" not in off


def test_unknown_hotplug_policy_is_an_error():
    with pytest.raises(InputError):
        _run(scheduler="gts", knobs={"hotplug": "mpdecision"})


def test_cli_gts_with_hps(tmp_path, tools):
    out = tmp_path / "out"
    p = tools.run_cli(["run", "--platform", "exynos5422", "--workload", "app-launch:app=browser,launches=1",
                 "--scheduler", "gts", "--set", "hotplug=hps", "--duration", "1", "--out", out])
    assert p.returncode == 0, p.stderr
    d = json.loads((out / "result.json").read_text())
    assert d["scheduler"] == "gts" and d["knobs"]["hotplug.hps"] == 1.0
    assert d["hotplug"]["cpu_down"] >= 1
    bad = tools.run_cli(["run", "--scheduler", "gts", "--set", "hotplug=bogus", "--duration", "0.1",
                   "--out", tmp_path / "bad"])
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
