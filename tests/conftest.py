"""Shared helpers for the API, CLI and built-in workload tests.

The CLI is always run as a real subprocess (``python -m hetsched.cli``) so that exit
codes, stdout and stderr are what a user sees.  ``COLUMNS`` is set wide so that rich
tables are not wrapped or truncated in the captured output.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import Mapping, Sequence

import pytest

SRC = Path(__file__).resolve().parents[1] / "python"
if importlib.util.find_spec("hetsched") is None:
    sys.path.insert(0, str(SRC))

REALDATA_RTAPP = Path(__file__).resolve().parent / "data" / "rtapp"  # copies of shared/realdata/rtapp
PLATFORM_DATA = SRC / "hetsched" / "platforms" / "data"


def _cli_env(columns: int = 400) -> dict[str, str]:
    import hetsched

    env = dict(os.environ)
    env["COLUMNS"] = str(columns)
    env["PYTHONHASHSEED"] = "0"
    # the subprocess must import the same package the tests import
    pkg_root = str(Path(hetsched.__file__).resolve().parents[1])
    env["PYTHONPATH"] = pkg_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run_cli(args: Sequence[str], cwd: str | os.PathLike | None = None,
            timeout: float = 120, columns: int = 400) -> subprocess.CompletedProcess:
    """``hetsched ARGS`` in a subprocess (a terminal ``columns`` wide); returns the
    CompletedProcess (text mode)."""
    return subprocess.run([sys.executable, "-m", "hetsched.cli", *map(str, args)], cwd=cwd,
                          env=_cli_env(columns), capture_output=True, text=True, timeout=timeout)


def run_cli_many(jobs: Mapping[str, Sequence[str]], cwd: str | os.PathLike | None = None,
                 workers: int = 4) -> dict[str, subprocess.CompletedProcess]:
    """Several CLI invocations at once (each is mostly interpreter start-up)."""
    with ThreadPoolExecutor(max_workers=workers) as ex:
        futs = {k: ex.submit(run_cli, a, cwd) for k, a in jobs.items()}
        return {k: f.result() for k, f in futs.items()}


def without_wall(doc: dict) -> str:
    """The result document as canonical JSON text, without the wall-clock time."""
    d = dict(doc)
    d.pop("wall_s", None)
    return json.dumps(d, sort_keys=True)


def raw_platform(name: str) -> dict:
    """A built-in platform file as shipped (not through the loader)."""
    return json.loads((PLATFORM_DATA / f"{name}.json").read_text())


def expected_capacities(name: str) -> dict[int, int]:
    """CPU -> capacity_orig, from the raw file with the kernel's arch_topology.c rule:
    ``(dmips_mhz * f_max_khz << 10) / max over CPUs of (dmips_mhz * f_max_khz)``."""
    clusters = raw_platform(name)["clusters"]
    raw = {c["name"]: c["capacity_dmips_mhz"] * max(o["khz"] for o in c["opps"]) for c in clusters}
    top = max(raw.values())
    return {cpu: (raw[c["name"]] << 10) // top for c in clusters for cpu in c["cpus"]}


def assert_one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> str:
    """Exit status 2, nothing on stdout, exactly one line on stderr (no traceback)
    containing every needle; returns that line."""
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    line = lines[0]
    assert line.startswith("hetsched: error: "), line
    for n in needles:
        assert n in line, (n, line)
    assert proc.stdout == "", proc.stdout
    return line


def assert_no_outputs(out_dir: Path) -> None:
    """A failed run leaves no result.json and no temporary files behind."""
    if out_dir.exists():
        assert sorted(p.name for p in out_dir.iterdir()) == [], list(out_dir.iterdir())


def rtapp_file(name: str) -> Path:
    p = REALDATA_RTAPP / name
    if not p.is_file():
        pytest.skip(f"{p} is not available")
    return p


@pytest.fixture(scope="session")
def tools() -> SimpleNamespace:
    """The helpers above, as a fixture: test modules must not ``import conftest``
    (tests/platforms has a conftest.py of its own, and both are module ``conftest``)."""
    return SimpleNamespace(
        run_cli=run_cli, run_cli_many=run_cli_many, without_wall=without_wall,
        raw_platform=raw_platform, expected_capacities=expected_capacities,
        assert_one_line_error=assert_one_line_error, assert_no_outputs=assert_no_outputs,
        rtapp_file=rtapp_file, REALDATA_RTAPP=REALDATA_RTAPP, PLATFORM_DATA=PLATFORM_DATA,
    )
