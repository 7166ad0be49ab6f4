"""Shared test data: what several test modules draw the same way."""

from __future__ import annotations

from crowdopt import (
    CltapInstance,
    LabelerSetInstance,
    OlasAssignInstance,
    OlasSelectInstance,
    WorkerSelectInstance,
)

# one small instance per registered problem, built the way a user would (ids where they exist)
FROM_ARRAYS = {
    "olas-assign": lambda: OlasAssignInstance.from_arrays(
        [0.9, 0.7, 0.6], [2, 2, 1], [0.6, 0.5, 0.3, 0.2, 0.1], noise="superellipse",
        labeler_ids=["ann", "bob", "cy"], point_ids=["p0", "p1", "p2", "p3", "p4"]),
    "olas-select": lambda: OlasSelectInstance.from_arrays(
        [0.9, 0.7], [2, 3], [0.6, 0.5, 0.4, 0.2, 0.1], beta=0.2,
        labeler_ids=["ann", "bob"], point_ids=["v", "w", "x", "y", "z"]),
    "labeler-set": lambda: LabelerSetInstance.from_arrays(
        [0.8, 0.75, 0.7, 0.6, 0.4], costs=[0.02, 0.03, 0.01, 0.01, 0.0], cost_weight=1.0,
        labeler_ids=["L1", "L2", "L3", "L4", "L5"]),
    "worker-select": lambda: WorkerSelectInstance.from_arrays(
        3, w_hat=[0.9, 0.8, 0.7, 0.55], n=10, worker_ids=["w1", "w2", "w3", "w4"]),
    "cltap": lambda: CltapInstance.from_arrays([[0.68, 0.75, 0.8], [0.55, 0.7, 0.9]], t=3, b=5),
}
