"""Bad input at every door: the regression corpus, and Hypothesis at the Python edge.

Part one runs tests/data/fuzz_corpus/manifest.json: inputs that once crashed, hung or were
misreported (scripts/fuzz_cli.py finds them; docs/robustness.md). Each must end as its
case says: refused, with exit status 2, one stderr line naming the source and the field
it gives, no traceback, nothing left in --out. They run as real subprocesses, two at a
time, with a time limit: a case that runs on is reported as a hang, not waited for.

Part two feeds mutated inputs straight to the loaders: platform files through
hetsched.platforms, rt-app documents through the rt-app loader and the engine, built-in
workload parameters, knob values, sweep grids through hetsched.sweep.load_grid, traces
through hetsched.traces. Every input must load or raise HetschedError with one line:
never another exception, never an EngineError (a panic inside the engine). The CI budget
is fixed and deterministic (derandomize); HETSCHED_FUZZ_EXAMPLES=N runs N examples a test
from fresh random draws (the nightly run).
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hetsched import _engine
from hetsched.errors import EngineError, HetschedError, InputError
from hetsched.platforms import load_platform
from hetsched.sim import POLICIES, Simulation, knob_table
from hetsched.workloads.builtin import WORKLOADS, resolve_workloads

CORPUS = Path(__file__).resolve().parent / "data" / "fuzz_corpus"
MANIFEST = json.loads((CORPUS / "manifest.json").read_text())["cases"]
RTAPP_DIR = Path(__file__).resolve().parent / "data" / "rtapp"
BIG = "1234567890" * 10_000  # 100 KB
CASE_TIMEOUT_S = 120

NIGHTLY = int(os.environ.get("HETSCHED_FUZZ_EXAMPLES", "0") or 0)


def fuzz(ci_examples: int):
    """Hypothesis settings: ``ci_examples`` drawn deterministically, or the nightly count
    from fresh draws. No example database: nothing is written in the tree."""
    return settings(max_examples=NIGHTLY or ci_examples, derandomize=not NIGHTLY, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck), print_blob=True)


# ------------------------------------------------------------------ the corpus


def _expand(s: str, case: dict, out: Path) -> str:
    return (s.replace("{input}", str(CORPUS / case["input"]) if case.get("input") else "{input}")
             .replace("{out}", str(out)).replace("{big}", BIG).replace("{deep}", "d/" * 2100)
             .replace("{long}", "x" * 300))


def _run(args: list[str], cwd: Path, tools) -> tuple[int | None, str, str]:
    try:
        proc = tools.run_cli(args, cwd=cwd, timeout=CASE_TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        return None, "", err
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def corpus_runs(tmp_path_factory, tools):
    """Every corpus case run once, two at a time (each is mostly interpreter start-up)."""
    base = tmp_path_factory.mktemp("corpus")
    jobs = {}
    for case in MANIFEST:
        d = base / case["name"]
        d.mkdir()
        jobs[case["name"]] = ([_expand(a, case, d / "out") for a in case["args"]], d)
    with ThreadPoolExecutor(max_workers=2) as ex:
        futs = {name: ex.submit(_run, args, d, tools) for name, (args, d) in jobs.items()}
        return {name: (*f.result(), jobs[name][1]) for name, f in futs.items()}


def test_the_corpus_files_and_the_manifest_agree():
    names = {c["name"] for c in MANIFEST}
    assert len(names) == len(MANIFEST), "two cases share a name"
    named = {c["input"] for c in MANIFEST if c.get("input")}
    for f in named:
        assert (CORPUS / f).is_file(), f
    # a file no case runs is a regression nobody checks
    assert {p.name for p in CORPUS.iterdir()} - {"manifest.json"} == named


def _param(case: dict):
    """A case, or one the product still fails (``known_failure``: why), expected to fail
    until it is fixed: strict, so that the fix shows and the mark is taken off."""
    if case.get("known_failure"):
        return pytest.param(case, marks=pytest.mark.xfail(strict=True, reason=case["known_failure"]))
    return case


@pytest.mark.parametrize("case", [_param(c) for c in MANIFEST], ids=[c["name"] for c in MANIFEST])
def test_corpus_case_ends_as_expected(case, corpus_runs):
    rc, stdout, stderr, d = corpus_runs[case["name"]]
    assert rc is not None, f"still running after {CASE_TIMEOUT_S} s (a hang); stderr so far: {stderr[-500:]}"
    assert "Traceback" not in stderr, stderr[-2000:]
    assert case["expect"] == "refused", case["expect"]  # the one class the corpus holds so far
    lines = stderr.splitlines()
    assert rc == 2 and len(lines) == 1, (rc, stderr[-2000:])
    line = lines[0]
    assert line.startswith("hetsched: error: "), line
    source = _expand(case["source"], case, d / "out")
    assert source in line, (source, line)
    fields = case.get("field")
    if fields is not None:
        fields = [fields] if isinstance(fields, str) else fields
        assert any(f in line for f in fields), (fields, line)
    for n in case.get("needles", []):
        assert n in line, (n, line)
    if "max_len" in case:
        assert len(line) <= case["max_len"], (len(line), line[:300])
    leftovers = sorted(str(p.relative_to(d)) for p in d.rglob("*"))
    assert leftovers == [], leftovers


# ------------------------------------------------------------------ mutations

EDGE_VALUES = [float("nan"), float("inf"), float("-inf"), 1e33, -1e33, 1e308, -1, 0, -0.0, 1.5, 2 ** 63, 2 ** 64,
               -2 ** 63 - 1, 10 ** 30, 1e-300, "", "abc", "1", None, True, False, [], {}, "x" * 5000, [0, 0, 0]]

values = st.one_of(
    st.sampled_from(EDGE_VALUES),
    st.integers(),
    st.floats(),
    st.text(max_size=12),
    st.lists(st.one_of(st.integers(-2, 70), st.text(max_size=3)), max_size=4),
    st.dictionaries(st.text(max_size=6), st.integers(-1, 3), max_size=2),
)
#: (which path, what to do there, the value it takes)
edits = st.lists(st.tuples(st.integers(0, 10 ** 6), st.sampled_from(["set", "set", "set", "delete", "grow", "nest",
                                                                        "retype"]), values), min_size=1, max_size=4)


def _paths(doc) -> list[tuple]:
    out = []

    def walk(v):
        items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
        for k, x in list(items):
            out.append((v, k))
            walk(x)

    walk(doc)
    return out


def mutated(doc, changes):
    """``doc`` (a copy) with each change made at one of its paths."""
    doc = copy.deepcopy(doc)
    for pick, op, value in changes:
        value = copy.deepcopy(value)  # a shared [] set twice would make the document contain itself
        ps = _paths(doc)
        if not ps:
            break
        parent, key = ps[pick % len(ps)]
        if op == "set":
            parent[key] = value
        elif op == "delete":
            del parent[key]
        elif op == "grow":
            if isinstance(parent, dict):
                parent[f"{key}_"] = value
            else:
                parent.insert(key, value)
        elif op == "nest":
            parent[key] = [[[[[parent[key]]]]]]
        else:
            old = parent[key]
            parent[key] = (str(old) if isinstance(old, (int, float)) else [old] if not isinstance(old, list)
                           else {str(i): x for i, x in enumerate(old)})
    return doc


def assert_refusal(e: HetschedError, source: str | None = None) -> None:
    """A refusal a user can act on: not a panic, one short line, the user's file named."""
    assert not isinstance(e, EngineError), f"the engine panicked: {e}"
    text = str(e)
    assert text and "\n" not in text, repr(text[:500])
    assert BIG[:200] not in text and "x" * 200 not in text, f"echoes a huge value: {text[:300]}"
    if source is not None and isinstance(e, InputError):
        assert e.source == source, f"names {e.source!r}, not the file {source!r}: {text[:300]}"


