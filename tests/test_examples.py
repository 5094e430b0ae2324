"""The rt-app examples shipped in the package, how ``--workload`` finds them, and the
README's commands as the CLI parses them."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest
import typer.main

from hetsched import Simulation
from hetsched.cli import app
from hetsched.workloads.examples import EXAMPLES, example_path, examples_dir, rtapp_file

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
TEST_COPIES = Path(__file__).resolve().parent / "data" / "rtapp"  # the same upstream files

# one thread of 1 ms every 10 ms: nothing like any shipped example (names, count, period)
MINE = '{"tasks": {"mine": {"loop": -1, "run": 1000, "timer": {"ref": "t", "period": 10000}}}}'


def test_the_directory_holds_the_listed_examples_and_their_provenance():
    shipped = {p.name for p in examples_dir().iterdir() if p.suffix == ".json"}
    assert shipped == set(EXAMPLES)
    sources = (examples_dir() / "SOURCES.md").read_text()
    assert "GNU GENERAL PUBLIC LICENSE" in (examples_dir() / "COPYING").read_text()
    for name in EXAMPLES:
        assert f"| {name} |" in sources, name
        copy = TEST_COPIES / name
        if copy.is_file():  # copied byte for byte from upstream, as the tests' copies are
            assert example_path(name).read_bytes() == copy.read_bytes(), name


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_each_example_runs_half_a_simulated_second(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no file of that name here: the shipped one
    sim = Simulation(platform="gs101", workload=[name], seed=0)
    sim.run_until(500_000_000)
    res = sim.result()
    assert res["sim_duration_s"] == 0.5
    assert res["workload"] == Path(name).stem
    assert res.energy_j > 0
    assert sum(t["runtime_s"] for t in res["tasks"]) > 0, "no task ran"


def test_example2_is_rtapps_ten_percent_timer(tmp_path, monkeypatch):
    # rt-app's tutorial example2: one thread, run 10 000 µs then wait for a 100 ms timer.
    # In 0.5 s the timer fires at 0, 100, 200, 300 and 400 ms: 5 activations and
    # 5 x 10 000 = 50 000 µs of work (the last run ends long before 500 ms on gs101).
    monkeypatch.chdir(tmp_path)
    sim = Simulation(platform="gs101", workload=["rtapp_example2.json"], seed=0)
    sim.run_until(500_000_000)
    (task,) = sim.result()["tasks"]
    assert (task["name"], task["activations"], task["work_completed_us"]) == ("thread0-0", 5, 50_000.0)


def test_workloads_lists_every_example(tools):
    proc = tools.run_cli(["workloads"])
    assert proc.returncode == 0, proc.stderr
    for name, what in EXAMPLES.items():
        assert f"{name}: {what}" in proc.stdout, name
    assert str(examples_dir()) in proc.stdout


def test_a_file_in_the_working_directory_wins(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shipped = Simulation(platform="gs101", workload=["rtapp_example3.json"])
    shipped.run_until(100_000_000)
    # example3 starts 12 instances of thread0
    assert [t["name"] for t in shipped.result()["tasks"]] == [f"thread0-{i}" for i in range(12)]

    (tmp_path / "rtapp_example3.json").write_text(MINE)
    assert rtapp_file("rtapp_example3.json") == "rtapp_example3.json"
    own = Simulation(platform="gs101", workload=["rtapp_example3.json"])
    own.run_until(100_000_000)
    (task,) = own.result()["tasks"]
    assert task["name"] == "mine-0" and task["activations"] == 10  # 0, 10, ..., 90 ms


def test_a_path_with_a_directory_is_never_an_example(tmp_path, tools):
    assert rtapp_file("sub/rtapp_example3.json") is None
    assert rtapp_file("./rtapp_example3.json") is None
    proc = tools.run_cli(["run", "--workload", "sub/rtapp_example3.json", "--duration", "0.1",
                          "--out", str(tmp_path / "out")], cwd=tmp_path)
    tools.assert_one_line_error(proc, "sub/rtapp_example3.json", "--workload", "shipped example")
    tools.assert_no_outputs(tmp_path / "out")


def test_an_unknown_bare_name_is_one_line(tmp_path, tools):
    assert rtapp_file("rtapp_example99.json") is None
    proc = tools.run_cli(["run", "--workload", "rtapp_example99.json", "--out", str(tmp_path / "out")],
                         cwd=tmp_path)
    tools.assert_one_line_error(proc, "rtapp_example99.json", "hetsched workloads lists them")


def test_readme_example_command_runs_outside_a_clone(tmp_path, tools):
    proc = tools.run_cli(["run", "--platform", "hikey960", "--workload", "rtapp_example3.json",
                          "--duration", "1", "--out", str(tmp_path / "out")], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "rtapp_example3" in proc.stdout
    assert (tmp_path / "out" / "result.json").is_file()


# ------------------------------------------------------------------ the README's commands

def _readme_commands() -> list[list[str]]:
    """Every ``hetsched ...`` invocation in the README's bash blocks, as argv lists."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", README.read_text(), flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            part: list[str] = []
            for w in words + ["&&"]:
                if w in ("&&", "||", ";"):
                    if part[:1] == ["hetsched"]:
                        commands.append(part[1:])
                    part = []
                else:
                    part.append(w)
    return commands


