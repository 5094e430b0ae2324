"""The declaration of a built-in workload: its parameters (name, type, default, range or
choices, meaning) and its builder.  The CLI's help, the ``NAME:k=v`` parser and the docs
read the same table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["Param", "WorkloadDef"]


@dataclass(frozen=True)
class Param:
    name: str
    kind: type
    default: Any
    lo: float | None
    hi: float | None
    help: str
    choices: tuple[str, ...] | None = None


@dataclass(frozen=True)
class WorkloadDef:
    """``build(params, platform_spec, seed) -> WorkloadSpec``."""

    name: str
    params: tuple[Param, ...]
    build: Callable[..., dict]
    description: str
    #: the workload's own quality figures a user looks at first (its metrics' names, without
    #: the ``NAME.`` prefix): `run` prints them, `compare` shows them by default
    headline: tuple[str, ...] = ()
