"""The rt-app loader (periodic subset): real files, grammar corners, bad values.

Expected numbers come from the JSON files and the rt-app grammar
(shared/reference/workloads.md §1, rt-app @55cb0c04), worked out by hand in the
comments: µs in the file × 1000 = ns in the spec, s × 10^9 = ns.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hetsched.errors import InputError
from hetsched.workloads import load_rtapp, merge_workloads, periodic, workload

REALDATA = Path(__file__).resolve().parents[1] / "data" / "rtapp"  # copies of shared/realdata/rtapp
MS = 1_000_000  # ns


def load(text: str, **kw) -> dict:
    return load_rtapp(text, source="test.json", **kw)


def error(text: str) -> InputError:
    with pytest.raises(InputError) as exc:
        load(text)
    return exc.value


def one_task(body: str, glob: str = "") -> dict:
    """Load a file holding a single task ``t`` and return that task."""
    g = f', "global": {{{glob}}}' if glob else ""
    spec = load(f'{{"tasks": {{"t": {{{body}}}}}{g}}}')
    assert len(spec["tasks"]) == 1
    return spec["tasks"][0]


# ------------------------------------------------------------------ the real files

LOADS = ["rtapp_example1.json", "rtapp_example2.json", "rtapp_example3.json",
         "rtapp_spreading-tasks.json"]

# file -> (field path, what the message must say)
REJECTS = {
    "rtapp_example4.json": ("tasks.thread0.resume", "'resume' comes with the full rt-app grammar"),
    "rtapp_example5.json": ("tasks.thread0.phases.p1.lock",
                            "'lock' comes with the full rt-app grammar"),
    "rtapp_example6.json": ("tasks.thread0.mem", "'mem' comes with the full rt-app grammar"),
    "rtapp_example7.json": ("tasks.task0.barrier1",
                            "'barrier' comes with the full rt-app grammar"),
    "rtapp_example8.json": ("tasks.thread0.phases.phase1.cpus",
                            "phase-level 'cpus' comes with the full rt-app grammar (issue 4)"),
    "rtapp_example9.json": ("tasks.thread3.phases.phase1.fork",
                            "'fork' comes with the full rt-app grammar"),
    "rtapp_mp3-short.json": ("tasks.AudioTick.phases.p1.resume",
                             "'resume' comes with the full rt-app grammar"),
    "rtapp_browser-short.json": ("tasks.BrowserMain.phases.start.resume",
                                 "'resume' comes with the full rt-app grammar"),
    "rtapp_custom-slice.json": ("tasks.thread0.dl-runtime",
                                "'dl-runtime' is not supported yet"),
    "wa_camera-short.json": ("tasks.surfaceflinger.suspend",
                             "'suspend' comes with the full rt-app grammar"),
    # the bare `"suspend",` of line 6 is not JSON (json-c 0.16 rejects it too)
    "rtapp_video-short.json": ("json", "Expecting ':' delimiter"),
}


def test_every_real_file_has_an_expectation():
    files = {p.name for p in REALDATA.glob("*.json")}
    assert files == set(LOADS) | set(REJECTS)


@pytest.mark.parametrize("name", LOADS)
def test_real_file_loads(name):
    spec = load_rtapp(REALDATA / name)
    assert spec["name"] == Path(name).stem
    assert spec["tasks"]
    json.dumps(spec)  # plain JSON-able data for the engine


@pytest.mark.parametrize("name", sorted(REJECTS))
def test_real_file_rejected(name):
    path = REALDATA / name
    field, says = REJECTS[name]
    with pytest.raises(InputError) as exc:
        load_rtapp(path)
    err = exc.value
    assert err.source == str(path)
    assert err.field == field
    assert str(err).startswith(f"{path}: {field}: expected ")
    assert says in str(err)


def test_video_error_points_at_the_bare_suspend():
    path = REALDATA / "rtapp_video-short.json"
    lines = path.read_text().splitlines()
    line = next(i for i, l in enumerate(lines, 1) if l.strip() == '"suspend",')
    col = lines[line - 1].index(",") + 1
    with pytest.raises(InputError) as exc:
        load_rtapp(path)
    assert f"line {line}, column {col}:" in str(exc.value)


def test_example1():
    # "loop": -1, "run": 20000, "sleep": 80000 directly in the task; duration 2
    spec = load_rtapp(REALDATA / "rtapp_example1.json")
    assert spec["duration_ns"] == 2 * 10**9
    assert spec["timers"] == 0
    (t,) = spec["tasks"]
    assert t == {
        "name": "thread0-0", "policy": "other", "nice": 0, "rt_priority": 0,
        "cpus": None, "util_min": None, "util_max": None, "delay_ns": 0,
        # no "phases": the loop key is the phase count, the task runs once
        "loop": 1,
        "phases": [{"loop": -1, "events": [{"run": 20 * MS}, {"sleep": 80 * MS}]}],
    }


def test_example2():
    # run 10000 + timer {unique, 100000}: one timer
    spec = load_rtapp(REALDATA / "rtapp_example2.json")
    assert spec["timers"] == 1
    (t,) = spec["tasks"]
    assert t["loop"] == 1
    assert t["phases"] == [{"loop": -1, "events": [
        {"run": 10 * MS},
        {"timer": {"id": 0, "period_ns": 100 * MS, "mode": "relative"}}]}]


def test_example3():
    # instance 12, task loop 1, phases light (10 × run 3000 / timer 30000) and
    # heavy (10 × run 27000 / timer 30000); the same "unique" ref in both phases of a
    # thread is one timer, so 12 threads -> 12 timers; no global -> no duration
    spec = load_rtapp(REALDATA / "rtapp_example3.json")
    assert spec["duration_ns"] is None
    assert spec["timers"] == 12
    assert [t["name"] for t in spec["tasks"]] == [f"thread0-{i}" for i in range(12)]
    ids = []
    for t in spec["tasks"]:
        assert t["loop"] == 1
        light, heavy = t["phases"]
        assert light["loop"] == heavy["loop"] == 10
        assert light["events"][0] == {"run": 3 * MS}
        assert heavy["events"][0] == {"run": 27 * MS}
        tl, th = light["events"][1]["timer"], heavy["events"][1]["timer"]
        assert tl["period_ns"] == th["period_ns"] == 30 * MS
        assert tl["id"] == th["id"]
        ids.append(tl["id"])
    assert ids == list(range(12))


def test_spreading_tasks():
    # thread2 repeats the phase name "heavy1": workgen semantics keep both copies,
    # so it has 4 phases (900 light, 600 heavy, 300 light, 600 heavy)
    spec = load_rtapp(REALDATA / "rtapp_spreading-tasks.json")
    assert spec["duration_ns"] == 60 * 10**9
    assert spec["timers"] == 2
    t1, t2 = spec["tasks"]
    assert (t1["name"], t2["name"]) == ("thread1-0", "thread2-1")
    assert t1["loop"] == t2["loop"] == -1
    assert [p["loop"] for p in t1["phases"]] == [300, 300]
    assert [p["events"][0]["run"] for p in t1["phases"]] == [1 * MS, 7 * MS]
    assert [p["loop"] for p in t2["phases"]] == [900, 600, 300, 600]
    assert [p["events"][0]["run"] for p in t2["phases"]] == [1 * MS, 7 * MS, 1 * MS, 7 * MS]
    assert {p["events"][1]["timer"]["id"] for p in t1["phases"]} == {0}
    assert {p["events"][1]["timer"]["id"] for p in t2["phases"]} == {1}
    assert all(p["events"][1]["timer"]["period_ns"] == 10 * MS
               for t in (t1, t2) for p in t["phases"])


# ---------------------------------------------------------------------------- syntax

def test_comments_and_trailing_commas():
    spec = load("""
    // a line comment
    {
        /* a block
           comment */
        "tasks": {
            "a/*b*/c": {          // comment markers inside a string are text
                "cpus": [0, 1, ], /* trailing comma in an array */
                "run": 1000,
                "sleep": 2000,    // trailing comma in an object
            },
        },
        "global": {"duration": 3, "logdir": "//not/a/comment",},
    }
    """)
    (t,) = spec["tasks"]
    assert t["name"] == "a/*b*/c-0"
    assert t["cpus"] == [0, 1]
    assert t["phases"][0]["events"] == [{"run": 1 * MS}, {"sleep": 2 * MS}]
    assert spec["duration_ns"] == 3 * 10**9


def test_json_error_position_counts_comment_lines():
    text = '{\n/* one\n   two */\n"tasks": {"t": {"run": 1000 "sleep": 5}}}'
    err = error(text)
    # the missing comma: line 4, right after `1000 ` -> column of `"sleep"`
    col = text.splitlines()[3].index('"sleep"') + 1
    assert err.field == "json"
    assert f"line 4, column {col}: Expecting ',' delimiter" in str(err)


@pytest.mark.parametrize("text, msg", [
    ('{"tasks": {} /* never closed', "unterminated /* comment"),
    ('{"tasks": {,}}', "line 1, column 12"),
    ('{"tasks": {"t": {"run": 1}}} {}', "extra data"),
    ('{"tasks": {"t": {"run": NaN}}}', "NaN is not JSON"),
])
def test_malformed_json(text, msg):
    err = error(text)
    assert err.source == "test.json" and err.field == "json"
    assert msg in str(err)


def test_repeated_event_keys_are_a_sequence():
    t = one_task('"loop": 2, "run": 100, "sleep": 200, "run": 300, "sleep": 400')
    assert t["phases"][0]["events"] == [
        {"run": 100_000}, {"sleep": 200_000}, {"run": 300_000}, {"sleep": 400_000}]


def test_repeated_non_event_keys_are_refused():
    err = error('{"tasks": {"t": {"loop": 2, "run": 1, "loop": 3}}}')
    assert err.field == "tasks.t.loop#2"
    err = error('{"tasks": {"t": {"run": 1}, "t": {"run": 2}}}')
    assert err.field == "tasks.t#2"
    err = error('{"tasks": {"t": {"run": 1}}, "global": {"duration": 1, "duration": 2}}')
    assert err.field == "global.duration#2"
    err = error('{"tasks": {"t": {"run": 1, "timer": {"ref": "a", "ref": "b", "period": 1}}}}')
    assert err.field == "tasks.t.timer.ref#2"


def test_error_path_of_a_repeated_event():
    err = error('{"tasks": {"t": {"run": 1, "run": -5}}}')
    assert err.field == "tasks.t.run#2"


# -------------------------------------------------------------------- prefix matching

def test_event_keys_match_by_prefix():
    t = one_task('"run2": 1, "runtime": 2, "runtime7": 3, "run_fast": 4, "sleepy": 5, '
                 '"timer0": {"ref": "x", "period": 6}')
    assert t["phases"][0]["events"] == [
        {"run": 1000}, {"runtime": 2000}, {"runtime": 3000}, {"run": 4000},
        {"sleep": 5000}, {"timer": {"id": 0, "period_ns": 6000, "mode": "relative"}}]


@pytest.mark.parametrize("key, kind", [
    ("lock", "lock"), ("unlock2", "unlock"), ("lockstep", "lock"), ("waiting", "wait"),
    ("signal1", "signal"), ("broadcast", "broad"), ("sync", "sync"),
    ("suspend", "suspend"), ("resume3", "resume"), ("memrun", "memrun"),
    ("memory", "mem"), ("iorun", "iorun"), ("yield", "yield"), ("barrier", "barrier"),
    ("fork", "fork"), ("sem_post", "sem_post"), ("sem_wait", "sem_wait"),
])
def test_other_events_are_refused_by_name(key, kind):
    err = error(f'{{"tasks": {{"t": {{"run": 1, "{key}": "x"}}}}}}')
    assert err.field == f"tasks.t.{key}"
    assert ("expected an event of the periodic subset (run, runtime, sleep, timer); "
            f"'{kind}' comes with the full rt-app grammar") in str(err)


# ---------------------------------------------------------------------------- timers

def test_shared_and_unique_timers():
    spec = load("""{"tasks": {
        "a": {"instance": 2, "phases": {
            "p1": {"run": 1, "timer": {"ref": "unique", "period": 10}},
            "p2": {"run": 1, "timer": {"ref": "unique", "period": 20},
                   "timer2": {"ref": "tick", "period": 30}},
            "p3": {"run": 1, "timer": {"ref": "uniqueB", "period": 40}}}},
        "b": {"run": 1, "timer": {"ref": "tick", "period": 50},
              "timer1": {"ref": "tock", "period": 60}}
    }}""")
    ids = [[ev["timer"]["id"] for p in t["phases"] for ev in p["events"] if "timer" in ev]
           for t in spec["tasks"]]
    # first appearance: a-0 unique=0, tick=1, a-0 uniqueB=2; a-1 unique=3 (tick is
    # shared: 1), a-1 uniqueB=4; b-2 tick=1, tock=5
    assert ids == [[0, 0, 1, 2], [3, 3, 1, 4], [1, 5]]
    assert spec["timers"] == 6
    periods = [ev["timer"]["period_ns"] for p in spec["tasks"][0]["phases"]
               for ev in p["events"] if "timer" in ev]
    assert periods == [10_000, 20_000, 30_000, 40_000]


def test_absolute_mode_belongs_to_the_timer():
    # rt-app marks the timer resource absolute when any of its events says so
    spec = load("""{"tasks": {
        "a": {"run": 1, "timer": {"ref": "tick", "period": 10}},
        "b": {"run": 1, "timer": {"ref": "tick", "period": 10, "mode": "absolute"}},
        "c": {"run": 1, "timer": {"ref": "other", "period": 10, "mode": "relative"}}
    }}""")
    modes = [t["phases"][0]["events"][1]["timer"]["mode"] for t in spec["tasks"]]
    assert modes == ["absolute", "absolute", "relative"]


@pytest.mark.parametrize("timer, field, says", [
    ('{"period": 10}', "tasks.t.timer.ref", "a timer 'ref'"),
    ('{"ref": "u"}', "tasks.t.timer.period", "a timer 'period'"),
    ('{"ref": "u", "period": 10, "mode": "abs"}', "tasks.t.timer.mode", "\"absolute\""),
    ('{"ref": "u", "period": -1}', "tasks.t.timer.period", "an integer >= 0"),
    ('{"ref": "u", "period": 10, "perod": 1}', "tasks.t.timer.perod", "did you mean 'period'"),
    ('10000', "tasks.t.timer", "a timer object"),
])
def test_bad_timers(timer, field, says):
    err = error(f'{{"tasks": {{"t": {{"run": 1, "timer": {timer}}}}}}}')
    assert err.field == field
    assert says in str(err)


# ----------------------------------------------------------------------- loop table

@pytest.mark.parametrize("body, task_loop, phase_loops", [
    # without "phases": no loop key -> the task loops forever over one phase
    ('"run": 1', -1, [1]),
    # ... a loop key is the phase count and the task runs once
    ('"loop": 5, "run": 1', 1, [5]),
    ('"loop": -1, "run": 1', 1, [-1]),
    # with "phases": task loop defaults to -1, phase loop to 1
    ('"phases": {"a": {"run": 1}, "b": {"loop": 4, "run": 1}}', -1, [1, 4]),
    ('"loop": 3, "phases": {"a": {"run": 1}}', 3, [1]),
    ('"phases": {"a": {"loop": -1, "run": 1}}', -1, [-1]),
])
def test_loop_semantics(body, task_loop, phase_loops):
    t = one_task(body)
    assert t["loop"] == task_loop
    assert [p["loop"] for p in t["phases"]] == phase_loops


@pytest.mark.parametrize("body, field", [
    ('"loop": 0, "run": 1', "tasks.t.loop"),
    ('"loop": -2, "run": 1', "tasks.t.loop"),
    ('"phases": {"a": {"loop": 0, "run": 1}}', "tasks.t.phases.a.loop"),
    ('"loop": 1.5, "run": 1', "tasks.t.loop"),
])
def test_bad_loops(body, field):
    err = error(f'{{"tasks": {{"t": {{{body}}}}}}}')
    assert err.field == field
    assert "a positive integer, or -1 for forever" in str(err)


# ------------------------------------------------------------- instances and names

def test_instances_and_thread_names():
    # rt-app numbers threads across the whole file (rt-app.c main(): ind++), and a
    # task with instance 0 creates no thread (it exists only for "fork")
    spec = load("""{"tasks": {
        "a": {"instance": 2, "run": 1},
        "ghost": {"instance": 0, "run": 1},
        "b": {"run": 1}
    }}""")
    assert [t["name"] for t in spec["tasks"]] == ["a-0", "a-1", "b-2"]


def test_only_instance_zero_is_refused():
    err = error('{"tasks": {"ghost": {"instance": 0, "run": 1}}}')
    assert err.field == "tasks"


def test_delay_and_properties():
    t = one_task('"delay": 1500, "cpus": [3, 1, 3], "util_min": 128, "util_max": -1, '
                 '"priority": -5, "run": 1')
    assert t["delay_ns"] == 1_500_000
    assert t["cpus"] == [1, 3]
    assert (t["util_min"], t["util_max"]) == (128, None)
    assert (t["policy"], t["nice"], t["rt_priority"]) == ("other", -5, 0)


@pytest.mark.parametrize("body, glob, policy, nice, rt", [
    ('"run": 1', "", "other", 0, 0),
    ('"policy": "SCHED_FIFO", "run": 1', "", "fifo", 0, 10),    # rt-app default RT prio
    ('"policy": "RR", "priority": 50, "run": 1', "", "rr", 0, 50),
    ('"policy": "OTHER", "priority": 19, "run": 1', "", "other", 19, 0),
    ('"run": 1', '"default_policy": "SCHED_FIFO"', "fifo", 0, 10),
    ('"policy": "SCHED_OTHER", "run": 1', '"default_policy": "SCHED_RR"', "other", 0, 0),
])
def test_policy_and_priority(body, glob, policy, nice, rt):
    t = one_task(body, glob)
    assert (t["policy"], t["nice"], t["rt_priority"]) == (policy, nice, rt)


@pytest.mark.parametrize("policy", ["SCHED_BATCH", "SCHED_IDLE", "SCHED_DEADLINE", "IDLE"])
def test_unsupported_policies(policy):
    err = error(f'{{"tasks": {{"t": {{"policy": "{policy}", "run": 1}}}}}}')
    assert err.field == "tasks.t.policy"
    assert f"{policy} is not supported yet" in str(err)
    err = error(f'{{"tasks": {{"t": {{"run": 1}}}}, "global": {{"default_policy": "{policy}"}}}}')
    assert err.field == "global.default_policy"


@pytest.mark.parametrize("body, field, says", [
    ('"util_max": 2000, "run": 1', "tasks.t.util_max", "from 0 to 1024"),
    ('"util_min": -2, "run": 1', "tasks.t.util_min", "from 0 to 1024"),
    ('"util_min": 600, "util_max": 500, "run": 1', "tasks.t.util_min", "util_min <= util_max"),
    ('"run": -1', "tasks.t.run", "an integer >= 0 (µs)"),
    ('"sleep": "1000"', "tasks.t.sleep", "got '1000'"),
    ('"runtime": 1.5', "tasks.t.runtime", "got 1.5"),
    ('"run": true', "tasks.t.run", "got True"),
    ('"run": 1, "delay": -1', "tasks.t.delay", ">= 0"),
    ('"run": 1, "instance": "2"', "tasks.t.instance", "an integer >= 0"),
    ('"run": 1, "cpus": []', "tasks.t.cpus", "a non-empty array"),
    ('"run": 1, "cpus": [0, "1"]', "tasks.t.cpus[1]", "a CPU number"),
    ('"run": 1, "cpus": 2', "tasks.t.cpus", "a non-empty array"),
    ('"run": 1, "priority": 20', "tasks.t.priority", "a nice value from -20 to 19"),
    ('"run": 1, "policy": "SCHED_FIFO", "priority": 0', "tasks.t.priority",
     "an RT priority from 1 to 99"),
    ('"run": 1, "policy": "SCHED_FOO"', "tasks.t.policy", "did you mean 'SCHED_FIFO'"),
    ('"run": 1, "cpu": [0]', "tasks.t.cpu", "did you mean 'cpus'"),
    ('"run": 1, "dl-period": 10', "tasks.t.dl-period", "not supported yet"),
    ('"run": 1, "taskgroup": "/a"', "tasks.t.taskgroup", "not supported yet"),
    ('"run": 1, "phases": {"p": {"run": 1}}', "tasks.t.run", "no events beside 'phases'"),
    ('"phases": {"p": {"loop": 2}}', "tasks.t.phases.p", "at least one event"),
    ('"phases": {}', "tasks.t.phases", "at least one phase"),
    ('"loop": 3', "tasks.t", "events (run, runtime, sleep, timer)"),
    ('"phases": {"p": {"run": 1, "util_max": 10}}', "tasks.t.phases.p.util_max",
     "phase-level 'util_max' comes with the full rt-app grammar (issue 4)"),
    ('"phases": {"p": {"run": 1, "policy": "SCHED_FIFO"}}', "tasks.t.phases.p.policy",
     "phase-level 'policy'"),
    ('"phases": {"p": {"run": 1, "lop": 2}}', "tasks.t.phases.p.lop", "did you mean 'loop'"),
])
def test_bad_values_name_their_field(body, field, says):
    err = error(f'{{"tasks": {{"t": {{{body}}}}}}}')
    assert err.source == "test.json"
    assert err.field == field
    assert str(err).startswith(f"test.json: {field}: expected ")
    assert says in str(err)


# ---------------------------------------------------------------------------- global

@pytest.mark.parametrize("glob, duration", [
    ('"duration": -1', None),
    ('"duration": 7', 7 * 10**9),
    ('"calibration": 180, "frag": 1, "ftrace": false, "log_size": "file"', None),
    ('"calibration": "CPU4", "gnuplot": true, "pi_enabled": true', None),
])
def test_global(glob, duration):
    spec = load(f'{{"tasks": {{"t": {{"run": 1}}}}, "global": {{{glob}}}}}')
    assert spec["duration_ns"] == duration


@pytest.mark.parametrize("text, field, says", [
    ('{"tasks": {"t": {"run": 1}}, "global": {"duraton": 1}}', "global.duraton",
     "did you mean 'duration'"),
    ('{"tasks": {"t": {"run": 1}}, "global": {"duration": 0}}', "global.duration",
     "a positive integer (s), or -1"),
    ('{"tasks": {"t": {"run": 1}}, "global": {"calibration": "big"}}', "global.calibration",
     "\"CPUn\""),
    ('{"tasks": {"t": {"run": 1}}, "globals": {}}', "globals", "did you mean 'global'"),
    ('{"global": {}}', "tasks", "a 'tasks' object"),
    ('[1]', "json", "a top-level JSON object"),
])
def test_bad_global(text, field, says):
    err = error(text)
    assert err.field == field
    assert says in str(err)


def test_resources_section_is_ignored():
    spec = load('{"resources": {"m": {"type": "mutex"}}, "tasks": {"t": {"run": 1}}}')
    assert len(spec["tasks"]) == 1


# -------------------------------------------------------------------- entry points

def test_path_text_source_and_name(tmp_path):
    p = tmp_path / "my-load.json"
    p.write_text('{"tasks": {"t": {"run": 1}}}')
    assert load_rtapp(p)["name"] == "my-load"
    assert load_rtapp(str(p))["name"] == "my-load"
    assert load_rtapp(p.read_text())["name"] == "rtapp"
    assert load_rtapp(p.read_text(), source="x/y.json")["name"] == "y"
    assert load_rtapp(p, name="n")["name"] == "n"
    with pytest.raises(InputError) as exc:
        load_rtapp(p.read_text().replace("1", "-1"), source="--workload")
    assert str(exc.value).startswith("--workload: tasks.t.run: ")


def test_missing_file():
    with pytest.raises(InputError) as exc:
        load_rtapp("/nonexistent/x.json")
    assert exc.value.field == "file"
    assert str(exc.value).startswith("/nonexistent/x.json: file: ")


# ------------------------------------------------------------------ building blocks

def test_periodic_lisa_mapping():
    # LISA PeriodicWload(100 ms, 20 %, 1 s): loop floor(1 s / 100 ms) = 10, run 20000 µs
    t = periodic("small", period_us=100_000, run_us=0.20 * 100_000, count=1_000_000 // 100_000)
    assert t["loop"] == 1
    assert t["phases"] == [{"loop": 10, "events": [
        {"run": 20 * MS}, {"timer": {"id": 0, "period_ns": 100 * MS, "mode": "relative"}}]}]
    forever = periodic("f", 16_000, 1_000, nice=-5, cpus=[2, 1], delay_us=10)
    assert (forever["loop"], forever["phases"][0]["loop"]) == (-1, 1)
    assert (forever["nice"], forever["cpus"], forever["delay_ns"]) == (-5, [1, 2], 10_000)


@pytest.mark.parametrize("kw", [{"period_us": 0}, {"run_us": -1}, {"count": 0},
                                {"nice": 20}, {"cpus": []}])
def test_periodic_rejects(kw):
    args = {"name": "p", "period_us": 1000, "run_us": 100} | kw
    with pytest.raises(InputError):
        periodic(**args)


def test_workload_gives_each_task_its_timer():
    spec = workload("three", [periodic(f"p{i}", 1000 * (i + 1), 100) for i in range(3)],
                    duration_ns=5 * 10**9)
    assert spec["timers"] == 3
    assert [t["phases"][0]["events"][1]["timer"]["id"] for t in spec["tasks"]] == [0, 1, 2]
    assert spec["duration_ns"] == 5 * 10**9


def test_merge_workloads_renumbers_timers():
    ex2 = load_rtapp(REALDATA / "rtapp_example2.json")      # 1 timer, 2 s
    ex3 = load_rtapp(REALDATA / "rtapp_example3.json")      # 12 timers, no duration
    merged = merge_workloads([ex2, ex3])
    assert merged["timers"] == 13
    assert len(merged["tasks"]) == 1 + 12
    assert merged["name"] == "rtapp_example2+rtapp_example3"
    assert merged["duration_ns"] is None
    ids = [ev["timer"]["id"] for t in merged["tasks"] for p in t["phases"]
           for ev in p["events"] if "timer" in ev]
    assert ids == [0] + [1 + i for i in range(12) for _ in range(2)]
    # inputs untouched
    assert ex3["tasks"][0]["phases"][0]["events"][1]["timer"]["id"] == 0
    ex1 = load_rtapp(REALDATA / "rtapp_example1.json")      # 2 s
    spread = load_rtapp(REALDATA / "rtapp_spreading-tasks.json")  # 60 s
    assert merge_workloads([ex1, spread])["duration_ns"] == 60 * 10**9
    assert merge_workloads([ex1, spread], duration_ns=None)["duration_ns"] is None


def test_a_hash_in_a_name_is_not_a_repeat():
    spec = load('{"tasks": {"a#1": {"run": 1}, "a": {"run": 1, "loop": 2}}}')
    assert [t["name"] for t in spec["tasks"]] == ["a#1-0", "a-1"]
