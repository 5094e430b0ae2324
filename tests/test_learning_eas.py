"""Learning EAS (paper 000 Algorithms 1 and 2, eq. 12/13)."""

import json

import numpy as np
import pytest

from hetsched import Simulation
from hetsched.errors import HetschedError
from hetsched.learning import (LearningConfig, LearningEAS, MigrationCostAgent, MigrationCostConfig, PolicyNetwork,
                               TargetLoadAgent, TargetLoadConfig, eq12_error, eq13_error, migration_error)


def tiny_net(lr=0.1):
    n = PolicyNetwork(1, 1, out_max=100.0, lr=lr)
    n.w1, n.b1, n.w2, n.b2 = np.array([[2.0]]), np.array([0.0]), np.array([3.0]), 0.0
    return n


def test_backprop_worked_by_hand():
    n = tiny_net()
    f = n.forward([1.0])
    assert (f.z[0], f.h[0], f.out) == (2.0, 2.0, 6.0)
    n.backward(f, 0.5)
    # dh = e*w2*relu'(z) = 0.5*3 = 1.5; w2 += lr*e*h; b2 += lr*e; w1 += lr*dh*x; b1 += lr*dh
    assert n.w2[0] == pytest.approx(3.0 + 0.1 * 0.5 * 2.0)
    assert n.b2 == pytest.approx(0.05)
    assert n.w1[0, 0] == pytest.approx(2.0 + 0.1 * 1.5 * 1.0)
    assert n.b1[0] == pytest.approx(0.15)
    assert n([1.0]) > 6.0  # a positive error raises the output


def test_dead_relu_passes_no_gradient_and_output_is_clamped():
    n = tiny_net()
    n.b1 = np.array([-5.0])
    f = n.forward([1.0])
    assert f.out == 0.0 and f.h[0] == 0.0
    n.backward(f, 1.0)
    assert n.w1[0, 0] == 2.0 and n.w2[0] == 3.0 and n.b2 == pytest.approx(0.1)
    n.b1, n.w2 = np.array([0.0]), np.array([1000.0])
    assert n([1.0]) == 100.0


def test_eq12_and_eq13_signs():
    # eq. 12: error = tl * (freq_t - freq_{t-1})
    assert eq12_error(-0.0023, 1500.0, 1000.0) == pytest.approx(-1.15)
    assert eq12_error(0.0023, 1500.0, 1000.0) == pytest.approx(1.15)
    assert eq12_error(0.0023, 1500.0, 1000.0, sign=-1) == pytest.approx(-1.15)
    # eq. 13: error = -mc * (cv_t/(tm_t+ts_t) - cv_{t-1}/(tm_{t-1}+ts_{t-1}))
    cur, prev = migration_error(300.0, 100.0, 50.0), migration_error(100.0, 80.0, 20.0)
    assert (cur, prev) == (2.0, 1.0)
    assert eq13_error(17027.0, cur, prev) == pytest.approx(-17027.0)
    assert eq13_error(-17027.0, cur, prev) == pytest.approx(17027.0)
    assert migration_error(5.0, 0, 0) == 0.0


def obs_of(utils, freq_khz, attempts=0, successes=0, cluster="c"):
    return {"cpus": [{"cpu": i, "cluster": cluster, "util": u, "freq_khz": freq_khz} for i, u in enumerate(utils)],
            "counters": {"balance_attempts": attempts, "balance_successes": successes}}


def test_target_load_agent_moves_as_algorithm_1_says():
    cfg = TargetLoadConfig()
    a = TargetLoadAgent("c", [0, 1], "schedutil.target_load.cluster0", cfg)
    assert a.net.n_hidden == 3  # n + 1
    a.net.b2 = 50_000.0  # output above the threshold 12000 -> decrease
    a.step(obs_of([800, 800], 1_000_000))
    assert a.tl == -0.0023 and a.target_load == pytest.approx(0.8 - 0.0023)
    a.net.b2, a.net.w2 = -1e9, a.net.w2 * 0  # output clamped to 0 -> increase
    row = a.step(obs_of([800, 800], 1_000_000))
    assert a.tl == 0.0023 and a.target_load == pytest.approx(0.8)
    assert row["output"] == 0.0


