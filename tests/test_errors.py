"""The error boundary between the engine and Python (crates/hetsched-py/src/error.rs).

The engine raises hetsched.errors' own classes: an input it refuses is an InputError
naming its document, the field and what was expected; a name it does not know is an
UnknownNameError with the registry's choices (so the did-you-mean hint works); a panic is
an EngineError with the panic's message. Expected choices come from the engine's own
registries (``_engine.schedulers()`` ...), never from the error being checked.

The panic tests need an engine built with the ``test-panic`` cargo feature
(``cargo build --release -p hetsched-py --features test-panic``); no release build has a
way to make the engine panic on purpose, so they are skipped there.
"""

from __future__ import annotations

import json
import sys

import pytest

from hetsched import EnergyModel, Simulation, _engine
from hetsched.errors import EngineError, HetschedError, InputError, UnknownNameError
from hetsched.platforms import load_platform
from hetsched.workloads.builtin import resolve_workloads

PLATFORM = load_platform("juno-r0").to_spec()  # 6 CPUs in 2 clusters
WORKLOAD = resolve_workloads(["periodic:n=4"], PLATFORM, 0)
POLICY = {"scheduler": "cfs", "governor": "schedutil", "idle_governor": "menu", "kernel": "mainline-6.12",
          "knobs": {}, "trace": False, "timeseries": False}


def engine(platform=PLATFORM, workload=WORKLOAD, **policy) -> _engine.Engine:
    """An Engine straight from the binding (no Python-side validation in front of it)."""
    doc = lambda x: x if isinstance(x, str) else json.dumps(x)  # noqa: E731
    return _engine.Engine(doc(platform), doc(workload), json.dumps({**POLICY, **policy}))


def assert_one_line(err: BaseException) -> str:
    text = str(err)
    assert "\n" not in text and text.strip() == text and text, repr(text)
    return text


# ------------------------------------------------------------------ the classes

def test_the_engine_raises_hetsched_errors_own_classes():
    import hetsched.errors as errors

    assert _engine.InputError is errors.InputError
    assert _engine.UnknownNameError is errors.UnknownNameError
    assert _engine.EngineError is errors.EngineError
    for cls in (_engine.InputError, _engine.UnknownNameError, _engine.EngineError):
        assert issubclass(cls, HetschedError)
    assert issubclass(_engine.UnknownNameError, _engine.InputError)
    # the former look-alike classes, and the panic button every build used to carry, are gone
    for gone in ("EngineInputError", "EnginePanic", "_panic_for_test"):
        assert not hasattr(_engine, gone), gone


# ------------------------------------------------------------------ unknown names

REGISTRIES = {
    # every registry line, the controller-driven ones too (the engine runs their base)
    "scheduler": lambda: [(p["name"], p["summary"]) for p in _engine.policies()],
    "governor": _engine.governors,
    "idle_governor": _engine.idle_governors,
    "kernel": lambda: [(name, about) for name, _release, about in _engine.kernel_profiles()],
}


@pytest.mark.parametrize("field, typo, hint", [
    ("scheduler", "cfz", "cfs"),
    ("governor", "schedutl", "schedutil"),
    ("idle_governor", "manu", "menu"),
    ("kernel", "mainline-6.21", "mainline-6.12"),
])
def test_an_unknown_name_in_the_policy_carries_the_engines_choices(field, typo, hint):
    with pytest.raises(UnknownNameError) as e:
        engine(**{field: typo})
    err = e.value
    choices = sorted(name for name, _ in REGISTRIES[field]())
    assert err.choices == choices
    assert (err.source, err.field, err.name, err.got) == ("policy", field, typo, typo)
    text = assert_one_line(err)
    assert text.startswith(f"policy: {field}: expected one of: {', '.join(choices)}")
    assert f"(did you mean {hint!r}?)" in text and text.endswith(f"got {typo!r}")