def _parse(argv: list[str]) -> click.Context:
    """Parse argv as the CLI would (options, types, required arguments), without running it."""
    group = typer.main.get_command(app)
    ctx = group.make_context("hetsched", [], resilient_parsing=False)
    cmd, rest = group, list(argv)
    while isinstance(cmd, click.Group) and rest and not rest[0].startswith("-"):
        sub = cmd.get_command(ctx, rest[0])
        assert sub is not None, f"no command {rest[0]!r} in hetsched {' '.join(argv)}"
        ctx = click.Context(sub, info_name=rest[0], parent=ctx)
        cmd, rest = sub, rest[1:]
    return cmd.make_context(ctx.info_name, rest, parent=ctx.parent)


def test_readme_commands_parse():
    commands = _readme_commands()
    # the opening line's main job, the usage block and the reproductions
    assert ["compare"] in commands
    assert any("rtapp_example3.json" in c for c in commands)
    assert len(commands) >= 15, commands
    for argv in commands:
        try:
            _parse(argv)
        except click.UsageError as e:  # pragma: no cover - the message says which
            pytest.fail(f"hetsched {' '.join(argv)}: {e.format_message()}")


def test_the_parser_check_refuses_a_bad_command():
    with pytest.raises(click.UsageError):
        _parse(["run", "--no-such-option"])
    with pytest.raises(click.UsageError):
        _parse(["compare", "--seeds", "many"])


def test_a_sweep_grid_names_a_shipped_example_or_its_own_file(tmp_path):
    """A grid reads its file arguments from its own folder; a bare name that is no file
    there is the shipped example, as on the command line, and a file there wins."""
    from hetsched.runner import relative_to
    from hetsched.sweep import load_grid

    grid = tmp_path / "grid.yaml"
    grid.write_text("platforms: [gs101]\nworkloads: [rtapp_example2.json]\nschedulers: [cfs]\nduration: 0.2\n")
    (spec,) = load_grid(str(grid)).cells()
    assert spec.simulation_args()["workload"] == ["rtapp_example2.json"]
    assert [t["name"] for t in spec.simulation().run(0.2).doc["tasks"]] == ["thread0-0"]
    (tmp_path / "rtapp_example2.json").write_text(MINE)
    assert relative_to(tmp_path, "rtapp_example2.json") == str(tmp_path / "rtapp_example2.json")
    (spec,) = load_grid(str(grid)).cells()
    assert [t["name"] for t in spec.simulation().run(0.2).doc["tasks"]] == ["mine-0"]
    # a name that is neither stays a path in the grid's folder, refused there
    assert relative_to(tmp_path, "nosuch.json") == str(tmp_path / "nosuch.json")
