#!/usr/bin/env python3
"""Fuzz the hetsched command line and classify how each bad input ends.

    python scripts/fuzz_cli.py                          # 1,200 cases, seed 0, 2 at a time
    python scripts/fuzz_cli.py --cases 300 --only rtapp-json --out /tmp/fuzz-rtapp
    python scripts/fuzz_cli.py --case knob-17 -v        # one case again, its stderr in full
    python scripts/fuzz_cli.py --classes policies,traces --cases 300 --out /tmp/fuzz-new

Every case is one ``hetsched`` invocation (run, compare, sweep, replay, em, platforms,
knobs, workloads, schedulers, record, reproduce) with a mutated input: a built-in platform
file, an rt-app file, a trace or a sweep grid mutated (types, signs, NaN/inf/1e33, huge
integers, deletions, duplicated keys, 1,000-level nesting, truncation, bytes that are not
UTF-8, 100 KB strings), an edge value for one parameter of a built-in workload, for one
knob, or for one option of one command. The catalogue (workloads, knobs, commands and
their options) is read from the installed hetsched itself, so a new knob or option is
fuzzed without a change here. Three more classes: ``policies`` (a Python policy file,
``--scheduler FILE.py:CLASS``, mutated: hooks that raise, return the wrong type or an
endless iterator, wrong arities, misspelt hooks, bad names or bases, errors or sys.exit()
at import), ``traces`` (what the kernel cannot write: time back on a CPU, a pid on two CPUs,
a CPU past the header; garbage, truncation, gzip of garbage, a gzip bomb of at most 8 MB;
replay and trace-stats, with and without --repair) and ``full-disk`` (outputs of run,
replay and compare on a tmpfs of 4 KB to 1 MB mounted for the case, out of inodes or
read-only: root only).

Each case runs in a subprocess of its own session, in a fresh directory (its ``--out``
is a fresh ``out`` inside it), with a wall-time limit (a case past it is killed: hang) and
an address-space limit (RLIMIT_AS). How it ends is one class:

  ok               exit 0
  refused          exit 2, stderr exactly one line ``hetsched: error: ...`` naming the
                   option or file the value came from
  refused-badly    exit 2 (or another status) but several lines, no source named, or the
                   line echoes a 100 KB value
  traceback        ``Traceback`` on stderr
  exit-1           exit status 1 without a traceback
  several-lines    exit 2 with more than one line (warnings and compare's progress aside)
  stray-temporaries  a ``.tmp-`` file or directory left, whatever the exit status
  process-left     a process of the case's session still there a second after it ended
  abort            killed by a signal (not the driver's), or exit > 128
  hang             still running at the time limit
  files-left       a non-zero exit that left files in its directory (its --out) that its
                   line does not say it kept
  accepted-invalid exit 0 for a value that is certainly invalid (NaN, inf, outside the
                   declared range of a workload parameter or knob, a name not registered)

``--classes`` runs some of the input classes (default: all; full-disk only as root), and
the summary has a table per class: cases, passes (ok or refused), failures by kind.
Cases are named KIND-J and seeded by (seed, KIND, J) alone, so ``--case`` regenerates
one exactly, whatever ``--cases`` or ``--only``. The results directory gets summary.txt
(counts per class, per command and per input kind, and the distinct failure
signatures), cases.jsonl (every case), failures.jsonl (every case not ok/refused: the
command line, the kept input files, the stderr tail) and cases/KIND-J/ (the inputs, stdout
and stderr of each of those). Exit status 1 if any case is traceback, abort, hang,
anything but ok or refused. docs/robustness.md has the budgets.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
import math
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
RTAPP_DIRS = [REPO / "tests" / "data" / "rtapp", SHARED / "realdata" / "rtapp"]
TRACE_DIR = SHARED / "realdata" / "traces"

CLEAN = ("ok", "refused")
BAD = ("traceback", "exit-1", "several-lines", "refused-badly", "stray-temporaries", "files-left", "process-left",
       "abort", "hang", "accepted-invalid")
CLASSES = CLEAN + BAD
KINDS = {
    # kind: share of the cases (every knob and every option is covered once the share allows)
    "platform-json": 0.16,
    "rtapp-json": 0.22,
    "trace": 0.11,
    "grid": 0.11,
    "workload-param": 0.12,
    "knob": 0.18,
    "cli-option": 0.10,
    "policies": 0.08,
    "traces": 0.08,
    "full-disk": 0.05,
}
#: the classes that need root (a tmpfs is mounted for each case)
NEEDS_ROOT = ("full-disk",)

# Values no loader may take whole: the line that refuses them must quote a few characters.
HUGE_DIGITS = "1234567890" * 10_000          # 100 KB; as a JSON number, past int's 4,300 digits
HUGE_TEXT = "hetsched" * 12_500              # 100 KB
RUN_WORKLOAD = "periodic:n=4,util=0.3"
PLATFORM = "juno-r0"


# ----------------------------------------------------------------------------- catalogue

@dataclass
class Catalogue:
    """What the installed hetsched offers, read from it."""
    platforms: list[str]
    platform_files: list[Path]
    workloads: dict[str, list[Any]]          # name -> [Param]
    knobs: list[dict]
    learning: list[str]                      # learning.* controller options
    schedulers: list[str]
    controller_schedulers: list[str]
    switcher_schedulers: list[str]
    governors: list[str]
    idle_governors: list[str]
    kernels: list[str]
    commands: dict[str, list[dict]]          # "platforms show" -> [{name, opts, type, multiple, flag, argument}]
    studies: list[str]


def load_catalogue() -> Catalogue:
    import dataclasses

    import typer.main

    from hetsched.cli import app
    from hetsched.learning.agents import MigrationCostConfig, TargetLoadConfig
    from hetsched.platforms import DATA_DIR, list_platforms
    from hetsched.sim import (CONTROLLER_SCHEDULERS, GOVERNORS, IDLE_GOVERNORS, KERNEL_PROFILES, SCHEDULERS,
                              SWITCHER_SCHEDULERS, knob_table)
    from hetsched.workloads.builtin import WORKLOADS

    learning = ["learning.target_load", "learning.migration_cost", "learning.state", "learning.record",
                "learning.keep_record", "learning.restore_knobs", "learning.record_weights_every_ms",
                "learning.apply", "learning.initial"]
    learning += [f"learning.tl.{f.name}" for f in dataclasses.fields(TargetLoadConfig)]
    learning += [f"learning.mc.{f.name}" for f in dataclasses.fields(MigrationCostConfig)]

    commands: dict[str, list[dict]] = {}

    def walk(cmd, prefix: list[str]) -> None:
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, prefix + [name])
        if prefix:
            commands[" ".join(prefix)] = [
                {"name": p.name, "opts": list(p.opts), "type": p.type.name, "multiple": bool(p.multiple),
                 "flag": bool(getattr(p, "is_flag", False)), "argument": p.param_type_name == "argument",
                 "optional": p.default is None and not p.required}
                for p in cmd.params]

    walk(typer.main.get_command(app), [])
    try:
        from hetsched.reproduce import STUDIES  # type: ignore[attr-defined]
        studies = list(STUDIES)
    except ImportError:
        studies = ["learning-eas", "util-aware-lb", "fa-cfs", "ospm2020", "hmc-balance"]
    return Catalogue(
        platforms=list_platforms(), platform_files=sorted(DATA_DIR.glob("*.json")),
        workloads={n: list(w.params) for n, w in WORKLOADS.items()}, knobs=knob_table(), learning=learning,
        schedulers=list(SCHEDULERS), controller_schedulers=list(CONTROLLER_SCHEDULERS),
        switcher_schedulers=list(SWITCHER_SCHEDULERS), governors=list(GOVERNORS),
        idle_governors=list(IDLE_GOVERNORS), kernels=list(KERNEL_PROFILES), commands=commands,
        studies=studies)


# ----------------------------------------------------------------------------- a case

@dataclass
class Case:
    name: str                                 # KIND-J
    kind: str
    command: str = ""                         # run, compare, platforms show, ...
    args: list[str] = field(default_factory=list)   # "{dir}" is the case's directory
    files: dict[str, bytes] = field(default_factory=dict)
    dirs: list[str] = field(default_factory=list)   # empty directories to make
    invalid: bool = False                     # exit 0 would be accepting garbage
    about: str = ""                           # what was mutated, for the signature
    note: list[str] = field(default_factory=list)   # every mutation, in order
    mount: str = ""                           # tmpfs options of a file system mounted at {dir}/tiny



def typo(rng: random.Random, name: str) -> str:
    """A near miss of a registered name (never the name itself)."""
    ops = [
        lambda s: s[:-1] if len(s) > 1 else s + "x",
        lambda s: s + s[-1:],
        lambda s: s.upper(),
        lambda s: " " + s,
        lambda s: s + " ",
        lambda s: s.replace("e", "\u0435", 1) if "e" in s else s + "\u0435",   # Cyrillic e
        lambda s: s[1:] + s[:1],
        lambda s: s + "\x7f",
        lambda s: s.replace("-", "_") if "-" in s else s + "-",
    ]
    for _ in range(10):
        t = rng.choice(ops)(name)
        if t != name:
            return t
    return name + "zz"


NUM_EDGES_TEXT = ["nan", "NaN", "inf", "-inf", "Infinity", "1e308", "-1e308", "1e33", "1e12", "-1", "0", "-0",
                  "1e-300", "18446744073709551616", "9" * 40, "abc", "", " ", "0x10", "1_000", "1,5", "5e",
                  "+5", "\u0661", "1.5", HUGE_DIGITS]


def certainly_invalid_number(text: str, lo: float | None, hi: float | None, integer: bool) -> bool:
    """True for a value no number parameter with that range may accept."""
    try:
        v = float(text)
    except ValueError:
        return text.strip() != "" and not re.fullmatch(r"\s*[+-]?[\d_]+\s*", text) and "\u0661" not in text
    if not math.isfinite(v):
        return True
    if integer and v != int(v):
        return True
    return (lo is not None and v < lo) or (hi is not None and v > hi)


# ----------------------------------------------------------------------------- JSON trees

class Obj(list):
    """A JSON object as its (key, value) pairs: keeps order and repeated keys (rt-app's
    workgen semantics make a repeated key a sequence)."""


def parse_tree(text: str) -> Any:
    return json.loads(text, object_pairs_hook=Obj)


def strip_json_c(text: str) -> str:
    """Comments and trailing commas out (json-c accepts them; rt-app files have them)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("/*", i):
            i = text.find("*/", i + 2) + 2 if text.find("*/", i + 2) >= 0 else n
        elif text.startswith("//", i):
            i = text.find("\n", i) if text.find("\n", i) >= 0 else n
        else:
            out.append(c)
            i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


def dump_tree(v: Any, yaml_floats: bool = False) -> str:
    """JSON text of a tree (repeated keys kept). NaN/inf come out as JSON's extensions
    (NaN, Infinity) or, for YAML, as .nan/.inf."""
    if isinstance(v, Obj):
        return "{" + ", ".join(f"{json.dumps(str(k))}: {dump_tree(x, yaml_floats)}" for k, x in v) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(dump_tree(x, yaml_floats) for x in v) + "]"
    if isinstance(v, float) and not math.isfinite(v) and yaml_floats:
        return ".nan" if v != v else (".inf" if v > 0 else "-.inf")
    if isinstance(v, Raw):
        return v.text
    return json.dumps(v)


