"""The fix loop, one for ``eksmllint fix`` (text files) and the mutating webhook (JSON objects).

Lint; apply the pending fixes that do not conflict; re-lint, because a fix may clear or create
other findings and moves what comes after it; stop when no fix is pending. Fixes that keep
producing new work (two rules undoing each other in a longer cycle than the callers detect, or a
fix that never clears its finding) are stopped after :data:`MAX_PASSES` passes, and the caller
gives up on what is still pending: a half-converged fix is not written to disk nor sent as a
patch. Ten passes (``fix`` had ten, the webhook five): every file and admitted object of the
fixtures, examples, seed and corpus settles in at most two, so the cap only stops a runaway.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

#: Passes before the loop gives up (the same for ``fix``, ``lint --fix`` and the webhook).
MAX_PASSES = 10

Linted = TypeVar("Linted")
Pending = TypeVar("Pending")


def fix_until_settled(
    lint: Callable[[], Linted],
    pending: Callable[[Linted], Pending],
    apply: Callable[[Pending, int], bool],
    give_up: Callable[[Pending], None],
    max_passes: int = MAX_PASSES,
) -> Linted:
    """Run the loop and return the last lint. ``pending(lint)``: the fixes to apply (falsy: none);
    ``apply(pending, pass_no)`` applies them and says whether to go on (False: nothing changed,
    or the caller stopped); ``give_up(pending)`` is called with what is still pending after
    ``max_passes`` passes, and the result of a lint after it is returned."""
    result = lint()
    for pass_no in range(1, max_passes + 2):
        todo = pending(result)
        if not todo:
            break
        if pass_no > max_passes:
            give_up(todo)
            return lint()
        if not apply(todo, pass_no):
            break
        result = lint()
    return result