def test_target_load_training_follows_eq12():
    # after a decrease (tl < 0) the frequency rose: eq. 12 error < 0, the output falls
    cfg = TargetLoadConfig(lr=1e-6, init_output=20_000.0, init_input=500.0)
    a = TargetLoadAgent("c", [0, 1], "k", cfg)
    x = obs_of([500, 500], 1_000_000)
    out0 = a.net([500, 500])
    a.step(x)  # the first turn trains on prev = 0 (the paper's initial prev_CPU_freq) ... then acts
    assert a.tl == -0.0023
    out1 = a.net([500, 500])
    row = a.step(obs_of([500, 500], 1_500_000))  # +500 MHz
    assert row["error"] == pytest.approx(-0.0023 * 500_000.0)  # kHz, cpufreq's unit
    assert a.net([500, 500]) < out1
    # flipping the sign (a study knob) flips the update
    b = TargetLoadAgent("c", [0, 1], "k", TargetLoadConfig(lr=1e-6, init_output=20_000.0, init_input=500.0,
                                                            error_sign=-1.0))
    b.step(x)
    before = b.net([500, 500])
    b.step(obs_of([500, 500], 1_500_000))
    assert b.net([500, 500]) > before
    assert out0 > cfg.threshold


def test_target_load_stays_in_bounds():
    cfg = TargetLoadConfig(min_target_load=0.79, max_target_load=0.805)
    a = TargetLoadAgent("c", [0], "k", cfg)
    a.net.b2 = -1e9
    for _ in range(10):
        a.step(obs_of([10], 500_000))
    assert a.target_load == 0.805


def test_a_step_a_bound_stops_is_no_action_and_trains_nothing():
    # at the upper bound the network still asks to increase: nothing is applied, the record
    # says so (action 0), and the next turn does not train on it (eq. 12's tl_t is 0)
    cfg = TargetLoadConfig(initial=1.0, lr=1e-3)
    assert (cfg.min_target_load, cfg.max_target_load) == (0.05, 1.0)  # the knob's range
    a = TargetLoadAgent("c", [0], "k", cfg)
    a.net.b2 = -1e9  # output clamped to 0 < 12000: increase
    row = a.step(obs_of([10], 500_000))
    assert (row["action"], row["value"], a.target_load) == (0.0, 1.0, 1.0)
    weights = (a.net.w1.copy(), a.net.b1.copy(), a.net.w2.copy(), a.net.b2)
    row = a.step(obs_of([10], 1_500_000))  # the frequency rose: a trained step would move the weights
    assert row["action"] == 0.0 and row["error"] == 0.0
    for before, after in zip(weights, (a.net.w1, a.net.b1, a.net.w2, a.net.b2)):
        assert np.array_equal(before, after)
    # one step below the bound is applied whole, and trained on at the next turn
    a.target_load = 1.0 - 0.0023 - 0.001
    row = a.step(obs_of([10], 1_500_000))
    assert row["action"] == pytest.approx(0.0023) and a.target_load == pytest.approx(0.999)
    row = a.step(obs_of([10], 2_000_000))
    assert row["error"] == pytest.approx(0.0023 * 500_000)
    assert not np.array_equal(weights[2], a.net.w2)


def test_migration_cost_agent_algorithm_2():
    cfg = MigrationCostConfig()
    assert cfg.slots == 175
    a = MigrationCostAgent({"l": [0, 1], "b": [2, 3]}, cfg)
    assert (a.net.n_in, a.net.n_hidden) == (4, 5)  # m + 2 inputs, m + 3 hidden
    a.start(obs_of([0, 0, 0, 0], 1, attempts=10, successes=5))
    for _ in range(cfg.slots):
        a.sample(obs_of([100, 300, 0, 0], 1))
    a.net.b2 = 1e9  # output clamped to 800000 > 160000 -> decrease
    row = a.step(obs_of([0, 0, 0, 0], 1, attempts=110, successes=55))
    assert (row["mig_count"], row["mig_success"]) == (100, 50)
    assert row["total_vari"] == pytest.approx(np.var([100, 300]))  # 10000
    assert row["error"] == 0.0  # mc = 0 before the first action
    assert a.mc == -17027 and a.cost == 500_000 - 17027
    assert row["output"] == 800_000
    # next period: variance per migration doubled after a decrease -> error = -mc * (2e - e) > 0
    for _ in range(cfg.slots):
        a.sample(obs_of([0, 400, 0, 0], 1))  # var 40000
    row = a.step(obs_of([0, 0, 0, 0], 1, attempts=210, successes=105))
    e1, e2 = 10_000 / 150, 40_000 / 150
    assert row["error"] == pytest.approx(17027 * (e2 - e1))


