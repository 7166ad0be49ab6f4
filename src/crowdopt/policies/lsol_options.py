"""The LS_OL policy's option values, apart from the policy so that the command line can offer
them without importing it (and numpy, and the labeler-set problem) at start-up."""

ESTIMATORS = ("first", "pooled", "em")
EM_LABELS = ("testers", "all")  # what the em estimator fits: tester labels, or every label
DEFAULT_ESTIMATOR = "em"  # by measurement (reproduce lsol, Table 2); LSOL() itself is the paper's
CONTEXTS = ("none", "finite", "continuous")