class Raw:
    """A literal piece of document text (a number past what json.dumps writes, deep nesting)."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return f"Raw({self.text[:20]!r}...)" if len(self.text) > 20 else f"Raw({self.text!r})"


def paths(tree: Any) -> list[tuple]:
    """Every (container, key or index, dotted path) of a tree."""
    out: list[tuple] = []

    def walk(v: Any, where: str) -> None:
        if isinstance(v, Obj):
            for i, (k, x) in enumerate(v):
                p = f"{where}.{k}" if where else str(k)
                out.append((v, i, p))
                walk(x, p)
        elif isinstance(v, list):
            for i, x in enumerate(v):
                p = f"{where}[{i}]"
                out.append((v, i, p))
                walk(x, p)

    walk(tree, "")
    return out


def get(container: Any, i: int) -> Any:
    return container[i][1] if isinstance(container, Obj) else container[i]


def put(container: Any, i: int, value: Any) -> None:
    if isinstance(container, Obj):
        container[i] = (container[i][0], value)
    else:
        container[i] = value


def edge_value(rng: random.Random) -> tuple[Any, str]:
    return rng.choice([
        (float("nan"), "NaN"), (float("inf"), "Infinity"), (float("-inf"), "-Infinity"), (1e33, "1e33"),
        (-1e33, "-1e33"), (1e308, "1e308"), (-1, "-1"), (0, "0"), (-0.0, "-0.0"), (1.5, "1.5"), (2 ** 63, "2**63"),
        (2 ** 64, "2**64"), (-2 ** 63 - 1, "-2**63-1"), (10 ** 30, "10**30"), (1e-300, "1e-300"),
        (Raw(HUGE_DIGITS[:5000]), "5000-digit integer"), (Raw("1" + "0" * 400 + ".5"), "1e400 as digits"),
        ("", '""'), ("abc", '"abc"'), ("1", '"1"'), (None, "null"), (True, "true"), (False, "false"), ([], "[]"),
        (Obj(), "{}"), (HUGE_TEXT, "100 KB string"), ("\u202e\u0000\ufffe", "control characters"),
        (Raw(HUGE_DIGITS), "100 KB integer"),
    ])


def nested(depth: int, inner: str, brace: bool) -> str:
    return ('{"a": ' * depth + inner + "}" * depth) if brace else ("[" * depth + inner + "]" * depth)


TREE_OPS = ("edge", "edge", "edge", "delete", "duplicate-key", "duplicate-item", "retype", "empty", "unknown-key",
            "deep", "huge-list")


def mutate_tree(rng: random.Random, tree: Any, case: Case) -> Any:
    """One mutation somewhere in ``tree`` (in place where it can be); returns the tree.
    A duplicate-key drawn inside a list, or a duplicate-item inside an object, does nothing."""
    ps = paths(tree)
    if not ps:
        return tree
    cont, i, where = rng.choice(ps)
    op = rng.choice(TREE_OPS)
    old = get(cont, i)
    if op == "huge-list" and len(dump_tree(tree)) > 500_000:
        op = "edge"  # one list of thousands per document is enough
    if op == "edge":
        v, label = edge_value(rng)
        put(cont, i, v)
        case.note.append(f"{where} <- {label}")
        case.about = case.about or f"{where.split('.')[-1]}={label}"
    elif op == "delete":
        del cont[i]
        case.note.append(f"{where} deleted")
    elif op == "duplicate-key" and isinstance(cont, Obj):
        v, label = edge_value(rng)
        cont.append((cont[i][0], v))
        case.note.append(f"{where} repeated with {label}")
    elif op == "duplicate-item" and isinstance(cont, list) and not isinstance(cont, Obj):
        cont.insert(i, old)
        case.note.append(f"{where} duplicated")
    elif op == "retype":
        if isinstance(old, Raw):
            new: Any = old.text[:100]
        elif isinstance(old, bool) or old is None:
            new = str(old).lower()
        elif isinstance(old, (int, float)):
            new = rng.choice([str(old), [old], Obj([("value", old)])])
        elif isinstance(old, str):
            new = rng.choice([0, 1.0, [old], Obj([(old, old)])])
        elif isinstance(old, Obj):
            new = [x for _, x in old]
        else:
            new = Obj((str(j), x) for j, x in enumerate(old))
        put(cont, i, new)
        case.note.append(f"{where} retyped to {type(new).__name__}")
    elif op == "empty":
        put(cont, i, Obj() if isinstance(old, Obj) else [] if isinstance(old, list) else "")
        case.note.append(f"{where} emptied")
    elif op == "unknown-key":
        target = old if isinstance(old, Obj) else cont if isinstance(cont, Obj) else None
        if target is not None:
            key = typo(rng, str(target[0][0])) if target else "unknown"
            target.append((key, 1))
            case.note.append(f"{where}: unknown key {key!r}")
    elif op == "deep":
        put(cont, i, Raw(nested(rng.choice([1000, 5000, 100_000]), dump_tree(old), rng.random() < 0.5)))
        case.note.append(f"{where} nested deep")
        case.about = case.about or "deep nesting"
    elif op == "huge-list":
        # thousands of copies, the file kept under 2 MB
        put(cont, i, [old] * max(2, min(rng.choice([1000, 20_000]), 2_000_000 // len(dump_tree(old)))))
        case.note.append(f"{where} as a list of thousands")
        case.about = case.about or f"{where.split('.')[-1]} x thousands"
    return tree


TEXT_OPS = ("truncate", "not-utf8", "nul", "bom", "empty", "deep-text", "garbage-tail")


def mutate_text(rng: random.Random, data: bytes, case: Case, json_like: bool = True) -> bytes:
    op = rng.choice(TEXT_OPS)
    pos = rng.randrange(len(data) + 1) if data else 0
    if op == "truncate":
        case.note.append(f"truncated at byte {pos}")
        return data[:pos]
    if op == "not-utf8":
        case.note.append(f"bytes that are not UTF-8 at {pos}")
        case.about = case.about or "not UTF-8"
        return data[:pos] + rng.choice([b"\xff\xfe", b"\xc3\x28", b"\xed\xa0\x80", b"\x80"]) + data[pos:]
    if op == "nul":
        case.note.append(f"NUL byte at {pos}")
        return data[:pos] + b"\x00" + data[pos:]
    if op == "bom":
        case.note.append("UTF-8 byte order mark")
        return b"\xef\xbb\xbf" + data
    if op == "empty":
        case.note.append("empty file")
        return rng.choice([b"", b" \n"])
    if op == "deep-text":
        depth = rng.choice([1000, 100_000])
        case.note.append(f"{depth} levels of nesting")
        case.about = case.about or "deep nesting"
        return (b"[" * depth + b"]" * depth) if json_like else (b"- " * depth + b"x\n")
    case.note.append("garbage after the document")
    return data + rng.choice([b"}", b"]]]", b"\n{\"x\": 1}", b"\x1b[31m", b",,,"])


# ----------------------------------------------------------------------------- generators

def base_run(duration: str = "0.5", platform: str = PLATFORM, workload: str = RUN_WORKLOAD) -> list[str]:
    return ["run", "--platform", platform, "--workload", workload, "--duration", duration, "--out", "{dir}/out"]


def gen_platform(rng: random.Random, cat: Catalogue, case: Case) -> None:
    src = rng.choice(cat.platform_files)
    tree = parse_tree(src.read_text())
    case.note.append(f"from {src.name}")
    for _ in range(rng.choice([1, 1, 2, 3])):
        tree = mutate_tree(rng, tree, case)
    data = dump_tree(tree).encode("utf-8", "surrogatepass")
    if rng.random() < 0.2:
        data = mutate_text(rng, data, case)
    case.files["platform.json"] = data
    f = "{dir}/platform.json"
    r = rng.random()
    if r < 0.45:
        case.command, case.args = "platforms show", ["platforms", "show", f]
    elif r < 0.6:
        case.command, case.args = "em", ["em", f]
    elif r < 0.95:
        case.command, case.args = "run", base_run("0.3", platform=f)
    else:
        case.command = "compare"
        case.args = ["compare", "--platform", f, "--workload", RUN_WORKLOAD, "--scheduler", "cfs", "--seeds", "1",
                     "--duration", "0.2", "--out", "{dir}/out"]


RTAPP_EVENTS = ["run", "runtime", "sleep", "timer", "lock", "unlock", "wait", "signal", "broad", "sync", "barrier",
                "suspend", "resume", "sem_post", "sem_wait", "mem", "iorun", "memrun", "yield", "fork"]
RTAPP_PROPS = ["policy", "priority", "cpus", "util_min", "util_max", "dl-runtime", "dl-period", "dl-deadline",
               "delay", "instance", "loop", "taskgroup", "nodes_membind"]


def rt_number(rng: random.Random, typical: list[int], case: Case, where: str) -> Any:
    if rng.random() < 0.12:
        v, label = edge_value(rng)
        case.note.append(f"{where} <- {label}")
        case.about = case.about or f"{where.split('.')[-1]}={label}"
        return v
    return rng.choice(typical)


def gen_rtapp_doc(rng: random.Random, case: Case) -> Obj:
    """A random document of rt-app's grammar (shared/reference/workloads.md §1): mostly
    values rt-app takes, some edge values."""
    names = [rng.choice(["t", "worker", "unique_t", "ui", "a", "b"]) + str(k) for k in range(rng.randint(1, 4))]
    mutexes = ["m0", "m1"]
    tasks = Obj()
    for ti, name in enumerate(names):
        task = Obj()
        for prop in rng.sample(RTAPP_PROPS, rng.randint(0, 3)):
            where = f"tasks.{name}.{prop}"
            if prop == "policy":
                v: Any = rng.choice(["SCHED_OTHER", "SCHED_FIFO", "SCHED_RR", "SCHED_DEADLINE", "SCHED_IDLE",
                                     "SCHED_BATCH", "SCHED_BOGUS", "other"])
            elif prop == "cpus":
                v = rng.choice([[0], [0, 1], [], [99], [-1], [0, 0], list(range(64))])
            elif prop == "instance":
                v = rt_number(rng, [0, 1, 1, 2], case, where)
            elif prop == "loop":
                v = rt_number(rng, [-1, 1, 3, 10], case, where)
            else:
                v = rt_number(rng, [0, 1, 10, 512, 1024, 10000], case, where)
            task.append((prop, v))
        events = Obj()
        for k in range(rng.randint(1, 6)):
            ev = rng.choice(RTAPP_EVENTS)
            key = f"{ev}{k}"
            where = f"tasks.{name}.{key}"
            if ev in ("run", "runtime", "sleep", "mem", "iorun"):
                v = rt_number(rng, [0, 100, 1000, 5000, 20000], case, where)
            elif ev == "timer":
                v = Obj([("ref", rng.choice(["tick", "unique", "t"])), ("period", rt_number(rng, [1000, 16667, 100000],
                                                                                         case, where + ".period"))])
                if rng.random() < 0.3:
                    v.append(("mode", rng.choice(["relative", "absolute", "sideways"])))
            elif ev in ("lock", "unlock", "signal", "broad", "barrier", "sem_post", "sem_wait"):
                v = rng.choice(mutexes + ["b0"])
            elif ev in ("wait", "sync"):
                v = Obj([("ref", "c0"), ("mutex", rng.choice(mutexes))])
            elif ev == "memrun":
                v = Obj([("read", rt_number(rng, [4096, 65536], case, where))])
            elif ev == "resume":
                v = rng.choice(names)
            elif ev == "fork":
                v = rng.choice(names)
            else:
                v = rng.choice([0, "", Obj()])
            events.append((key, v))
        if rng.random() < 0.3:
            phases = Obj()
            for p in range(rng.randint(1, 3)):
                ph = Obj(list(events))
                ph.append(("loop", rt_number(rng, [1, 2, 5], case, f"tasks.{name}.phases.p{p}.loop")))
                phases.append((f"p{p}", ph))
            task.append(("phases", phases))
        else:
            task.extend(events)
        tasks.append((name, task))
    doc = Obj([("tasks", tasks)])
    if rng.random() < 0.5:
        glob = Obj([("duration", rt_number(rng, [-1, 1, 2], case, "global.duration")),
                    ("calibration", rng.choice(["CPU0", 100, "CPU9", -5]))])
        if rng.random() < 0.3:
            glob.append(("default_policy", rng.choice(["SCHED_OTHER", "SCHED_FIFO", "SCHED_NONE"])))
        doc.append(("global", glob))
    return doc


def gen_rtapp(rng: random.Random, cat: Catalogue, case: Case) -> None:
    files = sorted({p.name: p for d in RTAPP_DIRS if d.is_dir() for p in d.glob("*.json")}.values())
    r = rng.random()
    if r < 0.45 and files:
        src = rng.choice(files)
        case.note.append(f"from {src.name}")
        try:
            tree = parse_tree(strip_json_c(src.read_text()))
        except ValueError:
            # rt-app's own liberties beyond comments and trailing commas ("suspend", as a
            # bare key): mutated as text
            case.files["workload.json"] = mutate_text(rng, src.read_bytes(), case)
            tree = None
        for _ in range(rng.choice([1, 1, 2, 3]) if tree is not None else 0):
            tree = mutate_tree(rng, tree, case)
    else:
        tree = gen_rtapp_doc(rng, case)
        case.note.append("generated from the grammar")
        if r > 0.8:
            tree = mutate_tree(rng, tree, case)
    if tree is not None:
        data = dump_tree(tree).encode("utf-8", "surrogatepass")
        if rng.random() < 0.15:
            data = mutate_text(rng, data, case)
        case.files["workload.json"] = data
    case.command = "run"
    wl = ["--workload", "{dir}/workload.json"]
    if rng.random() < 0.1:
        wl += ["--workload", "phone-mix"]
    plat = rng.choice([PLATFORM, PLATFORM, "gs101", "hikey960"])
    case.args = ["run", "--platform", plat, *wl, "--duration", rng.choice(["0.3", "0.5", "1"]), "--out", "{dir}/out"]
    if rng.random() < 0.1:
        case.args += ["--scheduler", rng.choice(cat.schedulers[:3])]


def base_trace(rng: random.Random) -> tuple[list[str], str]:
    """Lines of a real trace (its first few hundred), or a synthetic one if the real ones
    are not here."""
    real = [p for p in ("tracecompass_android_sched_ftrace.txt", "tracecompass_x86_critical_path_ftrace.txt",
                        "lisa_juno_r0_trace.txt", "trappy_android_surfaceflinger_systrace.html")
            if (TRACE_DIR / p).is_file()]
    if real and rng.random() < 0.85:
        name = rng.choice(real)
        text = (TRACE_DIR / name).read_text(errors="replace")
        if name.endswith(".html"):
            # the page around the first 400 lines of its trace block
            tag = '<script class="trace-data" type="application/text">'
            head, _, rest = text.partition(tag)
            body, _, tail = rest.partition("</script>")
            return [head + tag, *body.splitlines()[:400], "</script>" + tail[:2000]], name
        return text.splitlines()[:rng.choice([60, 200, 400])], name
    return synthetic_trace(rng.randint(2, 6), rng.randint(20, 120)).splitlines(), "synthetic"


def synthetic_trace(ntasks: int, nswitches: int, cpus: int = 2) -> str:
    """An ftrace text trace of ``ntasks`` tasks switching on ``cpus`` CPUs."""
    out = ["# tracer: nop", "#"]
    ts = 1000.000100
    running = {c: (0, f"swapper/{c}") for c in range(cpus)}
    for k in range(nswitches):
        cpu = k % cpus
        pid = 100 + (k % ntasks)
        comm = f"task{pid}"
        prev_pid, prev_comm = running[cpu]
        ts += 0.000250
        out.append(f"     {comm}-{pid}   [{cpu:03d}] d..3 {ts:.6f}: sched_wakeup: comm={comm} pid={pid} prio=120 "
                   f"target_cpu={cpu:03d}")
        ts += 0.000050
        out.append(f"     {prev_comm}-{prev_pid}   [{cpu:03d}] d..3 {ts:.6f}: sched_switch: prev_comm={prev_comm} "
                   f"prev_pid={prev_pid} prev_prio=120 prev_state={'S' if prev_pid else 'R'} ==> next_comm={comm} "
                   f"next_pid={pid} next_prio=120")
        running[cpu] = (pid, comm)
    return "\n".join(out) + "\n"


TS_RE = re.compile(r"(\s)(\d+\.\d+)(:)")
PID_RE = re.compile(r"((?:next_|prev_)?pid=)(\d+)")
CPU_RE = re.compile(r"\[(\d{3})\]")


def mutate_trace_lines(rng: random.Random, lines: list[str], case: Case) -> list[str]:
    events = [i for i, ln in enumerate(lines) if ": sched_" in ln]
    if not events:
        events = list(range(len(lines)))
    op = rng.choice(["ts", "ts", "pid", "cpu", "state", "comm", "delete", "duplicate", "reverse", "junk", "arrow",
                     "field", "truncate-line"])
    i = rng.choice(events) if events else 0
    ln = lines[i] if lines else ""
    if op == "ts":
        v = rng.choice(["-1.000000", "nan", "inf", "1e308", "99999999999999999999.999999", "0.000000",
                        "1.7976931348623157e308", "18446744073.709552"])
        lines[i] = TS_RE.sub(lambda m: f"{m[1]}{v}{m[3]}", ln, count=1)
        case.note.append(f"line {i + 1}: timestamp {v}")
        case.about = case.about or f"timestamp={v}"
    elif op == "pid":
        v = rng.choice(["-1", "0", "99999999999999999999", "4294967296", "abc", ""])
        lines[i] = PID_RE.sub(lambda m: m[1] + v, ln, count=1)
        case.note.append(f"line {i + 1}: pid {v!r}")
        case.about = case.about or f"pid={v}"
    elif op == "cpu":
        v = rng.choice(["999", "-01", "abc", "99999999999", "064", "0063"])
        lines[i] = CPU_RE.sub(f"[{v}]", ln, count=1)
        case.note.append(f"line {i + 1}: CPU [{v}]")
        case.about = case.about or f"cpu=[{v}]"
    elif op == "state":
        v = rng.choice(["Z", "", "R+R+R+", "0x7fffffff", "-1", "X|D|W", "\ufffd"])
        lines[i] = re.sub(r"prev_state=\S*", f"prev_state={v}", ln)
        case.note.append(f"line {i + 1}: prev_state {v!r}")
    elif op == "comm":
        v = rng.choice([HUGE_TEXT, "a b c", "==>", "<...>", "x=y", "\u202e", ""])
        lines[i] = re.sub(r"(next_comm=)\S*", lambda m: m[1] + v, ln)
        case.note.append(f"line {i + 1}: next_comm of {len(v)} chars")
    elif op == "delete":
        k = rng.randint(1, max(1, len(lines) // 3))
        del lines[i:i + k]
        case.note.append(f"lines {i + 1}..{i + k} deleted")
    elif op == "duplicate":
        lines[i:i] = [ln] * rng.choice([1, 100, 5000])
        case.note.append(f"line {i + 1} repeated")
    elif op == "reverse":
        lines[:] = lines[:2] + lines[2:][::-1]
        case.note.append("events in reverse time order")
        case.about = case.about or "time goes backwards"
    elif op == "junk":
        lines.insert(i, rng.choice(["garbage", "x-1 [000] .... 1.0: sched_switch:", "\t" * 100, ":" * 1000,
                                    "a-1 [000] d..3 1.0: sched_switch: prev_pid=1 ==> next_pid=1"]))
        case.note.append(f"junk line at {i + 1}")
    elif op == "arrow":
        lines[i] = ln.replace(" ==> ", " ")
        case.note.append(f"line {i + 1}: no ==>")
    elif op == "field":
        lines[i] = re.sub(r"\b(\w+)=(\S+)", lambda m: m[1] + "=" if rng.random() < 0.5 else m[0], ln)
        case.note.append(f"line {i + 1}: empty fields")
    else:
        lines[i] = ln[:rng.randrange(len(ln) + 1)]
        case.note.append(f"line {i + 1} cut short")
    return lines


def gen_trace(rng: random.Random, cat: Catalogue, case: Case) -> None:
    lines, name = base_trace(rng)
    case.note.append(f"from {name}")
    if rng.random() < 0.15:
        header = Obj([("root_pid", 100), ("command", ["true"]), ("exit_status", 0), ("wall_s", 0.1),
                      ("cpus", 2), ("lost_events", 0), ("platform", "host")])
        header = mutate_tree(rng, header, case)
        lines.insert(0, "# hetsched-record: " + dump_tree(header))
        case.note.append("with a hetsched-record header")
    for _ in range(rng.choice([1, 1, 2, 3])):
        lines = mutate_trace_lines(rng, lines, case)
    data = ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")
    fname = "trace.html" if name.endswith(".html") else "trace.txt"
    if rng.random() < 0.15:
        data = mutate_text(rng, data, case, json_like=False)
    if rng.random() < 0.08:
        data = gzip.compress(data, mtime=0)
        if rng.random() < 0.5:
            data = data[:len(data) // 2]
            case.note.append("gzip, cut in half")
        else:
            case.note.append("gzip")
        fname = "trace.txt.gz"
    case.files[fname] = data
    case.command = "replay"
    args = ["replay", "{dir}/" + fname, "--platform", rng.choice([PLATFORM, PLATFORM, "gs101"])]
    if rng.random() < 0.85:
        args += ["--duration", rng.choice(["0.3", "0.5", "1"])]
    for opt in ("--include-kthreads", "--relative-sleeps", "--write-spec", "--trace"):
        if rng.random() < 0.15:
            args.append(opt)
    if rng.random() < 0.2:
        args += ["--tasks", rng.choice(["auto", "all", "tree"])]
    if rng.random() < 0.1:
        args += ["--source-platform", rng.choice(["juno-r0", "gs101"])]
    case.args = args + ["--out", "{dir}/out"]


def base_grid() -> Obj:
    return Obj([("platforms", [PLATFORM]), ("workloads", [RUN_WORKLOAD]), ("schedulers", ["cfs"]),
                ("governors", ["schedutil"]), ("idle_governors", ["menu"]),
                ("knobs", Obj([("schedutil.rate_limit_us", [500])])), ("seeds", 1), ("duration", 0.2)])


def gen_grid(rng: random.Random, cat: Catalogue, case: Case) -> None:
    tree = base_grid()
    r = rng.random()
    if r < 0.15:
        # a grid naming an input file of its own, mutated: the error must name the grid and the file
        sub = Case(case.name, "platform-json")
        if rng.random() < 0.5:
            gen_platform(rng, cat, sub)
            case.files["p.json"] = sub.files["platform.json"]
            put(tree, 0, ["p.json"])
        else:
            gen_rtapp(rng, cat, sub)
            case.files["w.json"] = sub.files["workload.json"]
            put(tree, 1, ["w.json"])
        case.note += [f"grid names {n}" for n in sub.note]
        case.about = sub.about
    else:
        for _ in range(rng.choice([1, 1, 2])):
            tree = mutate_tree(rng, tree, case)
        if rng.random() < 0.2:
            k = rng.choice(cat.knobs)["name"]
            v, label = edge_value(rng)
            tree.append(("knobs", Obj([(k, [v])])))
            case.note.append(f"knobs.{k} <- {label}")
            case.about = case.about or f"knob={label}"
    text = dump_tree(tree, yaml_floats=True)
    if rng.random() < 0.3:
        try:
            import yaml

            plain = json.loads(dump_tree(tree))
            text = yaml.safe_dump(plain, default_flow_style=rng.random() < 0.3)
        except (ValueError, TypeError, RecursionError):
            pass
    data = text.encode("utf-8", "surrogatepass")
    r = rng.random()
    if r < 0.1:
        data = rng.choice([b"platforms: &a [*a]\n", b"a: &a [x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
                           b"c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n",
                           b"!!python/object/apply:os.system [echo]\n", b"seeds: !!binary aGVsbG8=\n",
                           b"platforms:\n\t- gs101\n", b"%YAML 9.9\n---\n{}", b"---\n...\n---\n"])
        case.note.append(f"YAML oddity {data[:30]!r}")
    elif r < 0.25:
        data = mutate_text(rng, data, case, json_like=rng.random() < 0.5)
    case.files["grid.yaml"] = data
    case.command = "sweep"
    case.args = ["sweep", "{dir}/grid.yaml", "--out", "{dir}/out", "--workers", "1"]


def workload_value(rng: random.Random, p: Any) -> tuple[str, bool]:
    """An edge value for a workload parameter, and whether it is certainly invalid."""
    if p.choices:
        v = rng.choice([typo(rng, rng.choice(p.choices)), "", HUGE_TEXT, "nan", "0", rng.choice(p.choices)])
        return v, v not in p.choices
    if p.kind is str:
        v = rng.choice(["", "nan", "-1:0", "::::", "1e308", HUGE_TEXT, "20:20:20", "x"])
        return v, v in ("nan", "1e308", HUGE_TEXT, "x")
    choices = list(NUM_EDGES_TEXT)
    for bound in (p.lo, p.hi):
        if bound is not None:
            step = 1 if p.kind is int else max(abs(bound) * 1e-9, 1e-12)
            choices += [repr(p.kind(bound)), repr(bound - step), repr(bound + step)]
    v = rng.choice(choices)
    return v, certainly_invalid_number(v, p.lo, p.hi, p.kind is int)


def gen_workload_param(rng: random.Random, cat: Catalogue, case: Case, j: int) -> None:
    pairs = [(w, p) for w, ps in cat.workloads.items() for p in ps]
    w, p = pairs[j % len(pairs)]
    v, bad = workload_value(rng, p)
    arg = f"{w}:{p.name}={v}"
    if rng.random() < 0.15 and len(cat.workloads[w]) > 1:
        other = rng.choice([q for q in cat.workloads[w] if q.name != p.name])
        ov, obad = workload_value(rng, other)
        arg += f",{other.name}={ov}"
        bad = bad or obad
    if "," in v or "=" in v:
        bad = False  # splits into other items: what they mean is not this parameter's value
    case.invalid = bad
    case.about = f"{w}:{p.name}={v[:20]}"
    case.note.append(f"--workload {arg[:200]}")
    if rng.random() < 0.85:
        case.command, case.args = "run", base_run(rng.choice(["0.5", "1", "2"]), workload=arg)
    else:
        case.command = "compare"
        case.args = ["compare", "--platform", PLATFORM, "--workload", arg, "--scheduler", "cfs", "--seeds", "1",
                     "--duration", "0.5", "--out", "{dir}/out"]


MSM_FAMILIES = ("core_ctl.", "schedtune.", "sched_walt", "sched_ravg", "sched_window", "sched_init_task",
                "sched_predl", "sched_io_is_busy", "sched_freq_reporting", "schedutil.hispeed", "schedutil.pl",
                "schedutil.up_rate", "schedutil.down_rate")
GOVERNOR_FAMILIES = ("schedutil.", "ondemand.", "conservative.", "userspace.", "interactive.")


def knob_context(cat: Catalogue, name: str) -> list[str]:
    """The options under which a knob is in effect: its scheduler, governor, kernel."""
    from hetsched.sim import POLICIES

    args: list[str] = []
    owners = [n for n, p in POLICIES.items() if any(name == k or (k.endswith(".") and name.startswith(k))
                                                    for k in p["knobs"])]
    sched = next((n for n in owners if n not in ("cfs", "baseline")), owners[0] if owners else None)
    if name.startswith("learning."):
        sched = "learning-eas"
    platform = PLATFORM
    if sched in cat.switcher_schedulers or name.startswith("switcher."):
        platform, sched = "exynos5422:switcher", sched if sched in cat.switcher_schedulers else "legacy"
    if name.startswith(MSM_FAMILIES):
        platform = "sm8150"
        args += ["--set", "kernel=msm-4.14"]
        sched = sched or "eas"
    gov = next((g[:-1] for g in GOVERNOR_FAMILIES if name.startswith(g)), None)
    if name.startswith(("hps.", "hotplug.")):
        args += ["--set", "hotplug=hps"]
    out = ["--platform", platform]
    if sched:
        out += ["--scheduler", sched]
    if gov:
        out += ["--governor", gov]
    if sched in cat.switcher_schedulers and not gov:
        out += ["--governor", "ondemand"]
    return out + args


def knob_value(rng: random.Random, k: dict | None) -> tuple[str, bool]:
    choices = list(NUM_EDGES_TEXT)
    if k is not None:
        lo, hi = k["min"], k["max"]
        choices += [f"{lo:g}", f"{hi:g}", repr(lo - max(abs(lo) * 1e-6, 1e-6)), repr(hi + max(abs(hi) * 1e-6, 1e-6))]
    v = rng.choice(choices)
    if k is None:
        return v, v.strip().lower() in ("nan", "inf", "-inf", "infinity", "abc")
    return v, certainly_invalid_number(v, k["min"], k["max"], False) and k["name"] != "util_aware.estimator"


def gen_knob(rng: random.Random, cat: Catalogue, case: Case, j: int) -> None:
    table = {k["name"]: k for k in cat.knobs}
    names = list(table) + cat.learning
    name = names[j % len(names)]
    k = table.get(name)
    if name in ("learning.state", "learning.record"):
        # a missing directory is made, as --out's is (valid): inside the case's directory, so
        # that a run as root leaves nothing elsewhere
        v = rng.choice(["/proc/hetsched-fuzz/x.json", "{dir}/missing/dir/x.json", "{dir}", "{dir}/taken/x.json",
                        "", HUGE_TEXT[:5000], "{dir}/ok.json"])
        bad = v not in ("", "{dir}/ok.json", "{dir}/missing/dir/x.json") and not v.startswith("hetsched")
        case.files["taken"] = b"a file, not a directory\n"
    elif name in ("learning.target_load", "learning.migration_cost", "learning.keep_record",
                  "learning.restore_knobs", "learning.apply"):
        v = rng.choice(["on", "off", "1", "0", "maybe", "", "nan", HUGE_TEXT])
        bad = (name in ("learning.target_load", "learning.migration_cost", "learning.apply")
               and v not in ("on", "off", "1", "0"))
    elif name == "learning.initial":
        v = rng.choice(["power-test", "fresh", "boot", "", "nan"])
        bad = v not in ("power-test", "fresh")
    elif name == "learning.tl.input":
        v = rng.choice(["util", "eq8", "utl", "", "nan"])
        bad = v not in ("util", "eq8")
    else:
        v, bad = knob_value(rng, k)
        if k is None and v in ("0", "-1", "-0"):
            bad = False  # the controller's periods: whether 0 is refused is what the case finds out
    case.invalid = bad
    case.about = f"{name}={v[:20]}"
    case.note.append(f"--set {name}={v[:200]}")
    ctx = knob_context(cat, name)
    if rng.random() < 0.9:
        case.command = "run"
        case.args = ["run", *ctx, "--workload", RUN_WORKLOAD, "--duration", rng.choice(["0.3", "0.5", "1"]),
                     "--set", f"{name}={v}", "--out", "{dir}/out"]
    else:
        case.command = "compare"
        case.args = ["compare", *ctx, "--workload", RUN_WORKLOAD, "--seeds", "1", "--duration", "0.3",
                     "--set", f"{name}={v}", "--out", "{dir}/out"]
        if "--scheduler" not in ctx:
            case.args += ["--scheduler", "cfs"]


FLOAT_EDGES = ["0", "-1", "nan", "NaN", "inf", "-inf", "1e308", "1e12", "-0", "1e-9", "abc", "", "1e", "0x10",
               "1_0", HUGE_DIGITS[:3000]]
INT_EDGES = ["-1", "0", "9223372036854775808", "18446744073709551616", "1" + "0" * 30, "1.5", "nan", "abc", "",
             "0x10", "-9223372036854775809", "\u0661", "1e3"]
OUT_EDGES = ["{dir}/taken", "/proc/hetsched-fuzz/out", "/sys/hetsched-fuzz", "{dir}/taken/sub", "",
             "{dir}/" + "x" * 300, "{dir}/" + "d/" * 2100 + "out", "/dev/null", "{dir}/out\nline", "{dir}/emptydir"]
IN_EDGES = ["{dir}/missing", "{dir}/emptydir", "/dev/null", "{dir}/empty", "{dir}/binary", "", "{dir}/" + "x" * 300,
            "{dir}/taken/sub"]


def base_for(cmd: str, rng: random.Random, cat: Catalogue, case: Case) -> list[str]:
    """A valid invocation of ``cmd`` that runs quickly (its inputs made in the case)."""
    if cmd == "run":
        return base_run("0.5")
    if cmd == "compare":
        return ["compare", "--platform", PLATFORM, "--workload", RUN_WORKLOAD, "--scheduler", "cfs",
                "--duration", "0.3", "--seeds", "1", "--out", "{dir}/out"]
    if cmd == "replay":
        case.files["trace.txt"] = synthetic_trace(3, 40).encode()
        return ["replay", "{dir}/trace.txt", "--platform", PLATFORM, "--duration", "0.5", "--out", "{dir}/out"]
    if cmd == "sweep":
        case.files["grid.yaml"] = dump_tree(base_grid()).encode()
        return ["sweep", "{dir}/grid.yaml", "--out", "{dir}/out", "--workers", "1"]
    if cmd == "em":
        return ["em", PLATFORM]
    if cmd == "platforms show":
        return ["platforms", "show", PLATFORM]
    if cmd == "record":
        return ["record", "--out", "{dir}/rec.trace", "--buffer-kb", "16", "--", "true"]
    if cmd == "reproduce":
        return ["reproduce", "no-such-study", "--smoke", "--seeds", "1", "--jobs", "1", "--out", "{dir}/out"]
    return cmd.split()


def replace_option(args: list[str], opt: str, value: str, positional_index: int | None = None) -> list[str]:
    """``args`` with ``opt``'s value set to ``value`` (added if absent)."""
    out = list(args)
    if positional_index is not None:
        out[positional_index] = value
        return out
    if opt in out:
        i = out.index(opt)
        out[i + 1] = value
        return out
    if "--" in out:
        i = out.index("--")
        return out[:i] + [opt, value] + out[i:]
    return out + [opt, value]


