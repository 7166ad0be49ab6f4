"""Reports of `crowdopt reproduce`: DIR/report.md with tables, PNG plots, command and seeds."""

from __future__ import annotations

import math
import re
import shlex
import sys
import time
from pathlib import Path
from typing import Any


def _cell(v: Any, digits: int = 4) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if v != 0 and abs(v) < 10 ** -digits:
            return f"{v:.{max(digits - 2, 1)}e}"  # small times stay visible, not 0.0000
        return f"{v:.{digits}f}" if abs(v) < 1e6 else f"{v:.3e}"
    return str(v).replace("|", "\\|").replace("\n", " ")


def markdown_table(rows: list[dict], columns: list[str] | None = None, digits: int = 4) -> str:
    """Rows as a markdown table (numbers to `digits` significant digits)."""
    if not rows:
        return "_(no rows)_\n"
    columns = columns or list(rows[0])
    out = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    out += ["| " + " | ".join(_cell(r.get(c), digits) for c in columns) + " |" for r in rows]
    return "\n".join(out) + "\n"


class Report:
    """Collects sections; `write()` saves report.md (figures are saved as they are added)."""

    def __init__(self, out_dir: Path | str, title: str, *, command: str | None = None,
                 seeds: Any = None) -> None:
        self.dir = Path(out_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.title = title
        self.command = command or "crowdopt " + " ".join(shlex.quote(a) for a in sys.argv[1:])
        self.seeds = seeds
        self.parts: list[str] = []
        self.started = time.time()

    def text(self, md: str) -> None:
        """Append a markdown paragraph."""
        self.parts.append(md.rstrip() + "\n")

    def table(self, title: str, rows: list[dict], columns: list[str] | None = None,
              note: str = "", digits: int = 4) -> None:
        """Append a titled markdown table of `rows`."""
        self.parts.append(f"### {title}\n\n" + markdown_table(rows, columns, digits)
                          + (f"\n{note}\n" if note else ""))

    def figure(self, fig: Any, name: str, caption: str = "") -> Path:
        """Save a matplotlib figure as DIR/name.png and reference it."""
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "figure"
        path = self.dir / f"{name}.png"
        fig.savefig(path, dpi=110, bbox_inches="tight")
        try:
            import matplotlib.pyplot as plt

            plt.close(fig)
        except ImportError:  # pragma: no cover
            pass
        self.parts.append(f"![{caption or name}]({path.name})\n\n{caption}\n")
        return path

    def write(self) -> Path:
        """Write the report (report.md, with version and date) and return its path."""
        from ..version import __version__

        head = [f"# {self.title}\n",
                f"Made by: `{self.command}`  ",
                f"Seeds: {self.seeds}  ",
                f"crowdopt {__version__}, written {time.strftime('%Y-%m-%d %H:%M:%S')} "
                f"({time.time() - self.started:.1f} s after the report was opened)\n"]
        path = self.dir / "report.md"
        tmp = path.with_suffix(".md.tmp")  # never leave a half-written report
        tmp.write_text("\n".join(head) + "\n" + "\n".join(self.parts))
        tmp.replace(path)
        return path


def pyplot():
    """matplotlib.pyplot with the Agg backend, or a clear error naming the `plot` extra."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        from ..errors import InputError

        raise InputError("plots", "matplotlib (pip install 'crowdopt[plot]')", "not installed") from None
    return plt


MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
LINESTYLES = ("-", "--", "-.", ":")
_COLORS: dict[str, str] = {}  # one color per method for the whole report (paired figures)


def series_color(name: str) -> str:
    """The color of a method in every figure of a run: keyed by the name without a
    parenthesised or 'paper' qualifier, so 'CBP' and 'CBP (paper)' share it."""
    key = re.sub(r"\s*\(.*\)$", "", name).removeprefix("paper ").removesuffix(" paper").strip()
    if key not in _COLORS:
        palette = [f"C{k}" for k in range(10)]
        _COLORS[key] = palette[len(_COLORS) % len(palette)]
    return _COLORS[key]


def series_style(k: int, name: str) -> dict:
    """Series k's look: its method color, its own marker and line style (hollow markers,
    earlier series drawn on top), so a curve lying on another stays visible."""
    return {"color": series_color(name), "marker": MARKERS[k % len(MARKERS)],
            "linestyle": LINESTYLES[k % len(LINESTYLES)], "ms": 6 - min(k, 3),
            "mfc": "none", "mew": 1.2, "zorder": 10 - min(k, 8), "label": name}


def _positive(x: list, y: list, logx: bool, logy: bool) -> tuple[list, list, int]:
    """Points a log axis can show (x or y <= 0 dropped, counted for the legend)."""
    keep = [(a, b) for a, b in zip(x, y) if b is not None
            and (not logx or a > 0) and (not logy or b > 0)]
    return [a for a, _ in keep], [b for _, b in keep], len(x) - len(keep)


def line_plot(series: dict[str, tuple[list, list]], *, xlabel: str, ylabel: str, title: str = "",
              logx: bool = False, logy: bool = False, errors: dict[str, list] | None = None,
              reference: dict[str, tuple[list, list]] | None = None):
    """One figure of named (x, y) series (optional error bars; `reference` series dashed in
    their method's color, e.g. the paper's numbers). Every series has its own marker and line
    style and the legend sits outside the axes, so no curve or marker is hidden; on a log axis
    points <= 0 are left out and the legend says how many. Returns the figure for
    `Report.figure`."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.6, 4.2))
    for k, (name, (x, y)) in enumerate(series.items()):
        style = series_style(k, name)
        err = (errors or {}).get(name)
        if logx or logy:
            keep = [i for i, (a, b) in enumerate(zip(x, y)) if b is not None
                    and (not logx or a > 0) and (not logy or b > 0)]
            dropped = len(x) - len(keep)
            x, y = [x[i] for i in keep], [y[i] for i in keep]
            err = None if err is None else [err[i] for i in keep]
            if dropped:
                style["label"] = f"{name} ({dropped} point{'s' * (dropped > 1)} <= 0 not shown)"
        if err is not None and logy:  # keep the lower bar above 0 on a log axis
            err = [[min(float(e), 0.999 * float(v)) if v and v > 0 else 0.0
                    for e, v in zip(err, y)], list(err)]
        if err is not None:
            ax.errorbar(x, y, yerr=err, capsize=2, **style)
        else:
            ax.plot(x, y, **style)
    for name, (x, y) in (reference or {}).items():
        x, y, _ = _positive(list(x), list(y), logx, logy)
        ax.plot(x, y, label=name, linestyle="--", marker="x", ms=6, color=series_color(name),
                zorder=11)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    fig.tight_layout()
    return fig