def test_learning_eas_simulation_runs_acts_and_is_deterministic(tmp_path):
    def go():
        sim = Simulation(platform="gs101", workload="game:fps=60", scheduler="learning-eas", seed=1,
                         knobs={"learning.keep_record": "1"})
        res = sim.run(1.0)
        return sim, res
    sim, res = go()
    lrn = res.doc["learning"]
    assert set(lrn["target_load"]) == {"little", "mid", "big"}
    assert lrn["target_load_steps"] == 3 * 10
    knobs = sim.knob_values()
    for i, a in enumerate(sim.learning.tl_agents):
        assert knobs[f"schedutil.target_load.cluster{i}"] == pytest.approx(a.target_load)
        # each agent acts every step (its value moves; it may come back to 0.8 by the end)
        steps = [r for r in sim.learning.record if r["agent"] == "target_load" and r["cluster"] == a.cluster]
        assert len(steps) == 10 and all(r["action"] != 0 for r in steps)
        assert any(r["value"] != 0.8 for r in steps)
    assert res.doc["scheduler"] == "learning-eas"
    sim2, res2 = go()
    assert res2.energy_j == res.energy_j
    assert sim2.learning.record == sim.learning.record
    assert len(sim.learning.record) == 3 * 10 + lrn["migration_cost_steps"]


def test_per_cluster_target_load_knob_reaches_schedutil():
    base = Simulation(platform="gs101", workload="game:fps=60", scheduler="eas").run(1.0).energy_j
    big = Simulation(platform="gs101", workload="game:fps=60", scheduler="eas",
                     knobs={"schedutil.target_load.cluster2": 0.5}).run(1.0).energy_j
    assert big > base


def test_migration_cost_agent_acts_every_7s_and_switches():
    sim = Simulation(platform="gs101", workload="game:fps=60", scheduler="learning-eas",
                     knobs={"learning.target_load": "off", "learning.keep_record": "1"})
    assert sim.learning.tl_agents == []
    sim.run(15.0)
    mc = [r for r in sim.learning.record if r["agent"] == "migration_cost"]
    assert [round(r["t_s"]) for r in mc] == [7, 14]
    assert sim.knob_values()["sched_migration_cost_ns"] == sim.learning.mc_agent.cost
    # each turn moves the cost by one step from the initial 500 µs (the second turn may
    # move it back: the game's migrations decide the direction)
    step = abs(mc[0]["action"])
    assert step > 0 and all(abs(r["action"]) == step for r in mc)
    assert mc[0]["value"] == 500_000 + mc[0]["action"]
    sim = Simulation(platform="gs101", workload="game:fps=60", scheduler="learning-eas",
                     knobs={"learning.migration_cost": "off", "learning.tl.step": "0.01"})
    assert sim.learning.mc_agent is None and sim.learning.config.target_load.step == 0.01
    with pytest.raises(HetschedError):
        Simulation(platform="gs101", workload="game", scheduler="eas", knobs={"learning.state": "x"})
    with pytest.raises(HetschedError):
        Simulation(platform="gs101", workload="game", scheduler="learning-eas", knobs={"learning.tl.nope": "1"})


