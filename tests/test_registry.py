"""The engine's policy registry from Python: every registered policy runs through the API
deterministically and reports itself, `hetsched schedulers` lists every one, and the
generated policy pages (docs/policies/) are what the registry says. A new registry line is
tested here without a new test."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hetsched.sim import Simulation, registered_policies

ROOT = Path(__file__).resolve().parents[1]
POLICIES = registered_policies()


def _run(p: dict) -> dict:
    kw = dict(platform="exynos5422:switcher", governor="ondemand") if p["switcher_platform"] else {}
    doc = dict(Simulation(workload="phone-mix", scheduler=p["name"], seed=3, lower_bound=False, **kw).run(1.0).doc)
    del doc["wall_s"]
    return doc


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p["name"])
def test_every_policy_runs_deterministically_and_reports_itself(policy):
    a, b = _run(policy), _run(policy)
    assert json.dumps(a) == json.dumps(b)
    assert a["scheduler"] == policy["name"]
    assert a["counters"]["context_switches"] > 0 and a["energy_j"] > 0
    assert policy["summary"] and policy["source"] and policy["differences"] and policy["status"]


def test_the_registry_names_are_unique_and_listed_by_the_cli(tools):
    names = [p["name"] for p in POLICIES]
    assert len(names) == len(set(names))
    out = tools.run_cli(["schedulers"]).stdout
    for n in names:
        assert f"scheduler {n}:" in out, n


def test_the_policy_pages_are_generated_from_the_registry():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_policy_docs.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    for p in POLICIES:
        text = (ROOT / "docs" / "policies" / f"{p['name']}.md").read_text()
        for heading in ("## Overview", "## Source", "## Knobs", "## Differences", "## Status"):
            assert heading in text, (p["name"], heading)


def test_no_policy_name_is_compared_outside_the_registry():
    """Behaviour follows the registry line (its controller, its requirements), never a
    comparison with a policy's name. The study modules (reproduce/) are left out: a study
    names the arms of its experiment ("train the learning-eas arm"), which is the study's
    configuration, not the engine's or the package's behaviour."""
    import re

    names = "|".join(re.escape(p["name"]) for p in POLICIES)
    compare = re.compile(rf"""(==|!=)\s*["']({names})["']|["']({names})["']\s*(==|!=)|in\s*\(\s*["']({names})["']""")
    offenders = []
    for path in (ROOT / "python" / "hetsched").rglob("*.py"):
        if "reproduce" in path.parts:
            continue
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if compare.search(line.split("#", 1)[0]):
                offenders.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


@pytest.mark.parametrize("kernel, release", [
    ("mainline-6.12", "6.12.8"), ("android-4.19", "4.19"), ("msm-4.14", "4.14")])
def test_result_names_the_kernel_release_its_profile_follows(kernel, release):
    # the profile's name stays what --set kernel= takes; the release is the sources' version
    sim = Simulation(platform="sm8150", workload="periodic", scheduler="eas", governor="schedutil",
                     lower_bound=False, knobs={"kernel": kernel})
    sim.run(0.05)
    doc = json.loads(sim.result().to_json())
    assert doc["kernel"] == kernel
    assert doc["kernel_release"].split(" ")[0] == release
