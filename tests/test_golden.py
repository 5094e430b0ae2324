"""The golden set (tests/golden/make.py): every recorded result document is reproduced to
the byte. A structural change must keep every case identical; a behaviour change records
the set again in its own commit (``python tests/golden/make.py``) and says what moved."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("golden_make", Path(__file__).parent / "golden" / "make.py")
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)

CASES = golden.cases()


def test_every_case_is_recorded_and_nothing_else():
    recorded = {p.name for p in golden.RESULTS.glob("*.json.gz")}
    expected = {golden.path_of(c).name for c in CASES}
    assert recorded == expected


def test_the_set_covers_every_registered_scheduler():
    from hetsched.sim import CONTROLLER_SCHEDULERS, SCHEDULERS, registered_policies

    covered = {c["scheduler"] for c in CASES}
    assert covered == {p["name"] for p in registered_policies()}
    assert covered == set(SCHEDULERS) | set(CONTROLLER_SCHEDULERS)


@pytest.mark.parametrize("case", CASES, ids=golden.case_name)
def test_result_is_byte_identical(case):
    want = golden.read_golden(case)
    got = golden.run_case(case)
    assert got == want, golden.first_difference(want, got)