def test_weights_persist_and_are_restored(tmp_path):
    st = tmp_path / "le.json"
    rec = tmp_path / "rec.csv"
    sim = Simulation(platform="gs101", workload="game:fps=60", scheduler="learning-eas",
                     knobs={"learning.state": str(st), "learning.record": str(rec), "learning.tl.lr": "1e-5"})
    assert not sim.learning.restored
    sim.run(2.0)
    saved = json.loads(st.read_text())
    w_big = sim.learning.tl_agents[2].net.w1.copy()
    fresh = Simulation(platform="gs101", workload="game:fps=60", scheduler="eas")
    assert not np.allclose(LearningEAS(fresh).tl_agents[2].net.w1, w_big)  # it learned
    assert rec.read_text().startswith("t_s,agent,cluster,value")
    sim2 = Simulation(platform="gs101", workload="game:fps=60", scheduler="learning-eas",
                      knobs={"learning.state": str(st)})
    assert sim2.learning.restored
    np.testing.assert_allclose(sim2.learning.tl_agents[2].net.w1, w_big)
    np.testing.assert_allclose(sim2.learning.mc_agent.net.w2, saved["migration_cost"]["net"]["w2"])
    # the knobs start from their defaults, as after a boot
    assert sim2.knob_values()["schedutil.target_load.cluster2"] == pytest.approx(0.8)


def test_cli_run_learning_eas(tmp_path):
    from typer.testing import CliRunner

    from hetsched.cli import app

    st = tmp_path / "s.json"
    r = CliRunner().invoke(app, ["run", "--workload", "game:fps=60", "--scheduler", "learning-eas",
                                 "--duration", "0.5", "--set", f"learning.state={st}",
                                 "--set", "learning.migration_cost=off", "--out", str(tmp_path / "o")])
    assert r.exit_code == 0, r.output
    doc = json.loads((tmp_path / "o" / "result.json").read_text())
    assert doc["scheduler"] == "learning-eas" and doc["learning"]["migration_cost_ns"] is None
    assert st.exists()


def test_cli_compare_and_schedulers_list_learning_eas():
    from typer.testing import CliRunner

    from hetsched.cli import app

    r = CliRunner().invoke(app, ["compare", "--workload", "game:fps=60", "--scheduler", "eas",
                                 "--scheduler", "learning-eas[learning.migration_cost=off]",
                                 "--duration", "0.5", "--seeds", "1"])
    assert r.exit_code == 0, r.output
    assert "learning-eas" in r.output
    r = CliRunner().invoke(app, ["schedulers"])
    assert "learning-eas" in r.output


def test_learning_eas_runs_until_every_task_exits_like_eas():
    eas = Simulation(platform="gs101", workload="hackbench", scheduler="eas").run()
    sim = Simulation(platform="gs101", workload="hackbench", scheduler="learning-eas")
    res = sim.run()
    assert res.doc["stop_reason"] == "all tasks exited"
    assert res.doc["sim_duration_s"] == pytest.approx(eas.doc["sim_duration_s"], rel=0.05)
    # one step per cluster at t = 0 and every 100 ms until the last task exits
    steps = int(res.doc["sim_duration_s"] / 0.1) + 1
    assert res.doc["learning"]["target_load_steps"] == 3 * steps


def test_eq8_input_is_busy_fraction_times_capacity():
    # eq. 8: Cutil = Ctime / (Ctime + Itime) * MCutil. Over a 100 ms turn CPU 0 ran 30 ms,
    # CPU 1 ran 100 ms, both of capacity_orig 512: inputs 153.6 and 512.
    cfg = TargetLoadConfig(input="eq8")
    a = TargetLoadAgent("c", [0, 1], "k", cfg, capacity_orig=512)

    def obs(now_ms, busy_ms):
        return {"now_ns": int(now_ms * 1e6),
                "cpus": [{"cpu": i, "capacity_orig": 512, "busy_ns": int(b * 1e6), "util": 0, "freq_khz": 1}
                         for i, b in enumerate(busy_ms)]}

    assert a.inputs(obs(1000, [400, 700])) == [0.0, 0.0]  # no period yet
    assert a.inputs(obs(1100, [430, 800])) == pytest.approx([153.6, 512.0])
    # the fresh network is scaled at busy fractions of init_load (not at utils of init_input)
    ref = PolicyNetwork(2, 3, cfg.out_max, cfg.lr, seed=cfg.seed, init_output=cfg.init_output,
                        init_input=cfg.init_load * 512)
    assert np.array_equal(a.net.w2, ref.w2) and np.array_equal(a.net.w1, ref.w1)


