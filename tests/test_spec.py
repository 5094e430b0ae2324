"""SpecBuilder and merge_workloads: ids handed out by name, every id space shifted on
merge, duplicate task names renamed with their metric defs following."""

import json
import subprocess
import sys

import pytest

import hetsched
from hetsched.errors import InputError
from hetsched.workloads.spec import SpecBuilder, merge_workloads, task


def _spec(tag: str) -> dict:
    b = SpecBuilder(tag)
    m, c, s = b.mutex("m"), b.cond("c"), b.sem("s", initial=2)
    br, mk, tm = b.barrier("b", 2), b.mark(f"{tag}.mark"), b.timer("t")
    ev = [{"lock": m}, {"wait": {"cond": c, "mutex": m}}, {"unlock": m}, {"sem_wait": s},
          {"barrier": br}, {"mark": mk}, {"timer": {"id": tm, "period_ns": 1000}}, {"fork": 1}]
    b.add(task("main", [{"loop": 1, "events": ev}]))
    b.add(task("child", [{"loop": 1, "events": [{"run": 10}]}], start=False))
    b.metric("demo", {"main": "main"}, tasks=["main", "child"], marks=[f"{tag}.mark"])
    return b.build()


def test_builder_hands_out_dense_ids_by_name():
    b = SpecBuilder("x")
    assert [b.mutex("a"), b.mutex("b"), b.mutex("a")] == [0, 1, 0]
    assert [b.sem("s", 3), b.sem("s", 9)] == [0, 0] and b.sems == [3]
    b.barrier("late")
    b.add(task("t", [{"loop": 1, "events": [{"barrier": 0}]}]))
    with pytest.raises(InputError):
        b.build()  # the barrier's count was never given
    b.set_barrier_count("late", 1)
    assert b.build()["barriers"] == [1]


def test_merge_shifts_every_id_space_and_renames_duplicates():
    a, b = _spec("a"), _spec("b")
    m = merge_workloads([a, b])
    assert (m["mutexes"], m["conds"], m["sems"], m["barriers"], m["timers"]) == (2, 2, [2, 2], [2, 2], 2)
    assert m["marks"] == ["a.mark", "b.mark"]
    ev = m["tasks"][2]["phases"][0]["events"]
    assert ev == [{"lock": 1}, {"wait": {"cond": 1, "mutex": 1}}, {"unlock": 1}, {"sem_wait": 1},
                  {"barrier": 1}, {"mark": 1}, {"timer": {"id": 1, "period_ns": 1000}}, {"fork": 3}]
    assert [t["name"] for t in m["tasks"]] == ["main", "child", "main#2", "child#2"]
    d2 = m["metric_defs"][1]
    assert (d2["key"], d2["tasks"], d2["params"]["main"]) == ("demo#2", ["main#2", "child#2"], "main#2")


def test_two_copies_of_a_workload_report_apart():
    # the second hackbench has twice the loops: alone it would take about twice as long;
    # together each must still count only its own tasks' marks
    r = hetsched.Simulation(platform="gs101", governor="performance",
                            workload=["hackbench:groups=1,loops=10", "hackbench:groups=1,loops=20"]).run()
    m = r.doc["metrics"]
    assert m["hackbench"]["messages"] * 2 == m["hackbench#2"]["messages"]
    assert m["hackbench"]["tasks_done"] == m["hackbench#2"]["tasks_done"] == 40
    assert m["hackbench"]["completion_s"] < m["hackbench#2"]["completion_s"]


def test_compare_lists_the_workload_metrics(tmp_path):
    p = subprocess.run([sys.executable, "-m", "hetsched.cli", "compare", "--workload", "game:fps=30",
                        "--duration", "1", "--seeds", "1", "--scheduler", "cfs", "--out", str(tmp_path)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    doc = json.loads((tmp_path / "compare.json").read_text())
    assert {"game.fps", "game.frame_drops"} <= {s["metric"] for s in doc["summary"]}
