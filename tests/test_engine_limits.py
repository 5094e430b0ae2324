"""Runaway workloads are refused with one line instead of taking the machine, and what the
engine refuses in a workload from an rt-app file is named in that file's terms.

* A fork cycle that spends no time, and a loop that spends no time, are refused when the
  rt-app file is read (hetsched/workloads/rtapp.py); the engine stops what gets past that
  (crates/hetsched-core/src/limits.rs: MAX_TASKS tasks, NO_PROGRESS_STEPS steps at one
  instant) and names the task, phase and event.
* The engine's field (``tasks[0].phases[1].events[1].timer.period_ns``) reaches the user
  as the rt-app file's (``video.json: tasks.video.phases.p1.timer.period``).

The runaway cases run the CLI in a subprocess with its address space capped, so that a
regression shows as a failed test, not as a machine out of memory.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import hetsched
from hetsched import Simulation, _engine
from hetsched.errors import InputError
from hetsched.platforms import load_platform
from hetsched.workloads import load_rtapp
from hetsched.workloads.rtapp import locate_engine_error

PLATFORM = load_platform("gs101").to_spec()
# far above what a refused run needs (about 100 MB), far below what a runaway takes
ADDRESS_SPACE = 1 << 30


def _write(tmp_path, name: str, doc: dict):
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return p


def _capped_cli(args) -> subprocess.CompletedProcess:
    """The CLI with its address space capped at ADDRESS_SPACE (the timeout only keeps a
    hang from blocking the suite), importing the package these tests import."""
    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(hetsched.__file__).resolve().parents[1])] + os.environ.get("PYTHONPATH", "").split(os.pathsep)))
    return subprocess.run([sys.executable, "-m", "hetsched.cli", *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=300, preexec_fn=cap)


FORK_CYCLE = {"tasks": {"a": {"fork": "b", "run": 0},
                        "b": {"instance": 0, "fork": "a", "run": 0}},
              "global": {"duration": 1}}
# each copy runs once: tasks exit as fast as they are made, the chain has no end
FORK_CHAIN = {"tasks": {"a": {"loop": 1, "fork": "b"},
                        "b": {"instance": 0, "loop": 1, "fork": "a"}},
              "global": {"duration": 1}}
ZERO_TIME_LOOP = {"tasks": {"t": {"loop": 1000000000, "run": 0}}, "global": {"duration": 1}}


@pytest.fixture(scope="module")
def runaway_runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("runaway")
    files = {"cycle": _write(tmp, "cycle.json", FORK_CYCLE), "chain": _write(tmp, "chain.json", FORK_CHAIN),
             "spin": _write(tmp, "spin.json", ZERO_TIME_LOOP)}
    with ThreadPoolExecutor(max_workers=3) as ex:
        futs = {k: ex.submit(_capped_cli, ["run", "--workload", f, "--out", tmp / f"out-{k}"])
                for k, f in files.items()}
        return tmp, files, {k: f.result() for k, f in futs.items()}


@pytest.mark.parametrize("case", ["cycle", "chain"])
def test_a_fork_cycle_that_spends_no_time_is_refused_naming_the_file_and_both_tasks(runaway_runs, tools, case):
    tmp, files, procs = runaway_runs
    line = tools.assert_one_line_error(procs[case], f"{files[case]}: tasks.a.fork: expected a fork cycle that "
                                                    "spends time", "got 'a -> b -> a'")
    assert "1024 forks" in line  # what rt-app itself does with it
    tools.assert_no_outputs(tmp / f"out-{case}")


def test_a_loop_that_spends_no_time_is_refused(runaway_runs, tools):
    tmp, files, procs = runaway_runs
    tools.assert_one_line_error(procs["spin"], f"{files['spin']}: tasks.t.loop: expected a loop that spends time",
                                f"more than {_engine.NO_PROGRESS_STEPS} engine steps", "got 'run 0'")
    tools.assert_no_outputs(tmp / "out-spin")


@pytest.mark.parametrize("doc, field, got", [
    # a phase that loops forever on events that take no time
    ({"tasks": {"t": {"phases": {"p0": {"run": 1000}, "spin": {"loop": -1, "signal": "c", "run": 0}}}}},
     "tasks.t.phases.spin.loop", "signal c, run 0"),
    # a task without "loop" loops forever
    ({"tasks": {"t": {"sem_post": "s", "sleep": 0}}}, "tasks.t.loop", "sem_post s, sleep 0"),
    # a copy of itself, before any time passes
    ({"tasks": {"t": {"loop": 1, "fork": "t", "run": 10}}}, "tasks.t.fork", "t -> t"),
])
def test_what_provably_stops_time_is_refused_when_the_file_is_read(doc, field, got):
    with pytest.raises(InputError) as e:
        load_rtapp(json.dumps(doc), source="x.json")
    assert (e.value.source, e.value.field, e.value.got) == ("x.json", field, got)


@pytest.mark.parametrize("doc", [
    # time passes in the cycle: its copies are bounded by the duration
    {"tasks": {"a": {"loop": 1, "run": 1000, "fork": "b"}, "b": {"instance": 0, "loop": 1, "run": 1000, "fork": "a"}}},
    # the loop may wait for another task, or hand it the CPU: not provably stuck
    {"tasks": {"t": {"sem_wait": "s"}, "u": {"run": 1000, "sem_post": "s"}}},
    {"tasks": {"t": {"yield": 0}, "u": {"run": 1000}}},
    # a zero-time loop the engine takes in its stride
    {"tasks": {"t": {"loop": 1000, "run": 0}}},
])
def test_loops_and_forks_that_may_spend_time_are_accepted(doc):
    load_rtapp(json.dumps({**doc, "global": {"duration": 1}}))


def test_a_legal_fork_cycle_that_spends_time_still_runs(tmp_path, tools):
    f = _write(tmp_path, "relay.json", {"tasks": {
        "a": {"loop": 1, "run": 1000, "fork": "b"},
        "b": {"instance": 0, "loop": 1, "run": 1000, "fork": "a"}}, "global": {"duration": 1}})
    proc = tools.run_cli(["run", "--workload", f, "--duration", "0.02", "--out", tmp_path / "out"])
    assert proc.returncode == 0, proc.stderr
    names = [t["name"] for t in json.loads((tmp_path / "out" / "result.json").read_text())["tasks"]]
    # a-0 hands over to a copy of b (template b-1), which hands over to a copy of a
    # (template a-2), ... one per ms of the 20
    assert names[:3] == ["a-0", "b-1", "a-2"]
    assert 10 <= sum(n.startswith(("b-1-", "a-2-")) for n in names) <= 20, names


def test_more_threads_than_a_run_may_hold_are_refused_before_they_are_built():
    doc = {"tasks": {"t": {"instance": _engine.MAX_TASKS + 1, "run": 1000, "sleep": 1000}}}
    with pytest.raises(InputError) as e:
        load_rtapp(json.dumps(doc), source="x.json")
    assert (e.value.field, e.value.got) == ("tasks.t.instance", _engine.MAX_TASKS + 1)
    assert "pid_max" in e.value.expected


# ------------------------------------------------------------------ the engine's limits

def test_a_fork_bomb_past_the_file_checks_stops_at_the_task_limit_naming_the_forking_task():
    # "a" forks copies of "b", which sleeps; yield (which could let another task run)
    # keeps the loop out of the file checks: alone on its CPU, "a" forks at one instant
    # until the engine's task limit
    doc = {"tasks": {"a": {"fork": "b", "yield": 0}, "b": {"instance": 0, "loop": 1, "sleep": 1000000}},
           "global": {"duration": 1}}
    spec = load_rtapp(json.dumps(doc), source="bomb.json")
    engine = _engine.Engine(json.dumps(PLATFORM), json.dumps(spec), json.dumps({"governor": "schedutil"}))
    with pytest.raises(InputError) as e:
        engine.run_until(10**8)
    err = e.value
    assert (err.source, err.field) == ("workload", "tasks[0].phases[0].events[0]")
    assert err.expected.startswith(f"at most {_engine.MAX_TASKS} tasks in a run (the kernel's default pid_max")
    assert err.got == "a-0 forking a copy of b-1"
    # in the file's terms: the task that forked, and its fork event
    located = locate_engine_error(err, spec)
    assert (located.source, located.field, located.got) == ("bomb.json", "tasks.a.fork", err.got)
    # the run cannot go on, and says why again
    with pytest.raises(InputError) as again:
        engine.result_json()
    assert str(again.value) == str(err)


def test_tasks_that_wake_each_other_without_end_stop_at_the_step_limit():
    doc = {"tasks": {"ping": {"cpus": [0], "sem_post": "s1", "sem_wait": "s2"},
                     "pong": {"cpus": [0], "sem_wait": "s1", "sem_post": "s2"}},
           "global": {"duration": 1}}
    spec = load_rtapp(json.dumps(doc), source="pingpong.json")
    policy = {"governor": "schedutil", "knobs": {"cost.context_switch_ns": 0}}
    engine = _engine.Engine(json.dumps(PLATFORM), json.dumps(spec), json.dumps(policy))
    with pytest.raises(InputError) as e:
        engine.run_until(10**8)
    err = e.value
    assert err.field in ("tasks[0].phases[0]", "tasks[1].phases[0]")
    assert f"at most {_engine.NO_PROGRESS_STEPS} events and program events at one instant" in err.expected
    located = locate_engine_error(err, spec)
    assert located.source == "pingpong.json" and located.field in ("tasks.ping", "tasks.pong")
    assert engine.now_ns < 10**6  # stopped where time stopped


# ------------------------------------------------------------------ the user's file and field

VIDEO = {"tasks": {"video": {"phases": {
    "p0": {"run": 1000, "timer": {"ref": "t", "period": 16000}},
    "p1": {"run": 1000, "timer": {"ref": "t", "period": 0}}}}}, "global": {"duration": 1}}


def test_an_engine_error_is_named_in_the_users_file_and_field(tmp_path, tools):
    f = _write(tmp_path, "video.json", VIDEO)
    with pytest.raises(InputError) as e:
        Simulation(platform="gs101", workload=str(f))
    assert (e.value.source, e.value.field) == (str(f), "tasks.video.phases.p1.timer.period")
    assert e.value.expected == "a positive period"
    proc = tools.run_cli(["run", "--workload", f, "--out", tmp_path / "out"])
    tools.assert_one_line_error(proc, f"{f}: tasks.video.phases.p1.timer.period: expected a positive period")
    tools.assert_no_outputs(tmp_path / "out")


@pytest.mark.parametrize("doc, engine_field, user_field", [
    # a task's attribute, under the user's key
    ({"tasks": {"t": {"cpus": [99], "run": 1000, "sleep": 1000}}}, "tasks[0].cpus", "tasks.t.cpus"),
    # an event of a template (a forked task): the template's own spec
    ({"tasks": {"t": {"loop": 1, "run": 1000, "fork": "w"},
                "w": {"instance": 0, "loop": 1, "run": 1000, "timer": {"ref": "x", "period": 0}}}},
     "tasks[1].phases[0].events[1].timer.period_ns", "tasks.w.timer.period"),
])
def test_engine_fields_map_to_the_rtapp_files(doc, engine_field, user_field):
    spec = load_rtapp(json.dumps({**doc, "global": {"duration": 1}}), source="x.json")
    with pytest.raises(InputError) as e:
        _engine.Engine(json.dumps(PLATFORM),
                       json.dumps(spec), json.dumps({"governor": "schedutil"}))
    assert e.value.field == engine_field
    located = locate_engine_error(e.value, spec)
    assert (located.source, located.field, located.expected) == ("x.json", user_field, e.value.expected)


@pytest.mark.parametrize("engine_field, user_field", [
    ("tasks[0]", "tasks.t"),
    ("tasks[0].nice", "tasks.t.priority"),
    ("tasks[0].delay_ns", "tasks.t.delay"),
    ("tasks[0].phases[1]", "tasks.t.phases.b"),
    ("tasks[0].phases[1].loop", "tasks.t.phases.b.loop"),
    # the setattr of the phase's properties comes first: the phase itself
    ("tasks[0].phases[1].events[0]", "tasks.t.phases.b"),
    ("tasks[0].phases[1].events[0].setattr.nice", "tasks.t.phases.b"),
    ("tasks[0].phases[1].events[1]", "tasks.t.phases.b.run"),
    ("tasks[0].phases[1].events[2].run", "tasks.t.phases.b.run#2"),
    ("tasks[0].phases[1].events[3].wait.mutex", "tasks.t.phases.b.wait.mutex"),
    ("tasks[0].phases[1].events[3].wait.cond", "tasks.t.phases.b.wait.ref"),
    # suspend is three engine events, all of it
    ("tasks[0].phases[1].events[6]", "tasks.t.phases.b.suspend"),
    ("tasks[0].phases[1].events[7].timer.period_ns", "tasks.t.phases.b.timer.period"),
])
def test_every_engine_field_of_a_task_has_a_place_in_the_file(engine_field, user_field):
    doc = {"tasks": {"t": {"phases": {
        "a": {"run": 1000},
        "b": {"priority": 5, "run": 1000, "run#2": 2000, "wait": {"ref": "c", "mutex": "m"},
              "suspend": 0, "timer": {"ref": "x", "period": 1000}},
    }}, "u": {"lock": "m", "resume": "t", "signal": "c", "unlock": "m", "sleep": 1000}}, "global": {"duration": 1}}
    text = json.dumps(doc).replace('"run#2"', '"run"')  # a repeated key: a sequence
    spec = load_rtapp(text, source="x.json")
    located = locate_engine_error(InputError("workload", engine_field, "something", got=3), spec)
    assert (located.source, located.field, located.expected, located.got) == ("x.json", user_field, "something", 3)


def test_an_error_about_another_document_is_left_as_it_is():
    spec = load_rtapp(json.dumps(VIDEO), source="x.json")
    err = InputError("policy", "knobs.x", "a number")
    assert locate_engine_error(err, spec) is err
    err = InputError("workload", "tasks[0].cpus", "a CPU")
    assert locate_engine_error(err, {"tasks": []}) is err  # a spec not from a file


def test_a_document_of_the_wrong_shape_names_the_field_and_shortens_the_value():
    platform = PLATFORM
    clusters = json.loads(json.dumps(platform["clusters"]))
    clusters[1]["opps"][2]["khz"] = 1e33
    with pytest.raises(InputError) as e:
        _engine.Engine(json.dumps({**platform, "clusters": clusters}), json.dumps({"tasks": []}), "{}")
    assert (e.value.source, e.value.field, e.value.got) == ("platform", "clusters[1].opps[2].khz", 1e33)
    assert str(e.value) == ("platform: clusters[1].opps[2].khz: expected a non-negative integer (u64), "
                            "got 1e+33")
    huge = "x" * 100_000
    with pytest.raises(InputError) as e:
        _engine.Engine(json.dumps({**platform, "name": [huge]}), json.dumps({"tasks": []}), "{}")
    assert e.value.field == "name" and len(str(e.value)) < 200, str(e.value)[:300]
    with pytest.raises(InputError) as e:
        _engine.Engine(json.dumps(platform), json.dumps({"tasks": [{"name": "t", "policy": huge, "phases": []}]}),
                       "{}")
    assert e.value.field == "tasks[0].policy" and len(str(e.value)) < 300, str(e.value)[:400]


def test_deep_nesting_in_a_spec_never_reaches_the_engine_deeper_than_serdes_limit():
    platform = json.dumps(PLATFORM)
    workload = json.dumps(load_rtapp(json.dumps(VIDEO).replace("0}}}}}", "1}}}}}")))
    deep = "[" * 100_000 + "]" * 100_000
    # `yield` takes any JSON value: serde_json's parser stops at 128 levels (its
    # recursion limit) instead of overflowing the stack
    text = '{"tasks": [{"name": "a", "phases": [{"events": [{"yield": %s}]}]}]}' % deep
    with pytest.raises(InputError) as e:
        _engine.Engine(platform, text, "{}")
    assert (e.value.source, e.value.field) == ("workload", "json")
    assert "recursion limit exceeded" in str(e.value) and len(str(e.value)) < 200
    # a typed field stops at the first level of the wrong type; a key the engine does
    # not read is skipped without recursion
    for doc, text, key in (("platform", platform, "name"), ("workload", workload, "name"),
                           ("policy", '{"governor": "schedutil"}', "scheduler")):
        typed = text[:-1] + ', "%s": %s}' % (key, deep)
        with pytest.raises(InputError) as e:
            _engine.Engine(*[typed if d == doc else t for d, t in
                             (("platform", platform), ("workload", workload), ("policy", "{}"))])
        assert (e.value.source, e.value.field) == (doc, key), str(e.value)
        skipped = text[:-1] + ', "not_read": %s}' % deep
        _engine.Engine(*[skipped if d == doc else t for d, t in
                         (("platform", platform), ("workload", workload), ("policy", "{}"))])


def test_a_long_task_name_is_shortened_in_the_field():
    key = "k" * 100_000
    with pytest.raises(InputError) as e:
        load_rtapp(json.dumps({"tasks": {key: {"sem_post": "s", "run": 0}}}), source="x.json")
    assert len(str(e.value)) < 400
    assert str(e.value).startswith("x.json: tasks.kkk")
