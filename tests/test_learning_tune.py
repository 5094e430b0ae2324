"""benchmarks/learning/tune.py, the search of Learning EAS's open choices: the selection rule
and one sequence of each kind."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tune():
    spec = importlib.util.spec_from_file_location("tune", ROOT / "benchmarks" / "learning" / "tune.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_no_worse_drops_is_the_exact_one_sided_test(tune):
    # 5 drops against 2: P(X >= 5 | X ~ Binomial(7, 1/2)) = (21 + 7 + 1) / 128
    ok, p = tune.no_worse_drops(5, 2)
    assert p == pytest.approx(29 / 128) and ok
    # 9 against 0: 1 / 512 < 0.05
    ok, p = tune.no_worse_drops(9, 0)
    assert p == pytest.approx(1 / 512) and not ok
    assert tune.no_worse_drops(0, 0) == (True, 1.0)
    assert tune.no_worse_drops(0, 7)[0]


def test_config_names_map_to_the_learning_knobs(tune):
    k = tune.knobs_of("eq8@0.4|0.75-0.85|1e-8")
    assert k == {"tl.input": "eq8", "tl.init_load": 0.4, "tl.min_target_load": 0.75,
                 "tl.max_target_load": 0.85, "tl.lr": 1e-8}
    assert tune.knobs_of(tune.DEFAULT)["tl.lr"] == 1e-9
    with pytest.raises(KeyError):
        tune.knobs_of("pelt@1|0.5-1.0|1e-9")


def test_static_target_load_of_0_8_is_eas_and_a_narrow_band_holds_the_learner(tune):
    seq = ("gs101", "game:fps=60,level=1", 7)
    eas = tune.run_sequence((*seq, "eas", 0, 1))
    assert tune.run_sequence((*seq, "tl=0.8", 0, 1))["energy_j"] == eas["energy_j"]
    assert tune.run_sequence((*seq, "tl=0.9", 0, 1))["energy_j"] < eas["energy_j"]
    # bounds 0.8-0.85: wherever the network sends them, every cluster stays in the band
    le = tune.run_sequence((*seq, "util@64|0.8-0.85|1e-9", 1, 1))
    assert set(le["target_load"]) == {"little", "mid", "big"}
    assert all(0.8 - 1e-9 <= v <= 0.85 + 1e-9 for v in le["target_load"].values())
