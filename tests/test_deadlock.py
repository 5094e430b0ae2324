"""Deadlocks in a workload stop the run where they form and are reported (hetsched.deadlock,
crates/hetsched-core/src/deadlock.rs): result.json's ``stop_reason: "deadlock"`` and
``deadlock`` (tasks, objects by the workload's names, the events they block at), and one
warning line from ``hetsched run``. A run with no deadlock is unchanged (the golden set
checks that to the byte); the Rust tests check the engine's cases one by one.
"""

from __future__ import annotations

import json

from hetsched import Simulation
from hetsched.deadlock import warning
from hetsched.mechanisms import silent_mechanisms
from hetsched.workloads import load_rtapp
from hetsched.workloads.spec import merge_workloads

# task A takes m1 then m2, task B m2 then m1, each running 1 ms in between; until every
# task ends (duration -1): before, this ran 3,600 simulated seconds and said nothing
ABBA = {"tasks": {
    "A": {"loop": 3, "lock": "m1", "run": 1000, "lock2": "m2", "run2": 1000, "unlock": "m2", "unlock2": "m1",
          "sleep": 1000},
    "B": {"loop": 3, "lock": "m2", "run": 1000, "lock2": "m1", "run2": 1000, "unlock": "m1", "unlock2": "m2",
          "sleep": 1000}},
    "global": {"duration": -1}}

# the consumer waits three times, the producer posts once and ends
ORPHAN = {"tasks": {
    "producer": {"loop": 1, "run": 500, "sem_post": "s"},
    "consumer": {"loop": 3, "sem_wait": "s", "run": 200}},
    "global": {"duration": -1}}


def _file(tmp_path, name: str, doc: dict):
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return p


def test_abba_stops_at_the_deadlock_and_names_it(tmp_path):
    path = _file(tmp_path, "abba.json", ABBA)
    sim = Simulation(platform="gs101", workload=str(path), scheduler="eas", governor="schedutil")
    d = sim.run().doc
    assert sim.deadlocked and d["stop_reason"] == "deadlock"
    assert 0.001 <= d["sim_duration_s"] < 0.002
    dl = d["deadlock"]
    assert dl["found"] == "mutex cycle" and dl["cycle"] is True
    assert dl["time_s"] == d["sim_duration_s"]
    assert dl["tasks"] == ["A-0", "B-1"]
    assert sorted(dl["resources"]) == ["mutex m1", "mutex m2"]
    assert dl["waits"] == [
        {"task": "A-0", "waits_for": "mutex m2", "by": ["B-1"], "holds": ["mutex m1"],
         "at": f"{path}: tasks.A.lock2"},
        {"task": "B-1", "waits_for": "mutex m1", "by": ["A-0"], "holds": ["mutex m2"],
         "at": f"{path}: tasks.B.lock2"},
    ]
    # further steps run nothing: the clock stays at the deadlock
    sim.run_until(sim.now_ns + 10**9)
    assert sim.result().doc["sim_duration_s"] == d["sim_duration_s"]


def test_the_eas_note_gives_the_cause_its_counters_show(tmp_path):
    d = Simulation(platform="gs101", workload=str(_file(tmp_path, "abba.json", ABBA)),
                   scheduler="eas", governor="schedutil").run().doc
    assert d["counters"]["overutilized_set"] == 0
    (line,) = [x for x in silent_mechanisms(d) if x.startswith("eas:")]
    assert "overutilized at" not in line
    assert "wakeups of fair tasks placed = 0" in line and "no fair task woke up" in line
    assert "deadlock of A-0, B-1" in line


def test_the_cli_prints_one_warning_line_and_writes_the_deadlock(tmp_path, tools):
    path = _file(tmp_path, "abba.json", ABBA)
    out = tmp_path / "out"
    proc = tools.run_cli(["run", "--workload", path, "--out", out])
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"hetsched: warning: {path}: deadlock at 0.00")
    assert "A-0 waits for mutex m2, held by B-1; B-1 waits for mutex m1, held by A-0" in lines[0]
    assert lines[0].endswith("the run stopped there (result.json: deadlock)")
    doc = json.loads((out / "result.json").read_text())
    assert doc["stop_reason"] == "deadlock" and doc["deadlock"]["tasks"] == ["A-0", "B-1"]
    assert "overutilized at" not in proc.stdout


def test_a_wait_for_an_ended_task_stops_a_run_until_exit_only(tmp_path):
    path = str(_file(tmp_path, "orphan.json", ORPHAN))
    sim = Simulation(platform="gs101", workload=path, scheduler="cfs", governor="schedutil")
    d = sim.run().doc
    assert d["stop_reason"] == "deadlock" and d["sim_duration_s"] < 0.01
    dl = d["deadlock"]
    assert dl["cycle"] is False and dl["found"] == "all blocked"
    assert dl["waits"][0]["task"] == "consumer-1" and dl["waits"][0]["by"] == []
    assert dl["resources"] == ["semaphore s"]
    line = warning(dl, sim.workload_spec)
    assert "every task blocked for good" in line
    assert "consumer-1 waits for semaphore s, which only tasks that have exited could release" in line
    # a run of a given duration goes on to its end, as rt-app would until its duration
    timed = Simulation(platform="gs101", workload=path, scheduler="cfs", governor="schedutil").run(0.5).doc
    assert timed["stop_reason"] == "duration" and timed["sim_duration_s"] == 0.5 and "deadlock" not in timed


def test_merged_workloads_keep_each_files_names(tmp_path):
    a = load_rtapp(str(_file(tmp_path, "orphan.json", ORPHAN)))
    b = load_rtapp(str(_file(tmp_path, "abba.json", ABBA)))
    merged = merge_workloads([a, b])
    assert merged["origin"]["names"]["mutexes"] == ["m1", "m2"]
    assert merged["origin"]["names"]["sems"] == ["s"]
    d = Simulation(platform="gs101", workload=merged, scheduler="cfs", governor="schedutil").run(1.0).doc
    # the orphaned consumer does not stop a run of a given duration; the mutex cycle does
    assert d["stop_reason"] == "deadlock" and d["deadlock"]["found"] == "mutex cycle"
    assert sorted(d["deadlock"]["resources"]) == ["mutex m1", "mutex m2"]