def write(d: str, name: str, data: str | bytes) -> str:
    path = Path(d) / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass"))
    return str(path)


PLATFORM_BASES = ["juno-r0", "gs101", "sdm845", "exynos5422"]


@fuzz(250)
@given(base=st.sampled_from(PLATFORM_BASES), changes=edits)
def test_a_mutated_platform_file_loads_or_is_refused(base, changes, tools):
    doc = mutated(tools.raw_platform(base), changes)
    with tempfile.TemporaryDirectory() as d:
        path = write(d, "platform.json", json.dumps(doc))
        try:
            spec = load_platform(path).to_spec()
            # what the loader passes, the engine must take or refuse: never panic
            Simulation(platform=path, workload="periodic:n=2,util=0.2", lower_bound=False)
        except HetschedError as e:
            assert_refusal(e, path)
        else:
            assert spec["clusters"]


def _strip_json_c(text: str) -> str:
    """Comments and trailing commas out (rt-app files are json-c)."""
    out, i = [], 0
    while i < len(text):
        if text[i] == '"':
            j = i + 1
            while j < len(text) and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("/*", i):
            i = text.index("*/", i) + 2
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
        else:
            out.append(text[i])
            i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


def _rtapp_bases() -> list[dict]:
    bases = []
    for p in sorted(RTAPP_DIR.glob("*.json")):
        try:
            bases.append(json.loads(_strip_json_c(p.read_text())))
        except ValueError:
            pass  # rt-app's liberties past comments and trailing commas ("suspend" alone)
    bases.append({"tasks": {"a": {"loop": 3, "run": 1000, "fork": "b", "sleep": 1000},
                            "b": {"instance": 0, "loop": 1, "run": 500, "lock": "m", "unlock": "m"}}})
    return bases


