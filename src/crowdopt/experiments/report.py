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
        self.parts.append(md.rstrip() + "\n")

    def table(self, title: str, rows: list[dict], columns: list[str] | None = None,
              note: str = "", digits: int = 4) -> None:
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
        from .. import __version__

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


def line_plot(series: dict[str, tuple[list, list]], *, xlabel: str, ylabel: str, title: str = "",
              logx: bool = False, logy: bool = False, errors: dict[str, list] | None = None,
              reference: dict[str, tuple[list, list]] | None = None):
    """One figure of named (x, y) series (optional error bars; `reference` series dashed,
    e.g. the paper's numbers). Returns the matplotlib figure for `Report.figure`."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for name, (x, y) in series.items():
        err = (errors or {}).get(name)
        if err is not None and logy:  # keep the lower bar above 0 on a log axis
            err = [[min(float(e), 0.999 * float(v)) if v and v > 0 else 0.0
                    for e, v in zip(err, y)], list(err)]
        if err is not None:
            ax.errorbar(x, y, yerr=err, label=name, marker="o", ms=3, capsize=2)
        else:
            ax.plot(x, y, label=name, marker="o", ms=3)
    for name, (x, y) in (reference or {}).items():
        ax.plot(x, y, label=name, linestyle="--", marker="x", ms=4)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
