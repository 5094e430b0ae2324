"""Platforms: real heterogeneous SoCs, resolved into the engine's ``PlatformSpec``.

>>> from hetsched.platforms import list_platforms, load_platform
>>> p = load_platform("juno-r0")
>>> [c.capacity_orig for c in p.clusters]
[446, 1024]
>>> spec = p.to_spec()          # docs/engine-interface.md, "PlatformSpec"

Built-in data lives in ``data/`` (one JSON per SoC, sources in ``data/SOURCES.md``);
the rules are documented in docs/platforms.md; the only non-published inputs are in
``estimates.py``.  This package needs neither the native engine nor any third-party
module.
"""

from __future__ import annotations

from .loader import DATA_DIR, list_platforms, load_platform, platform_summaries, platform_summary
from .model import Cluster, IdleState, Inventory, Opp, Platform, PowerModel

__all__ = [
    "DATA_DIR",
    "Cluster",
    "IdleState",
    "Inventory",
    "Opp",
    "Platform",
    "PowerModel",
    "list_platforms",
    "load_platform",
    "platform_summaries",
    "platform_summary",
]
