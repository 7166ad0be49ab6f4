"""The head-cover model's structure, shared by its Pyomo builder (`models.cltap.build_heads`) and
its array emitter (`emit_heads`) [ours]: which labels head a task, which join one, and the index
lists of every row, computed once so that both make the same model.

The emitter writes the compiled Pyomo model's matrix straight from numpy (columns g, y, u, e,
eta in declaration order, each in index order; rows in declaration order): at t = 100, a = 10
the Pyomo build and compile take about 10 s CPU, the emitter a fraction of a second, and a user
who only adds rows to `build_model(inst)` gets the registered part emitted (`models.lazy`).
Tests compare both entry for entry (tests/test_formulations.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..problems.cltap import CltapInstance, CltapSolution
from .formulation import Emitted

Label = tuple[int, int]
Link = tuple[int, int, int, int]


def head_labels(inst: CltapInstance, theta: float, need: float = 0.0
                ) -> tuple[list[Label], list[Link]]:
    """(heads, links) of the head-cover model: every positive label (j, k) that can head a task
    reaching `need` (its weight plus the best label of every later annotator), and every link
    (j, k, j', k'), j < j', from a head below theta to a positive label of a later annotator."""
    phi = inst.phi
    pos = [[k for k in range(inst.K) if phi[j, k] > 0] for j in range(inst.a)]
    best = [float(phi[j].max()) if inst.K else 0.0 for j in range(inst.a)]
    later = np.concatenate([np.cumsum(best[::-1])[::-1][1:], [0.0]]) if inst.a else []
    heads = [(j, k) for j in range(inst.a) for k in pos[j]
             if phi[j, k] + later[j] >= need * (1 - 1e-9)]
    links = [(j, k, j2, k2) for j, k in heads if phi[j, k] < theta
             for j2 in range(j + 1, inst.a) for k2 in pos[j2]]
    return heads, links


@dataclass
class HeadsLayout:
    """The head-cover model of one instance at one theta: its variables' index lists (heads H,
    links L, labels U) and the index lists of its indexed rows, each without the indices its
    rule would skip. `into[h]`: the links joining head h; `by_ann[(j, k, j2)]`: the links from
    head (j, k) to annotator j2; `joins[(j2, k2)]`: the links label (j2, k2) may join through."""

    theta: float
    sc: float  # 1 / theta (1 where theta is 0): the rows with eta are divided by theta
    tr: np.ndarray  # min(phi, theta)
    rest: np.ndarray  # 1 - tr / theta, exactly 0 at or above theta
    heads: list[Label]
    links: list[Link]
    labels: list[Label]
    into: dict[Label, list[Link]] = field(default_factory=dict)
    by_ann: dict[tuple[int, int, int], list[Link]] = field(default_factory=dict)
    joins: dict[Label, list[Link]] = field(default_factory=dict)
    label_rows: list[Label] = field(default_factory=list)
    prefix_rows: list[Label] = field(default_factory=list)
    heads_first_rows: list[Label] = field(default_factory=list)
    used_first_rows: list[Label] = field(default_factory=list)


def heads_layout(inst: CltapInstance, theta: float | None = None, need: float = 0.0
                 ) -> HeadsLayout:
    """The layout of `build_heads(inst, theta, need)` (theta None: sum_j max_k phi_jk)."""
    if theta is None:
        theta = float(inst.phi.max(axis=1).sum()) if inst.K else 0.0
    theta = float(theta)
    phi = inst.phi
    a, K = inst.a, inst.K
    tr = np.minimum(phi, theta)
    sc = 1.0 / theta if theta > 0 else 1.0
    # a head's share of what it misses of theta, 1 - min(phi, theta) / theta: exactly 0 for a
    # head at or above theta (1 - theta * (1 / theta) is 1.1e-16 in floats, an entry that
    # pulled a row's scale to 2^40 in the adapter)
    rest = np.where(tr >= theta, 0.0, 1.0 - sc * tr)
    heads, links = head_labels(inst, theta, need)
    lay = HeadsLayout(theta, sc, tr, rest, heads, links,
                      [(j, k) for j in range(a) for k in range(K)])
    lay.into = {h: [] for h in heads}
    for lk in links:
        j, k, j2, k2 = lk
        lay.into[j, k].append(lk)
        lay.by_ann.setdefault((j, k, j2), []).append(lk)
        lay.joins.setdefault((j2, k2), []).append(lk)
    into, joins = lay.into, lay.joins
    lay.label_rows = [jk for jk in lay.labels if jk in into or jk in joins]
    lay.prefix_rows = [(j, k) for j, k in lay.labels if k > 0]
    same = [(j, k) for j in range(a) for k in range(1, K) if phi[j, k] == phi[j, k - 1] > 0]
    lay.heads_first_rows = [(j, k) for j, k in same if (j, k) in into and (j, k - 1) in into]
    lay.used_first_rows = [jk for jk in same if jk in into or jk in joins]
    return lay


