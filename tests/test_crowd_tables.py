"""Label and gold table readers: formats, encodings, duplicates policy, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from crowdopt.crowd.tables import (
    LabelTable,
    from_arrays,
    gold_from_arrays,
    read_gold,
    read_labels,
)
from crowdopt.errors import InputError


def write(tmp_path, name, text, mode="w", newline=""):
    p = tmp_path / name
    if isinstance(text, bytes):
        p.write_bytes(text)
    else:
        with open(p, mode, newline=newline) as f:
            f.write(text)
    return p


TINY = "task,worker,label\nt1,w1,a\nt1,w2,b\nt2,w1,b\nt2,w3,b\n"


def test_from_arrays_encodes_first_appearance_and_sorted_classes():
    tb = from_arrays(["x", 7, "x"], ["w", "w", 3], ["b", "a", "b"])
    assert tb.task_ids.tolist() == ["x", 7]
    assert tb.worker_ids.tolist() == ["w", 3]
    assert tb.classes.tolist() == ["a", "b"]
    assert tb.task.tolist() == [0, 1, 0]
    assert tb.worker.tolist() == [0, 0, 1]
    assert tb.label.tolist() == [1, 0, 1]
    assert (tb.n_tasks, tb.n_workers, tb.n_classes, tb.n_labels) == (2, 2, 2, 3)
    assert tb.task.dtype == np.int64


def test_a_number_among_text_labels_is_its_text():
    """The label rule: a column that is not all numbers compares as text (2 is '2'), so its
    classes always sort; it used to keep ['b', 2, 'a'] (a class of another type)."""
    tb = from_arrays([1, 2, 3], [1, 1, 1], ["b", 2, " a "])
    assert tb.classes.tolist() == ["2", "a", "b"]


def test_read_labels_line_endings_and_bom_give_same_table(tmp_path):
    base = read_labels(write(tmp_path, "lf.csv", TINY))
    variants = [
        write(tmp_path, "crlf.csv", TINY.replace("\n", "\r\n")),
        write(tmp_path, "cr.csv", TINY.replace("\n", "\r")),
        write(tmp_path, "bom.csv", b"\xef\xbb\xbf" + TINY.encode()),
        write(tmp_path, "tab.tsv", TINY.replace(",", "\t")),
    ]
    for p in variants:
        tb = read_labels(p)
        assert tb.rows() == base.rows(), p.name


def test_header_aliases_columns_mapping_and_headerless(tmp_path):
    zheng = write(tmp_path, "a.csv", "question,worker,answer\r\n1,w1,0\r\n1,w2,1\r\n")
    tb = read_labels(zheng)
    assert tb.rows() == [("1", "w1", 0), ("1", "w2", 1)]  # canonical ints become ints
    act = write(tmp_path, "b.csv", "w1,1,0,0,5\nw2,1,1,0,7\n")
    tb2 = read_labels(act, header=False, columns={"worker": 0, "task": 1, "label": 2})
    assert tb2.rows() == tb.rows()
    named = write(tmp_path, "c.csv", "item_x,who,resp\n1,w1,0\n1,w2,1\n")
    tb3 = read_labels(named, columns={"task": "item_x", "worker": "who", "label": "resp"})
    assert tb3.rows() == tb.rows()
    ws = write(tmp_path, "d.txt", "2 2 2\n1 w1 0\n1 w2 1\n")
    assert read_labels(ws, header=False, skip_rows=1).rows() == tb.rows()


def test_numeric_labels_are_one_class_per_value(tmp_path):
    """Every label a number: '1', '1.0' and '01' are the class 1; one text label among them
    keeps every label as text, where two spellings of one number are refused."""
    tb = read_labels(write(tmp_path, "a.csv", "task,worker,label\n1,w1,01\n1,w2,1\n2,w1,1.0\n"
                                              "2,w2,0\n"))
    assert tb.classes.tolist() == [0, 1] and tb.n_classes == 2
    half = read_labels(write(tmp_path, "b.csv", "task,worker,label\n1,w1,0.5\n1,w2,1.50\n"))
    assert half.classes.tolist() == [0.5, 1.5]
    # beside a text label, '1' and '1.0' are neither two classes nor silently one: refused
    with pytest.raises(InputError, match="'1' and '1.0'"):
        read_labels(write(tmp_path, "c.csv", "task,worker,label\n1,w1,1\n1,w2,1.0\n2,w1,x\n"))
    text = read_labels(write(tmp_path, "d.csv", "task,worker,label\n1,w1,1\n1,w2,2\n2,w1,x\n"))
    assert text.classes.tolist() == ["1", "2", "x"]


def test_duplicates_policies(tmp_path):
    text = "task,worker,label\nt1,w1,a\nt1,w1,b\nt2,w1,a\nt1,w1,c\n"
    p = write(tmp_path, "dup.csv", text)
    with pytest.raises(InputError, match="2 repeated rows"):
        read_labels(p)
    first = read_labels(p, duplicates="first")
    assert first.rows() == [("t1", "w1", "a"), ("t2", "w1", "a")]
    last = read_labels(p, duplicates="last")
    assert last.rows() == [("t2", "w1", "a"), ("t1", "w1", "c")]
    everything = read_labels(p, duplicates="all")
    assert everything.n_labels == 4 and everything.duplicate_count() == 2
    with pytest.raises(InputError, match="dense"):
        everything.dense()


@pytest.mark.parametrize("order", ["by task", "by worker", "shuffled"])
def test_duplicate_check_is_exact_in_every_row_order(order):
    """_pairs_repeat picks its sort from the row order; the answer must not depend on it."""
    rng = np.random.default_rng(7)
    for trial in range(40):
        n_t, n_w = int(rng.integers(1, 30)), int(rng.integers(1, 30))
        pairs = rng.integers(0, [n_t, n_w], size=(int(rng.integers(1, 200)), 2))
        if trial % 2:  # half the cases without any repeated pair
            pairs = np.unique(pairs, axis=0)
        if order == "by worker":
            pairs = pairs[np.lexsort((pairs[:, 0], pairs[:, 1]))]
        elif order == "shuffled":
            pairs = rng.permutation(pairs)
        else:
            pairs = pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]
        t, w = pairs[:, 0], pairs[:, 1]
        tb = from_arrays(t.tolist(), w.tolist(), [0] * len(t), duplicates="all")
        assert tb.duplicate_count() == len(t) - len(np.unique(pairs, axis=0))


def test_dense_vote_counts_and_subset(tmp_path):
    tb = read_labels(write(tmp_path, "a.csv", TINY))
    assert tb.dense().tolist() == [[0, 1, -1], [1, -1, 1]]
    assert tb.vote_counts().tolist() == [[1, 1], [0, 2]]
    assert tb.vote_counts(np.array([2.0, 1.0, 0.5])).tolist() == [[2, 1], [0, 2.5]]
    sub = tb.subset(workers=[0])
    assert sub.n_tasks == 2 and sub.n_labels == 2 and sub.task_ids is tb.task_ids
    assert tb.subset(np.array([True, False, False, True])).rows() == [
        ("t1", "w1", "a"), ("t2", "w3", "b")]
    assert tb.subset(tasks=[1]).labels_per_task().tolist() == [0, 2]
    assert tb.task_index(["t2"]).tolist() == [1]
    with pytest.raises(InputError):
        tb.worker_index(["nobody"])


def test_read_gold_matches_text_ids_and_repeated_rows(tmp_path):
    tb = from_arrays([1, 1, 2], ["a", "b", "a"], [0, 1, 1])
    g = read_gold(write(tmp_path, "g.csv", "question,truth\r\n2,1\r\n1,0\r\n2,1\r\n"), tb)
    assert g.task.tolist() == [0, 1] and g.label.tolist() == [0, 1]
    assert g.truth(3).tolist() == [0, 1, -1]
    g2 = gold_from_arrays(tb, [2], [1])
    assert g2.task.tolist() == [1] and g2.label.tolist() == [1]


@pytest.mark.parametrize("text,match", [
    ("", "empty file"),
    ("task,worker,label\n", "only a header"),
    ("task,worker\nt1,w1\n", "column label"),
    ("task,worker,label\nt1,w1\n", "at least 3 fields"),
    ("task,worker,label\nt1,w1,\n", "missing label"),
])
def test_bad_label_files_give_one_line_errors(tmp_path, text, match):
    p = write(tmp_path, "bad.csv", text)
    with pytest.raises(InputError, match=match) as e:
        read_labels(p)
    assert "\n" not in str(e.value)


def test_bad_options_and_missing_file(tmp_path):
    p = write(tmp_path, "a.csv", TINY)
    with pytest.raises(InputError, match="duplicates"):
        read_labels(p, duplicates="mean")
    with pytest.raises(InputError, match="columns.task"):
        read_labels(p, columns={"task": "nope"})
    with pytest.raises(InputError, match="columns"):
        read_labels(p, columns={"colour": "task"})
    with pytest.raises(InputError, match="existing file"):
        read_labels(tmp_path / "missing.csv")


@pytest.mark.parametrize("text,match", [
    ("task,label\nt9,a\n", "task"),          # gold for an unknown task
    ("task,label\nt1,zzz\n", "label"),       # a gold label never seen in the labels
    ("task,label\nt1,a\nt1,b\n", "one gold label per task"),
    ("task,truth\n", "only a header"),
    ("task,colour\nt1,a\n", "column label"),
])
def test_bad_gold_gives_one_line_errors(tmp_path, text, match):
    tb = read_labels(write(tmp_path, "a.csv", TINY))
    with pytest.raises(InputError, match=match) as e:
        read_gold(write(tmp_path, "g.csv", text), tb)
    assert "\n" not in str(e.value)


def test_unknown_gold_tasks_can_be_dropped(tmp_path):
    tb = read_labels(write(tmp_path, "a.csv", TINY))
    g = read_gold(write(tmp_path, "g.csv", "task,label\nt9,a\nt2,b\n"), tb,
                  unknown_tasks="drop")
    assert g.task.tolist() == [1] and g.label.tolist() == [1]


@pytest.mark.parametrize("args,match", [
    (([], [], []), "at least one"),
    ((["t"], ["w", "v"], ["a"]), "equal length"),
    ((["t"], ["w"], [None]), "label"),
    ((["t"], [["w"]], ["a"]), "hashable"),
])
def test_from_arrays_bad_input(args, match):
    with pytest.raises(InputError, match=match):
        from_arrays(*args)


def test_dataframe_roundtrip():
    pd = pytest.importorskip("pandas")
    from crowdopt.crowd.tables import from_dataframe
    tb = from_arrays(["t1", "t2"], ["w1", "w1"], [0, 1])
    df = tb.to_dataframe()
    assert isinstance(df, pd.DataFrame)
    assert from_dataframe(df).rows() == tb.rows()


def test_label_table_is_frozen():
    tb = from_arrays(["t"], ["w"], ["a"])
    assert isinstance(tb, LabelTable)
    with pytest.raises(AttributeError):
        tb.task = np.zeros(1)  # type: ignore[misc]


def test_gold_file_rejects_ids_with_the_same_text(tmp_path):
    tb = from_arrays([1, "1"], ["w", "w"], ["a", "b"])
    with pytest.raises(InputError, match="same text"):
        read_gold(write(tmp_path, "g.csv", "task,label\n1,a\n"), tb)
    assert gold_from_arrays(tb, ["1"], ["b"]).task.tolist() == [1]


def test_from_dataframe_reads_columns_of_a_frame_like_object():
    from crowdopt.crowd.tables import from_dataframe

    class Col(list):
        def tolist(self):
            return list(self)

    class Frame(dict):
        @property
        def columns(self):
            return list(self)

    df = Frame(q=Col(["t1", "t2"]), who=Col(["w1", "w1"]), ans=Col([0, 1]))
    tb = from_dataframe(df, columns={"task": "q", "worker": "who", "label": "ans"})
    assert tb.rows() == [("t1", "w1", 0), ("t2", "w1", 1)]
    with pytest.raises(InputError, match="columns.task"):
        from_dataframe(df)


def _string_dtypes() -> list[str]:
    dtypes = ["object", "string[python]", "category"]
    try:
        import pyarrow  # noqa: F401
        dtypes.append("string[pyarrow]")
    except ImportError:
        pass
    return dtypes


@pytest.mark.parametrize("dtype", _string_dtypes())
def test_from_dataframe_encodes_every_string_dtype_like_from_arrays(dtype):
    """Object, Python-string, categorical and Arrow-string columns take different encoders
    (pyarrow's dictionary_encode for Arrow): same ids, first-appearance order, same rows."""
    pd = pytest.importorskip("pandas")
    from crowdopt.crowd.tables import from_dataframe
    rng = np.random.default_rng(3)
    t = [f"t{i}" for i in rng.integers(0, 40, 300)]
    w = [f"w{i}" for i in rng.integers(0, 9, 300)]
    lab = [str(x) for x in rng.choice(["b", "a", "c"], 300)]
    ref = from_arrays(t, w, lab, duplicates="last")
    df = pd.DataFrame({"task": pd.Series(t, dtype=dtype), "worker": pd.Series(w, dtype=dtype),
                       "label": pd.Series(lab, dtype=dtype)})
    tb = from_dataframe(df, duplicates="last")
    assert tb.task_ids.tolist() == ref.task_ids.tolist()
    assert tb.worker_ids.tolist() == ref.worker_ids.tolist()
    assert tb.classes.tolist() == ref.classes.tolist() == ["a", "b", "c"]
    assert all(type(v) is str for v in tb.task_ids.tolist())
    assert tb.rows() == ref.rows()
    df.loc[5, "worker"] = None
    with pytest.raises(InputError, match=r"worker\[5\]"):
        from_dataframe(df)


@pytest.mark.parametrize("dtype", ["int8", "int64", "uint16", "wide"])
def test_from_dataframe_integer_labels_counted_like_from_arrays(dtype):
    """Integer label columns are encoded by counting over their range (classes come out
    sorted); negative labels, narrow dtypes and a range too wide to count (the hashing path)
    give the classes, codes and rows `from_arrays` gives."""
    pd = pytest.importorskip("pandas")
    from crowdopt.crowd.tables import from_dataframe
    rng = np.random.default_rng(5)
    values = {"int8": [-100, 7, 100], "int64": [-(10 ** 6), 2, 5], "uint16": [9, 3, 60000],
              "wide": [-(10 ** 12), 1, 10 ** 12]}[dtype]
    t = [f"t{i}" for i in rng.integers(0, 30, 200)]
    w = [int(i) for i in rng.integers(0, 12, 200)]
    lab = [int(v) for v in rng.choice(values, 200)]
    ref = from_arrays(t, w, lab, duplicates="first")
    col = np.array(lab, dtype="int64" if dtype == "wide" else dtype)
    tb = from_dataframe(pd.DataFrame({"task": t, "worker": w, "label": col}),
                        duplicates="first")
    assert tb.classes.tolist() == sorted(values) == ref.classes.tolist()
    assert all(type(v) is int for v in tb.classes.tolist())
    assert tb.rows() == ref.rows()


def test_from_dataframe_reads_chunked_arrow_columns():
    """An Arrow column of several chunks (pd.concat of Arrow frames) is encoded as one."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    from crowdopt.crowd.tables import from_dataframe
    parts = [pd.DataFrame({"task": pd.Series(t, dtype="string[pyarrow]"),
                           "worker": pd.Series(w, dtype="large_string[pyarrow]"),
                           "label": pd.Series(lab, dtype="string[pyarrow]")})
             for t, w, lab in ((["b", "a"], ["x", "y"], ["1", "0"]),
                               (["c", "b", "a"], ["z", "z", "x"], ["0", "0", "1"]))]
    df = pd.concat(parts, ignore_index=True)
    assert df["task"].array.__arrow_array__().num_chunks == 2
    tb = from_dataframe(df)
    ref = from_arrays(*(df[c].tolist() for c in ("task", "worker", "label")))
    assert tb.task_ids.tolist() == ["b", "a", "c"] == ref.task_ids.tolist()
    assert tb.rows() == ref.rows()
    ints = df.assign(label=df["label"].astype("int64[pyarrow]"))  # Arrow integers: sorted
    tb = from_dataframe(ints)
    assert tb.classes.tolist() == [0, 1] and all(type(c) is int for c in tb.classes.tolist())
    assert [r[2] for r in tb.rows()] == [int(r[2]) for r in ref.rows()]


def test_repeated_pairs_found_by_sorting_as_by_counting():
    """`duplicate_count` and the duplicates policies find repeated (task, worker) pairs by
    one sort of the pair keys; the count equals the np.unique one on random tables."""
    rng = np.random.default_rng(11)
    for trial in range(60):
        n = int(rng.integers(1, 80))
        t = rng.integers(0, int(rng.integers(1, 12)), n)
        w = rng.integers(0, int(rng.integers(1, 12)), n)
        tb = from_arrays(t.tolist(), w.tolist(), [0] * n, duplicates="all")
        key = tb.task * tb.n_workers + tb.worker
        assert tb.duplicate_count() == n - len(np.unique(key)), trial
        kept = from_arrays(t.tolist(), w.tolist(), [0] * n, duplicates="first")
        assert kept.n_labels == len(np.unique(key))


def test_from_dataframe_other_arrow_types_go_through_pandas():
    """Arrow columns that are neither strings nor integers (here dates as task ids, floats as
    labels) are encoded by pandas, with the same ids and rows as from_arrays."""
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    import datetime

    from crowdopt.crowd.tables import from_dataframe
    days = [datetime.date(2026, 1, d) for d in (3, 1, 3, 2)]
    df = pd.DataFrame({"task": pd.Series(days, dtype="date32[pyarrow]"),
                       "worker": ["a", "b", "b", "a"],
                       "label": pd.Series([1.5, 0.5, 1.5, 0.5], dtype="double[pyarrow]")})
    tb = from_dataframe(df)
    ref = from_arrays(days, ["a", "b", "b", "a"], [1.5, 0.5, 1.5, 0.5])
    assert tb.task_ids.tolist() == ref.task_ids.tolist() == [days[0], days[1], days[3]]
    assert tb.classes.tolist() == [0.5, 1.5]
    assert tb.rows() == ref.rows()


def test_from_dataframe_refuses_a_role_column_name_used_twice():
    """Renaming a column to `task` in a frame that already has one (rte's file has a `task`
    column holding the task type) gives two columns of that name: a one-line InputError,
    not a traceback from a DataFrame where a column was expected."""
    pd = pytest.importorskip("pandas")
    from crowdopt.crowd import DawidSkene
    from crowdopt.crowd.tables import from_dataframe
    df = pd.DataFrame({"orig_id": [1, 2], "worker": ["a", "b"], "label": [0, 1],
                       "task": ["IR", "QA"]}).rename(columns={"orig_id": "task"})
    with pytest.raises(InputError, match=r"columns\.task: expected one DataFrame column "
                                         r"named 'task', found \"2 columns named 'task'\""):
        from_dataframe(df)
    with pytest.raises(InputError, match="columns.task"):
        DawidSkene().fit_predict(df)
    assert from_dataframe(df.iloc[:, 1:]).rows() == [("IR", "a", 0), ("QA", "b", 1)]


def test_from_arrays_refuses_pandas_missing_values():
    """pd.NA and pd.NaT in plain lists (e.g. from `Series.tolist()`) are missing values, as
    None and NaN are: a one-line InputError naming the position, never a class of their own."""
    pd = pytest.importorskip("pandas")
    for missing in (pd.NA, pd.NaT):
        with pytest.raises(InputError, match=r"label\[0\]: expected a label value"):
            from_arrays(["a", "b"], ["w", "w"], [missing, 1])
        with pytest.raises(InputError, match=r"worker\[1\]"):
            from_arrays(["a", "b"], ["w", missing], [0, 1])


def test_from_arrays_refuses_every_nan_like_scalar():
    """numpy NaN and NaT and Decimal NaN are missing values (one-line InputError), as float
    NaN is; Decimal NaN used to reach a decimal.InvalidOperation traceback in the class sort."""
    import decimal
    for missing in (np.float32("nan"), np.datetime64("NaT"), decimal.Decimal("NaN")):
        with pytest.raises(InputError, match=r"label\[1\]: expected a label value"):
            from_arrays(["a", "b"], ["w", "w"], [decimal.Decimal(1), missing])
    tb = from_arrays(["a", "b"], ["w", "w"], [decimal.Decimal("2"), decimal.Decimal("1")])
    assert tb.classes.tolist() == [decimal.Decimal("1"), decimal.Decimal("2")]
