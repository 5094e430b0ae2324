"""``hetsched compare``: like with like (every cell's kernel profile and fair class in the
table, CSV and JSON; cells apart only by a scheduler's required fair class aligned to it)
and paired statistics (the test and the change's interval on the per-seed differences)."""

import csv
import json
import math

import pytest

# gs101's own threads only: the runs stay short
WL = "phone-mix:system=none"


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_csv_and_json_carry_kernel_profile_and_fair_class(tmp_path, tools):
    out = tmp_path / "cmp"
    proc = tools.run_cli(["compare", "--workload", WL, "--scheduler", "cfs", "--scheduler", "eas",
                          "--duration", "0.3", "--seeds", "2", "--out", out])
    assert proc.returncode == 0, proc.stderr
    rows = _rows(out / "compare.csv")
    assert {(r["kernel"], r["fair_class"]) for r in rows} == {("mainline-6.12", "eevdf")}
    doc = json.loads((out / "compare.json").read_text())
    assert doc["kernel"] == "mainline-6.12" and doc["fair_class"] == "eevdf" and doc["setup"] == []
    assert [(c["cell"], c["fair_class"], c["fair_class_from"]) for c in doc["cells"]] == [
        ("cfs/schedutil", "eevdf", "kernel profile"), ("eas/schedutil", "eevdf", "kernel profile")]
    assert all(e["kernel"] == "mainline-6.12" and e["fair_class"] == "eevdf" for e in doc["summary"])
    assert doc["test_name"] == "paired-t" and "paired t-test" in doc["test"]
    # the title names what every cell shares; nothing needed aligning
    assert "kernel mainline-6.12, fair class EEVDF v6.12" in proc.stdout
    assert "fair class:" not in proc.stdout


def test_cfs_against_fa_cfs_runs_both_on_cfs(tmp_path, tools):
    """fa-cfs requires CFS; cfs would follow mainline-6.12's EEVDF: compare runs it on CFS
    as well, and says so above the table."""
    out = tmp_path / "cmp"
    proc = tools.run_cli(["compare", "--workload", WL, "--scheduler", "cfs", "--scheduler", "fa-cfs",
                          "--duration", "0.3", "--seeds", "2", "--out", out])
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    line = next(x for x in lines if x.startswith("fair class:"))
    assert "every cell runs CFS v6.5 (fair.eevdf = 0), the class fa-cfs requires" in line
    assert "cfs/schedutil would run EEVDF v6.12" in line
    assert lines.index(line) < next(i for i, x in enumerate(lines) if x.lstrip().startswith("metric"))
    assert "fair class CFS v6.5" in lines[0]
    assert {r["fair_class"] for r in _rows(out / "compare.csv")} == {"cfs"}
    doc = json.loads((out / "compare.json").read_text())
    assert doc["fair_class"] == "cfs" and doc["setup"] == [line]
    assert [c["fair_class_from"] for c in doc["cells"]] == ["aligned", "scheduler"]
    # the aligned cfs cell is cfs with fair.eevdf=0, run by hand
    from hetsched.sim import Simulation

    direct = Simulation(platform="gs101", workload=[WL], scheduler="cfs", knobs={"fair.eevdf": 0}, seed=1).run(0.3)
    energy = [float(r["energy_j"]) for r in _rows(out / "compare.csv") if r["scheduler"] == "cfs" and r["seed"] == "1"]
    assert energy == [pytest.approx(direct.energy_j, rel=1e-12)]


def test_cells_set_apart_are_reported_not_aligned(tools):
    """cfs set to EEVDF by its own knob against fa-cfs (which requires CFS), and cfs under
    android-4.19 against eas under mainline-6.12: nothing aligned, the line names each."""
    procs = tools.run_cli_many({
        "fair": ["compare", "--workload", WL, "--scheduler", "cfs[fair.eevdf=1]", "--scheduler", "fa-cfs",
                 "--duration", "0.2", "--seeds", "2", "--format", "json"],
        "kernel": ["compare", "--workload", WL, "--scheduler", "cfs[kernel=android-4.19]", "--scheduler", "eas",
                   "--duration", "0.2", "--seeds", "2"],
    })
    for p in procs.values():
        assert p.returncode == 0, p.stderr
    doc = json.loads(procs["fair"].stdout)
    assert doc["fair_class"] is None and doc["kernel"] == "mainline-6.12"
    assert doc["setup"] == ["fair class: the cells run different fair classes: cfs[fair.eevdf=1]/schedutil "
                            "EEVDF v6.12 (fair.eevdf set), fa-cfs/schedutil CFS v6.5 (required by fa-cfs)"]
    assert [c["fair_class"] for c in doc["cells"]] == ["eevdf", "cfs"]
    out = procs["kernel"].stdout
    assert ("kernel profile: the cells run different kernel profiles: cfs[kernel=android-4.19]/schedutil "
            "android-4.19, eas/schedutil mainline-6.12") in out
    assert "fair class: the cells run different fair classes: cfs[kernel=android-4.19]/schedutil CFS v6.5 " \
           "(android-4.19's), eas/schedutil EEVDF v6.12 (mainline-6.12's)" in out
    assert "kernel per cell, fair class per cell" in out.splitlines()[0]