def heads_columns(lay: HeadsLayout, K: int) -> dict:
    """The emitted columns of each variable: g[h], y[link], u[j, k], e, eta (the passes'
    `extras`, as `models.cltap.heads_extras` reads them off a compiled model)."""
    nH, nL = len(lay.heads), len(lay.links)
    u0 = nH + nL
    return {"theta": lay.theta, "g": {h: i for i, h in enumerate(lay.heads)},
            "y": {lk: nH + i for i, lk in enumerate(lay.links)},
            "u": {(j, k): u0 + j * K + k for j, k in lay.labels},
            "e": u0 + len(lay.labels), "eta": u0 + len(lay.labels) + 1}


def emit_heads(inst: CltapInstance, theta: float | None = None, need: float = 0.0) -> Emitted:
    """`build_heads(inst, theta, need)` as arrays, in the compiled model's order: columns g (H),
    y (L), u (U, annotator-major), e, eta; rows tasks, heads (where more than t labels could
    head), empty, cover[H], one_per_annotator, label, prefix, budget, heads_first, used_first
    (`HeadsLayout`'s lists). Zero coefficients are left out, as Pyomo's compiler leaves them."""
    lay = heads_layout(inst, theta, need)
    K, t = inst.K, int(inst.t)
    cols = heads_columns(lay, K)
    g, u = cols["g"], cols["u"]
    e_col, eta = cols["e"], cols["eta"]
    n = eta + 1
    nH, nL = len(lay.heads), len(lay.links)
    C: list[np.ndarray] = []  # per row: its columns and coefficients
    V: list[np.ndarray] = []
    lo: list[float] = []
    hi: list[float] = []
    names: list[tuple] = []

    def row(name: str, index: object, cols_: np.ndarray | list, vals: np.ndarray | list,
            low: float, high: float) -> None:
        C.append(np.asarray(cols_, np.int64))
        V.append(np.asarray(vals, float))
        lo.append(low)
        hi.append(high)
        names.append((name, index))

    # the links are head-major (`head_labels`): a head's links, and those to one later
    # annotator, are runs of consecutive y columns; a label's joins are grouped by sorting
    L = np.asarray(lay.links, np.int64).reshape(-1, 4)
    label_of = L[:, 2] * K + L[:, 3]
    by_label = np.argsort(label_of, kind="stable")
    bounds = np.searchsorted(label_of[by_label], np.arange(len(lay.labels) + 1))
    ones = np.ones(nL + nH + len(lay.labels) + 2)

    def used(jk: Label) -> np.ndarray:
        """The columns of a label's uses: heading (g) and joining (y)."""
        lid = jk[0] * K + jk[1]
        yc = nH + by_label[bounds[lid]:bounds[lid + 1]]
        return np.concatenate([[g[jk]], yc]) if jk in lay.into else yc

    sc = lay.sc
    weight = -(sc * lay.tr[L[:, 2], L[:, 3]])  # a joined label's share in its head's cover row
    g_cols = np.arange(nH)
    row("tasks", None, np.append(g_cols, e_col), np.append(ones[:nH], float(t)), float(t),
        np.inf)
    if nH > t:
        row("heads", None, g_cols, ones[:nH], -np.inf, float(t))
    row("empty", None, [eta, e_col], [sc, 1.0], -np.inf, 1.0)
    at = 0
    for h in lay.heads:
        m = len(lay.into[h])
        row("cover", h, np.concatenate([[eta, g[h]], nH + np.arange(at, at + m)]),
            np.concatenate([[sc, float(lay.rest[h])], weight[at:at + m]]), -np.inf, 1.0)
        at += m
    at = 0
    for key, lks in lay.by_ann.items():
        m = len(lks)
        row("one_per_annotator", key, np.append(nH + np.arange(at, at + m), g[key[:2]]),
            np.append(ones[:m], -1.0), -np.inf, 0.0)
        at += m
    for jk in lay.label_rows:
        uc = used(jk)
        row("label", jk, np.append(uc, u[jk]), np.append(ones[:len(uc)], -1.0), -np.inf, 0.0)
    for j, k in lay.prefix_rows:
        row("prefix", (j, k), [u[j, k], u[j, k - 1]], [1.0, -1.0], -np.inf, 0.0)
    u_cols = np.array([u[jk] for jk in lay.labels], np.int64)
    row("budget", None, u_cols, ones[:len(u_cols)], -np.inf, float(inst.b))
    for j, k in lay.heads_first_rows:
        row("heads_first", (j, k), [g[j, k], g[j, k - 1]], [1.0, -1.0], -np.inf, 0.0)
    for j, k in lay.used_first_rows:
        now, before = used((j, k)), used((j, k - 1))
        row("used_first", (j, k), np.concatenate([now, before]),
            np.concatenate([ones[:len(now)], -ones[:len(before)]]), -np.inf, 0.0)
    counts = np.array([len(x) for x in C], np.int64)
    Cv, Vv = (np.concatenate(C), np.concatenate(V)) if C else (np.zeros(0, np.int64),
                                                               np.zeros(0))
    Rv = np.repeat(np.arange(len(C)), counts)
    keep = Vv != 0.0
    R_, C_, V_ = Rv[keep], Cv[keep], Vv[keep]
    A = sp.csc_array((V_, (R_, C_)), shape=(len(lo), n))
    A.sum_duplicates()
    A.sort_indices()
    c = np.zeros(n)
    c[eta] = 1.0
    col_hi = np.ones(n)
    col_hi[eta] = np.inf
    integrality = np.ones(n, np.int32)
    integrality[eta] = 0
    column_names = ([("g", h) for h in lay.heads] + [("y", lk) for lk in lay.links]
                    + [("u", jk) for jk in lay.labels] + [("e", None), ("eta", None)])
    links = lay.links

    def decode(x: np.ndarray) -> CltapSolution:
        return decode_heads_values(
            inst, zip(lay.heads, x[:nH]), zip(links, x[nH:nH + len(links)]),
            zip(lay.labels, x[nH + len(links):eta - 1]))

    def encode(sol: CltapSolution) -> np.ndarray:
        out = encode_heads(inst, cols, sol, 0.0, n)
        if out is None:
            raise KeyError("a label of the assignment has no column in the model")
        return out

    return Emitted(c=c, A=A, row_lo=np.asarray(lo, float), row_hi=np.asarray(hi, float),
                   col_lo=np.zeros(n), col_hi=col_hi, integrality=integrality, sense="max",
                   columns=lambda: list(column_names), rows=lambda: list(names), decode=decode,
                   extras=cols, encode=encode, decision=np.arange(n - 1))


