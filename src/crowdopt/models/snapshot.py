"""What `crowdopt.build_model` returned, and what a user changed since [ours].

`record(model)` notes, holding references (so that identities stay unique): every variable
with its bounds, fixing, value if fixed and domain; every active row with its expression
object; the active objectives (expression, sense); the named Expressions; the mutable Params'
values; the model's plain attributes (e.g. the head-cover model's `theta`). `compare` sorts a
model into one of three kinds of change:

- UNCHANGED: the model as built;
- ADDED_ROWS: new active rows (and new variables, which can then appear only in them), nothing
  else: every point of the changed model, restricted to the built model's variables, is a
  point of the built model with the same objective value (the feasible set only shrank);
- CHANGED: anything else (an objective, a bound, a fixing, a domain; a row changed,
  deactivated or deleted; a variable deleted; a Param or an attribute changed).

Pyomo expressions are immutable (a row or objective whose terms change holds a new expression
object: `set_value`, a new component) and their constants are Python numbers, mutable Params
(recorded by value) or fixed variables (recorded with their value), so identity is a complete
test of a row's terms. The cost is one pass over the variables and rows (a fraction of a
compile; `benchmarks/bench_extend_routes.py` times it). Pyomo is imported when a snapshot is
taken: `formulation.py`, which names the kinds, stays free of it (the array routes).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from operator import attrgetter, is_
from typing import Any

UNCHANGED = "unchanged"
ADDED_ROWS = "added rows"
CHANGED = "changed"

_VAR_STATE = attrgetter("_lb", "_ub", "_fixed", "_domain")  # raw: no bound evaluated
_PLAIN = (int, float, str, bool)


def same_objects(a: list, b: list) -> bool:
    """Two lists hold the very same objects, in order."""
    return len(a) == len(b) and all(map(is_, a, b))


@contextlib.contextmanager
def peeking(model: Any) -> Iterator[None]:
    """Walk `model` as it is: a model whose registered parts are built on first need
    (`models.lazy.LazyModel`) is not built by the walk. A no-op for any other model."""
    if not hasattr(model, "_lazy_peek"):
        yield
        return
    model._lazy_peek += 1
    try:
        yield
    finally:
        model._lazy_peek -= 1


def is_lazy(model: Any) -> bool:
    """Whether `model` is a `models.lazy.LazyModel` whose registered part is not built yet
    (read without importing Pyomo: the array routes never do)."""
    return getattr(type(model), "materialized", None) is not None and not model.materialized


def lazy_defaults(model: Any) -> dict:
    """id(Var component) -> the state of an entry it makes on demand (a tuple, or a function
    of the entry where its bounds depend on its index), for a model whose large variables are
    sparse (`models.lazy.LazyModel`); empty for any other model."""
    return getattr(model, "_lazy_defaults", None) or {}


def _default_state(default: Any, v: Any) -> tuple:
    return default(v) if callable(default) else default


def _vars(model: Any) -> list[tuple[Any, list, list, list]]:
    """(component, its VarData, their states, the values of the fixed ones) per Var."""
    import pyomo.environ as pyo

    out = []
    for comp in model.component_objects(pyo.Var, descend_into=True):
        # a variable whose entries are made on demand: the entries made (its values() would
        # walk the whole index set, or make every entry)
        data = list(comp._data.values()) if id(comp) in lazy_defaults(model) else \
            list(comp.values())
        out.append((comp, data, list(map(_VAR_STATE, data)),
                    [v._value for v in data if v._fixed]))
    return out


def _rows(model: Any) -> list[tuple[Any, list, list]]:
    """(component, its active ConstraintData, their expressions) per active Constraint."""
    import pyomo.environ as pyo

    out = []
    for comp in model.component_objects(pyo.Constraint, active=True, descend_into=True):
        data = [c for c in comp.values() if c._active]
        out.append((comp, data, [c._expr for c in data]))
    return out


def _objectives(model: Any) -> list[tuple[Any, Any, Any]]:
    import pyomo.environ as pyo

    return [(o, o.expr, o.sense) for o in
            model.component_data_objects(pyo.Objective, active=True, descend_into=True)]


def _expressions(model: Any) -> list[tuple[Any, Any]]:
    import pyomo.environ as pyo

    return [(e, e.expr) for e in
            model.component_data_objects(pyo.Expression, descend_into=True)]


def _params(model: Any) -> list[tuple[Any, Any]]:
    import pyomo.environ as pyo

    return [(p, p.value) for p in model.component_data_objects(pyo.Param, descend_into=True)
            if p.parent_component().mutable]


def _attributes(model: Any) -> dict[str, Any]:
    """The model's plain (number or text) attributes: what a formulation may read besides
    its components (the head-cover model's `theta`, worker selection's `kind`)."""
    return {k: v for k, v in vars(model).items()
            if not k.startswith("_") and type(v) in _PLAIN}


@dataclass(frozen=True, eq=False)
class Snapshot:
    """The structure of a model as `record` found it (see the module docstring)."""

    variables: list
    rows: list
    objectives: list
    expressions: list
    params: list
    attributes: dict
    defaults: dict = field(default_factory=dict)  # `lazy_defaults` of the model

    def variable(self, name: str) -> tuple[Any, list] | None:
        """(component, VarData) of the recorded Var called `name`, or None."""
        for comp, data, _, _ in self.variables:
            if comp.local_name == name:
                return comp, data
        return None


def record(model: Any) -> Snapshot:
    """The snapshot of `model` now (a lazily built model as it is, not built by the walk)."""
    with peeking(model):
        return Snapshot(_vars(model), _rows(model), _objectives(model), _expressions(model),
                        _params(model), _attributes(model), dict(lazy_defaults(model)))


def rebase(snap: Snapshot, model: Any) -> Snapshot:
    """The snapshot of a lazily built model (`snap`, taken at build) once its registered parts
    are built: those rows, objectives, Expressions as they are now; every entry of its recorded
    variables, each with the state recorded at build, or, made since, the state of an entry
    made on demand (so a bound a user set before the build still shows as a change); the
    rows and variables a user added before it stay additions."""
    with peeking(model):
        names = {c.name for c, *_ in snap.variables} | {c.name for c, *_ in snap.rows}
        rows = [r for r in _rows(model) if r[0].name in names]
        objs = {id(o) for o, *_ in snap.objectives}
        objectives = [o for o in _objectives(model) if id(o[0]) in objs]
        exprs = {id(e) for e, _ in snap.expressions}
        expressions = [e for e in _expressions(model) if id(e[0]) in exprs]
        variables = []
        for comp, data, states, fixed in snap.variables:
            default = snap.defaults.get(id(comp))
            if default is None:  # not a variable made on demand: as recorded
                variables.append((comp, data, states, fixed))
                continue
            was = {id(v): st for v, st in zip(data, states, strict=True)}
            value = _fixed_values(data, states, fixed)
            now = list(comp.values())
            now_states = [was.get(id(v)) or _default_state(default, v) for v in now]
            variables.append((comp, now, now_states,
                              [value[id(v)] for v, st in zip(now, now_states, strict=True)
                               if st[2]]))
    return Snapshot(variables, rows, objectives, expressions, snap.params, snap.attributes,
                    snap.defaults)


@dataclass(frozen=True)
class Change:
    """How a model differs from its snapshot: `kind` (UNCHANGED, ADDED_ROWS or CHANGED),
    `what`, a sentence naming the (first) change found, the names of the recorded variables
    the model no longer holds (`deleted`), the rows added (`added`: ConstraintData, for
    ADDED_ROWS; the conditions of `Formulation.exact_under` read them) and whether the model's
    objective is still the one built (`same_objective`: the same objective object, terms and
    sense, so a point's value is the problem's objective)."""

    kind: str
    what: str
    deleted: tuple[str, ...] = ()
    added: tuple = ()
    same_objective: bool = True


def _names(comps: list, most: int = 3) -> str:
    names = [c.name for c in comps[:most]]
    return ", ".join(names) + (f" and {len(comps) - most} more" if len(comps) > most else "")


def _objective_change(then: list, now: list) -> str | None:
    if (len(then) == len(now) and all(a[0] is b[0] and a[1] is b[1] and a[2] == b[2]
                                      for a, b in zip(then, now, strict=True))):
        return None
    gone = [o for o, *_ in then if not any(o is p for p, *_ in now)]
    new = [o for o, *_ in now if not any(o is p for p, *_ in then)]
    if gone or new:
        return ("the objective changed: " + "; ".join(
            part for part in (f"{_names(gone)} deactivated or deleted" if gone else "",
                              f"{_names(new)} added" if new else "") if part))
    return "the objective changed: new terms or sense of " + _names([o for o, *_ in now])


def _variable_change(then: list, now: list, defaults: dict | None = None) -> str | None:
    """What changed in the recorded variables (new Var components are no change here; a
    sparse variable's entries made on demand are none either, while they keep the state of an
    entry made on demand: `defaults`)."""
    current = {id(comp): (data, states, fixed) for comp, data, states, fixed in now}
    for comp, data, states, fixed in then:
        cur = current.get(id(comp))
        if cur is None:
            return f"the variable {comp.name} was deleted"
        default = (defaults or {}).get(id(comp))
        if default is not None:  # a sparse variable: entries made on demand are no change
            why = _sparse_change(comp, data, states, fixed, cur, default)
            if why:
                return why
            continue
        if not same_objects(cur[0], data):
            return f"entries of the variable {comp.name} were added or deleted"
        if cur[1] != states or cur[2] != fixed:
            v = next((v for v, a, b in zip(data, cur[1], states, strict=True) if a != b), None)
            if v is None:  # the same fixings, another value
                v = next(v for v, a, b in zip([v for v in data if v._fixed], cur[2], fixed,
                                              strict=True) if a != b)
            return f"the bounds, fixing or domain of {v.name} changed"
    return None


def _fixed_values(data: list, states: list, fixed: list) -> dict:
    """id(entry) -> its recorded fixed value (`fixed` follows the entries fixed when recorded,
    which their recorded states say)."""
    return dict(zip([id(v) for v, st in zip(data, states, strict=True) if st[2]], fixed,
                    strict=True))


def _sparse_change(comp: Any, data: list, states: list, fixed: list, cur: tuple,
                   default: tuple) -> str | None:
    """What changed in a sparse variable: a recorded entry deleted or with another state (or
    fixed value), or an entry made since whose state is not `default`."""
    was = {id(v): st for v, st in zip(data, states, strict=True)}
    value = _fixed_values(data, states, fixed)
    seen = 0
    for v, st in zip(cur[0], cur[1], strict=True):
        old = was.get(id(v))
        if old is None and st != _default_state(default, v) or old is not None and (
                st != old or (v._fixed and value.get(id(v)) != v._value)):
            return f"the bounds, fixing or domain of {v.name} changed"
        seen += old is not None
    if seen != len(data):
        return f"entries of the variable {comp.name} were deleted"
    return None


def _row_change(then: list, now: list) -> tuple[str | None, list, list]:
    """(what changed in the recorded rows, the components holding new rows, the new rows)."""
    current = {id(comp): (data, exprs) for comp, data, exprs in now}
    added, rows = [], []
    for comp, data, exprs in then:
        cur = current.pop(id(comp), None)
        if cur is None:
            return f"the rows {comp.name} were deactivated or deleted", [], []
        if same_objects(cur[0], data):
            if not same_objects(cur[1], exprs):
                k = next(i for i, (a, b) in enumerate(zip(cur[1], exprs)) if a is not b)
                return f"the row {data[k].name} changed", [], []
            continue
        expr_of = {id(c): x for c, x in zip(*cur, strict=True)}
        for c, x in zip(data, exprs, strict=True):
            if id(c) not in expr_of:
                return f"the row {c.name} was deactivated or deleted", [], []
            if expr_of[id(c)] is not x:
                return f"the row {c.name} changed", [], []
        added.append(comp)  # every recorded row kept as it was, and more
        kept = {id(c) for c in data}
        rows += [c for c in cur[0] if id(c) not in kept]
    for comp, data, _ in now:
        if id(comp) in current and data:
            added.append(comp)
            rows += data
    return None, added, rows


def compare(snap: Snapshot, model: Any) -> Change:
    """The kind of change from `snap` (taken of this model) to `model` now (a lazily built
    model as it is, not built by the comparison)."""
    with peeking(model):
        return _compare(snap, model)


def _compare(snap: Snapshot, model: Any) -> Change:
    objective = _objective_change(snap.objectives, _objectives(model))
    now = {id(e): x for e, x in _expressions(model)}
    # what the objective's value depends on besides the variables: its terms, the named
    # Expressions it may hold, the mutable Params
    terms = objective or next((f"the Expression {e.name} changed" for e, x in snap.expressions
                               if now.get(id(e)) is not x), None) or next(
        (f"the Param {p.name} changed" for p, v in snap.params if p.value != v), None)
    changed = objective or _variable_change(snap.variables, _vars(model), snap.defaults)
    row_change, added, new_rows = _row_change(snap.rows, _rows(model))
    changed = changed or row_change or terms
    if changed is None:
        now_attrs = _attributes(model)
        changed = next((f"the model's attribute {k!r} changed" for k, v in
                        snap.attributes.items() if now_attrs.get(k, _MISSING) != v), None)
    if changed is not None:
        gone = tuple(comp.name for comp, *_ in snap.variables
                     if model.component(comp.local_name) is not comp)
        return Change(CHANGED, changed, gone, same_objective=terms is None)
    if added:
        return Change(ADDED_ROWS, f"rows added ({_names(added)})", added=tuple(new_rows))
    return Change(UNCHANGED, "the model as build_model returned it")


_MISSING = object()