def name_edges(rng: random.Random, names: list[str]) -> tuple[str, bool]:
    v = rng.choice([typo(rng, rng.choice(names)), typo(rng, rng.choice(names)), "", " ", HUGE_TEXT, "x",
                    rng.choice(names).upper() + "!", "../" * 50 + "etc/passwd", "-"])
    return v, v not in names


def gen_cli_option(rng: random.Random, cat: Catalogue, case: Case, j: int) -> None:
    pairs = []
    for cmd, params in sorted(cat.commands.items()):
        if cmd in ("platforms",):
            continue
        for p in params:
            if not p["flag"]:
                pairs.append((cmd, p))
        if not params or cmd in ("knobs", "workloads", "schedulers"):
            pairs.append((cmd, {"name": "(extra)", "opts": [], "type": "", "multiple": False, "flag": False,
                                "argument": False, "optional": False}))
    cmd, p = pairs[j % len(pairs)]
    case.command = cmd
    base = base_for(cmd, rng, cat, case)
    case.files.setdefault("taken", b"a file, not a directory\n")
    case.files["empty"] = b""
    case.files["binary"] = bytes(rng.randrange(256) for _ in range(512))
    case.dirs.append("emptydir")
    name, typ = p["name"], p["type"]
    opt = p["opts"][0] if p["opts"] else ""
    pos = None
    if p["argument"]:
        # the positional argument's place in the base invocation
        pos = {"platforms show": 2, "em": 1, "replay": 1, "sweep": 1, "reproduce": 1}.get(cmd)
    if name == "(extra)":
        v = rng.choice(["--bogus", "extra", "--help", "-x", HUGE_TEXT, "--" + "a" * 1000])
        case.args, case.about = base + [v], f"extra argument {v[:20]}"
        case.invalid = v != "--help"
        return
    if cmd == "record":
        # never a valid buffer and command together: that would start tracing this machine
        if name == "out":
            # the default buffer, but an --out that is a directory: refused before tracing starts
            case.args, case.about, case.invalid = ["record", "--out", "{dir}/emptydir", "--", "true"], "--out=DIR", True
            return
        if name == "command":
            case.args, case.about, case.invalid = ["record", "--out", "{dir}/rec.trace"], "no command", True
            return
        else:
            v, bad = rng.choice(["-1", "0", "63", "nan", "abc", "", "1e3", "\u0661"]), True
        case.args, case.about, case.invalid = replace_option(base, opt, v), f"{opt}={v[:20]}", bad
        return
    if typ in ("float", "float range"):
        v = rng.choice(FLOAT_EDGES)
        bad = v in ("nan", "NaN", "inf", "-inf", "abc", "", "1e") or (name == "duration" and v in ("0", "-1", "-0"))
    elif typ in ("integer", "integer range"):
        v = rng.choice(INT_EDGES)
        bad = v in ("nan", "abc", "", "1.5", "1e3") or (name in ("seed", "seeds", "jobs", "workers") and
                                                        v.startswith("-"))
        if name in ("jobs", "workers") and len(v) > 6 and not v.startswith("-"):
            v = "1000000"  # many workers for one run: capped or refused, never a million processes
    elif typ == "path" and name in ("out",):
        v, bad = rng.choice(OUT_EDGES), None
        bad = v in ("{dir}/taken", "/proc/hetsched-fuzz/out", "/sys/hetsched-fuzz", "{dir}/taken/sub", "/dev/null")
    elif typ == "path":
        v, bad = rng.choice(IN_EDGES), True
    elif name in ("platform", "source_platform", "name"):
        v, bad = name_edges(rng, cat.platforms)
        if rng.random() < 0.25:
            v = rng.choice(["{dir}/missing.json", "{dir}/emptydir", "{dir}/taken", "/dev/null", "{dir}/empty",
                            rng.choice(cat.platforms) + ":bogus", "exynos5422:switcher", "gs101:switcher", "host"])
            bad = v not in ("exynos5422:switcher", "host")
            if v == "gs101:switcher":
                bad = False
    elif name == "scheduler":
        v, bad = name_edges(rng, cat.schedulers + cat.controller_schedulers)
        if rng.random() < 0.4:
            k = rng.choice(cat.knobs)["name"]
            v = rng.choice([f"eas[{k}=nan]", f"cfs[{k}=", "eas[]", "eas[=1]", f"cfs[{k}=1]]", "[cfs]",
                            "{dir}/policy.py:Policy", "{dir}/missing.py:X", "{dir}/policy.py:", ":X"])
            bad = not v.startswith(f"cfs[{k}=1]")
            case.files["policy.py"] = rng.choice([b"raise RuntimeError('at import')\n", b"def (:\n",
                                                  b"class Policy:\n    pass\n", b"import os\nos._exit(0)\n"])
    elif name in ("governor", "idle_governor", "kernel", "tasks", "study"):
        names = {"governor": cat.governors, "idle_governor": cat.idle_governors, "kernel": cat.kernels,
                 "tasks": ["auto", "all", "tree"], "study": cat.studies + ["all"]}[name]
        v, bad = name_edges(rng, names)
        if name == "study" and not bad:
            v = typo(rng, v)  # a real study would run for minutes
            bad = True
    elif name == "workload":
        v = rng.choice(["periodic:", "periodic:n", "periodic:=1", "periodic:n=1=2", "periodic:n=4,,util=0.3", ":",
                        "{dir}/missing.json", "{dir}/emptydir", "{dir}/taken", "{dir}/empty", "/dev/null", "periodc",
                        HUGE_TEXT, "periodic:n=4;util=0.3", "phone-mix:load=1e-320", "periodic:n=512,util=1"])
        bad = v not in ("periodic:", "periodic:n=4,,util=0.3", "periodic:n=512,util=1")
    elif name == "set_":
        k = rng.choice(cat.knobs)["name"]
        v = rng.choice(["=", f"{k}=", "=1", k, f"{k}=1=2", f" {k} = 1 ", f"{k}==1", HUGE_TEXT + "=1",
                        f"{k}={HUGE_DIGITS}", "kernel=msm-4.15", "hotplug=hps2", "kernel="])
        bad = not v.startswith(f" {k} = 1")
    elif name == "ray":
        v, bad = rng.choice(["garbage", "", "127.0.0.1:1", "host:notaport", ":::", "127.0.0.1:99999"]), True
    elif name == "command":
        v, bad = "", True
    else:
        v, bad = rng.choice(["", HUGE_TEXT, "abc"]), None
    if v == "" and p.get("optional"):
        bad = None  # an empty value for an option whose default is none reads as not given
    case.args = replace_option(base, opt, v, pos)
    if cmd == "reproduce" and name != "study":
        # reproduce runs a study for minutes: its other options are fuzzed with a valid study
        # only where the value must be refused before the study starts
        case.args[1] = rng.choice(cat.studies)
        if not bad:
            case.args[1] = typo(rng, case.args[1])
    case.invalid = bool(bad)
    case.about = f"{opt or name}={v[:20]}"
    case.note.append(f"{opt or name} {v[:200]!r}")
    if p["multiple"] and rng.random() < 0.2:
        case.args = case.args + [opt, v] * rng.choice([2, 50])
        case.note.append("repeated")