RTAPP_BASES = _rtapp_bases()
JUNO = load_platform("juno-r0").to_spec()
POLICY = json.dumps({"scheduler": "cfs", "governor": "schedutil", "idle_governor": "menu",
                     "kernel": "mainline-6.12", "knobs": {}, "trace": False, "timeseries": False,
                     "lower_bound": "off"})


@fuzz(250)
@given(base=st.integers(0, len(RTAPP_BASES) - 1), changes=edits)
def test_a_mutated_rtapp_document_loads_or_is_refused(base, changes):
    from hetsched.workloads.rtapp import load_rtapp

    doc = mutated(RTAPP_BASES[base], changes)
    text = json.dumps(doc)
    try:
        spec = load_rtapp(text, source="fuzz.json")
        # the resolved spec goes to the engine as it is: it must build or be refused
        _engine.Engine(json.dumps(JUNO), json.dumps(spec), POLICY)
    except HetschedError as e:
        assert_refusal(e)
        if isinstance(e, InputError) and e.source != "workload":
            assert e.source == "fuzz.json", str(e)


WORKLOAD_PARAMS = [(w, p) for w, d in WORKLOADS.items() for p in d.params]
param_values = st.one_of(
    st.sampled_from(["nan", "NaN", "inf", "-inf", "1e308", "-1e308", "1e33", "-1", "0", "-0", "1e-300", "",
                     "abc", "0x10", "1_0", "\u0661", "1.5", "9" * 5000, "18446744073709551616"]),
    st.floats().map(repr),
    st.integers(-10 ** 6, 10 ** 6).map(str),
    st.text(max_size=8),
)


@fuzz(250)
@given(pick=st.sampled_from(WORKLOAD_PARAMS), value=param_values, seed=st.integers(0, 3))
def test_a_workload_parameter_resolves_or_is_refused(pick, value, seed):
    (name, p) = pick
    arg = f"{name}:{p.name}={value}"
    try:
        spec = resolve_workloads([arg], JUNO, seed)
    except HetschedError as e:
        assert_refusal(e)
        if isinstance(e, InputError):
            # a value with a "/" makes the argument a file name: then the argument is the source
            assert e.source.startswith("--workload") or e.source == arg, str(e)
    else:
        # what was taken is a number in range, and a WorkloadSpec
        if p.choices is None and p.kind is not str and value.strip():
            try:
                v = float(value)
            except ValueError:
                v = None
            if v is not None:
                assert math.isfinite(v), f"{arg} was taken"
                if p.lo is not None:
                    assert p.lo <= v <= p.hi, f"{arg} was taken, outside [{p.lo}, {p.hi}]"
        assert spec["tasks"]


