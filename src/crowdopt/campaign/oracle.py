"""Answer a campaign's queries from a finished label table (a dry run, and the equivalence
with `replay`): the same labels in the same order as the replays reveal them."""

from __future__ import annotations

import numpy as np

from ..errors import InputError


class TableOracle:
    """Answers from a recorded table.

    mode 'homogeneous' (policy optkg): the query on item i with `round` r gets the (r+1)-th
    label the Opt-KG replay reveals for i (`optkg_replay.label_queues` with the replay's seed),
    answered by the worker who gave it. 'heterogeneous' (optkg-het): the recorded label of the
    (item, worker) pair, in the replay's order for repeated pairs. 'dense' (lsol, cltap): the
    worker's recorded label of the item; None when there is none.
    """

    def __init__(self, table, *, seed: int = 0, mode: str = "homogeneous"):
        from ..sim.optkg_replay import label_queues

        if mode not in ("homogeneous", "heterogeneous", "dense"):
            raise InputError("mode", "homogeneous, heterogeneous or dense", mode)
        self.table, self.mode = table, mode
        self.items = {str(t): i for i, t in enumerate(table.task_ids.tolist())}
        self.workers = {str(w): j for j, w in enumerate(table.worker_ids.tolist())}
        self.classes = [str(c) for c in table.classes.tolist()]
        if mode == "dense":
            self.D = table.dense()
        else:
            self.queues = label_queues(table, np.random.default_rng(seed), mode)

    def answer(self, q) -> tuple[str, str, str] | None:
        """(item, worker, label) answering query q (a `Query`), None if the table has none."""
        t = self.table
        i = self.items[q.item]
        if self.mode == "homogeneous":
            rows = self.queues[i]
            if q.round >= len(rows):
                return None
            r = rows[len(rows) - 1 - q.round]  # the replay pops from the end
        elif self.mode == "heterogeneous":
            rows = self.queues.get((i, self.workers[q.worker]), [])
            if not rows:
                return None
            r = rows[-1]  # a campaign asks each pair once
        else:
            y = int(self.D[i, self.workers[q.worker]])
            return None if y < 0 else (q.item, q.worker, self.classes[y])
        return (q.item, str(t.worker_ids[t.worker[r]]), self.classes[int(t.label[r])])