# ----------------------------------------------------------------------------- Python policies

POLICY_CLASS = "P"
POLICY_HOOKS = {
    "select_task_rq": "self, view, task, prev_cpu, wake_flags",
    "task_tick": "self, view, cpu, curr",
    "balance": "self, view",
    "counters": "self",
}
# What a hook's body may be: (code, certainly refused when the hook is called). The
# bodies that move tasks pick a real task and CPU of the view, so that a valid answer is
# one the engine takes.
POLICY_BODIES: dict[str, list[tuple[str, bool]]] = {
    "select_task_rq": [
        ("return None", False), ("return prev_cpu", False),
        ("return min(view.cpus_allowed(task))", False),
        ("return str(prev_cpu)", True), ("return 1.5", True), ("return -1", True), ("return 999", True),
        ("return 10 ** 30", True), ("return float('nan')", True), ("return [prev_cpu]", True),
        ("return object()", True), ("return True", False), ("return view", True),
    ],
    "task_tick": [
        ("return None", False), ("return []", False), ("return [(curr, cpu)]", False),
        ("return 5", True), ("return [(curr,)]", True), ("return [(curr, cpu, 0)]", True),
        ("return [('a', cpu)]", True), ("return [(curr, 999)]", True), ("return [(10 ** 9, cpu)]", True),
        ("return [(curr, -1)]", True), ("return {curr: cpu}", False), ("return 'ab'", True),
        ("return itertools.repeat((curr, cpu))", True), ("return itertools.count()", True),
        ("return ((curr, cpu) for _ in itertools.count())", True), ("return [(curr, cpu)] * 40000", True),
        ("return [(curr, cpu)] * 32768", False), ("return range(10 ** 12)", True),
        ("return iter(lambda: (curr, cpu), None)", True),
    ],
    "balance": [
        ("return None", False), ("return []", False),
        ("return [(t, view.task_cpu(t)) for t in range(view.nr_tasks)]", False),
        ("return [(0, 0)] * 40000", True), ("return itertools.repeat((0, 0))", True),
        ("return ((0, c % view.nr_cpus) for c in itertools.count())", True), ("return [(0, 0)] * 32768", False),
        ("return [(0, 2 ** 64)]", True), ("return [(-1, 0)]", True), ("return [None]", True),
        ("return (x for x in [(0, 0), 'bad'])", True), ("return 0", True), ("return b'ab'", True),
    ],
    "counters": [
        ("return {}", False), ("return {'mine': 1}", False), ("return {'mine': 1.5, 'flag': True}", False),
        ("return []", True), ("return {1: 2}", True), ("return {'x': 'text'}", True),
        ("return {'x': float('nan')}", True), ("return {'migrations': 1}", True), ("return {'x' * 1000: 1}", False),
        ("return {'x': 10 ** 30}", True), ("return {f'c{i}': i for i in range(40000)}", True),
        ("return None", True), ("return {'x': None}", True),
    ],
}
RAISES = ["raise ValueError('hook failed')", "raise SystemExit(3)", "raise SystemExit", "raise KeyboardInterrupt",
          "1 / 0", "raise RecursionError", "return self.{hook}(*args)", "raise StopIteration",
          "raise GeneratorExit", "import no_such_module_here", "sys.exit('bye')", "raise BaseException('odd')",
          "raise MemoryError"]