KNOBS = {k["name"]: k for k in knob_table()}
LEARNING = ["learning.tl.period_ms", "learning.tl.step", "learning.tl.lr", "learning.tl.threshold",
            "learning.mc.period_ms", "learning.mc.sample_ms", "learning.mc.step", "learning.mc.lr",
            "learning.record_weights_every_ms", "learning.target_load", "learning.tl.input"]
knob_values = st.one_of(
    st.sampled_from(["nan", "inf", "-inf", "1e308", "-1e308", "-1", "0", "1e-300", "", "abc", "9" * 5000]),
    st.floats().map(repr),
    st.integers(-10 ** 9, 10 ** 9).map(str),
    st.text(max_size=6),
)


def _scheduler_of(knob: str) -> str:
    if knob.startswith("learning."):
        return "learning-eas"
    owners = [n for n, p in POLICIES.items() if not p["switcher_platform"] and not p["controller"]
              and any(knob == k or (k.endswith(".") and knob.startswith(k)) for k in p["knobs"])]
    return owners[-1] if owners else "cfs"


@fuzz(250)
@given(name=st.sampled_from(sorted(KNOBS) + LEARNING), value=knob_values)
def test_a_knob_value_is_taken_or_refused(name, value):
    try:
        Simulation(platform="juno-r0", workload="periodic:n=2,util=0.2", scheduler=_scheduler_of(name),
                   knobs={name: value}, lower_bound=False)
    except HetschedError as e:
        assert_refusal(e)
    else:
        k = KNOBS.get(name)
        if k is not None:
            v = float(value)  # taken: so it was a number
            assert math.isfinite(v) and k["min"] <= v <= k["max"], f"{name}={value!r} was taken"


GRID = {"platforms": ["juno-r0"], "workloads": ["periodic:n=4,util=0.3"], "schedulers": ["cfs"],
        "governors": ["schedutil"], "idle_governors": ["menu"], "knobs": {"schedutil.rate_limit_us": [500]},
        "seeds": 1, "duration": 0.2}


def _grid_text(doc) -> str:
    import yaml

    try:
        return yaml.safe_dump(doc, allow_unicode=True)
    except yaml.YAMLError:
        return json.dumps(doc)


grid_docs = st.one_of(
    edits.map(lambda ch: _grid_text(mutated(GRID, ch)).encode("utf-8", "surrogatepass")),
    st.text(max_size=200).map(lambda s: s.encode("utf-8", "surrogatepass")),
    st.binary(max_size=200),
    st.sampled_from([b"platforms: &a [*a]\n", b"seeds: !!binary aGVsbG8=\n", b"!!python/object/apply:os.system [x]\n",
                     b"platforms:\n\t- gs101\n", b"knobs: {tick_hz: [.nan]}\n", b"duration: .inf\n",
                     b"seeds: 100000000000000000000\n", b"workloads: " + b"[" * 1000 + b"]" * 1000 + b"\n",
                     b"\xef\xbb\xbfplatforms: [juno-r0]\n", b"platforms: [juno-r0]\xff\n"]),
)


@fuzz(250)
@given(data=grid_docs)
def test_a_grid_document_loads_or_is_refused(data):
    from hetsched.sweep import load_grid

    with tempfile.TemporaryDirectory() as d:
        path = write(d, "grid.yaml", data)
        try:
            g = load_grid(path)
        except HetschedError as e:
            assert_refusal(e, path)
        else:
            assert g.cells()


