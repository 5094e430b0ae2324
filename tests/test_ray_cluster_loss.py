"""A Ray cluster that dies while a batch runs on it (hetsched.runner.RayCluster): the batch
ends within seconds with one line (a ClusterError, exit status 2) saying what was kept
and to go on with --resume, the rows so far written, the output directory's lock
released, and the runs the cluster took with it left undone rather than failed.

Ray itself is replaced by a fake module whose cluster's GCS is a real listening socket
on loopback: the fake completes some runs, then its "head dies" (the socket is closed and
nothing more comes back), as with a head killed mid-sweep. test_sweep.py kills the head
of a real local cluster.
"""

from __future__ import annotations

import socket
import sys
import time
import types

import pytest

from hetsched import runner as runner_mod
from hetsched.errors import ClusterError
from hetsched.runner import RayCluster, RunSpec

GRID = """\
platforms: [juno-r0]
workloads: ["periodic:n=4"]
schedulers: [cfs]
governors: [schedutil]
seeds: 6
duration: 0.05
"""


class RaySystemError(Exception):
    """The fake's stand-in for ray.exceptions.RaySystemError (matched by its name)."""


class _Ref:
    def __init__(self, fn, args):
        self.fn, self.args = fn, args


class FakeRay(types.ModuleType):
    """What RayCluster calls of ray: results come back one per wait() until ``complete``
    have; then the head dies (``die``), after which wait() returns nothing and get()
    raises ``get_error`` if set."""

    def __init__(self, gcs: socket.socket, complete: int, get_error: Exception | None = None):
        super().__init__("ray")
        self.gcs, self.complete, self.get_error = gcs, complete, get_error
        self.returned = 0
        self.shutdowns = self.cancels = 0
        self.dead = False

    def die(self) -> None:
        if not self.dead:
            self.dead = True
            self.gcs.close()  # its port refuses connections from now on

    # -- the API RayCluster uses
    def init(self, **_kw):
        pass

    def cluster_resources(self):
        return {"CPU": 2}

    def remote(self, **_opts):
        return lambda fn: types.SimpleNamespace(remote=lambda *args: _Ref(fn, args))

    def wait(self, refs, num_returns=1, timeout=None):
        if self.returned < self.complete:
            self.returned += 1
            return [refs[0]], refs[1:]
        if self.get_error is not None:  # the runs in flight come back as errors
            self.die()
            return [refs[0]], refs[1:]
        self.die()
        time.sleep(min(timeout or 0.0, 0.05))
        return [], refs

    def get(self, ref):
        if self.dead and self.get_error is not None:
            raise self.get_error
        return ref.fn(*ref.args)

    def cancel(self, _ref, force=False):
        self.cancels += 1

    def shutdown(self):
        self.shutdowns += 1

    def get_runtime_context(self):
        raise AssertionError("the GCS address is read from host:port")


