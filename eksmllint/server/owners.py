"""Objects a controller makes from a judged owner (a PyTorchJob's Pods, a JobSet's Jobs): which
owner kinds, and which identities may send them unjudged (``owners.yaml``).

Judging such an object again would report every finding twice, to the controller instead of the
user, and a denial would send the controller into a retry loop; so it passes, but only when the
request comes from that owner's controller. An ``ownerReference`` alone proves nothing: anyone who
may create a Pod may write one.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from eksmllint.tables import load_table

DATA = Path(__file__).with_name("owners.yaml")


class Owner(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    controllers: tuple[str, ...] = Field(min_length=1)
    source: str

    @field_validator("controllers")
    @classmethod
    def _usernames(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for name in v:
            if not name.startswith("system:") or name.strip() != name:
                raise ValueError(f"{name!r}: expected a Kubernetes username such as system:serviceaccount:NS:NAME")
        return v


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    owners: dict[str, Owner]


@lru_cache(maxsize=1)
def owners() -> dict[str, Owner]:
    """Owner kind -> the controllers that create objects from it (validated once)."""
    return load_table(_Table, DATA).owners


def default_controllers() -> frozenset[str]:
    return frozenset(c for o in owners().values() for c in o.controllers)


def judged_owner(obj: dict) -> str | None:
    """``Kind/name`` of the controller owner when it is one of the judged owner kinds."""
    meta = obj.get("metadata")
    refs = meta.get("ownerReferences") if isinstance(meta, dict) else None
    if not isinstance(refs, list):
        return None
    kinds = owners()
    for ref in refs:
        if isinstance(ref, dict) and ref.get("controller") is True and isinstance(ref.get("kind"), str):
            if ref["kind"] in kinds:
                return f"{ref['kind']}/{ref.get('name', '')}"
    return None


def made_by_its_controller(obj: dict, username: str | None, trusted: Iterable[str]) -> bool:
    """The object has a judged controller owner and the request comes from a trusted controller."""
    return username is not None and username in trusted and judged_owner(obj) is not None
