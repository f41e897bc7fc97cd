"""What the schema rules (EML002 schema-invalid, EML003 api-deprecated, EML004 unknown-kind) share.

Who answers what, so that one object gets at most one of the three "what is this?" verdicts:

* a removed or deprecated apiVersion (``eksmllint.schema.api_status``) is EML003's, and nothing else
  is said about it (a removed API has no schema to validate against);
* a core Kubernetes kind (``validate_core``) or a kind with a CRD model (``validate_crd``) is
  validated by EML002, one finding per issue;
* an apiVersion of a core API group that the target Kubernetes version does not serve (too new,
  or no such kind at all, e.g. ``apps/v1`` ``Deploymnet``) is an EML002 error too: the API server
  rejects it;
* everything else has no model: EML004 (info), unless its API group is in the rule's
  ``ignore-groups`` option.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from eksmllint.models import KNOWN_CRD_KINDS
from eksmllint.schema import api_status, supported_versions
from eksmllint.schema.deprecations import ApiStatus

if TYPE_CHECKING:
    from eksmllint.platform import Platform

#: Pseudo-kinds of the OpenAPI documents (not objects anyone applies).
_PSEUDO_KINDS = frozenset(
    {
        "DeleteOptions",
        "WatchEvent",
        "Status",
        "APIGroup",
        "APIGroupList",
        "APIResourceList",
        "APIVersions",
        "Eviction",
        "Scale",
        "TokenRequest",
    }
)


def api_group(api_version: str) -> str:
    return api_version.split("/", 1)[0] if "/" in api_version else ""


def _minor(v: str) -> tuple[int, int] | None:
    parts = str(v).strip().lstrip("v").split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (ValueError, IndexError):
        return None


@cache
def schema_version(k8s_version: str) -> str | None:
    """The bundled schema version for ``k8s_version``: itself, or the nearest bundled one (a target
    outside the bundled range is validated against its closest neighbour rather than not at all)."""
    versions = supported_versions()
    wanted = _minor(k8s_version)
    if not versions or wanted is None:
        return versions[-1] if versions else None

    def distance(v: str) -> int:
        m = _minor(v) or (0, 0)
        return abs((m[0] - wanted[0]) * 1000 + m[1] - wanted[1])

    return min(versions, key=distance)


@cache
def core_kinds(version: str) -> frozenset[tuple[str, str]]:
    """(apiVersion, kind) pairs the core schemas of ``version`` define.

    Reads the schema module's kind index (``eksmllint.schema.core._kind_index``); if that is ever
    renamed, core-group detection degrades to "unknown" and those objects get EML004 instead."""
    try:
        from eksmllint.schema.core import _kind_index
    except ImportError:  # pragma: no cover - depends on the schema module's internals
        return frozenset()
    return frozenset(k for k in _kind_index(version) if k[1] not in _PSEUDO_KINDS and not k[1].endswith("List"))


@cache
def _groups_of(version: str) -> frozenset[str]:
    return frozenset(api_group(api) for api, _ in core_kinds(version))


@cache
def is_core_group(group: str) -> bool:
    """Is ``group`` a Kubernetes API group in any bundled version? Newest first, stopping at the
    first hit: each version's index costs a JSON parse (~10 ms), so "core" is usually one read."""
    return any(group in _groups_of(v) for v in reversed(supported_versions()))


def deprecation_status(api: str, kind: str, target: str, platform: Platform | None = None) -> ApiStatus | None:
    """The deprecation entry that speaks for this object, if any (on Kubernetes ``target``, and on
    the ``platform`` release for a CRD whose state follows its project's release).

    A table entry may cover every kind of an apiVersion (``slinky.slurm.net/v1alpha1``). It does
    not speak for a kind the API group never had: ``SlurmCluster`` is not "deprecated", it does
    not exist, and EML004 says so (mentioning the deprecation)."""
    try:
        st = api_status(api, kind, target, platform)
        if st is None or kind in modelled_kinds(api_group(api)) or not modelled_kinds(api_group(api)):
            return st
        return None if api_status(api, _PROBE_KIND, target, platform) is not None else st
    except ValueError:
        return None


_PROBE_KIND = "\x00no-such-kind"


@cache
def modelled_kinds(group: str) -> frozenset[str]:
    return frozenset(k for a, k in KNOWN_CRD_KINDS if api_group(a) == group)
