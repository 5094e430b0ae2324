"""Every input that reaches hetsched's Python edge is checked before anything runs: a bad
one is one line on stderr naming its source and field, exit status 2, no traceback, no
hang, and nothing left in --out.

One regression test per kind of input that used to slip through: NaN and infinities in
numbers (workload parameters, knobs, grids, platform files, Simulation arguments), the
Learning EAS options, nesting deep enough to overflow a parser's recursion, bytes that
are not UTF-8, durations beyond the 30-day limit, integers out of the engine's range in
platform files, damaged traces, and values too long to echo. Most run through
``hetsched.cli.main`` in this process, or through the Python API, to stay fast.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import asdict
from pathlib import Path

import pytest

from hetsched import Simulation, _input
from hetsched.errors import HetschedError, InputError
from hetsched.learning import MigrationCostConfig, TargetLoadConfig
from hetsched.platforms.loader import DATA_DIR
from hetsched.sim import knob_table
from hetsched.sweep import load_grid
from hetsched.traces.parse import MAX_LINE_CHARS, load_trace
from hetsched.workloads.builtin import WORKLOADS, parse_workload_arg

DEEP = "[" * 1000 + "]" * 1000
SHORT_RUN = ["--platform", "juno-r0", "--workload", "periodic:n=4", "--duration", "0.1"]


def cli_error(monkeypatch, capsys, args: list, out: Path | None = None) -> str:
    """``hetsched ARGS`` in this process: exit status 2, nothing on stdout, one line on
    stderr (no traceback), no file under ``out``; returns that line."""
    from hetsched import cli

    argv = ["hetsched", *map(str, args)] + (["--out", str(out)] if out is not None else [])
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as e:
        cli.main()
    cap = capsys.readouterr()
    assert e.value.code == 2, cap.err
    assert "Traceback" not in cap.err and cap.out == "", (cap.out, cap.err)
    lines = cap.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("hetsched: error: "), cap.err
    if out is not None and out.exists():
        assert list(out.iterdir()) == []
    return lines[0]


def builtin_platform(name: str = "juno-r0") -> dict:
    return json.loads((DATA_DIR / f"{name}.json").read_text())


# ------------------------------------------------------------------ NaN and infinities

NUMERIC_PARAMS = [(w.name, p.name) for w in WORKLOADS.values() for p in w.params
                  if p.choices is None and p.kind in (int, float)]


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
@pytest.mark.parametrize("workload, param", NUMERIC_PARAMS)
def test_every_numeric_workload_parameter_refuses_nan_and_infinities(workload, param, value):
    with pytest.raises(InputError) as e:
        parse_workload_arg(f"{workload}:{param}={value}")
    assert e.value.source == f"--workload {workload}" and e.value.field == param


def test_a_nan_workload_parameter_on_the_command_line(monkeypatch, capsys, tmp_path):
    line = cli_error(monkeypatch, capsys, ["run", "--workload", "phone-mix:load=nan", "--duration", "1"],
                     tmp_path / "out")
    assert "--workload phone-mix: load: expected a finite number" in line


@pytest.fixture(scope="module")
def juno():
    return Simulation(platform="juno-r0", workload="periodic:n=4", lower_bound=False)


@pytest.mark.parametrize("knob", [k["name"] for k in knob_table()])
def test_every_knob_refuses_nan_and_infinities(juno, knob):
    before = juno.knob_values()[knob]
    for value in ("nan", "inf", "-inf", float("nan"), float("-inf"), 10**400):
        with pytest.raises(InputError) as e:
            juno.set_knob(knob, value)
        assert (e.value.source, e.value.field) == ("set_knob()", knob)
    assert juno.knob_values()[knob] == before


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_a_knob_value_on_the_command_line(monkeypatch, capsys, tmp_path, value):
    line = cli_error(monkeypatch, capsys, ["run", *SHORT_RUN, "--set", f"tick_hz={value}"], tmp_path / "out")
    assert "--set: tick_hz: expected a number in [100, 1000]" in line


@pytest.mark.parametrize("field, value", [
    ("clusters[0].em_table[0].power_mw", float("nan")),
    ("clusters[0].em_table[0].power_mw", float("inf")),
    ("clusters[0].idle_states[1].power_mw", float("-inf")),
])
def test_platform_numbers_refuse_nan_and_infinities(tmp_path, field, value):
    doc = builtin_platform()
    c = doc["clusters"][0]
    if "em_table" in field:
        c["em_table"][0]["power_mw"] = value
    else:
        c["idle_states"][1]["power_mw"] = value
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc))  # NaN / Infinity literals, as Python writes them
    with pytest.raises(InputError) as e:
        Simulation(platform=str(path), workload="periodic:n=4")
    assert e.value.source == str(path) and e.value.field == field


@pytest.mark.parametrize("kw, source", [
    ({"seed": -1}, "--seed"), ({"seed": 2**64}, "--seed"), ({"seed": 1.0}, "--seed"), ({"seed": True}, "--seed"),
    ({"trace": "yes"}, "--trace"), ({"knobs": 3}, "--set"), ({"platform": None}, "--platform"),
    ({"workload": [1]}, "--workload"), ({"governor": ["schedutil"]}, "--governor"),
])
def test_simulation_arguments_are_checked(kw, source):
    with pytest.raises(InputError) as e:
        Simulation(**{"platform": "juno-r0", "workload": "periodic:n=4", **kw})
    assert e.value.source == source


# ------------------------------------------------------------------ durations

@pytest.mark.parametrize("value", ["1e308", "1e12", "2592001", "nan", "-1", "-inf", "inf", "0"])
def test_durations_beyond_30_days_and_non_finite_ones_are_refused(monkeypatch, capsys, tmp_path, value):
    line = cli_error(monkeypatch, capsys, ["run", "--platform", "juno-r0", "--workload", "periodic:n=4",
                                           "--duration", value], tmp_path / "out")
    assert line.startswith("hetsched: error: --duration: duration_s: expected a positive number of simulated "
                           "seconds, at most 2592000 (30 days)")


@pytest.mark.parametrize("call, args, source, field", [
    ("run", (math.nan,), "--duration", "duration_s"),
    ("run", (1e308,), "--duration", "duration_s"),
    ("run_until", (math.inf,), "run_until()", "t_ns"),
    ("run_until", (10**30,), "run_until()", "t_ns"),
    ("run_until_exited", (-1.0,), "run_until_exited()", "limit_s"),
])
def test_the_api_names_the_argument(call, args, source, field):
    sim = Simulation(platform="juno-r0", workload="periodic:n=4")
    with pytest.raises(InputError) as e:
        getattr(sim, call)(*args)
    assert (e.value.source, e.value.field) == (source, field)
    assert sim.now_ns == 0


def test_a_run_may_not_end_past_30_days():
    sim = Simulation(platform="juno-r0", workload="periodic:n=4", lower_bound=False)
    sim.run(0.01)
    with pytest.raises(InputError, match="30 days"):
        sim.run(_input.MAX_SIM_S)


# ------------------------------------------------------------------ the Learning EAS options

LEARNING = ["run", "--scheduler", "learning-eas", "--platform", "gs101", "--workload", "game:fps=60",
            "--duration", "0.2"]


def _bad_value(field: str) -> str:
    """A value out of range for a config field (the text `--set` would carry)."""
    return {"input": "pelt", "seed": "1.5"}.get(field, "nan")


@pytest.mark.parametrize("prefix, cfg", [("tl", TargetLoadConfig()), ("mc", MigrationCostConfig())])
def test_every_agent_field_has_a_checked_range(prefix, cfg):
    # every field the controller reads, found from the config itself: a new field without a
    # range fails here
    for field in asdict(cfg):
        name = f"learning.{prefix}.{field}"
        with pytest.raises(InputError) as e:
            Simulation(platform="gs101", workload="game:fps=60", scheduler="learning-eas",
                       knobs={name: _bad_value(field)})
        assert (e.value.source, e.value.field) == ("--set", name)


@pytest.mark.parametrize("option, value, needle", [
    # a period of 0 or less never advanced the simulation: the run hung
    ("learning.tl.period_ms", "0", "[1, 2592000000]"),
    ("learning.tl.period_ms", "-5", "[1, 2592000000]"),
    ("learning.mc.sample_ms", "0", "[1, 2592000000]"),
    ("learning.mc.period_ms", "0", "[1, 2592000000]"),
    ("learning.record_weights_every_ms", "nan", "ms"),
    ("learning.tl.freq_unit_khz", "0", "positive"),
    ("learning.tl.out_max", "0", "positive"),
    ("learning.tl.initial", "5", "[0, 1]"),
    ("learning.mc.initial", "1e12", "[0, 1e+09]"),
    ("learning.tl.seed", "-1", "non-negative integer"),
    ("learning.mc.seed", "1.5", "non-negative integer"),
    ("learning.keep_record", "banana", "1 or 0"),
    ("learning.restore_knobs", "maybe", "1 or 0"),
    ("learning.target_load", "sometimes", "on or off"),
    ("learning.tl.input", "pelt", "util or eq8"),
    ("learning.tl.bogus", "1", "tl.period_ms"),
    ("learning.bogus", "1", "learning.tl.FIELD"),
])
def test_learning_options_are_checked_before_the_run(monkeypatch, capsys, tmp_path, option, value, needle):
    line = cli_error(monkeypatch, capsys, [*LEARNING, "--set", f"{option}={value}"], tmp_path / "out")
    assert f"--set: {option}: expected" in line and needle in line


def test_an_agent_switched_off_still_has_its_options_checked():
    with pytest.raises(InputError, match="learning.tl.lr"):
        Simulation(platform="gs101", workload="game:fps=60", scheduler="learning-eas",
                   knobs={"learning.tl.lr": "-1", "learning.target_load": "off"})


def test_bounds_of_an_agent_must_be_in_order():
    with pytest.raises(InputError, match="learning.tl.min_target_load: expected at most learning.tl.max_target_load"):
        Simulation(platform="gs101", workload="game:fps=60", scheduler="learning-eas",
                   knobs={"learning.tl.min_target_load": 0.9, "learning.tl.max_target_load": 0.8})


def test_a_config_built_in_python_is_checked_too():
    from hetsched.learning import LearningConfig, LearningEAS

    sim = Simulation(platform="gs101", workload="game:fps=60", scheduler="eas")
    with pytest.raises(InputError) as e:
        LearningEAS(sim, LearningConfig(target_load=TargetLoadConfig(period_ms=0.0)))
    assert (e.value.source, e.value.field) == ("LearningConfig", "target_load.period_ms")


@pytest.mark.parametrize("option", ["learning.state", "learning.record"])
def test_a_state_or_record_that_cannot_be_written_is_refused_before_the_run(monkeypatch, capsys, tmp_path, option):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    target = blocker / "x.csv"  # a path under a regular file: no directory can be made there
    line = cli_error(monkeypatch, capsys, [*LEARNING, "--set", f"{option}={target}"], tmp_path / "out")
    assert f"--set: {option}: expected" in line and "a-file" in line


def _state_file(tmp_path: Path) -> tuple[Path, dict]:
    st = tmp_path / "state.json"
    Simulation(platform="gs101", workload="game:fps=60", scheduler="learning-eas",
               knobs={"learning.state": str(st), "learning.migration_cost": "off"}).run(0.2)
    return st, json.loads(st.read_text())


@pytest.fixture(scope="module")
def saved_state(tmp_path_factory):
    return _state_file(tmp_path_factory.mktemp("state"))[1]


def _damaged(doc: dict, kind: str) -> str:
    doc = json.loads(json.dumps(doc))
    net = next(iter(doc["target_load"].values()))["net"]
    if kind == "nan-weight":
        net["w1"][0][0] = float("nan")
        return json.dumps(doc)
    if kind == "shape":
        net["w1"] = [[1.0]]
        return json.dumps(doc)
    if kind == "top-level-list":
        return "[1, 2]"
    if kind == "deep":
        return DEEP
    raise AssertionError(kind)


@pytest.mark.parametrize("kind, field", [("nan-weight", ".net.w1"), ("shape", ".net.w1"),
                                         ("top-level-list", "(top level)"), ("deep", "json")])
def test_a_state_file_to_read_is_checked_before_the_run(monkeypatch, capsys, tmp_path, saved_state, kind, field):
    st = tmp_path / "state.json"
    st.write_text(_damaged(saved_state, kind))
    before = st.read_text()
    line = cli_error(monkeypatch, capsys, [*LEARNING, "--set", f"learning.state={st}"], tmp_path / "out")
    assert line.startswith(f"hetsched: error: {st}: ") and field in line
    assert st.read_text() == before  # not overwritten by a run that did not happen


def test_a_state_file_that_is_not_utf8_names_the_byte(monkeypatch, capsys, tmp_path):
    st = tmp_path / "state.json"
    st.write_bytes(b'{"version": 1, "platform": "\xff"}')
    line = cli_error(monkeypatch, capsys, [*LEARNING, "--set", f"learning.state={st}"], tmp_path / "out")
    assert f"{st}: file: expected UTF-8 text, got byte 0xff at offset 28" in line


# ------------------------------------------------------------------ nesting, size, encoding

def test_a_deeply_nested_platform_file(monkeypatch, capsys, tmp_path):
    p = tmp_path / "deep.json"
    p.write_text(DEEP)
    line = cli_error(monkeypatch, capsys, ["run", "--platform", p, "--duration", "0.1"], tmp_path / "out")
    assert f"{p}: json: expected at most 64 levels of nested arrays and objects, got 1000 levels" in line


def test_a_deeply_nested_rtapp_file(monkeypatch, capsys, tmp_path):
    p = tmp_path / "deep.json"
    p.write_text(DEEP)
    line = cli_error(monkeypatch, capsys, ["run", "--workload", p, "--duration", "0.1"], tmp_path / "out")
    assert line.startswith(f"hetsched: error: {p}: json: expected ") and "levels" in line


@pytest.mark.parametrize("text", ["platforms: " + DEEP, "a:\n" + "".join("  " * i + "a:\n" for i in range(1, 100))])
def test_a_deeply_nested_grid(monkeypatch, capsys, tmp_path, text):
    g = tmp_path / "g.yaml"
    g.write_text(text)
    line = cli_error(monkeypatch, capsys, ["sweep", g], tmp_path / "out")
    assert f"{g}: YAML: expected at most 64 levels of nesting" in line


def test_nesting_up_to_the_limit_parses():
    depth = _input.MAX_NESTING
    for parse in (_input.parse_json, _input.parse_yaml):
        value = parse("[" * depth + "]" * depth, "x")
        for _ in range(depth - 1):
            value = value[0]
        assert value == []
        with pytest.raises(InputError, match="at most 64 levels"):
            parse("[" * (depth + 1) + "]" * (depth + 1), "x")


def test_brackets_inside_strings_are_not_nesting():
    assert _input.parse_json(json.dumps({"s": "[" * 500}), "x") == {"s": "[" * 500}


def test_a_file_over_64_mb_is_refused_without_reading_it(tmp_path):
    big = tmp_path / "big.json"
    with open(big, "wb") as fh:
        fh.truncate(_input.MAX_FILE_BYTES + 1)  # sparse: no 64 MB written
    with pytest.raises(InputError) as e:
        Simulation(platform=str(big), workload="periodic:n=4")
    assert e.value.source == str(big) and "at most 64 MB" in str(e.value)


def test_a_device_without_a_size_is_read_up_to_the_limit_only():
    with pytest.raises(InputError, match="at most 64 MB"):
        Simulation(platform="/dev/zero", workload="periodic:n=4")


def test_a_grid_that_is_not_utf8_names_the_byte(monkeypatch, capsys, tmp_path):
    g = tmp_path / "g.yaml"
    g.write_bytes(b"\xff\xfe bad")
    line = cli_error(monkeypatch, capsys, ["sweep", g], tmp_path / "out")
    assert line == f"hetsched: error: {g}: file: expected UTF-8 text, got byte 0xff at offset 0 (invalid start byte)"


def test_a_platform_that_is_not_utf8_names_the_byte(tmp_path):
    p = tmp_path / "p.json"
    p.write_bytes(b'{"name": "caf\xe9"}')
    with pytest.raises(InputError, match="byte 0xe9 at offset 13"):
        Simulation(platform=str(p), workload="periodic:n=4")


@pytest.mark.parametrize("text, field", [
    ("seeds: 1000000000000\n", "seeds"),
    ("seeds: [18446744073709551616]\n", "seeds"),
    ("duration: .inf\n", "duration"),
    ("duration: .nan\n", "duration"),
    ("duration: 3000000\n", "duration"),
    ("knobs: {tick_hz: [.nan]}\n", "knobs.tick_hz"),
    ("knobs: {tick_hz: [.inf]}\n", "knobs.tick_hz"),
    ("schedulers: ['eas[tick_hz=nan]']\n", "knobs.tick_hz"),
    ("seeds: " + "9" * 5000 + "\n", "YAML"),
    ("knobs: {tick_hz: [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]}\nseeds: 200000\n",
     "(the product of the lists)"),
])
def test_grid_values(tmp_path, text, field):
    g = tmp_path / "g.yaml"
    g.write_text(text)
    with pytest.raises(InputError) as e:
        load_grid(g)
    assert e.value.source == str(g) and e.value.field == field


# ------------------------------------------------------------------ platform integers

@pytest.mark.parametrize("where, value, field", [
    (("clusters", 1, "opps", 3, "khz"), 10**25, "clusters[1].opps[3].khz"),
    (("clusters", 1, "opps", 3, "khz"), 1e33, "clusters[1].opps[3].khz"),
    (("clusters", 1, "opps", 3, "khz"), 2**32, "clusters[1].opps[3].khz"),
    (("clusters", 0, "capacity_dmips_mhz"), 2**40, "clusters[0].capacity_dmips_mhz"),
    (("clusters", 0, "em_table", 0, "cluster_power_mw"), 1e33, "clusters[0].em_table[0].cluster_power_mw"),
    (("clusters", 0, "idle_states", 1, "exit_latency_us"), 10**20, "clusters[0].idle_states[1].exit_latency_us"),
    (("clusters", 0, "idle_states", 1, "power_mw"), 1e30, "clusters[0].idle_states[1].power_mw"),
])
def test_platform_integers_out_of_the_engines_range_name_the_field(monkeypatch, capsys, tmp_path, where, value,
                                                                    field):
    doc = builtin_platform("juno-r0")
    node = doc
    for k in where[:-1]:
        node = node[k]
    assert where[-1] in node  # the field exists in the built-in file
    node[where[-1]] = value
    p = tmp_path / "p.json"
    p.write_text(json.dumps(doc))
    line = cli_error(monkeypatch, capsys, ["run", "--platform", p, "--workload", "periodic:n=4",
                                           "--duration", "0.1"], tmp_path / "out")
    assert line.startswith(f"hetsched: error: {p}: {field}: expected ")
    assert "floating point" not in line and "u64" not in line  # not the engine's serde message


@pytest.mark.parametrize("measured, field, expected", [
    ({"measured_wakeup_us": 0, "measured_source": "a trace"}, "measured_wakeup_us", "an integer >= 1"),
    ({"measured_wakeup_us": 10**20, "measured_source": "a trace"}, "measured_wakeup_us", "at most 4294967295"),
    ({"measured_wakeup_us": 200}, "measured_source", "a non-empty string"),
])
def test_a_measured_wake_latency_needs_a_value_and_its_source(monkeypatch, capsys, tmp_path, measured, field,
                                                              expected):
    doc = builtin_platform("juno-r0")
    doc["clusters"][0]["idle_states"][1].update(measured)
    p = tmp_path / "p.json"
    p.write_text(json.dumps(doc))
    line = cli_error(monkeypatch, capsys, ["run", "--platform", p, "--workload", "periodic:n=4",
                                           "--duration", "0.1"], tmp_path / "out")
    assert line.startswith(f"hetsched: error: {p}: clusters[0].idle_states[1].{field}: expected {expected}")


# ------------------------------------------------------------------ traces

SWITCH = ("a-{pid} [000] d..3 {ts}: sched_switch: prev_comm=a prev_pid={pid} prev_prio=120 prev_state=S ==> "
          "next_comm=b next_pid=2 next_prio=120")


@pytest.mark.parametrize("content", [
    b"",
    b"\x00\x01\x02binary" * 100,
    bytes(range(1, 256)) * 20,
    b"hello\nworld\n",
    SWITCH.format(pid=1, ts="nan").encode() + b"\n",
    SWITCH.format(pid=1, ts="1.0").encode()[:60],
    SWITCH.format(pid=1, ts="9" * 5000 + ".0").encode() + b"\n",
    SWITCH.format(pid="9" * 5000, ts="1.0").encode() + b"\n",
    b"\xff\xfe" + SWITCH.format(pid=1, ts="1.0").encode()[:40],
])
def test_a_damaged_trace_is_one_line(monkeypatch, capsys, tmp_path, content):
    f = tmp_path / "t.txt"
    f.write_bytes(content)
    line = cli_error(monkeypatch, capsys, ["replay", f], tmp_path / "out")
    assert line.startswith(f"hetsched: error: {f}: ")


def test_trace_lines_with_numbers_out_of_range_or_too_long_are_skipped_and_counted(tmp_path):
    good = [SWITCH.format(pid=10 + i, ts=f"1.{i:06d}") for i in range(5)]
    bad = [SWITCH.format(pid="9" * 30, ts="1.000007"),                       # a pid beyond PID_MAX
           SWITCH.format(pid=1, ts="9" * 30 + ".0"),                         # past the u64 ns clock
           "prev_comm=x prev_pid=1 " * (MAX_LINE_CHARS // 20)]               # longer than any kernel line
    f = tmp_path / "t.txt"
    f.write_text("\n".join(good + bad) + "\n")
    tr = load_trace(f)
    assert tr.counts()["switch"] == 5
    assert tr.skipped["number out of range"] == 2 and tr.skipped["line too long"] == 1


@pytest.mark.parametrize("meta, field", [('{"root_pid": "x"}', "root_pid"), ('{"root_pid": -1}', "root_pid"),
                                         ('{"platform": 5}', "platform")])
def test_a_recording_header_with_wrong_types(tmp_path, meta, field):
    f = tmp_path / "t.txt"
    f.write_text(f"# hetsched-record: {meta}\n" + SWITCH.format(pid=3, ts="1.0") + "\n")
    with pytest.raises(InputError) as e:
        load_trace(f)
    assert e.value.field == f"# hetsched-record: {field}"


def test_a_gzip_trace_that_ends_early(tmp_path):
    import gzip

    f = tmp_path / "t.txt.gz"
    f.write_bytes(gzip.compress((SWITCH.format(pid=3, ts="1.0") + "\n").encode() * 100)[:-12])
    with pytest.raises(InputError, match="gzip"):
        load_trace(f)


# ------------------------------------------------------------------ long values

LONG = "x" * 100_000


@pytest.mark.parametrize("args", [
    ["run", *SHORT_RUN, "--set", f"tick_hz={LONG}"],
    ["run", *SHORT_RUN, "--set", LONG],
    ["run", "--platform", "juno-r0", "--duration", "0.1", "--workload", f"periodic:n={LONG}"],
    ["run", "--platform", "juno-r0", "--duration", "0.1", "--workload", f"periodic:{LONG}=1"],
    ["run", "--platform", f"/{LONG}.json", "--duration", "0.1"],
    ["run", "--platform", LONG],
    ["run", *SHORT_RUN, "--scheduler", f"{LONG}.py:P"],
    ["run", *SHORT_RUN, "--scheduler", "learning-eas", "--set", f"learning.tl.lr={LONG}"],
])
def test_a_long_value_is_never_echoed_whole(monkeypatch, capsys, tmp_path, args):
    line = cli_error(monkeypatch, capsys, args, tmp_path / "out")
    assert len(line) < 2_000, len(line)


def test_an_unprintable_source_is_shown_escaped():
    err = InputError("bad\nname\x00.json", "field", "something")
    assert "\n" not in str(err) and "\x00" not in str(err) and "bad\\nname\\x00.json" in str(err)


def test_every_error_above_is_a_hetsched_error():
    # the CLI turns HetschedError, and only it, into the one line
    assert issubclass(InputError, HetschedError)


def test_a_knob_the_engine_checks_against_the_profile_is_named_as_given(tmp_path, tools):
    """WALT's window is checked by the engine, which names its policy document's field;
    the user gave it as --set, and the line says so."""
    proc = tools.run_cli(["run", "--platform", "sm8150", "--scheduler", "eas", "--set", "kernel=msm-4.14",
                          "--workload", "periodic:n=4", "--duration", "0.1", "--set", "sched_ravg_window=1000",
                          "--out", str(tmp_path / "out")])
    line = tools.assert_one_line_error(proc, "--set", "sched_ravg_window", "20000000")
    assert "policy" not in line
    tools.assert_no_outputs(tmp_path / "out")