def test_paired_t_p_value_by_hand(tmp_path, tools):
    """The p value and the change's interval compare reports for energy equal Student's
    paired t worked here from the CSV's per-seed energies; --test welch gives Welch's."""
    from scipy import stats

    out = {t: tmp_path / t for t in ("paired-t", "welch")}
    procs = tools.run_cli_many({t: ["compare", "--workload", WL, "--scheduler", "cfs", "--scheduler", "eas",
                                    "--duration", "0.3", "--seeds", "4", "--test", t, "--out", out[t]]
                                for t in out})
    for p in procs.values():
        assert p.returncode == 0, p.stderr
    rows = _rows(out["paired-t"] / "compare.csv")
    e = {(r["scheduler"], int(r["seed"])): float(r["energy_j"]) for r in rows}
    d = [e["eas", s] - e["cfs", s] for s in range(4)]
    n = len(d)
    m = sum(d) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in d) / (n - 1))
    t = m / (sd / math.sqrt(n))
    p = 2 * stats.t.sf(abs(t), n - 1)
    base = sum(e["cfs", s] for s in range(4)) / 4
    half = stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n) / base
    doc = json.loads((out["paired-t"] / "compare.json").read_text())
    got = next(x for x in doc["summary"] if x["metric"] == "energy_j" and x["cell"] == "eas/schedutil")
    assert got["p_value"] == pytest.approx(p, rel=1e-9)
    assert got["p_value"] == pytest.approx(stats.ttest_rel([e["eas", s] for s in range(4)],
                                                           [e["cfs", s] for s in range(4)]).pvalue, rel=1e-9)
    assert got["rel_change_ci95"] == pytest.approx(half, rel=1e-9) and got["n_paired"] == 4
    assert "Student's paired t-test" in procs["paired-t"].stdout
    # the same runs under Welch's unpaired test
    wdoc = json.loads((out["welch"] / "compare.json").read_text())
    wgot = next(x for x in wdoc["summary"] if x["metric"] == "energy_j" and x["cell"] == "eas/schedutil")
    eas, cfs = [e["eas", s] for s in range(4)], [e["cfs", s] for s in range(4)]
    assert wgot["p_value"] == pytest.approx(stats.ttest_ind(eas, cfs, equal_var=False).pvalue, rel=1e-9)
    assert wdoc["test_name"] == "welch" and "Welch's unpaired t-test" in procs["welch"].stdout


def test_wilcoxon_needs_six_seeds(tmp_path, tools):
    out = tmp_path / "cmp"
    proc = tools.run_cli(["compare", "--scheduler", "cfs", "--scheduler", "eas", "--duration", "0.2",
                          "--seeds", "5", "--test", "wilcoxon", "--out", out])
    tools.assert_one_line_error(proc, "--test", "wilcoxon", "--seeds 6 or more")
    tools.assert_no_outputs(out)
    proc = tools.run_cli(["compare", "--scheduler", "cfs", "--duration", "0.2", "--test", "wilcox"])
    tools.assert_one_line_error(proc, "--test", "wilcox")


def test_wilcoxon_and_identical_runs():
    """Wilcoxon's p on the differences, as scipy gives it; identical runs (every
    difference 0) have p = 1 under each test (and an interval of 0 under the paired ones),
    without a warning."""
    import warnings

    import pandas as pd
    from scipy import stats

    from hetsched.compare_stats import summary

    base = [4.0, 5.0, 6.0, 5.5, 4.5, 5.2]
    new = [3.0, 4.1, 5.5, 4.0, 4.4, 4.0]
    groups = {"a": pd.DataFrame({"seed": range(6), "x": base}), "b": pd.DataFrame({"seed": range(6), "x": new}),
              "c": pd.DataFrame({"seed": range(6), "x": base})}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for test in ("paired-t", "wilcoxon", "welch"):
            _, b, c = summary(groups, ["a", "b", "c"], ["x"], test)
            assert c["p_value"] == 1.0 and c["significance"] == "" and c["rel_change_vs_first"] == 0.0
            if test != "welch":  # the same runs: no spread in their differences
                assert c["rel_change_ci95"] == 0.0
            if test == "wilcoxon":
                assert b["p_value"] == pytest.approx(stats.wilcoxon([x - y for x, y in zip(new, base)]).pvalue)
    # one seed: no interval, no test
    one = {k: v.iloc[:1] for k, v in groups.items()}
    _, b, _ = summary(one, ["a", "b", "c"], ["x"])
    assert b["p_value"] is None and b["rel_change_ci95"] is None and b["ci95"] is None
    assert b["rel_change_vs_first"] == pytest.approx(-0.25)


def test_paired_differences_pair_by_seed():
    """Runs pair by seed, not by row order: a constant difference is certain (p = 0)."""
    import pandas as pd

    from hetsched.compare_stats import summary

    groups = {"a": pd.DataFrame({"seed": [0, 1, 2], "x": [1.0, 5.0, 9.0]}),
              "b": pd.DataFrame({"seed": [2, 0, 1], "x": [10.0, 2.0, 6.0]})}
    _, b = summary(groups, ["a", "b"], ["x"])
    assert b["p_value"] == 0.0 and b["significance"] == "**" and b["rel_change_ci95"] == 0.0