def decode_heads_values(inst: CltapInstance, g: Iterable[tuple[Label, float]],
                        y: Iterable[tuple[Link, float]], u: Iterable[tuple[Label, float]]
                        ) -> CltapSolution:
    """Assignment of a head-cover point given as (index, value) pairs of g, y and u: one task
    per chosen head with its joined labels, then the prefix's other labels, heaviest first, on
    the neediest task their annotator has not labelled (raises c' only; keeps (14)-(16)). A
    point of a model whose rows a user dropped decodes too (a label joined to no chosen head is
    left to the prefixes; more heads than tasks give task numbers past t): the evaluator
    reports what it violates."""
    z = np.full((inst.a, inst.K), -1, dtype=np.int64)
    task: dict[Label, int] = {}
    for h, v in g:
        if v > 0.5:
            task[h] = len(task)
            z[h] = task[h]
    for (j, k, j2, k2), v in y:
        if v > 0.5 and (j, k) in task:
            z[j2, k2] = task[j, k]
    n = np.zeros(inst.a, dtype=np.int64)
    for (j, k), v in u:
        if v > 0.5:
            n[j] = max(n[j], k + 1)
    return fill_prefixes(inst, CltapSolution(z), n)


def fill_prefixes(inst: CltapInstance, sol: CltapSolution, n: np.ndarray) -> CltapSolution:
    """Place the unassigned labels of the prefixes n (and of every assigned label's prefix),
    heaviest first, each on the task with the lowest c' that its annotator has not labelled."""
    z = sol.task_of.copy()
    c = np.zeros(inst.t)
    lab = np.zeros((inst.a, inst.t), dtype=bool)
    for j, k in zip(*np.nonzero(z >= 0)):
        n[j] = max(n[j], k + 1)
        if z[j, k] < inst.t:  # a task number past t (a relaxed model's point) counts nowhere
            c[z[j, k]] += inst.phi[j, k]
            lab[j, z[j, k]] = True
    free = [(j, k) for j in range(inst.a) for k in range(int(n[j])) if z[j, k] < 0]
    for j, k in sorted(free, key=lambda jk: -inst.phi[jk]):
        i = int(np.argmin(np.where(lab[j], np.inf, c)))
        z[j, k] = i
        lab[j, i] = True
        c[i] += inst.phi[j, k]
    return CltapSolution(z)