def _trace(ntasks: int = 3, nswitches: int = 30) -> list[str]:
    """ftrace text of ``ntasks`` tasks taking turns on 2 CPUs: the fuzz driver's base trace
    (scripts/fuzz_cli.py, synthetic_trace)."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("fuzz_cli", Path(__file__).resolve().parents[1] / "scripts"
                                                  / "fuzz_cli.py")
    fuzz_cli = importlib.util.module_from_spec(spec)
    sys.modules["fuzz_cli"] = fuzz_cli  # its dataclasses look their module up there
    spec.loader.exec_module(fuzz_cli)
    return fuzz_cli.synthetic_trace(ntasks, nswitches).splitlines()


TRACE = _trace()
trace_fields = st.sampled_from([
    (r"\d+\.\d+(?=:)", ["-1.000000", "nan", "inf", "1e308", "99999999999999999999.9", "0.000000"]),
    (r"(?<=pid=)\d+", ["-1", "0", "99999999999999999999", "abc", ""]),
    (r"(?<=\[)\d{3}(?=\])", ["999", "-01", "abc", "99999999999"]),
    (r"(?<=prev_state=)\S*", ["Z", "", "R+R+", "0x7fffffff", "\ufffd"]),
    (r"(?<=next_comm=)\S*", ["x" * 5000, "==>", "<...>", ""]),
])
trace_edits = st.lists(st.one_of(
    st.tuples(st.just("field"), st.integers(0, 10 ** 6), trace_fields, st.integers(0, 10)),
    st.tuples(st.just("line"), st.integers(0, 10 ** 6), st.sampled_from(["delete", "duplicate", "cut", "junk"]),
              st.integers(0, 200)),
    st.tuples(st.just("order"), st.just(0), st.sampled_from(["reverse", "shuffle"]), st.integers(0, 10 ** 6)),
), min_size=1, max_size=4)


def mutated_trace(changes) -> str:
    import random

    lines = list(TRACE)
    for kind, pick, what, n in changes:
        i = 2 + pick % (len(lines) - 2) if len(lines) > 2 else 0
        if kind == "field" and lines:
            pattern, vals = what
            lines[i] = re.sub(pattern, lambda m: vals[n % len(vals)], lines[i], count=1)
        elif kind == "line" and lines:
            if what == "delete":
                del lines[i]
            elif what == "duplicate":
                lines[i:i] = [lines[i]] * (n + 1)
            elif what == "cut":
                lines[i] = lines[i][:n]
            else:
                lines.insert(i, ":" * n)
        elif kind == "order":
            body = lines[2:]
            if what == "reverse":
                body.reverse()
            else:
                random.Random(n).shuffle(body)
            lines[2:] = body
    return "\n".join(lines) + "\n"


@fuzz(250)
@given(changes=trace_edits)
def test_a_mutated_trace_replays_or_is_refused(changes):
    from hetsched.traces.parse import load_trace
    from hetsched.traces.replay import build_replay

    with tempfile.TemporaryDirectory() as d:
        path = write(d, "trace.txt", mutated_trace(changes))
        try:
            rep = build_replay(load_trace(path))
            # the replay's workload is the engine's to take or refuse
            _engine.Engine(json.dumps(JUNO), json.dumps(rep.spec), POLICY)
        except HetschedError as e:
            assert_refusal(e)


def test_the_unmutated_inputs_are_taken(tools):
    """Each property's base input loads: a mutation that is refused is refused for what
    it changed."""
    from hetsched.sweep import load_grid
    from hetsched.traces.parse import load_trace
    from hetsched.traces.replay import build_replay
    from hetsched.workloads.rtapp import load_rtapp

    for name in PLATFORM_BASES:
        load_platform(name).to_spec()
    for doc in RTAPP_BASES:
        _engine.Engine(json.dumps(JUNO), json.dumps(load_rtapp(json.dumps(doc), source="fuzz.json")), POLICY)
    with tempfile.TemporaryDirectory() as d:
        assert load_grid(write(d, "grid.yaml", _grid_text(GRID))).cells()
        assert build_replay(load_trace(write(d, "trace.txt", "\n".join(TRACE) + "\n"))).tasks
