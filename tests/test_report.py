"""Reports: markdown cells, figure names, report.md header (command and seeds), log-axis bars."""

from __future__ import annotations

import pytest

from crowdopt.experiments.report import Report, line_plot, markdown_table


def test_markdown_table_cells():
    md = markdown_table([{"a": 1e-9, "b": "x|y", "c": float("inf"), "d": 0.0, "e": None}],
                        ["a", "b", "c", "d", "e"])
    assert md.splitlines()[2] == "| 1.00e-09 | x\\|y | inf | 0.0000 | - |"
    assert markdown_table([]) == "_(no rows)_\n"


def test_report_writes_tables_figures_command_and_seeds(tmp_path):
    pytest.importorskip("matplotlib", reason="report plots need the plot extra")
    rep = Report(tmp_path / "r", "Title", command="crowdopt reproduce x --scale smoke",
                 seeds=[0, 1, 2])
    rep.table("T", [{"k": 1, "v": 0.5}], note="ours vs paper")
    fig = line_plot({"ours": ([1, 2, 4], [0.01, 0.1, 1.0])}, xlabel="n", ylabel="t",
                    logx=True, logy=True, errors={"ours": [0.05, 0.2, 0.1]},
                    reference={"paper": ([1, 2, 4], [0.02, 0.2, 2.0])})
    png = rep.figure(fig, "time vs/size", "caption")
    path = rep.write()
    text = path.read_text()
    assert png.name == "time_vs_size.png" and png.stat().st_size > 1000
    assert "`crowdopt reproduce x --scale smoke`" in text and "Seeds: [0, 1, 2]" in text
    assert "![caption](time_vs_size.png)" in text and "| 1 | 0.5000 |" in text
    assert not list((tmp_path / "r").glob("*.tmp"))


def test_line_plot_shows_every_series_and_no_zero_on_a_log_axis():
    """Equal curves stay distinguishable (own marker and line style), a
    method keeps its color across figures, points <= 0 are left out of a log axis (and
    counted in the legend), and the legend sits outside the axes."""
    pytest.importorskip("matplotlib")
    from crowdopt.experiments.report import line_plot, series_color

    fig = line_plot({"a": ([1, 2, 3], [0.0, 1.0, 2.0]), "b": ([1, 2, 3], [0.0, 1.0, 2.0])},
                    xlabel="x", ylabel="y", logy=True)
    ax = fig.axes[0]
    la, lb = ax.get_lines()[:2]
    assert la.get_marker() != lb.get_marker() and la.get_linestyle() != lb.get_linestyle()
    assert list(la.get_ydata()) == [1.0, 2.0]  # the zero is not drawn on the log axis
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[0].startswith("a (1 point <= 0")
    assert ax.get_legend().get_bbox_to_anchor().x0 > ax.get_window_extent().x1 - 1
    assert series_color("cbp") == series_color("cbp (paper)")