def test_eq8_reading_runs_and_a_bad_reading_is_one_line(tmp_path):
    sim = Simulation(platform="gs101", workload="game:fps=60", scheduler="learning-eas", lower_bound=False,
                     knobs={"learning.tl.input": "eq8", "learning.migration_cost": "off",
                            "learning.keep_record": "1"})
    res = sim.run(1.0)
    ins = [r for r in sim.learning.record if r["agent"] == "target_load"]
    assert len(ins) == 3 * 10 and res.doc["learning"]
    with pytest.raises(HetschedError, match="learning.tl.input.*util or eq8"):
        Simulation(platform="gs101", workload="game:fps=60", scheduler="learning-eas",
                   knobs={"learning.tl.input": "pelt"})


def test_observe_busy_ns_counts_time_not_idle():
    sim = Simulation(platform="gs101", workload="game:fps=60", scheduler="eas", lower_bound=False)
    sim.run_until(500_000_000)
    a = sim.observe()
    sim.run_until(600_000_000)
    b = sim.observe()
    for ca, cb in zip(a["cpus"], b["cpus"]):
        assert 0 <= ca["busy_ns"] <= a["now_ns"]
        assert 0 <= cb["busy_ns"] - ca["busy_ns"] <= 100_000_000
    assert sum(c["busy_ns"] for c in b["cpus"]) > sum(c["busy_ns"] for c in a["cpus"])  # the game ran


def test_a_learning_eas_simulation_is_freed_where_it_is_dropped():
    # the simulation owns its controller and the controller refers back to it weakly: with
    # no cycle the engine is freed at once on its own thread, never by a collection that may
    # run on another (compare's background import did, and the unsendable engine refused)
    import gc
    import weakref

    gc.disable()
    try:
        sim = Simulation(platform="gs101", workload="periodic", scheduler="learning-eas", lower_bound=False)
        sim.run(0.3)
        ref = weakref.ref(sim)
        del sim
        assert ref() is None
    finally:
        gc.enable()


# -- the observing mode (learning.apply=0): paper Table 3's "without changing TARGET_LOAD and
# sched_migration_cost"

def test_observing_keeps_the_knob_and_trains_on_the_chosen_step_by_hand():
    # one CPU, so 2 hidden neurons; TARGET_LOAD already at the knob's floor, where an
    # applied decrease would be stopped (and not trained on)
    cfg = TargetLoadConfig(initial=0.05, lr=1e-9)
    a = TargetLoadAgent("c", [0], "k", cfg, apply=False)
    a.net.w1, a.net.b1 = np.array([[10.0], [0.0]]), np.zeros(2)
    a.net.w2, a.net.b2 = np.array([2.0, 5.0]), 0.0
    # util 1000: z = (10000, 0), output 2 * 10000 = 20000 > 12000: the network chooses -0.0023
    row = a.step(obs_of([1000], 1_000_000))
    assert row["output"] == 20_000.0 and row["error"] == 0.0  # nothing to train on yet
    assert (a.tl, a.target_load, row["action"], row["value"]) == (-0.0023, 0.05, -0.0023, 0.05)
    # 100 ms later the frequency rose by 500 MHz under the unchanged knob:
    # error = tl * (f_t - f_t-1) = -0.0023 * 500000 kHz = -1150
    row = a.step(obs_of([1000], 1_500_000))
    assert row["error"] == pytest.approx(-1150.0)
    # backpropagation of -1150 through the first pass (x = 1000, h = (10000, 0)):
    # w2 += lr*e*h = (2 - 0.0115, 5); b2 += lr*e = -1.15e-6;
    # dh = e*w2*relu'(z) = (-2300, 0); w1 += lr*dh*x = (10 - 0.0023, 0); b1 += lr*dh = (-2.3e-6, 0)
    np.testing.assert_allclose(a.net.w2, [1.9885, 5.0], rtol=0, atol=1e-12)
    assert a.net.b2 == pytest.approx(-1.15e-6, abs=1e-15)
    np.testing.assert_allclose(a.net.w1, [[9.9977], [0.0]], rtol=0, atol=1e-12)
    np.testing.assert_allclose(a.net.b1, [-2.3e-6, 0.0], rtol=0, atol=1e-15)
    assert a.target_load == 0.05  # never moved
    # the same agent applying its steps: the floor stops the decrease, nothing is trained
    b = TargetLoadAgent("c", [0], "k", cfg)
    b.net.w1, b.net.b1, b.net.w2, b.net.b2 = np.array([[10.0], [0.0]]), np.zeros(2), np.array([2.0, 5.0]), 0.0
    b.step(obs_of([1000], 1_000_000))
    row = b.step(obs_of([1000], 1_500_000))
    assert (row["action"], row["error"], b.net.w2.tolist()) == (0.0, 0.0, [2.0, 5.0])