IMPORT_ERRORS = ["raise RuntimeError('at import')", "import no_such_module_here", "sys.exit(0)", "sys.exit(5)",
                 "sys.exit('a message\\nover two lines')", "raise SystemExit", "raise KeyboardInterrupt",
                 "def (:", "class P(", "\x00", "raise BaseException('odd')", "1 / 0",
                 "raise ImportError('no', name='x')", "import sys; sys.setrecursionlimit(10); x = [[[[[[[[1]]]]]]]]",
                 "raise GeneratorExit", "x = 1 +", "\tindented = 1"]
POLICY_NAMES = [("'mine'", False), ("'x' * 64", False), ("'x' * 65", True), ("'x' * 100_000", True),
                ("'a\\nb'", True), ("'\\x1b[31mred'", True), ("'tab\\there'", True), ("'nul\\x00'", True),
                ("''", True), ("5", True), ("None", True), ("'cfs'", True), ("'\\u202eevil'", True),
                ("' '", True), ("b'bytes'", True), ("'caf\\u00e9'", False)]
POLICY_BASES = [("'cfs'", False), ("'eas'", False), ("'gts'", False), ("'eass'", True), ("'learning-eas'", True),
                ("5", True), ("''", True), ("None", False), ("'x' * 100_000", True)]
MISSPELT = ["balanc", "select_task_rq_fair", "task_tikc", "countres", "selecttaskrq", "balancee", "task_tick_fair",
            "migrate_task_rq", "dequeue_task", "needs_hmp_load"]


def gen_policy(rng: random.Random, cat: Catalogue, case: Case) -> None:
    """A Python policy file (a hetsched.Policy subclass) with one to three mutations: a hook
    that raises, returns a wrong type, a huge or endless iterator, has the wrong arity, a
    misspelled hook, a bad name or base, an error or sys.exit() at import."""
    hooks = {h: rng.choice([b for b, bad in POLICY_BODIES[h] if not bad])
             for h in rng.sample(list(POLICY_HOOKS), rng.randint(1, 4))}
    arity = {h: POLICY_HOOKS[h] for h in hooks}
    name, base = "'mine'", "'cfs'"
    header: list[str] = []
    extra: list[str] = []                    # in the class body
    tail: list[str] = []                     # after the class
    cls_line = f"class {POLICY_CLASS}(hetsched.Policy):"
    spec_cls = POLICY_CLASS
    hook_bad: dict[str, bool] = {}          # whether each hook as it ends up is certainly refused
    name_bad = base_bad = other_bad = False
    ops = ["body", "body", "body", "raise", "raise", "arity", "misspelt", "name", "base", "import", "init",
           "class", "property", "view-kept"]
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        op = rng.choice(ops)
        if op == "body":
            h = rng.choice(list(POLICY_HOOKS))
            body, b = rng.choice(POLICY_BODIES[h])
            hooks[h], arity[h] = body, POLICY_HOOKS[h]
            hook_bad[h] = b and h != "task_tick"  # a tick may never come to a fair task
            case.note.append(f"{h}: {body}")
            case.about = case.about or f"{h} {body[:30]}"
        elif op == "raise":
            h = rng.choice(list(POLICY_HOOKS))
            body = rng.choice(RAISES).format(hook=h)
            hooks[h] = body
            arity[h] = "self, *args" if "*args" in body else POLICY_HOOKS[h]
            hook_bad[h] = h != "task_tick"
            case.note.append(f"{h} raises: {body}")
            case.about = case.about or f"{h}: {body[:30]}"
        elif op == "arity":
            h = rng.choice(list(POLICY_HOOKS))
            a = rng.choice(["self", "self, view", "self, a, b, c, d, e, f", "view, task", "self, *args, **kw",
                            "self, view, task, prev_cpu, wake_flags, extra", "", "self, *, view"])
            hooks.setdefault(h, rng.choice([b for b, x in POLICY_BODIES[h] if not x]))
            if "*args" in a:
                hooks[h] = "return None" if h != "counters" else "return {}"
            elif any(w not in a for w in ("view", "task", "cpu", "curr", "prev_cpu") if w in hooks[h]):
                hooks[h] = "return None" if h != "counters" else "return {}"
            arity[h] = a
            hook_bad[h] = "*args" not in a and a != POLICY_HOOKS[h] and h != "task_tick"
            case.note.append(f"def {h}({a})")
            case.about = case.about or f"{h} arity ({a[:20]})"
        elif op == "misspelt":
            m = rng.choice(MISSPELT)
            extra += [f"    def {m}(self, *args):", "        return None"]
            other_bad = True
            case.note.append(f"a method {m}")
            case.about = case.about or f"method {m}"
        elif op == "name":
            name, name_bad = rng.choice(POLICY_NAMES)
            case.note.append(f"name = {name}")
            case.about = case.about or f"name = {name[:20]}"
        elif op == "base":
            base, base_bad = rng.choice(POLICY_BASES)
            case.note.append(f"base = {base}")
            case.about = case.about or f"base = {base[:20]}"
        elif op == "import":
            e = rng.choice(IMPORT_ERRORS)
            (header if rng.random() < 0.5 else tail).append(e)
            other_bad = other_bad or e != "sys.exit(0)"
            case.note.append(f"at import: {e!r}")
            case.about = case.about or f"import: {e[:30]}"
        elif op == "init":
            init = rng.choice(["def __init__(self, needed):\n        pass",
                               "def __init__(self):\n        raise RuntimeError('no')",
                               "def __init__(self):\n        sys.exit(4)",
                               "def __new__(cls):\n        return 5"])
            extra.append("    " + init)
            other_bad = True
            case.note.append(init.splitlines()[0].strip())
            case.about = case.about or init.splitlines()[0].strip()[:30]
        elif op == "class":
            how = rng.choice(["missing", "not-a-policy", "function", "empty-name"])
            if how == "missing":
                spec_cls = "Q"
            elif how == "not-a-policy":
                cls_line = f"class {POLICY_CLASS}:"
            elif how == "function":
                tail.append(f"{POLICY_CLASS} = len")
            else:
                spec_cls = ""
            other_bad = True
            case.note.append(f"class {how}")
            case.about = case.about or f"class {how}"
        elif op == "property":
            attr = rng.choice(["name", "base"])
            extra += ["    @property", f"    def {attr}(self):", "        raise RuntimeError('unreadable')"]
            other_bad = True
            case.note.append(f"{attr} property raises")
            case.about = case.about or f"{attr} raises"
        else:
            hooks["balance"] = "self.kept = view\n        return None"
            hooks["counters"] = "return {'cpus': self.kept.nr_cpus} if hasattr(self, 'kept') else {}"
            arity["balance"], arity["counters"] = POLICY_HOOKS["balance"], POLICY_HOOKS["counters"]
            hook_bad["balance"] = hook_bad["counters"] = False
            case.note.append("a view kept past its call")
            case.about = case.about or "view kept"
    lines = ["import itertools", "import sys", "", "import hetsched", "", *header, "", cls_line,
             f"    name = {name}", f"    base = {base}"]
    for h, body in hooks.items():
        lines += ["", f"    def {h}({arity.get(h, POLICY_HOOKS[h])}):", f"        {body}"]
    lines += ["", *extra, "", *tail, ""]
    case.files["pol.py"] = "\n".join(lines).encode("utf-8", "surrogatepass")
    kept_view = hooks.get("balance", "").startswith("self.kept") and "self.kept" in hooks.get("counters", "")
    case.invalid = any(hook_bad.values()) or name_bad or base_bad or other_bad or kept_view
    spec = "{dir}/pol.py:" + spec_cls
    plat = rng.choice([PLATFORM, "gs101"])
    r = rng.random()
    if r < 0.7:
        case.command = "run"
        case.args = ["run", "--platform", plat, "--workload", RUN_WORKLOAD, "--duration", rng.choice(["0.2", "0.5"]),
                     "--no-lower-bound", "--scheduler", spec, "--out", "{dir}/out"]
    elif r < 0.85:
        case.command = "compare"
        case.args = ["compare", "--platform", plat, "--workload", RUN_WORKLOAD, "--scheduler", "cfs",
                     "--scheduler", spec, "--seeds", "1", "--duration", "0.2", "--out", "{dir}/out"]
    else:
        case.command = "replay"
        case.files["trace.txt"] = synthetic_trace(3, 40).encode()
        case.args = ["replay", "{dir}/trace.txt", "--platform", plat, "--duration", "0.3", "--scheduler", spec,
                     "--out", "{dir}/out"]


