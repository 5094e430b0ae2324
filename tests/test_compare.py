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
    difference 0) have p = 1 under each test (and an interval of 0 under the paired ones:
    paired t's half-width 0, Hodges-Lehmann's [0, 0] around 0 without a level), without a
    warning."""
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
            if test == "paired-t":  # the same runs: no spread in their differences
                assert c["rel_change_ci95"] == 0.0
            if test == "wilcoxon":
                assert b["p_value"] == pytest.approx(stats.wilcoxon([x - y for x, y in zip(new, base)]).pvalue)
                assert (c["rel_change_hl"], c["rel_change_ci_low"], c["rel_change_ci_high"]) == (0.0, 0.0, 0.0)
                assert c["rel_change_ci_level"] is None and c["rel_change_ci95"] is None
            else:  # the t paths' entries keep their keys (the CSV's columns) as before
                assert "rel_change_hl" not in b and "rel_change_ci_level" not in c
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


# ------------------------------------------------------------ --test wilcoxon's interval


def _walsh(d):
    return sorted((d[i] + d[j]) / 2 for i in range(len(d)) for j in range(i, len(d)))


def _signed_rank_by_enumeration(n):
    """W+'s null distribution counted over all 2^n sign patterns of the ranks 1..n."""
    import itertools

    counts = [0] * (n * (n + 1) // 2 + 1)
    for signs in itertools.product((0, 1), repeat=n):
        counts[sum(r for r, s in zip(range(1, n + 1), signs) if s)] += 1
    return counts


def test_hodges_lehmann_six_differences_by_hand():
    """d = 1..6: 21 Walsh averages, their median 3.5. With 6 pairs P(W+ <= 0) = 1/64, and
    2/64 = 0.031 <= 0.05 while P(W+ <= 1) = 2/64 gives 4/64 = 0.0625 > 0.05: k = 1, the
    interval is the smallest to the largest Walsh average, [1, 6], at 1 - 2/64 = 96.875 %."""
    from hetsched.compare_stats import hodges_lehmann, signed_rank_counts

    d = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert len(_walsh(d)) == 21 and _walsh(d)[10] == 3.5
    assert signed_rank_counts(6)[:2] == [1, 1] and sum(signed_rank_counts(6)) == 64
    hl = hodges_lehmann(d)
    assert hl == {"estimate": 3.5, "low": 1.0, "high": 6.0, "level": 1 - 2 / 64, "n": 6, "method": "exact"}
    # the order of the seeds does not matter; the differences' sign mirrors everything
    assert hodges_lehmann([4.0, 1.0, 6.0, 3.0, 5.0, 2.0]) == hl
    neg = hodges_lehmann([-x for x in d])
    assert (neg["estimate"], neg["low"], neg["high"]) == (-3.5, -6.0, -1.0)


def test_hodges_lehmann_eight_differences_by_hand():
    """n = 8: the subsets of 1..8 with sum <= 3 are {}, {1}, {2}, {3}, {1,2}: P(W+ <= 3) =
    5/256, 2 * 5/256 = 0.039 <= 0.05; sum 4 adds {4}, {1,3}: 2 * 7/256 = 0.055 > 0.05. So k =
    4: the 4th smallest to the 4th largest of the 36 Walsh averages, at 1 - 10/256 = 96.1 %.
    For d = 1..8 the Walsh averages start 1, 1.5, 2, 2 ((1+3)/2 and 2) and end 7, 7, 7.5, 8:
    the interval [2, 7] around the median 4.5."""
    from hetsched.compare_stats import hodges_lehmann, signed_rank_counts

    counts = signed_rank_counts(8)
    assert counts[:5] == [1, 1, 1, 2, 2] and sum(counts[:4]) == 5 and sum(counts[:5]) == 7
    hl = hodges_lehmann([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
    assert hl == {"estimate": 4.5, "low": 2.0, "high": 7.0, "level": 1 - 10 / 256, "n": 8, "method": "exact"}
    # uneven differences, one below 0: smallest Walsh averages -1.5, (-1.5+0.3)/2 = -0.6,
    # (-1.5+2.0)/2 = 0.25, 0.3, ...; largest 9.4, (6.0+9.4)/2 = 7.7, (4.7+9.4)/2 = 7.05,
    # (3.1+9.4)/2 = 6.25, 6.0, ...: the interval [0.3, 6.25]
    d = [-1.5, 0.3, 2.0, 2.2, 3.1, 4.7, 6.0, 9.4]
    w = _walsh(d)
    assert len(w) == 36
    hl = hodges_lehmann(d)
    assert (hl["estimate"], hl["low"], hl["high"]) == ((w[17] + w[18]) / 2, w[3], w[-4])
    assert hl["low"] == pytest.approx(0.3) and hl["high"] == pytest.approx(6.25)


def test_ties_take_the_normal_approximation_with_both_corrections_as_r_does():
    """d = 1, 1, 2, 3: the magnitudes tie, so R leaves the exact distribution. Ranks 1.5,
    1.5, 3, 4, all positive: W+ = 10 against its mean 4 * 5 / 4 = 5; moved 0.5 toward the
    mean, 4.5; the variance 4 * 5 * 9 / 24 = 7.5 less (2^3 - 2) / 48 = 0.125 for the tied
    pair: z = 4.5 / sqrt(7.375) = 1.657, two-sided p = 2 (1 - Phi(1.657)) = 0.0975."""
    import math

    from scipy import stats

    from hetsched.compare_stats import hodges_lehmann, signed_rank_z, wilcoxon_p

    d = [1.0, 1.0, 2.0, 3.0]
    z = 4.5 / math.sqrt(7.375)
    assert signed_rank_z(d, 0.0) == pytest.approx(z)
    assert wilcoxon_p(d) == pytest.approx(2 * stats.norm.sf(z))
    assert wilcoxon_p(d) == pytest.approx(0.0975, abs=5e-4)
    # without ties the exact test stays: scipy's exact p for 1, 2, 3, 4 is 2 / 16
    assert wilcoxon_p([1.0, 2.0, 3.0, 4.0]) == pytest.approx(0.125)
    # ten differences, two tied: the interval's ends are where the standardised statistic
    # crosses +-1.96, the estimate where it crosses 0, by root-finding over the range
    d = [1.0, 2.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    hl = hodges_lehmann(d)
    assert hl["method"] == "normal" and hl["level"] == pytest.approx(0.95) and hl["n"] == 10
    zq = stats.norm.isf(0.025)
    eps = 1e-6
    for end, target in ((hl["low"], zq), (hl["high"], -zq), (hl["estimate"], 0.0)):
        assert signed_rank_z(d, end - eps) - target >= 0 >= signed_rank_z(d, end + eps) - target
    assert hl["low"] < hl["estimate"] < hl["high"]
    # at the range's ends the statistic is as far as it goes: z(1) = 22 / sqrt(71.125)
    assert signed_rank_z(d, 1.0) == pytest.approx(22 / math.sqrt(71.125))


def test_signed_rank_distribution_and_k_against_enumeration():
    """The dynamic programme's counts equal a count over every sign pattern, and k is the
    largest k with 2 P(W+ <= k - 1) <= 0.05 read off that enumeration (at least 1)."""
    from hetsched.compare_stats import _interval_rank, signed_rank_counts

    for n in range(1, 13):
        counts = _signed_rank_by_enumeration(n)
        assert signed_rank_counts(n) == counts
        below = [sum(counts[:c + 1]) / 2 ** n for c in range(len(counts))]
        k = 1 + max([c for c in range(len(counts)) if 2 * below[c] <= 0.05], default=-1)
        k = max(k, 1)
        assert _interval_rank(n, 0.95) == (k, 1 - 2 * sum(counts[:k]) / 2 ** n, "exact")
    # the published critical values (two-sided 0.05: W+ <= 2, 8, 52, 434 for n = 7, 10, 20, 50)
    assert [_interval_rank(n, 0.95)[0] - 1 for n in (7, 10, 20, 50)] == [2, 8, 52, 434]


def test_hodges_lehmann_interval_agrees_with_scipys_exact_test():
    """Without ties or zeros the interval excludes 0 exactly when scipy's exact signed-rank
    p is at most 1 - the achieved level (the test and the interval invert each other)."""
    import random

    from scipy import stats

    from hetsched.compare_stats import hodges_lehmann

    rng = random.Random(7)
    seen = set()
    for _ in range(200):
        n = rng.randint(6, 16)
        d = [rng.gauss(rng.choice((0.0, 0.5, 1.0)), 1.0) for _ in range(n)]
        hl = hodges_lehmann(d)
        p = stats.wilcoxon(d, method="exact").pvalue
        excludes = not hl["low"] <= 0 <= hl["high"]
        assert excludes == (p <= 1 - hl["level"] + 1e-12), (d, hl, p)
        assert hl["level"] >= 0.95 and hl["low"] <= hl["estimate"] <= hl["high"]
        seen.add(excludes)
    assert seen == {True, False}


def test_hodges_lehmann_normal_approximation_beyond_50():
    """Past 50 nonzero differences k comes from the normal approximation with continuity
    correction; it stays within one rank of the exact k (computed here by the same dynamic
    programme) and its level near 95 %."""
    from hetsched import compare_stats
    from hetsched.compare_stats import _interval_rank, signed_rank_counts

    for n in (51, 64, 80):
        k, level, method = _interval_rank(n, 0.95)
        assert method == "normal" and 0.949 < level < 0.952
        counts = signed_rank_counts(n)
        exact = 1 + max(c for c in range(len(counts)) if 2 * sum(counts[:c + 1]) <= 0.05 * 2 ** n)
        assert abs(k - exact) <= 1
    assert compare_stats.WILCOXON_EXACT_MAX == 50


def test_hodges_lehmann_drops_zero_differences():
    """Zero differences are dropped as the test drops them: 6 pairs, two of them 0, leave
    4, whose interval can reach only 1 - 2/16 = 87.5 %; one nonzero difference has an
    estimate and no interval; fewer than two pairs nothing."""
    from hetsched.compare_stats import hodges_lehmann

    hl = hodges_lehmann([0.0, 2.0, 0.0, -1.0, 3.0, 4.0])
    w = _walsh([2.0, -1.0, 3.0, 4.0])
    assert hl == {"estimate": (w[4] + w[5]) / 2, "low": -1.0, "high": 4.0, "level": 0.875, "n": 4,
                  "method": "exact"}
    assert hodges_lehmann([0.0, 0.0, 5.0]) == {"estimate": 5.0, "low": None, "high": None, "level": None,
                                               "n": 1, "method": None}
    assert hodges_lehmann([1.0]) is None


def test_wilcoxon_summary_is_hodges_lehmann_relative_to_the_baseline():
    """summary's wilcoxon entries: the estimate and the interval's ends divided by the
    baseline's mean, the change of the mean as under every test, no half-width."""
    import pandas as pd

    from hetsched.compare_stats import achieved_levels, hodges_lehmann, legend, summary

    base = [10.0, 11.0, 9.0, 10.5, 9.5, 10.0]
    new = [b + x for b, x in zip(base, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0])]
    groups = {"a": pd.DataFrame({"seed": range(6), "x": base}), "b": pd.DataFrame({"seed": range(6), "x": new})}
    a, b = summary(groups, ["a", "b"], ["x"], "wilcoxon")
    assert b["rel_change_hl"] == pytest.approx(3.5 / 10) and b["rel_change_vs_first"] == pytest.approx(3.5 / 10)
    assert (b["rel_change_ci_low"], b["rel_change_ci_high"]) == (pytest.approx(0.1), pytest.approx(0.6))
    assert b["rel_change_ci_level"] == 1 - 2 / 64 and b["rel_change_ci95"] is None
    assert b["p_value"] == pytest.approx(2 / 64) and b["significance"] == "*"
    assert a["rel_change_hl"] is None and list(a) == list(b)  # the CSV's columns from the first entry
    assert hodges_lehmann([x - y for x, y in zip(new, base)])["estimate"] == 3.5
    assert achieved_levels([a, b]) == [1 - 2 / 64]
    text = legend("a", "wilcoxon", [1 - 2 / 64])
    assert "Hodges-Lehmann estimate" in text and "achieved 96.9 %" in text and "Student's t on the per" not in text


def test_wilcoxon_compare_reports_hodges_lehmann(tmp_path, tools):
    """compare --test wilcoxon: the energy change's centre and interval equal the
    Hodges-Lehmann estimate and interval worked here from the CSV's per-seed energies."""
    out = tmp_path / "cmp"
    proc = tools.run_cli(["compare", "--workload", WL, "--scheduler", "cfs", "--scheduler", "eas",
                          "--duration", "0.2", "--seeds", "6", "--test", "wilcoxon", "--out", out])
    assert proc.returncode == 0, proc.stderr
    e = {(r["scheduler"], int(r["seed"])): float(r["energy_j"]) for r in _rows(out / "compare.csv")}
    d = [e["eas", s] - e["cfs", s] for s in range(6)]
    w = _walsh(d)
    base = sum(e["cfs", s] for s in range(6)) / 6
    doc = json.loads((out / "compare.json").read_text())
    got = next(x for x in doc["summary"] if x["metric"] == "energy_j" and x["cell"] == "eas/schedutil")
    assert got["rel_change_hl"] == pytest.approx((w[10]) / base, rel=1e-9)  # 21 averages: the 11th
    assert got["rel_change_ci_low"] == pytest.approx(w[0] / base, rel=1e-9)
    assert got["rel_change_ci_high"] == pytest.approx(w[-1] / base, rel=1e-9)
    assert got["rel_change_ci_level"] == 1 - 2 / 64 and got["rel_change_ci95"] is None
    assert doc["test_name"] == "wilcoxon" and "rel_change_ci_level" in doc["change_interval"]
    assert "Hodges-Lehmann estimate" in proc.stdout and "Student's t on the per-seed" not in proc.stdout
    line = f"{got['rel_change_hl'] * 100:+.1f}% [{got['rel_change_ci_low'] * 100:+.1f}, " \
           f"{got['rel_change_ci_high'] * 100:+.1f}]"
    assert line in proc.stdout