@pytest.fixture
def gcs():
    """A listening socket on loopback standing for a head's GCS; its address."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(64)
    yield s, f"127.0.0.1:{s.getsockname()[1]}"
    s.close()


@pytest.fixture(autouse=True)
def quick(monkeypatch):
    # the same checks, on a shorter clock
    monkeypatch.setattr(RayCluster, "POLL_S", 0.05)
    monkeypatch.setattr(RayCluster, "LOST_AFTER_S", 0.5)


def _install(monkeypatch, fake: FakeRay) -> None:
    monkeypatch.setitem(sys.modules, "ray", fake)


def _specs(n: int) -> list[RunSpec]:
    return [RunSpec(platform="juno-r0", workload=("periodic:n=4",), scheduler="cfs", seed=s, duration_s=0.05)
            for s in range(n)]


def test_a_dead_head_ends_the_batch_within_seconds(monkeypatch, gcs):
    sock, address = gcs
    fake = FakeRay(sock, complete=2)
    _install(monkeypatch, fake)
    rc = RayCluster(address)
    got = []
    t0 = time.monotonic()
    with pytest.raises(ClusterError) as e:
        for spec, outcome in rc.run(_specs(8), False, True):
            got.append((spec.seed, outcome[1]))
    waited = time.monotonic() - t0
    assert [s for s, _ in got] == [0, 1] and all(err is None for _, err in got)
    assert waited < 3.0, waited  # LOST_AFTER_S (0.5 s here, 3 s for real) and the polls
    assert str(e.value) == (f"--ray: address: expected the Ray cluster at {address} to keep running, "
                            "got no connection to its GCS for 0.5 s (the head stopped?)")
    assert rc.lost and len(rc.inflight) == 4  # two CPUs, twice as many in flight: undone, not failed
    rc.close()
    assert fake.cancels == 0 and fake.shutdowns == 1 and not rc.inflight


def test_a_run_the_cluster_took_with_it_is_not_a_failed_run(monkeypatch, gcs):
    sock, address = gcs
    fake = FakeRay(sock, complete=1, get_error=RaySystemError("System error: the raylet died"))
    _install(monkeypatch, fake)
    rc = RayCluster(address)
    with pytest.raises(ClusterError, match=r"to keep running after Ray's RaySystemError"):
        for _spec, outcome in rc.run(_specs(4), False, True):
            assert outcome[1] is None  # only the run completed before; none recorded as failed
    rc.close()


def test_a_failed_run_on_a_living_cluster_is_recorded_as_before(monkeypatch, gcs):
    sock, address = gcs
    fake = FakeRay(sock, complete=1, get_error=RaySystemError("System error: a worker died"))
    fake.die = lambda: setattr(fake, "dead", True)  # the run fails, the GCS answers on
    _install(monkeypatch, fake)
    rc = RayCluster(address)
    outcomes = [o for _, o in rc.run(_specs(3), False, True)]
    assert outcomes[0][1] is None
    assert [o[1] for o in outcomes[1:]] == ["RaySystemError: System error: a worker died"] * 2
    assert not rc.lost
    rc.close()


def test_the_sweep_says_what_it_kept_and_releases_its_directory(monkeypatch, capsys, gcs, tmp_path):
    from hetsched import cli
    from hetsched.runner import LOCK_FILE
    from hetsched.sweep import SWEEP_FILE, read_rows

    sock, address = gcs
    _install(monkeypatch, FakeRay(sock, complete=2))
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID)
    out = tmp_path / "out"
    monkeypatch.setattr(sys, "argv", ["hetsched", "sweep", str(grid), "--out", str(out), "--ray", address])
    t0 = time.monotonic()
    with pytest.raises(SystemExit) as e:
        cli.main()
    cap = capsys.readouterr()
    assert e.value.code == 2, cap.err
    assert time.monotonic() - t0 < 30
    assert cap.err.splitlines() == [
        f"hetsched: error: --ray: address: expected the Ray cluster at {address} to keep running, got no "
        f"connection to its GCS for 0.5 s (the head stopped?); kept 2 rows in {out / SWEEP_FILE} "
        "(continue with --resume)"]
    assert not (out / LOCK_FILE).exists()
    rows = read_rows(out)
    assert len(rows) == 2 and all(r["error"] is None for r in rows)
    # --resume, here on local workers, runs the four cells the cluster did not complete
    monkeypatch.setattr(sys, "argv", ["hetsched", "sweep", str(grid), "--out", str(out), "--resume",
                                      "--workers", "1"])
    with pytest.raises(SystemExit) as e:
        cli.main()
    cap = capsys.readouterr()
    assert e.value.code == 0, cap.err
    assert "4 run in" in cap.out and "2 already in" in cap.out
    assert len(read_rows(out)) == 6


def test_the_gcs_endpoint_comes_from_the_address():
    assert runner_mod._gcs_endpoint("10.0.0.5:6379") == ("10.0.0.5", 6379)
    assert runner_mod._gcs_endpoint("[::1]:6379") == ("::1", 6379)
    assert runner_mod._gcs_endpoint("auto") is None and runner_mod._gcs_endpoint("ray://h:10001") is None


def test_reproduce_names_the_runs_its_journal_keeps(monkeypatch, capsys, tmp_path):
    # the reproduction's runner raises as the sweep's does; its line counts the journal
    from hetsched import cli, reproduce
    from hetsched.reproduce.journal import JOURNAL

    out = tmp_path / "rep"

    def dies(*_a, **_kw):
        out.mkdir(parents=True, exist_ok=True)
        (out / JOURNAL).write_text('{"run": 1}\n{"run": 2}\n')
        raise ClusterError("--ray", "address", "the Ray cluster at 127.0.0.1:1 to keep running",
                           got=runner_mod._input.Shown("no connection to its GCS for 3 s (the head stopped?)"))

    monkeypatch.setattr(reproduce, "reproduce", dies)
    monkeypatch.setattr(sys, "argv", ["hetsched", "reproduce", "fa-cfs", "--smoke", "--out", str(out)])
    with pytest.raises(SystemExit) as e:
        cli.main()
    cap = capsys.readouterr()
    assert e.value.code == 2, cap.err
    (line,) = cap.err.splitlines()
    assert line.endswith(
        f"(the head stopped?); kept 2 completed runs in {out / JOURNAL} (continue with --resume)")
