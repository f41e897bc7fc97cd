"""``cached_property`` without the lock Python 3.11's has, and :func:`kept_on` for functions.

``functools.cached_property`` up to Python 3.11 takes one lock per *property* (shared by every
instance) on each first access: ~2.5 µs, paid ~130,000 times by the workload classification of
10,000 documents alone, and a point of contention for the webhook's lint threads. Python 3.12
removed the lock (gh-87634); this is its behaviour: two threads racing on one instance may both
compute the value, and one result wins. Every value cached this way is a pure function of the
instance, so either result is the same.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING or sys.version_info >= (3, 12):
    from functools import cached_property
else:

    class cached_property:
        def __init__(self, func):
            self.func = func
            self.attrname = None
            self.__doc__ = func.__doc__
            self.__module__ = func.__module__

        def __set_name__(self, owner, name):
            self.attrname = name

        def __get__(self, instance, owner=None):
            if instance is None:
                return self
            value = instance.__dict__[self.attrname] = self.func(instance)
            return value


_T = TypeVar("_T")
_MISSING = object()


def kept_on(fn: Callable[[Any], _T]) -> Callable[[Any], _T]:
    """``fn(view)`` computed once per view object and kept on it, like a :class:`cached_property`
    the view's class does not declare: for answers of a rule family that depend on the view alone
    (never on the run: the webhook shares views between runs). Callers share the value: read only.
    """
    key = f"_kept_{fn.__module__}.{fn.__qualname__}"

    @functools.wraps(fn)
    def kept(view: Any) -> _T:
        found = view.__dict__.get(key, _MISSING)
        if found is _MISSING:
            found = view.__dict__[key] = fn(view)
        return found

    return kept


__all__ = ["cached_property", "kept_on"]
