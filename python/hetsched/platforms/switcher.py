"""``NAME:switcher``: the big.LITTLE in-kernel switcher in CPU mode, as the big.LITTLE
switcher study (Kim et al., §II) runs it.

Each big/little pair of cores is one virtual CPU; the engine backs it by either core at
runtime (crates/hetsched-core/src/switcher.rs).  The transformation pairs the i-th CPU of
the little cluster with the i-th CPU of the big cluster, numbers the pairs 0..k-1 and
starts every virtual CPU on its little core: the spec's little cluster lists the k virtual
CPUs, the big one none, and ``"switcher": true`` tells the engine that they move.
"""

from __future__ import annotations

import dataclasses

from ..errors import InputError
from .model import Platform

EXPECTED = "a platform with exactly two clusters of equal size and different capacity (a big/little pairing)"


def switcher_platform(p: Platform, name: str) -> Platform:
    """The switcher-mode platform of ``p``; one clear error when ``p`` has no pairing."""
    cl = p.clusters
    if len(cl) != 2 or len(cl[0].cpus) != len(cl[1].cpus) or cl[0].capacity_orig == cl[1].capacity_orig:
        shape = " + ".join(f"{len(c.cpus)}x{c.core} (capacity {c.capacity_orig})" for c in cl)
        raise InputError("--platform", f"{name}:switcher", EXPECTED, f"{len(cl)} clusters: {shape}")
    little, big = sorted(cl, key=lambda c: c.capacity_orig)
    k = len(little.cpus)
    pairs = ", ".join(f"vCPU{i} = cpu{a}+cpu{b}" for i, (a, b) in enumerate(zip(sorted(little.cpus),
                                                                               sorted(big.cpus))))
    note = (f"switcher (CPU mode, as in the big.LITTLE switcher study of Kim et al.): {k} virtual CPUs, "
            f"each a {little.core}/{big.core} pair ({pairs}); each starts on its {little.core}")
    return dataclasses.replace(
        p,
        name=f"{p.name}:switcher",
        clusters=(dataclasses.replace(little, cpus=tuple(range(k))), dataclasses.replace(big, cpus=())),
        notes=p.notes + (note,),
        switcher=True,
    )