def test_an_unknown_knob_given_to_the_engine_is_an_unknown_name():
    names = sorted(k["name"] for k in _engine.knobs())
    with pytest.raises(UnknownNameError) as e:
        engine(knobs={"schedutil.target_lod": 0.5})
    assert e.value.choices == names and e.value.field == "knobs"
    assert "did you mean 'schedutil.target_load'" in str(e.value)
    # set_knob on a built engine (the learning controller calls it directly)
    eng = engine()
    with pytest.raises(UnknownNameError) as e:
        eng.set_knob("tick_hzz", 250.0)
    assert e.value.choices == names and "did you mean 'tick_hz'" in assert_one_line(e.value)


# ------------------------------------------------------------------ refused inputs

def test_a_knob_value_the_engine_refuses_is_an_input_error_with_field_and_expected():
    knob = next(k for k in _engine.knobs() if k["name"] == "schedutil.target_load")
    eng = engine()
    before = eng.knob_values()["schedutil.target_load"]
    with pytest.raises(InputError) as e:
        eng.set_knob("schedutil.target_load", knob["max"] * 7)
    err = e.value
    assert type(err) is InputError
    assert (err.source, err.field) == ("policy", "knobs.schedutil.target_load")
    assert err.expected.startswith(f"a number in [{knob['min']:g}, {knob['max']:g}]")
    assert assert_one_line(err).startswith("policy: knobs.schedutil.target_load: expected a number in [")
    assert eng.knob_values()["schedutil.target_load"] == before  # refused, not half-applied


def test_a_policy_the_engine_refuses_reaches_the_api_as_an_input_error():
    # Python passes this combination on; the engine knows FA-CFS has no EEVDF form
    with pytest.raises(InputError) as e:
        Simulation(platform="juno-r0", workload="periodic:n=4", scheduler="fa-cfs", knobs={"fair.eevdf": 1})
    assert type(e.value) is InputError
    # the engine names its policy document's field; the user gave the knob as --set
    assert (e.value.source, e.value.field) == ("--set", "fair.eevdf")
    assert e.value.expected.startswith("0 with --scheduler fa-cfs")


def test_a_workload_the_engine_refuses_names_the_task_field():
    wl = json.loads(json.dumps(WORKLOAD))
    wl["tasks"][1]["cpus"] = [len(PLATFORM["clusters"][0]["cpus"]) + len(PLATFORM["clusters"][1]["cpus"])]
    with pytest.raises(InputError) as e:
        Simulation(platform="juno-r0", workload=wl)
    err = e.value
    assert (err.source, err.field) == ("workload", "tasks[1].cpus")
    assert err.expected == "CPU numbers below 6 (the platform's CPU count)"
    assert assert_one_line(err) == "workload: tasks[1].cpus: expected CPU numbers below 6 (the platform's CPU count)"


@pytest.mark.parametrize("doc, platform, workload, needle", [
    ("platform", "{\"name\": \"cut\", \"clusters\": [", WORKLOAD, "EOF while parsing"),
    ("workload", PLATFORM, "{\"tasks\": [}", "expected value"),
])
def test_a_document_the_engine_cannot_read_gives_one_line(doc, platform, workload, needle):
    with pytest.raises(InputError) as e:
        engine(platform, workload)
    err = e.value
    assert (err.source, err.field) == (doc, "json")
    text = assert_one_line(err)
    assert text.startswith(f"{doc}: json: expected a resolved {doc} spec (") and needle in text, text