def encode_heads(inst: CltapInstance, cols: dict, sol: CltapSolution, value: float,
                 num_col: int) -> np.ndarray | None:
    """The head-cover point of an assignment (None if a label it needs has no column): each
    task's head is its label of the lowest-numbered annotator with a positive weight, its later
    positive labels join it if the head weighs less than theta; equal-weight runs of an annotator
    are reordered heads, joined, other labels (c' unchanged; the ordering rows); u = the
    prefixes, e = 1 if a task has no head, eta = `value` (0 with such a task)."""
    phi, theta = inst.phi, cols["theta"]
    z = sol.task_of.copy()
    head_of: dict[int, tuple[int, int]] = {}
    role = {}  # (annotator, task) -> 0 head, 1 joined, 2 other
    for j in range(inst.a):
        for k in range(inst.K):
            i = int(z[j, k])
            if i < 0:
                continue
            if phi[j, k] > 0 and i not in head_of:
                head_of[i] = (j, k)
                role[j, i] = 0
            elif phi[j, k] > 0 and phi[head_of[i]] < theta:
                role[j, i] = 1
            else:
                role[j, i] = 2
    for j in range(inst.a):  # runs of equal positive weights: heads, joined, others, unused
        k = 0
        while k < inst.K:
            k2 = k
            while k2 + 1 < inst.K and phi[j, k2 + 1] == phi[j, k] > 0:
                k2 += 1
            if k2 > k:
                run = sorted(z[j, k:k2 + 1], key=lambda i: (3 if i < 0 else role[j, int(i)]))
                z[j, k:k2 + 1] = run
            k = k2 + 1
    for i, (j, _) in list(head_of.items()):  # the head's iteration after the reordering
        head_of[i] = (j, int(np.flatnonzero(z[j] == i)[0]))
    x = np.zeros(num_col)

    def put(c: int) -> bool:
        if c < 0:
            return False
        x[c] = 1.0
        return True

    for j in range(inst.a):
        for k in range(inst.K):
            i = int(z[j, k])
            if i >= 0 and not put(cols["u"][j, k]):
                return None
            if i < 0 or role[j, i] == 2:
                continue
            if role[j, i] == 0 and not put(cols["g"].get((j, k), -1)):
                return None
            if role[j, i] == 1 and not put(cols["y"].get(head_of[i] + (j, k), -1)):
                return None
    empty = inst.t - len(head_of)
    if cols["e"] < 0 or cols["eta"] < 0:
        return None
    x[cols["e"]] = 1.0 if empty else 0.0
    x[cols["eta"]] = 0.0 if empty else value
    return x