# ----------------------------------------------------------------------------- impossible traces

def small_traces() -> list[Path]:
    """The small real traces this script mutates (under 400 KB), and the tests' own."""
    out = [p for p in sorted(TRACE_DIR.glob("*")) if p.is_file() and p.stat().st_size < 400_000
           and p.suffix in (".txt", ".html", ".trace")]
    out += sorted((REPO / "tests" / "data" / "fuzz_corpus").glob("*.trace"))
    out += sorted((REPO / "tests" / "data" / "systrace").glob("*.html"))
    return out


SWITCH_RE = re.compile(r"^(?P<pre>.*?\[)(?P<cpu>\d+)(?P<mid>\].*?\s)(?P<ts>\d+\.\d+)(?P<post>:\s.*)$")


def switch_line(cpu: int, ts: float, prev: tuple[int, str], nxt: tuple[int, str], state: str = "S") -> str:
    return (f"     {prev[1]}-{prev[0]}   [{cpu:03d}] d..3 {ts:.6f}: sched_switch: prev_comm={prev[1]} "
            f"prev_pid={prev[0]} prev_prio=120 prev_state={state} ==> next_comm={nxt[1]} next_pid={nxt[0]} "
            "next_prio=120")


def mutate_kernel_trace(rng: random.Random, lines: list[str], case: Case) -> list[str]:
    """One edit the kernel cannot have made, or plain damage."""
    ev = [i for i, ln in enumerate(lines) if SWITCH_RE.match(ln) and ": sched_" in ln]
    op = rng.choice(["backwards", "backwards", "two-cpus", "two-cpus", "cpu-beyond", "cpu-beyond", "garbage",
                     "binary", "truncate", "swap", "header"])
    if not ev and op in ("backwards", "two-cpus", "cpu-beyond", "swap"):
        op = "garbage"
    if op == "backwards":
        i = rng.choice(ev)
        m = SWITCH_RE.match(lines[i])
        ts = float(m["ts"]) - rng.choice([0.000001, 0.001, 1.0, 1e6])
        lines[i] = f"{m['pre']}{m['cpu']}{m['mid']}{max(ts, 0):.6f}{m['post']}"
        case.note.append(f"line {i + 1}: time back to {max(ts, 0):.6f}")
        case.about = case.about or "time backwards"
    elif op == "two-cpus":
        i = rng.choice(ev)
        m = SWITCH_RE.match(lines[i])
        nxt = re.search(r"next_comm=(\S*) next_pid=(\d+)", lines[i])
        if nxt:
            other = (int(m["cpu"]) + 1) % 2
            ts = float(m["ts"]) + 0.000001
            lines.insert(i + 1, switch_line(other, ts, (0, f"swapper/{other}"), (int(nxt[2]), nxt[1] or "x"), "R"))
            case.note.append(f"line {i + 2}: pid {nxt[2]} also switched in on CPU {other}")
            case.about = case.about or "a pid on two CPUs"
    elif op == "cpu-beyond":
        i = rng.choice(ev)
        m = SWITCH_RE.match(lines[i])
        cpu = rng.choice([2, 4, 8, 63, 64, 1023, 4096, 99999])
        lines[i] = f"{m['pre']}{cpu:03d}{m['mid']}{m['ts']}{m['post']}"
        if rng.random() < 0.5:
            lines.insert(0, rng.choice(["cpus=2", "# entries-in-buffer/entries-written: 10/10   #P:2"]))
            case.note.append("a header of 2 CPUs")
        case.note.append(f"line {i + 1}: CPU {cpu}")
        case.about = case.about or "a CPU beyond the header"
    elif op == "garbage":
        k = rng.randrange(len(lines) + 1)
        g = rng.choice(["garbage", "\x00" * 50, "\ufffd\ufffd", "[000] 1.0: sched_switch:", "-" * 9000,
                        "x-1 [000] d..3 1.000000: sched_switch: prev_comm=x prev_pid=1 ==> next_pid=",
                        "x-1 [000] d..3 nan: sched_wakeup: comm=x pid=1", "<script>", "version = 6"])
        lines[k:k] = [g] * rng.choice([1, 1, 10, 1000])
        case.note.append(f"garbage lines at {k + 1}: {g[:30]!r}")
    elif op == "binary":
        k = rng.randrange(len(lines) + 1)
        lines.insert(k, bytes(rng.randrange(256) for _ in range(200)).decode("latin-1"))
        case.note.append(f"binary line at {k + 1}")
    elif op == "truncate":
        k = rng.randrange(len(lines) + 1)
        cut = lines[:k]
        if cut:
            cut[-1] = cut[-1][:rng.randrange(len(cut[-1]) + 1)]
        lines = cut
        case.note.append(f"cut at line {k}")
    elif op == "swap":
        i, j = rng.choice(ev), rng.choice(ev)
        lines[i], lines[j] = lines[j], lines[i]
        case.note.append(f"lines {i + 1} and {j + 1} swapped")
        case.about = case.about or "two events swapped"
    else:
        lines.insert(0, rng.choice(["version = 6", "cpus=0", "cpus=-1", "cpus=99999999999", "cpus=abc",
                                    "# entries-in-buffer/entries-written: 0/0   #P:0", "# tracer: nop",
                                    "# hetsched-record: {\"cpus\": 1, \"platform\": \"host\"}"]))
        case.note.append(f"header {lines[0][:40]!r}")
    return lines