@pytest.mark.parametrize("doc, platform, workload, line", [
    ("platform", {"name": "half"}, WORKLOAD, "platform: clusters: expected this key (it is required)"),
    ("workload", PLATFORM, {"name": "no-tasks"}, "workload: tasks: expected this key (it is required)"),
    ("workload", PLATFORM, {**WORKLOAD, "tasks": "several"}, "workload: tasks: expected an array, got 'several'"),
    ("platform", {**PLATFORM, "clusters": [{**PLATFORM["clusters"][0], "capacity_orig": 1e33}]}, WORKLOAD,
     "platform: clusters[0].capacity_orig: expected a non-negative integer (u64), got 1e+33"),
])
def test_a_document_of_the_wrong_shape_names_the_field(doc, platform, workload, line):
    with pytest.raises(InputError) as e:
        engine(platform, workload)
    assert assert_one_line(e.value) == line


def test_energy_model_inputs_the_engine_refuses():
    with pytest.raises(InputError) as e:
        _engine.EnergyModel.from_table([([0], [(512, 100), (256, 50)])])
    assert (e.value.source, e.value.field, e.value.expected) == (
        "energy model", "domains[0].opps", "capacities strictly ascending")
    # the public API names the call the user made, keeping the engine's field
    with pytest.raises(InputError) as e:
        EnergyModel.from_table([{"cpus": [0], "opps": [(512, 100), (256, 50)]}])
    assert str(e.value) == "EnergyModel.from_table(): domains[0].opps: expected capacities strictly ascending"
    native = _engine.EnergyModel.from_platform_json(json.dumps(PLATFORM))
    with pytest.raises(InputError) as e:
        native.compute_energy([0, 0, 0], 1.25)
    assert str(e.value) == "energy model: cpu_utils: expected 6 values (one per CPU), got 3"
    with pytest.raises(InputError) as e:
        native.find_energy_efficient_cpu([0] * 6, 100, 6, 1.25)
    assert (e.value.field, e.value.expected) == ("prev_cpu", "a CPU number below 6, got 6")


def test_the_cli_reports_an_engine_refusal_on_one_line(tools, tmp_path):
    rtapp = tmp_path / "pinned.json"
    rtapp.write_text(json.dumps({"global": {"duration": 1}, "tasks": {"t": {"cpus": [99], "run": 1000,
                                                                             "sleep": 1000}}}))
    procs = tools.run_cli_many({
        "workload": ["run", "--platform", "juno-r0", "--workload", rtapp, "--duration", "0.1",
                     "--out", tmp_path / "a"],
        "policy": ["run", "--platform", "juno-r0", "--workload", "periodic:n=4", "--scheduler", "fa-cfs",
                   "--set", "fair.eevdf=1", "--duration", "0.1", "--out", tmp_path / "b"],
    })
    # named in the rt-app file's terms (the engine says tasks[0].cpus)
    tools.assert_one_line_error(procs["workload"], f"{rtapp}: tasks.t.cpus: expected CPU numbers below 6")
    tools.assert_one_line_error(procs["policy"], "--set: fair.eevdf: expected 0 with --scheduler fa-cfs")
    tools.assert_no_outputs(tmp_path / "a")
    tools.assert_no_outputs(tmp_path / "b")


def _build_refused_engine(field: str, value: str) -> None:
    engine(**{field: value})


@pytest.mark.parametrize("field, value, cls", [("governor", "ondemnd", UnknownNameError),
                                               ("knobs", {"tick_hz": -1}, InputError)])
def test_an_engine_error_crosses_a_process_pool_whole(field, value, cls):
    """The reproductions run simulations in worker processes: an engine error raised in
    one reaches the parent as the same class with the same attributes and text."""
    from concurrent.futures import ProcessPoolExecutor

    with pytest.raises(cls) as here:
        engine(**{field: value})
    with ProcessPoolExecutor(max_workers=1) as pool:
        with pytest.raises(cls) as there:
            pool.submit(_build_refused_engine, field, value).result()
    assert type(there.value) is type(here.value) and str(there.value) == str(here.value)
    assert vars(there.value) == vars(here.value)


# ------------------------------------------------------------------ panics

needs_test_panic = pytest.mark.skipif(
    not hasattr(_engine.Engine, "_panic_for_test"),
    reason="the engine is built without the test-panic feature "
           "(cargo build --release -p hetsched-py --features test-panic)")


