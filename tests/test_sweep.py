"""``hetsched sweep``: the grid file, one row per run in OUT/sweep.parquet, a failing cell
recorded with its error, bad grids rejected in one line, a sweep killed part-way and
resumed with every row present once, and a run through a real local Ray cluster.

Expected values come from the grid (the product of its lists) and from running the same
configuration through :class:`hetsched.Simulation` directly, never from the sweep itself.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

pq = pytest.importorskip("pyarrow.parquet")

from hetsched.sim import Simulation  # noqa: E402
from hetsched.sweep import FIXED_COLUMNS, SWEEP_FILE, load_grid, read_rows  # noqa: E402

# 2 platforms x 2 workloads x 3 schedulers x 2 seeds = 24 cells; gs101 x legacy fails
# (legacy needs a switcher platform) and must be recorded, not stop the sweep
GRID = """\
platforms: [juno-r0, gs101]
workloads: [phone-mix, [periodic:n=3, hackbench:groups=1]]
schedulers: [eas, "eas[schedutil.rate_limit_us=2000]", legacy]
governors: [schedutil]
seeds: 2
duration: 0.3
"""


def _write(tmp_path: Path, text: str, name: str = "grid.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def _env() -> dict[str, str]:
    """The environment of a CLI subprocess (as conftest's run_cli): this hetsched first."""
    import hetsched

    env = dict(os.environ, COLUMNS="400")
    root = str(Path(hetsched.__file__).resolve().parents[1])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _rows(out: Path) -> list[dict]:
    return pq.read_table(out / SWEEP_FILE).to_pylist()


def test_grid_cells_and_hashes(tmp_path):
    g = load_grid(_write(tmp_path, GRID))
    cells = g.cells()
    assert len(cells) == 2 * 2 * 3 * 2
    assert len({c.hash for c in cells}) == len(cells)
    # the hash is of the effective configuration: a knob on the scheduler label or in
    # `knobs` is the same cell, and numbers hash alike whatever their spelling
    g2 = load_grid(_write(tmp_path, "platforms: [juno-r0]\nschedulers: [eas, 'eas[schedutil.rate_limit_us=2000]']\n"
                                    "knobs: {schedutil.rate_limit_us: [2000.0, 500]}\n", "g2.yaml"))
    c2 = g2.cells()
    # eas@2000.0, eas@500, and eas[...=2000] (its own knob wins over both values): @2000 again
    assert len(c2) == 2
    assert sorted(dict(c.knobs)["schedutil.rate_limit_us"] for c in c2) == [500, 2000.0]
    again = load_grid(_write(tmp_path, GRID, "again.yaml")).cells()
    assert [c.hash for c in again] == [c.hash for c in cells]


def test_sweep_rows_one_per_cell_with_lower_bound_and_errors(tmp_path, tools):
    grid = _write(tmp_path, GRID)
    out = tmp_path / "out"
    proc = tools.run_cli(["sweep", grid, "--out", out, "--workers", "2"], timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "done 16, failed 8, remaining 0" in proc.stdout
    rows = _rows(out)
    cells = load_grid(grid).cells()
    assert sorted(r["cell_hash"] for r in rows) == sorted(c.hash for c in cells)
    assert [p.name for p in out.iterdir()] == [SWEEP_FILE]  # no temporary left behind
    for r in rows:
        assert set(FIXED_COLUMNS) <= set(r)
        if r["scheduler"] == "legacy":  # no switcher platform in the grid
            assert "switcher" in r["error"], r
            assert r["energy_j"] is None and r["energy_lower_bound_j"] is None
            continue
        assert r["error"] is None, r
        assert 0 < r["energy_lower_bound_j"] <= r["energy_j"]
        assert r["energy_over_bound"] == pytest.approx(r["energy_j"] / r["energy_lower_bound_j"])
        assert r["wall_s"] > 0 and r["sim_duration_s"] == pytest.approx(0.3)
        if "hackbench" in r["workload"]:
            assert r["hackbench.tasks"] is not None and r["wakeup_latency_us_p99"] is not None
    # a row is the run of its configuration: the same as Simulation gives directly
    r = next(r for r in rows if r["platform"] == "gs101" and r["scheduler"] == "eas[schedutil.rate_limit_us=2000]"
             and r["seed"] == 1 and "hackbench" in r["workload"])
    assert r["knob.schedutil.rate_limit_us"] == 2000.0
    doc = Simulation(platform="gs101", workload=["periodic:n=3", "hackbench:groups=1"], scheduler="eas",
                     knobs={"schedutil.rate_limit_us": 2000}, seed=1).run(0.3).doc
    assert r["energy_j"] == doc["energy_j"]
    assert r["energy_lower_bound_j"] == doc["energy_lower_bound_j"]
    assert r["hackbench.completion_s"] == doc["metrics"]["hackbench"]["completion_s"]
    assert r["counters.migrations"] == doc["counters"]["migrations"]

    # the same OUT again without --resume: refused, the file untouched
    before = (out / SWEEP_FILE).read_bytes()
    again = tools.run_cli(["sweep", grid, "--out", out])
    tools.assert_one_line_error(again, str(out), "--resume")
    assert (out / SWEEP_FILE).read_bytes() == before
    # --resume on a complete sweep runs nothing; --retry-failed reruns the 8 failures only
    res = tools.run_cli(["sweep", grid, "--out", out, "--resume", "--workers", "1"])
    assert res.returncode == 0, res.stderr
    assert "0 run" in res.stdout and "24 already" in res.stdout
    res = tools.run_cli(["sweep", grid, "--out", out, "--resume", "--retry-failed", "--workers", "1"])
    assert res.returncode == 0, res.stderr
    assert "8 run" in res.stdout and "failed 8" in res.stdout
    rows2 = _rows(out)
    assert sorted(r["cell_hash"] for r in rows2) == sorted(c.hash for c in cells)
    ok1 = {r["cell_hash"]: r for r in rows if r["error"] is None}
    ok2 = {r["cell_hash"]: r for r in rows2 if r["error"] is None}
    assert len(ok1) == 16
    assert ok1 == ok2  # the completed rows were kept as they were


BAD_GRIDS = {
    "unknown key": ("platforms: [gs101]\nschedulerz: [cfs]\n", "key", "schedulerz"),
    "platform": ("platforms: [gs10]\n", "platforms[0]", "did you mean 'gs101'"),
    "scheduler": ("schedulers: [cfs, eass]\n", "schedulers[1]", "eass"),
    "governor": ("governors: [schedutl]\n", "governors[0]", "schedutil"),
    "knob name": ("knobs: {schedutil.rate_limt_us: [1]}\n", "knobs", "schedutil.rate_limt_us"),
    "knob value": ("knobs: {schedutil.target_load: [0.8, 7]}\n", "knobs.schedutil.target_load", "got 7"),
    "workload": ("workloads: [periodic:n=0]\n", "workloads[0]", "expected"),
    "seeds": ("seeds: [0, -1]\n", "seeds", "non-negative"),
    "duration": ("duration: fast\n", "duration", "positive"),
    "yaml": ("platforms: [gs101\n", "YAML", "valid YAML"),
    "not a mapping": ("- gs101\n", "top level", "mapping"),
}


@pytest.fixture(scope="module")
def bad_runs(tmp_path_factory, tools):
    d = tmp_path_factory.mktemp("bad")
    jobs = {}
    for key, (text, *_rest) in BAD_GRIDS.items():
        p = d / f"{key.replace(' ', '_')}.yaml"
        p.write_text(text)
        jobs[key] = ["sweep", p, "--out", d / f"out-{key.replace(' ', '_')}"]
    return d, tools.run_cli_many(jobs)


@pytest.mark.parametrize("key", list(BAD_GRIDS))
def test_bad_grid_one_line_exit_2_no_output(key, bad_runs, tools):
    d, procs = bad_runs
    _text, field, needle = BAD_GRIDS[key]
    name = f"{key.replace(' ', '_')}.yaml"
    tools.assert_one_line_error(procs[key], name, f": {field}", needle)
    assert not (d / f"out-{key.replace(' ', '_')}").exists()


def test_kill_part_way_then_resume_every_row_once(tmp_path, tools):
    # 12 cells of ~0.4 s; one worker and a write after every row, killed (SIGKILL, the
    # whole process group: no chance to clean up) once some rows are on disk
    grid = _write(tmp_path, "platforms: [gs101]\nworkloads: [phone-mix]\n"
                            "schedulers: [cfs, eas]\nknobs: {schedutil.rate_limit_us: [500, 2000]}\n"
                            "seeds: 3\nduration: 10.0\n")
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "hetsched.cli", "sweep", str(grid), "--out", str(out), "--workers", "1",
           "--flush-every", "0"]
    env = _env()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    total = len(load_grid(grid).cells())
    deadline = time.monotonic() + 120
    n = 0
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                n = len(read_rows(out))
            except Exception:
                n = 0
            if n >= 3:
                break
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert 3 <= n < total, f"the sweep should have been killed part-way ({n} of {total} rows)"
    first = {r["cell_hash"]: r for r in _rows(out)}  # still a complete Parquet file
    assert 3 <= len(first) < total
    res = tools.run_cli(["sweep", grid, "--out", out, "--resume", "--workers", "2"], timeout=300)
    assert res.returncode == 0, res.stderr
    assert f"{total - len(first)} run" in res.stdout
    rows = _rows(out)
    hashes = [r["cell_hash"] for r in rows]
    assert len(hashes) == len(set(hashes)) == total
    assert set(hashes) == {c.hash for c in load_grid(grid).cells()}
    assert all(r["error"] is None for r in rows)
    by = {r["cell_hash"]: r for r in rows}
    def nonnull(r: dict) -> dict:  # a column first seen later is null in the earlier rows
        return {k: v for k, v in r.items() if v is not None}

    for h, r in first.items():  # the rows from before the kill are kept, not run again
        assert nonnull(by[h]) == nonnull(r)
    assert [p.name for p in out.iterdir()] == [SWEEP_FILE]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def _ray_head():
    """A Ray head on loopback started for a test, in a session of its own; (port, its
    Popen). Stopped with its whole session at the end."""
    pytest.importorskip("ray", reason="the Ray test needs `pip install 'hetsched[ray]'`")
    ray_bin = shutil.which("ray") or str(Path(sys.executable).with_name("ray"))
    if not os.path.exists(ray_bin):
        pytest.skip("the `ray` command is not installed")
    port = _free_port()
    # a short temporary directory: Ray's socket paths must fit in 107 bytes
    temp = tempfile.mkdtemp(prefix="hsray", dir="/tmp")
    env = _env()  # Ray's workers must import this hetsched
    env["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    # every Ray process on loopback: this machine's network is closed
    head = subprocess.Popen(
        [ray_bin, "start", "--head", "--block", "--node-ip-address=127.0.0.1", f"--port={port}",
         f"--ray-client-server-port={_free_port()}", f"--dashboard-agent-listen-port={_free_port()}",
         f"--metrics-export-port={_free_port()}", "--num-cpus=2", "--include-dashboard=false",
         "--disable-usage-stats", f"--temp-dir={temp}"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while True:  # the GCS port answers once the head is up
            assert head.poll() is None, "ray start --head exited"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the Ray head did not come up"
                time.sleep(0.5)
        yield port, head
    finally:
        # stop the cluster we started: its whole session (ray start --block and its children)
        try:
            os.killpg(head.pid, signal.SIGTERM)
            try:
                head.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
            time.sleep(1)
            os.killpg(head.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        head.wait()
        shutil.rmtree(temp, ignore_errors=True)


def test_sweep_through_a_local_ray_cluster(tmp_path, tools):
    with _ray_head() as (port, _head):
        grid = _write(tmp_path, GRID)
        out = tmp_path / "out"
        proc = tools.run_cli(["sweep", grid, "--out", out, "--ray", f"127.0.0.1:{port}"], timeout=180)
        assert proc.returncode == 0, proc.stderr
        assert f"Ray cluster 127.0.0.1:{port}" in proc.stdout
        assert "done 16, failed 8, remaining 0" in proc.stdout
        rows = _rows(out)
        assert sorted(r["cell_hash"] for r in rows) == sorted(c.hash for c in load_grid(grid).cells())
        # the same numbers as a direct run
        r = next(r for r in rows if r["platform"] == "juno-r0" and r["scheduler"] == "eas" and r["seed"] == 0
                 and r["workload"] == "phone-mix")
        doc = Simulation(platform="juno-r0", workload="phone-mix", scheduler="eas", seed=0).run(0.3).doc
        assert (r["energy_j"], r["energy_lower_bound_j"]) == (doc["energy_j"], doc["energy_lower_bound_j"])
        assert len({r["worker"] for r in rows}) >= 1
        # compare and a reproduction go through the same runner onto the same cluster,
        # with the numbers of a local run
        addr = f"127.0.0.1:{port}"
        cmp_args = ["compare", "--platform", "juno-r0", "--scheduler", "cfs", "--scheduler", "eas",
                    "--duration", "0.3", "--seeds", "2"]
        local = tools.run_cli(cmp_args + ["--out", tmp_path / "cmp-local"], timeout=180)
        remote = tools.run_cli(cmp_args + ["--out", tmp_path / "cmp-ray", "--ray", addr], timeout=180)
        assert local.returncode == 0 and remote.returncode == 0, remote.stderr
        assert (tmp_path / "cmp-ray" / "compare.json").read_text() == (tmp_path / "cmp-local" / "compare.json").read_text()
        rep = tools.run_cli(["reproduce", "fa-cfs", "--smoke", "--out", tmp_path / "rep", "--ray", addr], timeout=300)
        assert rep.returncode == 0, rep.stderr
        assert "fa-cfs: " in rep.stdout and (tmp_path / "rep" / "fa-cfs.md").exists()


def test_a_sweep_whose_ray_head_dies_ends_at_once_keeping_its_rows(tmp_path):
    # 300 cells, about 0.1 s each on the cluster's two CPUs: the head is killed (its whole
    # session, as `ray stop --force` would) once the first rows are written. Before, the
    # sweep waited 60 s for the head, then Ray ended it from C++ (exit status 1, Ray's own
    # log line alone, the lock left, the rows since the last write lost)
    grid = _write(tmp_path, "platforms: [juno-r0]\nworkloads: [periodic:n=4]\nschedulers: [cfs, eas]\n"
                            "governors: [schedutil]\nseeds: 150\nduration: 0.5\n")
    out = tmp_path / "out"
    with _ray_head() as (port, head):
        proc = subprocess.Popen([sys.executable, "-m", "hetsched.cli", "sweep", str(grid), "--out", str(out),
                                 "--ray", f"127.0.0.1:{port}", "--flush-every", "0"], env=_env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 180
            while not (out / SWEEP_FILE).exists():
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "no row written"
                time.sleep(0.2)
            os.killpg(head.pid, signal.SIGKILL)
            killed = time.monotonic()
            stdout, stderr = proc.communicate(timeout=120)
            ended = time.monotonic() - killed
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    n = len(_rows(out))
    assert proc.returncode == 2, stderr
    assert ended < 20, ended  # 3 s without a GCS, the polls, the driver's shutdown: 4-5 s here
    assert stderr.splitlines() == [
        f"hetsched: error: --ray: address: expected the Ray cluster at 127.0.0.1:{port} to keep running, got no "
        f"connection to its GCS for 3 s (the head stopped?); kept {n} rows in {out / SWEEP_FILE} "
        "(continue with --resume)"], stderr
    assert 1 <= n < 300 and stdout == ""
    assert [p.name for p in out.iterdir()] == [SWEEP_FILE]  # the lock released, no temporaries
