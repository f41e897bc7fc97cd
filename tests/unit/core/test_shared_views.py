"""A run made over shared views (the webhook: one object before the cluster context) derives the
same views as the run of all its resources, without deriving the shared part again."""

from __future__ import annotations

from repository import ROOT

from eksmllint.core.context import LintRun, SharedViews
from eksmllint.core.engine import build_workloads
from eksmllint.loader import load


def _ids(items):
    return [id(x) for x in items]


def _views(run: LintRun):
    return (
        # a TrainJob's JobSet is built anew by each run: it is the same view when it stands for the
        # same TrainJob and runtime
        [(id(w.resource.owner), id(w.resource.origin)) for w in run.workloads],
        {kind: _ids(items) for kind, items in run.by_kind.items()},
        [id(v.resource) for v in run.nodepools],
    )


def test_a_run_over_shared_views_sees_what_the_run_of_everything_sees():
    own = load([str(ROOT / "fixtures/examples")])
    context = load([str(ROOT / "fixtures/rules")], context_only=True)
    base = LintRun(context.resources, context.files)
    assert not build_workloads(base)
    shared = SharedViews.of(base)
    assert shared.workloads and shared.nodepools  # the fixtures have both: the comparison is not empty

    over = LintRun.over(shared, own.resources, own.files, base.settings)
    everything = LintRun(own.resources + context.resources, own.files + context.files)
    assert not build_workloads(over) and not build_workloads(everything)
    workloads, by_kind, pools = _views(over)
    all_workloads, all_by_kind, all_pools = _views(everything)
    assert workloads == all_workloads and pools == all_pools
    assert by_kind == {kind: all_by_kind[kind] for kind in by_kind} and set(by_kind) == set(all_by_kind)
    assert over.own_resources == own.resources and over.own_files == own.files
    assert over.workloads[len(over.own_workloads) :] == shared.workloads  # reused, not rebuilt


def test_without_drops_a_replaced_object_and_nothing_else():
    context = load([str(ROOT / "fixtures/rules")], context_only=True)
    base = LintRun(context.resources, context.files)
    build_workloads(base)
    shared = SharedViews.of(base)
    pool = shared.nodepools[0].resource
    smaller = shared.without(pool.key)
    assert pool not in smaller.resources and pool.key not in smaller.keys
    assert all(v.resource is not pool for v in smaller.nodepools)
    assert len(smaller.resources) == len(shared.resources) - sum(r.key == pool.key for r in shared.resources)
    assert shared.without(("res", "Pod", "nowhere", "no-such-pod")) is shared