@needs_test_panic
def test_an_engine_panic_is_an_engine_error_with_its_message_and_place(capfd, monkeypatch):
    monkeypatch.delenv("RUST_BACKTRACE", raising=False)  # (with it, the backtrace is printed)
    eng = engine()
    eng.run_until(10_000_000)
    with pytest.raises(EngineError) as e:
        eng._panic_for_test("rq 3: curr is not on the rq")
    text = assert_one_line(e.value)
    assert text.startswith("engine panic at crates/hetsched-py/src/") and text.endswith(
        ": rq 3: curr is not on the rq"), text
    assert e.value.__cause__ is None and e.value.__context__ is None
    # the exception says it all: no "thread panicked at" lines on stderr as well
    assert "panicked" not in capfd.readouterr().err


@needs_test_panic
def test_a_panicked_simulation_refuses_to_go_on_and_others_are_unaffected():
    eng = engine(timeseries=True)
    eng.run_until(10_000_000)
    with pytest.raises(EngineError):
        eng._panic_for_test("half-updated")
    calls = {
        "run_until": lambda: eng.run_until(20_000_000),
        "run_until_exited": lambda: eng.run_until_exited(20_000_000),
        "set_knob": lambda: eng.set_knob("tick_hz", 250.0),
        "knob_values": eng.knob_values,
        "observe": eng.observe,
        "result_json": eng.result_json,
        "take_trace": eng.take_trace,
        "timeseries": eng.timeseries,
    }
    for name, call in calls.items():
        with pytest.raises(EngineError) as e:
            call()
        text = assert_one_line(e.value)
        assert "cannot go on" in text and ": half-updated)" in text, (name, text)
    # a new engine in the same process runs as usual
    fresh = engine()
    fresh.run_until(10_000_000)
    assert json.loads(fresh.result_json())["energy_j"] > 0


@needs_test_panic
def test_simulation_passes_an_engine_panic_on_as_engine_error(monkeypatch, capsys, tmp_path):
    sim = Simulation(platform="juno-r0", workload="periodic:n=4", lower_bound=False)
    real = sim._engine

    class Panicking:
        """The real engine, panicking inside its run as an engine bug would."""

        def __getattr__(self, name):
            return getattr(real, name)

        def run_until(self, t_ns):
            real._panic_for_test(f"stuck before {t_ns} ns")

    sim._engine = Panicking()
    with pytest.raises(EngineError) as e:
        sim.run(0.05)
    assert type(e.value) is EngineError and e.value.__context__ is None
    assert str(e.value).endswith(": stuck before 50000000 ns")

    # and the CLI prints it as one line and exits 2
    from hetsched import cli

    def panicking_run_until(self, t_ns):
        self._engine._panic_for_test("stuck in the CLI")

    monkeypatch.setattr(Simulation, "run_until", panicking_run_until)
    monkeypatch.setattr(sys, "argv", ["hetsched", "run", "--platform", "juno-r0", "--workload", "periodic:n=4",
                                      "--duration", "0.1", "--out", str(tmp_path / "o")])
    with pytest.raises(SystemExit) as ex:
        cli.main()
    assert ex.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("hetsched: error: engine panic at ")
    assert err.rstrip().endswith(": stuck in the CLI")
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


def test_the_fair_class_cannot_change_while_the_simulation_runs():
    # vruntime, deadlines and delayed tasks belong to one form of the fair class
    sim = Simulation(platform="juno-r0", workload="periodic:n=4")
    sim.run_until(10_000_000)
    with pytest.raises(InputError) as e:
        sim.set_knob("fair.eevdf", 0)
    assert (e.value.source, e.value.field) == ("policy", "knobs.fair.eevdf")
    assert "when the simulation is built" in e.value.expected
    sim.set_knob("fair.eevdf", -1)  # the value it has: accepted
