"""Models whose registered part is built on first need [ours]: the Pyomo model `build_model`
returns for a formulation that has an array emitter (OLAS Model 10's TU LPs, worker
selection's formulation A), so that a user who only adds rows never pays for the 100,000 rows
and variables the emitter writes faster (`solve_model` then emits the registered part as
arrays and compiles only the user's additions: `solvers.exact_runner`).

At build, a `LazyModel` holds the model's sets, its large variables as sparse Vars (an entry is
made when first named: `m.s["q7"]`) and every registered row, objective and Expression as an
empty placeholder in its place in the declaration order. `fill(model)` fills the placeholders
(the rows, the objective's terms) the first time anything needs them: the model is walked
(`component_objects`, `component_data_objects`, `pprint`, `write`, `clone`, ...: every writer
and solver walks it) or a placeholder is named (`m.hall`, `m.obj`). It is then the same model
as the formulation's eager builder makes, with the same rows in the same order. crowdopt's own
look at a model (`snapshot.peeking`) builds nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pyomo.environ as pyo
from pyomo.core.base.var import IndexedVar

from .formulation import tag_of
from .snapshot import rebase

_WALKS = ("component_objects", "component_data_objects", "component_map", "component",
          "find_component", "block_data_objects", "all_components", "active_components",
          "all_blocks", "active_blocks", "pprint", "display", "write", "clone",
          "compute_statistics", "collect_ctypes")


class LazyModel(pyo.ConcreteModel):
    """A ConcreteModel whose registered part is filled on first need (module docstring).
    `materialize()` fills it now; `materialized` says whether it is."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self._lazy_fill: Callable[[Any], None] | None = None
        self._lazy_names: frozenset[str] = frozenset()
        self._lazy_peek = 0
        self._lazy_defaults: dict[int, tuple] = {}

    def defer(self, fill: Callable[[Any], None], placeholders: list[str],
              sparse: dict[Any, Any]) -> None:
        """Fill the placeholders named `placeholders` with `fill(model)` on first need;
        `sparse`: Var component (declared with dense=False) -> the state (lb, ub, fixed,
        domain) of an entry it makes on demand, or a function of the entry giving it where the
        bounds depend on the index; all entries are made, in index order, as soon as the Var is
        walked (`OnDemandVar`)."""
        self._lazy_fill = fill
        self._lazy_names = frozenset(placeholders)
        self._lazy_defaults = {id(v): state for v, state in sparse.items()}
        for v in sparse:
            v.__class__ = OnDemandVar

    @property
    def materialized(self) -> bool:
        """Whether the registered part is built (always, once anything needed it)."""
        return object.__getattribute__(self, "__dict__").get("_lazy_fill") is None

    def materialize(self) -> None:
        """Build the registered part now (nothing if it is built); the record `build_model`
        left is brought along (`snapshot.rebase`), so a user's rows and bounds from before
        still read as the user's."""
        fill = self._lazy_fill
        if fill is None:
            return
        self._lazy_fill = None
        fill(self)
        rec = tag_of(self)
        if rec is not None and hasattr(rec, "snapshot"):
            self.crowdopt_build = dataclasses.replace(rec, snapshot=rebase(rec.snapshot, self))

    def _lazy_touch(self) -> None:
        d = object.__getattribute__(self, "__dict__")
        if d.get("_lazy_fill") is not None and not d.get("_lazy_peek"):
            self.materialize()

    def __getattribute__(self, name: str) -> Any:
        d = object.__getattribute__(self, "__dict__")
        if (d.get("_lazy_fill") is not None and not d.get("_lazy_peek")
                and name in d.get("_lazy_names", ())):
            object.__getattribute__(self, "materialize")()
        return super().__getattribute__(name)


def _walk(name: str) -> Callable:
    base = getattr(pyo.ConcreteModel, name)

    def walk(self: LazyModel, *args: Any, **kw: Any) -> Any:
        self._lazy_touch()
        return base(self, *args, **kw)

    walk.__name__ = name
    walk.__doc__ = f"`{name}` of the whole model (its registered part built first)."
    return walk


for _name in _WALKS:
    if hasattr(pyo.ConcreteModel, _name):
        setattr(LazyModel, _name, _walk(_name))


class OnDemandVar(IndexedVar):
    """An indexed Var of a `LazyModel` whose entries are made when first named (`m.s["q7"]`)
    and all of them, in index order, as soon as it is walked (iterated, counted, its keys,
    values or items read; `in` asks its index set): a user's `sum(m.y.values())` means every
    entry, as on any model. crowdopt's own look (`snapshot.peeking`) makes none and sees the
    entries made (an ordered sparse Var would walk its whole index set for them)."""

    def _peeking(self) -> bool:
        return bool(getattr(self.parent_block(), "_lazy_peek", 0))

    def _whole(self) -> None:
        if getattr(self, "_crowdopt_whole", False) or self._peeking():
            return
        self._crowdopt_whole = True
        for index in self.index_set():
            self[index]

    def __contains__(self, index: Any) -> bool:
        return index in self.index_set()

    def __iter__(self) -> Any:
        if self._peeking():
            return iter(list(self._data))
        self._whole()
        return super().__iter__()

    def __len__(self) -> int:
        if self._peeking():
            return len(self._data)
        self._whole()
        return super().__len__()

    def keys(self, *args: Any, **kw: Any) -> Any:
        if self._peeking():
            return list(self._data.keys())
        self._whole()
        return super().keys(*args, **kw)

    def values(self, *args: Any, **kw: Any) -> Any:
        if self._peeking():
            return list(self._data.values())
        self._whole()
        return super().values(*args, **kw)

    def items(self, *args: Any, **kw: Any) -> Any:
        if self._peeking():
            return list(self._data.items())
        self._whole()
        return super().items(*args, **kw)
