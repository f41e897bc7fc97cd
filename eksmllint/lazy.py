"""``cached_property`` without the lock Python 3.11's has.

``functools.cached_property`` up to Python 3.11 takes one lock per *property* (shared by every
instance) on each first access: ~2.5 µs, paid ~130,000 times by the workload classification of
10,000 documents alone, and a point of contention for the webhook's lint threads. Python 3.12
removed the lock (gh-87634); this is its behaviour: two threads racing on one instance may both
compute the value, and one result wins. Every value cached this way is a pure function of the
instance, so either result is the same.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

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


__all__ = ["cached_property"]