def test_observing_migration_cost_agent_trains_on_the_chosen_step():
    cfg = MigrationCostConfig()
    a = MigrationCostAgent({"l": [0, 1], "b": [2, 3]}, cfg, apply=False)
    a.start(obs_of([0, 0, 0, 0], 1, attempts=10, successes=5))
    for _ in range(cfg.slots):
        a.sample(obs_of([100, 300, 0, 0], 1))
    a.net.b2 = 1e9  # output at 800000 > 160000: the network chooses a decrease
    row = a.step(obs_of([0, 0, 0, 0], 1, attempts=110, successes=55))
    assert (a.mc, a.cost, row["value"], row["action"]) == (-17027, 500_000, 500_000, -17027)
    for _ in range(cfg.slots):
        a.sample(obs_of([0, 400, 0, 0], 1))
    row = a.step(obs_of([0, 0, 0, 0], 1, attempts=210, successes=105))
    # eq. 13 with the chosen mc: -(-17027) * (40000/150 - 10000/150)
    assert row["error"] == pytest.approx(17027 * (40_000 - 10_000) / 150)
    assert a.cost == 500_000


def test_observing_run_is_eas_to_the_bit_and_still_learns():
    """Table 3's configuration: the knobs stay the kernel's, so the run is plain EAS's (the
    engine does not charge the networks' own CPU time), while the networks train."""
    eas = Simulation(platform="gs101", workload="game:fps=60", scheduler="eas", seed=3, lower_bound=False)
    e = eas.run(3.0)
    sim = Simulation(platform="gs101", workload="game:fps=60", scheduler="learning-eas", seed=3, lower_bound=False,
                     knobs={"learning.apply": "0", "learning.tl.lr": "1e-6",
                            "learning.keep_record": "1"})
    w0 = [a.net.w1.copy() for a in sim.learning.tl_agents]
    r = sim.run(3.0)
    assert r.energy_j == e.energy_j
    assert sim.knob_values() == eas.knob_values()
    lrn = r.doc["learning"]
    assert lrn["apply"] is False
    assert lrn["target_load"] == {"little": 0.8, "mid": 0.8, "big": 0.8}
    assert lrn["migration_cost_ns"] == 500_000 and lrn["target_load_steps"] == 3 * 30
    steps = [x for x in sim.learning.record if x["agent"] == "target_load"]
    assert all(x["value"] == 0.8 and abs(x["action"]) == 0.0023 for x in steps)
    assert any(x["error"] != 0 for x in steps)
    assert any(not np.array_equal(w, a.net.w1) for w, a in zip(w0, sim.learning.tl_agents))


def test_apply_is_checked():
    for v in ("2", "maybe"):
        with pytest.raises(HetschedError) as e:
            Simulation(platform="gs101", workload="game", scheduler="learning-eas", knobs={"learning.apply": v})
        assert "learning.apply" in str(e.value)
    sim = Simulation(platform="gs101", workload="game", scheduler="eas")
    with pytest.raises(HetschedError) as e:
        LearningEAS(sim, LearningConfig(apply="yes"))
    assert "apply" in str(e.value)
    assert LearningConfig.from_knobs({"apply": "off"}).apply is False