def gen_kernel_trace(rng: random.Random, cat: Catalogue, case: Case) -> None:
    """A small trace (real or synthetic) with what the kernel cannot write (time back on a
    CPU, a pid on two CPUs, a CPU past the header's count), damage (garbage, binary,
    truncation), gzip of it or of garbage, or a small gzip bomb; replayed or measured
    (trace-stats), with or without --repair."""
    srcs = small_traces()
    if srcs and rng.random() < 0.6:
        src = rng.choice(srcs)
        text = src.read_text(errors="replace")
        lines = text.splitlines()
        if len(lines) > 600 and not src.name.endswith(".html"):
            lines = lines[:600]
        name = src.name
    else:
        lines = synthetic_trace(rng.randint(2, 6), rng.randint(10, 120)).splitlines()
        if rng.random() < 0.5:
            lines.insert(0, rng.choice(["cpus=2", "version = 6\ncpus=2"]))
        name = "synthetic"
    case.note.append(f"from {name}")
    for _ in range(rng.choice([1, 1, 2, 3])):
        lines = mutate_kernel_trace(rng, lines, case)
    data = ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")
    fname = "trace.html" if name.endswith(".html") else "trace.txt"
    r = rng.random()
    if r < 0.08:
        data = gzip.compress(bytes(rng.randrange(256) for _ in range(rng.choice([10, 1000, 50_000]))), mtime=0)
        fname = "trace.txt.gz"
        case.note.append("gzip of garbage")
        case.about = case.about or "gzip of garbage"
    elif r < 0.16:
        # a small bomb: a few MB expanded from a few KB (never more than 8 MB here)
        unit = rng.choice([b"\x00", b"\n", b"a", (lines[-1] + "\n").encode("utf-8", "replace") if lines else b"x\n"])
        size = rng.choice([1 << 20, 4 << 20, 8 << 20])
        data = gzip.compress(unit * (size // len(unit)), compresslevel=9, mtime=0)
        fname = "trace.txt.gz"
        case.note.append(f"gzip bomb of {size >> 20} MB of {unit[:10]!r}")
        case.about = case.about or "gzip bomb"
    elif r < 0.28:
        data = gzip.compress(data, mtime=0)
        how = rng.choice(["whole", "cut", "trailing garbage", "two members"])
        if how == "cut":
            data = data[:rng.randrange(1, len(data))]
        elif how == "trailing garbage":
            data += b"\x1f\x8b" + bytes(rng.randrange(256) for _ in range(20))
        elif how == "two members":
            data += data
        fname = "trace.txt.gz"
        case.note.append(f"gzip, {how}")
    case.files[fname] = data
    repair = rng.random() < 0.5
    if repair:
        case.note.append("--repair")
    f = "{dir}/" + fname
    if rng.random() < 0.55:
        case.command = "replay"
        case.args = ["replay", f, "--platform", rng.choice([PLATFORM, "gs101"]), "--duration",
                     rng.choice(["0.2", "0.5"]), "--out", "{dir}/out"]
        for opt in ("--trace", "--write-spec", "--figures"):
            if rng.random() < 0.1:
                case.args.append(opt)
    else:
        case.command = "trace-stats"
        case.args = ["trace-stats", f]
        if rng.random() < 0.2:
            case.files["ok.txt"] = synthetic_trace(3, 30).encode()
            case.args.append("{dir}/ok.txt")
        if rng.random() < 0.3:
            case.args += ["--format", rng.choice(["json", "csv", "table"])]
        if rng.random() < 0.2:
            case.args += ["--platform", rng.choice([PLATFORM, "gs101"])]
    if repair:
        case.args.append("--repair")


# ----------------------------------------------------------------------------- a full disk

TINY_SIZES = ["4k", "16k", "32k", "64k", "64k", "128k", "256k", "1m"]


def gen_full_disk(rng: random.Random, cat: Catalogue, case: Case) -> None:
    """Outputs written to a tiny tmpfs mounted at the case's ``tiny`` (root only): run,
    replay or compare with --trace, --timeseries, --plot, --write-spec; the disk sometimes
    out of inodes, read-only, partly filled, or holding an earlier run's files."""
    opts = f"size={rng.choice(TINY_SIZES)}"
    r = rng.random()
    if r < 0.1:
        opts = f"size=1m,nr_inodes={rng.choice([2, 3, 5, 8])}"
    elif r < 0.15:
        opts += ",ro"
    case.mount = opts
    case.note.append(f"tmpfs {opts}")
    case.about = opts
    out = rng.choice(["{dir}/tiny/o", "{dir}/tiny/o", "{dir}/tiny", "{dir}/tiny/a/b/o"])
    if "ro" not in opts.split(","):
        if rng.random() < 0.25:
            fill = rng.choice([1, 2, 8, 14, 30]) * 1024
            case.files["tiny/filler"] = b"f" * fill
            case.note.append(f"{fill >> 10} KB already used")
        if rng.random() < 0.2 and out.endswith("/o"):
            # an earlier run's files in OUT, which this run replaces or removes
            rel = out[len("{dir}/"):]
            case.files[f"{rel}/result.json"] = b"{}\n"
            case.files[f"{rel}/trace.txt"] = b"old\n"
            case.files[f"{rel}/timeseries.csv"] = b"t\n"
            case.note.append("an earlier run's files in OUT")
    cmd = rng.choice(["run", "run", "run", "replay", "compare"])
    case.command = cmd
    if cmd == "run":
        args = ["run", "--platform", PLATFORM, "--workload", RUN_WORKLOAD, "--duration",
                rng.choice(["0.2", "0.5", "1"]), "--no-lower-bound", "--out", out]
        if rng.random() < 0.5:
            args += ["--trace", "--trace-format", rng.choice(["perfetto", "ftrace", "json"])]
        if rng.random() < 0.5:
            args.append("--timeseries")
        if rng.random() < 0.3:
            args.append("--plot")
    elif cmd == "replay":
        case.files["trace.txt"] = synthetic_trace(4, 80).encode()
        args = ["replay", "{dir}/trace.txt", "--platform", PLATFORM, "--duration", "0.3", "--out", out]
        for opt in ("--trace", "--write-spec", "--figures"):
            if rng.random() < 0.3:
                args.append(opt)
    else:
        args = ["compare", "--platform", PLATFORM, "--workload", RUN_WORKLOAD, "--scheduler", "cfs", "--scheduler",
                "eas", "--seeds", "1", "--duration", "0.2", "--out", out]
        if rng.random() < 0.3:
            args.append("--plot")
    case.args = args
    case.note.append(" ".join([cmd] + [a for a in args if a in ("--trace", "--timeseries", "--plot", "--write-spec",
                                                                "--figures")]))


GENERATORS: dict[str, Callable[..., None]] = {
    "platform-json": lambda rng, cat, case, j: gen_platform(rng, cat, case),
    "rtapp-json": lambda rng, cat, case, j: gen_rtapp(rng, cat, case),
    "trace": lambda rng, cat, case, j: gen_trace(rng, cat, case),
    "grid": lambda rng, cat, case, j: gen_grid(rng, cat, case),
    "workload-param": gen_workload_param,
    "knob": gen_knob,
    "cli-option": gen_cli_option,
    "policies": lambda rng, cat, case, j: gen_policy(rng, cat, case),
    "traces": lambda rng, cat, case, j: gen_kernel_trace(rng, cat, case),
    "full-disk": lambda rng, cat, case, j: gen_full_disk(rng, cat, case),
}


def make_case(cat: Catalogue, seed: int, kind: str, j: int) -> Case:
    rng = random.Random(f"{seed}:{kind}:{j}")
    case = Case(f"{kind}-{j}", kind)
    GENERATORS[kind](rng, cat, case, j)
    return case


def schedule(n: int, kinds: list[str]) -> list[tuple[str, int]]:
    """``n`` cases over ``kinds`` in proportion to their shares, interleaved (smooth
    weighted round robin), each numbered within its kind."""
    weights = {k: KINDS[k] for k in kinds}
    total = sum(weights.values())
    current = {k: 0.0 for k in kinds}
    counts = collections.Counter()
    out = []
    for _ in range(n):
        for k in kinds:
            current[k] += weights[k]
        k = max(kinds, key=lambda x: current[x])
        current[k] -= total
        out.append((k, counts[k]))
        counts[k] += 1
    return out


# ----------------------------------------------------------------------------- running

def limits(mem_bytes: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (mem_bytes, mem_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return apply


def cli_env() -> dict[str, str]:
    import hetsched

    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "FORCE_COLOR")}
    env["PYTHONHASHSEED"] = "0"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["NO_COLOR"] = "1"
    root = str(Path(hetsched.__file__).resolve().parents[1])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def tree_listing(d: Path) -> set[str]:
    if not d.exists():
        return set()
    out = set()
    for root, dirs, files in os.walk(d):
        for f in files + dirs:
            out.add(os.path.relpath(os.path.join(root, f), d))
    return out


def names_a_source(msg: str, case: Case, argv: list[str], d: Path) -> bool:
    """Whether the refusal names where the value came from: an option the user gave, a
    file or a positional value, or a command's own argument name."""
    cands = {a.split("=")[0] for a in argv if a.startswith("--") and len(a) > 2}
    for a in argv[1:]:
        if not a.startswith("-") and a and (str(d) in a or "/" in a):
            cands.add(a)
            cands.add(Path(a).name)
            cands.add(a[:40])  # a long path is shortened in its middle: its start stays
    at = {"platforms show": 2, "em": 1, "reproduce": 1, "replay": 1, "sweep": 1, "trace-stats": 1}.get(case.command)
    if at is not None and len(argv) > at:
        pos = argv[at]
        if pos.strip():
            cands.add(pos[:40])
            cands.add(repr(pos)[1:-1][:40])  # as the line quotes it
    cands |= {"GRID", "FILE", "TRACE", "STUDY", "COMMAND", "NAME", "PLATFORM", "hetsched record", "'--", "Missing argument",
              "No such option", "No such command", "Got unexpected extra argument"}
    cands.discard("")
    return any(c in msg for c in cands)


PROGRESS_RE = re.compile(r"^compare: \d+/\d+ runs, \S+ seed \d+ done$")


def classify(case: Case, rc: int | None, stderr: str, timed_out: bool, left: set[str], argv: list[str],
             d: Path) -> tuple[str, str]:
    """(class, why) of one finished case."""
    if timed_out:
        return "hang", "past the time limit"
    if rc < 0:
        try:
            return "abort", f"killed by {signal.Signals(-rc).name}"
        except ValueError:
            return "abort", f"killed by signal {-rc}"
    if rc > 128:
        return "abort", f"exit status {rc}"
    if "Traceback" in stderr:
        return "traceback", "a traceback"
    if rc == 1:
        return "exit-1", "exit status 1"
    stray = sorted(f for f in left if ".tmp-" in Path(f).name)
    if stray:
        return "stray-temporaries", "left " + ", ".join(stray[:5])
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    # the one line, beside warnings and compare's progress lines
    errors = [ln for ln in lines if not ln.startswith("hetsched: warning: ") and not PROGRESS_RE.match(ln)]
    if rc != 0 and left:
        # what the one line says it kept (an earlier step's files) may stay
        kept = errors[0].partition("; kept ")[2] if len(errors) == 1 else ""
        left = {f for f in left if not (kept and str(d / f) in kept)
                and not any(str(d / g).startswith(str(d / f) + "/") and str(d / g) in kept for g in left)}
        if left:
            return "files-left", "left " + ", ".join(sorted(left)[:5])
    if rc == 0:
        return ("accepted-invalid", "exit 0 for an invalid value") if case.invalid else ("ok", "")
    if rc != 2:
        return "refused-badly", f"exit status {rc}"
    if len(errors) != 1:
        return "several-lines", f"{len(errors)} lines on stderr"
    lines = errors
    line = lines[0]
    if not line.startswith("hetsched: error: "):
        return "refused-badly", "not a 'hetsched: error:' line"
    if HUGE_DIGITS[:200] in line or HUGE_TEXT[:200] in line or len(line) > 8000:
        return "refused-badly", f"a {len(line)}-character line (echoes the value)"
    if not names_a_source(line[len("hetsched: error: "):], case, argv, d):
        return "refused-badly", "names no option or file"
    return "refused", ""


def normalise(text: str, d: Path | None = None) -> str:
    if d is not None:
        text = text.replace(str(d), "<dir>")
    text = re.sub(r"(.{1,3}?)\1{9,}", r"\1…", text)  # d/d/d/d/..., xxxxxxxx...
    text = re.sub(r"'[^']{0,200}'|\"[^\"]{0,200}\"", "'…'", text)
    text = re.sub(r"0x[0-9a-f]+", "0x…", text)
    text = re.sub(r"\d+(\.\d+)?([eE][+-]?\d+)?", "N", text)
    return text[:160]


def signature(cls: str, why: str, case: Case, stderr: str, d: Path) -> str:
    """What a failure is, with the values taken out: the same bug gives the same one."""
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    if cls == "traceback":
        exc = next((ln for ln in reversed(lines) if re.match(r"^[\w.]+(Error|Exception|Interrupt|Exit)\b", ln)),
                   lines[-1] if lines else why)
        frames = [m for m in re.finditer(r'File "([^"]+)", line \d+, in (\S+)', stderr)]
        where = ""
        if frames:
            # the innermost frame in hetsched, else the innermost at all
            own = [m for m in frames if "hetsched" in m[1]] or frames
            where = f" @ {Path(own[-1][1]).name}:{own[-1][2]}"
        return f"traceback: {normalise(exc, d)}{where}"
    if cls == "abort":
        panic = next((ln for ln in lines if "panicked at" in ln or "fatal" in ln.lower()), lines[-1] if lines else "")
        return f"abort ({why}): {normalise(panic, d)}"
    if cls == "hang":
        return f"hang: {case.command} {case.kind} {normalise(case.about) or '-'}"
    if cls == "files-left":
        return f"files-left: {case.command} {normalise(why, d)}"
    if cls == "accepted-invalid":
        return f"accepted-invalid: {case.kind} {normalise(case.about)}"
    if cls in ("stray-temporaries", "process-left"):
        return f"{cls}: {case.command} {case.kind} {normalise(why, d)}"
    if cls == "exit-1":
        return f"exit-1: {case.command}: {normalise(lines[-1] if lines else '', d)[:100]}"
    line = " | ".join(lines[:3]) if cls == "several-lines" else lines[0] if lines else ""
    return f"{cls} ({normalise(why)}): {case.command}: {normalise(line, d)[:100]}"


@dataclass
class Outcome:
    case: Case
    cls: str
    why: str
    rc: int | None
    wall_s: float
    argv: list[str]
    stderr: str
    stdout: str
    sig: str = ""
    input_bytes: int = 0


def mount_tiny(d: Path, opts: str) -> str:
    """A tmpfs of ``opts`` at ``d/tiny`` (a read-only one is mounted writable, filled,
    then remounted); '' or why it could not be mounted."""
    (d / "tiny").mkdir(parents=True, exist_ok=True)
    rw = ",".join(o for o in opts.split(",") if o != "ro")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", rw, "tmpfs", str(d / "tiny")], capture_output=True, text=True)
    return r.stderr.strip() or ("" if r.returncode == 0 else f"mount exit status {r.returncode}")


def unmount_tiny(d: Path) -> None:
    t = d / "tiny"
    if subprocess.run(["umount", str(t)], capture_output=True).returncode != 0:
        subprocess.run(["umount", "-l", str(t)], capture_output=True)
    try:
        t.rmdir()
    except OSError:
        pass


def prepare(case: Case, d: Path) -> list[str]:
    d.mkdir(parents=True, exist_ok=True)
    for name, data in case.files.items():
        try:
            (d / name).parent.mkdir(parents=True, exist_ok=True)
            (d / name).write_bytes(data)
        except OSError:
            if not name.startswith("tiny/"):
                raise
            # a tiny file system filled before the command: what fitted stays
    for name in case.dirs:
        (d / name).mkdir(exist_ok=True)
    return [a.replace("{dir}", str(d)) for a in case.args]


def group_running(pgid: int) -> bool:
    """Whether a process of group ``pgid`` still runs. A zombie does not: it has exited and
    waits for its parent, or for init once its parent is gone (multiprocessing's resource
    tracker, which a spawn pool starts, exits on its own once the sweep has, and so is
    reaped by init; a container's init may take seconds to)."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    try:
        pids = [d for d in os.listdir("/proc") if d.isdigit()]
    except OSError:
        return True
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                state, _ppid, group = f.read().rsplit(")", 1)[1].split()[:3]
        except (OSError, ValueError):
            continue
        if int(group) == pgid and state != "Z":
            return True
    return False


def run_case(case: Case, d: Path, timeout: float, mem: int, env: dict[str, str]) -> Outcome:
    if case.mount:
        d.mkdir(parents=True, exist_ok=True)
        why = mount_tiny(d, case.mount)
        if why:
            return Outcome(case, "ok", f"not run: {why}", None, 0.0, [], "", "")
    try:
        return _run_case(case, d, timeout, mem, env)
    finally:
        if case.mount:
            unmount_tiny(d)


def _run_case(case: Case, d: Path, timeout: float, mem: int, env: dict[str, str]) -> Outcome:
    argv = prepare(case, d)
    if "ro" in case.mount.split(","):
        subprocess.run(["mount", "-o", "remount,ro", str(d / "tiny")], capture_output=True)
    before = tree_listing(d)
    t0 = time.monotonic()
    timed_out = False
    try:
        proc = subprocess.Popen([sys.executable, "-m", "hetsched.cli", *argv], cwd=d, env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                preexec_fn=limits(mem), start_new_session=True)
    except (OSError, ValueError) as e:  # an argument the OS cannot pass (too long)
        return Outcome(case, "ok", f"not run: {e}", None, 0.0, argv, "", "")
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # the case's own session: its pool workers too
        except ProcessLookupError:
            pass
        out, err = proc.communicate()
    wall = time.monotonic() - t0
    left_running = False
    if not timed_out:
        # a sweep's workers may outlive it for a moment; one still there after a second
        # is left behind
        deadline = time.monotonic() + 1.0
        while True:
            if not group_running(proc.pid):
                break
            if time.monotonic() > deadline:
                left_running = True
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
                break
            time.sleep(0.02)
    stderr = err.decode("utf-8", "replace")
    stdout = out.decode("utf-8", "replace")
    left = tree_listing(d) - before
    cls, why = classify(case, proc.returncode, stderr, timed_out, left, argv, d)
    if left_running and cls in CLEAN:
        cls, why = "process-left", "a process of its group still ran a second after it ended"
    o = Outcome(case, cls, why, proc.returncode, wall, argv, stderr, stdout,
                input_bytes=sum(len(v) for v in case.files.values()))
    if cls not in CLEAN:
        o.sig = signature(cls, why, case, stderr, d)
    return o


def shown(a: str, limit: int = 120) -> str:
    return a if len(a) <= limit else f"{a[:40]}...<{len(a)} chars>"


def summary_table(rows: list[Outcome], key: Callable[[Outcome], str], title: str) -> str:
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for o in rows:
        counts[key(o)][o.cls] += 1
    cols = [c for c in CLASSES if any(counts[k][c] for k in counts)]
    width = max([len(title)] + [len(k) for k in counts]) + 2
    out = [title.ljust(width) + "".join(c.rjust(max(len(c), 5) + 2) for c in cols) + "  total".rjust(9)]
    for k in sorted(counts):
        out.append(k.ljust(width) + "".join(str(counts[k][c]).rjust(max(len(c), 5) + 2) for c in cols)
                   + str(sum(counts[k].values())).rjust(9))
    total = collections.Counter(o.cls for o in rows)
    out.append("all".ljust(width) + "".join(str(total[c]).rjust(max(len(c), 5) + 2) for c in cols)
               + str(len(rows)).rjust(9))
    return "\n".join(out)


def class_table(rows: list[Outcome]) -> str:
    """Per input class: cases, passes (ok or refused), and the failures by kind."""
    kinds = [c for c in BAD if any(o.cls == c for o in rows)]
    head = ["class", "cases", "passes", *kinds] if kinds else ["class", "cases", "passes", "failures"]
    body = []
    for k in sorted({o.case.kind for o in rows}) + ["all"]:
        sel = [o for o in rows if k in ("all", o.case.kind)]
        body.append([k, len(sel), sum(o.cls in CLEAN for o in sel)]
                    + ([sum(o.cls == c for o in sel) for c in kinds] if kinds else [0]))
    widths = [max(len(str(r[i])) for r in [head, *body]) + 2 for i in range(len(head))]
    fmt = lambda r: str(r[0]).ljust(widths[0]) + "".join(str(v).rjust(w) for v, w in zip(r[1:], widths[1:]))
    return "\n".join(["by input class: cases, passes and failures by kind", fmt(head), *map(fmt, body)])


def reproducer(o: Outcome) -> str:
    import shlex

    argv = ["hetsched", *o.argv]
    return " ".join(shlex.quote(shown(a, 80)) for a in argv)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=1200, help="number of cases [1200]")
    ap.add_argument("--seed", type=int, default=0, help="seed of the case generator [0]")
    ap.add_argument("--jobs", type=int, default=2, help="cases run at once [2]")
    ap.add_argument("--timeout", type=float, default=20.0, help="wall seconds a case may take: past it, hang [20]")
    ap.add_argument("--mem-mb", type=int, default=2048, help="address-space limit of a case, MB [2048]")
    ap.add_argument("--out", type=Path, default=Path("/tmp/hetsched-fuzz"), help="results directory")
    ap.add_argument("--classes", metavar="CLASS,...",
                    help=f"input classes to run, comma-separated [all: {','.join(KINDS)}; full-disk only as root]")
    ap.add_argument("--only", choices=sorted(KINDS), action="append",
                    help="only cases of this input class (repeatable; as --classes)")
    ap.add_argument("--case", action="append", default=[], metavar="KIND-J",
                    help="run only this case (repeatable); with -v its stderr is printed whole")
    ap.add_argument("--keep", action="store_true", help="keep the directory of every case, clean ones too")
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per case as it ends")
    ap.add_argument("--list", action="store_true", help="print the cases (name, command line) without running them")
    ns = ap.parse_args(argv)

    cat = load_catalogue()
    classes = list(ns.only or [])
    for c in (ns.classes or "").split(","):
        if c.strip() and c.strip() not in KINDS:
            ap.error(f"--classes {ns.classes}: {c.strip()!r} is not one of {', '.join(KINDS)}")
        if c.strip() and c.strip() not in classes:
            classes.append(c.strip())
    root = os.geteuid() == 0 and shutil.which("mount") is not None
    if not classes:
        classes = [k for k in KINDS if root or k not in NEEDS_ROOT]
        if not root:
            print(f"not root: {', '.join(NEEDS_ROOT)} left out (a tmpfs is mounted for each case)", file=sys.stderr)
    elif not root and any(k in NEEDS_ROOT for k in classes):
        ap.error(f"--classes {', '.join(k for k in classes if k in NEEDS_ROOT)}: needs root (mounts a tmpfs)")
    if ns.case:
        plan = []
        for c in ns.case:
            kind, _, j = c.rpartition("-")
            if kind not in KINDS or not j.isdigit():
                ap.error(f"--case {c}: expected KIND-J, KIND one of {', '.join(KINDS)}")
            plan.append((kind, int(j)))
    else:
        plan = schedule(ns.cases, classes)
    if ns.list:
        import shlex

        try:
            for kind, j in plan:
                case = make_case(cat, ns.seed, kind, j)
                size = sum(len(v) for v in case.files.values())
                print(f"{case.name:22s} {size:9d} B  hetsched "
                      + " ".join(shlex.quote(shown(a, 60)) for a in case.args) + f"   # {'; '.join(case.note)[:150]}")
        except BrokenPipeError:  # | head
            sys.stderr.close()
        return 0
    out: Path = ns.out
    if out.exists() and any(out.iterdir()) and not (out / "cases.jsonl").exists():
        ap.error(f"--out {out}: not empty and not a results directory of this script")
    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(out / "cases", ignore_errors=True)
    for f in ("cases.jsonl", "failures.jsonl", "summary.txt"):
        (out / f).unlink(missing_ok=True)
    env = cli_env()
    mem = ns.mem_mb << 20
    t0 = time.monotonic()
    results: list[Outcome] = []
    lock = threading.Lock()
    cases_f = open(out / "cases.jsonl", "w")
    fail_f = open(out / "failures.jsonl", "w")

    def one(kind: str, j: int) -> Outcome:
        case = make_case(cat, ns.seed, kind, j)
        d = out / "cases" / case.name
        o = run_case(case, d, ns.timeout, mem, env)
        inputs = list(case.files)
        case.files = {}  # a case's inputs stay on disk only, where they are kept at all
        case.files.update((f, b"") for f in inputs)
        if o.cls in CLEAN and not ns.keep and not ns.case:
            shutil.rmtree(d, ignore_errors=True)
        else:
            (d / "stderr.txt").write_text(o.stderr)
            (d / "stdout.txt").write_text(o.stdout)
            (d / "argv.json").write_text(json.dumps(o.argv, indent=0) + "\n")
        return o

    with ThreadPoolExecutor(max_workers=max(1, ns.jobs)) as ex:
        futs = [ex.submit(one, k, j) for k, j in plan]
        for n, fut in enumerate(as_completed(futs), 1):
            o = fut.result()
            with lock:
                results.append(o)
                rec = {"case": o.case.name, "kind": o.case.kind, "command": o.case.command, "class": o.cls,
                       "rc": o.rc, "wall_s": round(o.wall_s, 3), "about": o.case.about}
                cases_f.write(json.dumps(rec) + "\n")
                if o.cls not in CLEAN:
                    full = dict(rec, why=o.why, signature=o.sig, invalid=o.case.invalid, mutations=o.case.note,
                                argv=[shown(a, 300) for a in o.argv], reproduce=reproducer(o),
                                inputs=[str(out / "cases" / o.case.name / f) for f in o.case.files],
                                stderr_tail=o.stderr[-2000:])
                    fail_f.write(json.dumps(full) + "\n")
                    fail_f.flush()
            if ns.verbose or ns.case:
                print(f"[{n}/{len(plan)}] {o.case.name:22s} {o.cls:16s} {o.wall_s:6.2f}s  {o.sig or o.why}",
                      flush=True)
                if ns.case:
                    print("  $", reproducer(o))
                    print("  notes:", "; ".join(o.case.note))
                    print("  stderr:", o.stderr[-4000:] if o.stderr else "(none)")
            elif n % 50 == 0:
                print(f"{n}/{len(plan)} cases, {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
    cases_f.close()
    fail_f.close()
    wall = time.monotonic() - t0

    results.sort(key=lambda o: o.case.name)
    sigs: dict[str, list[Outcome]] = collections.defaultdict(list)
    for o in results:
        if o.cls not in CLEAN:
            sigs[o.sig].append(o)
    text = [f"hetsched fuzz: {len(results)} cases, seed {ns.seed}, {ns.jobs} at a time, timeout {ns.timeout:g} s, "
            f"RLIMIT_AS {ns.mem_mb} MB, {wall:.0f} s wall", "",
            "  ".join(f"{c} {sum(o.cls == c for o in results)}" for c in CLASSES), "",
            summary_table(results, lambda o: o.case.command, "command"), "",
            summary_table(results, lambda o: o.case.kind, "input kind"), "",
            class_table(results), "",
            f"{len(sigs)} distinct failure signatures (count, first case, smallest reproducer):"]
    for sig, os_ in sorted(sigs.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        small = min(os_, key=lambda o: (o.input_bytes + sum(map(len, o.argv)), o.case.name))
        text += [f"  {len(os_):4d}  {sig}", f"        e.g. {small.case.name}: {reproducer(small)}"]
    report = "\n".join(text) + "\n"
    (out / "summary.txt").write_text(report)
    print(report)
    if not (ns.keep or ns.case) and (out / "cases").is_dir():
        for d in (out / "cases").iterdir():
            if not any(d.iterdir()):
                d.rmdir()
    return 1 if sigs else 0


if __name__ == "__main__":
    sys.exit(main())
