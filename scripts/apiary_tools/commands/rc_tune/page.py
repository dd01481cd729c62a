"""rc-tune's figures and page: the chosen trial's pools' levels, prices and low-RC shares
over its blocks, every trial's levels by round, and rc-tune.html with the summary, the table
of trials and the figures (pages.Page: one self-contained file)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ... import figures
from ...common import markdown_table
from ...outputs import write_text
from ...pages import Page
from ...rc_search import Search, Tuning
from ...rc_trials import REFERENCE_OPS, Analysis

PAGE_NAME = "rc-tune.html"


def _chosen(tuning: Tuning, search: Search) -> Analysis:
    assert search.chosen is not None
    return tuning.analysis(search.chosen)


def _transient(ax, a: Analysis) -> None:
    if a.kept:
        ax.axvspan(a.blocks[0], a.blocks[a.kept], color="0.9", label="transient")


def levels_figure(tuning: Tuning, search: Search, path: Path) -> Path:
    a = _chosen(tuning, search)
    fig, axes = figures.panels(len(a.names), "Pool level (pool / equilibrium) of the chosen trial")
    for i, ax in enumerate(axes):
        _transient(ax, a)
        ax.plot(a.blocks, a.levels[:, i], marker=".", markersize=3, linewidth=0.8)
        ax.axhline(tuning.args.target_level, color="tab:red", linewidth=0.8, linestyle="--", label="target")
        ax.set_title(f"{a.names[i]}: factor {a.resources[i]['budget_scale_factor']}, {a.verdicts[i]}")
        ax.set_xlabel("block")
        ax.set_ylabel("level")
        ax.legend(fontsize="small")
    return figures.save(fig, path)


def prices_figure(tuning: Tuning, search: Search, path: Path) -> Path:
    a = _chosen(tuning, search)
    fig, axes = figures.panels(len(a.names), "Price per unit of each resource, the chosen trial")
    for i, ax in enumerate(axes):
        _transient(ax, a)
        ax.plot(a.blocks, a.prices[:, i], linewidth=0.8)
        ax.set_title(a.names[i])
        ax.set_xlabel("block")
        ax.set_ylabel("mana per unit")
    return figures.save(fig, path)


def low_rc_figure(tuning: Tuning, search: Search, path: Path) -> Path:
    a = _chosen(tuning, search)
    fig, axes = figures.panels(1, "Payers unable to afford a reference operation, the chosen trial", width=8)
    ax = axes[0]
    _transient(ax, a)
    for j, op in enumerate(REFERENCE_OPS):
        ax.plot(a.blocks, a.low_shares[:, j] * 100, linewidth=0.8, label=op)
    ax.axhline(tuning.args.low_rc_bound * 100, color="tab:red", linewidth=0.8, linestyle="--", label="bound")
    ax.set_xlabel("block")
    ax.set_ylabel("% of payers")
    ax.legend(fontsize="small")
    return figures.save(fig, path)


def rounds_figure(tuning: Tuning, search: Search, path: Path) -> Path:
    """Every trial's pool levels, one panel per resource, and its low-RC share, coloured by round."""
    names = search.probe.names
    rounds = max(f.trial.round for f in tuning.trials) or 1
    fig, axes = figures.panels(len(names) + 1, f"Every trial, by round (black: chosen; colour: round 0 to {rounds})")
    colours = figures.plt.get_cmap("viridis")
    for f in tuning.trials:
        a = tuning.analysis(f)
        chosen = search.chosen is not None and f.trial.key == search.chosen.trial.key
        style = {"linewidth": 2 if chosen else 0.7, "alpha": 1 if chosen else 0.6,
                 "color": "black" if chosen else colours(f.trial.round / rounds)}
        for i in range(len(names)):
            axes[i].plot(a.blocks, a.levels[:, i], **style)
        axes[-1].plot(a.blocks, a.low_shares.max(axis=1) * 100, **style)
    for i, ax in enumerate(axes[:-1]):
        ax.axhline(tuning.args.target_level, color="tab:red", linewidth=0.8, linestyle="--")
        ax.set_title(f"{names[i]}: pool level")
        ax.set_ylabel("level")
    axes[-1].axhline(tuning.args.low_rc_bound * 100, color="tab:red", linewidth=0.8, linestyle="--")
    axes[-1].set_title("payers unable to afford a reference operation")
    axes[-1].set_ylabel("% of payers")
    for ax in axes:
        ax.set_xlabel("block")
    return figures.save(fig, path)


FIGURES: tuple[tuple[str, Callable[[Any, Any, Path], Path], str], ...] = (
    ("levels.png", levels_figure, "Pool levels of the chosen trial"),
    ("prices.png", prices_figure, "Prices of the chosen trial"),
    ("low-rc.png", low_rc_figure, "Low-RC shares of the chosen trial"),
    ("rounds.png", rounds_figure, "Pool levels and low-RC shares of every trial, by round"))


def write_figures(tuning: Tuning, search: Search) -> list[Path]:
    return [draw(tuning, search, tuning.out / name) for name, draw, _ in FIGURES]


def trials_markdown(tuning: Tuning) -> str:
    names = tuning.names
    header = ["round", "phase", "key"] + [f"{n} factor" for n in names] + [f"{n} level" for n in names] + \
        ["low-RC share", "verdict"]
    rows = []
    for row in sorted(tuning.rows.values(), key=lambda r: (r["round"], r["index"])):
        rows.append([str(row["round"]), row["phase"], row["key"]] +
                    [str(row[f"{n}.budget_scale_factor"]) + (f" / {row[f'{n}.price_scale_factor']}") for n in names] +
                    [f"{row[f'{n}.level']:.3f}" for n in names] + [f"{row['low_rc_share']:.2%}", row["verdict"]])
    return markdown_table(header, rows)


def write_page(tuning: Tuning, search: Search, summary: str) -> Path:
    args = tuning.args
    page = Page(f"RC tuning at scale {args.scale}", f"{len(tuning.rows)} trials of {args.blocks:,} blocks",
                tool="rc-tune")
    page.markdown(summary)
    for _, draw, caption in FIGURES:
        page.figure(functools.partial(draw, tuning, search), caption)
    page.heading("Trials")
    page.markdown("Factors: budget_scale_factor / price_scale_factor; level: at the last archive.\n\n" +
                  trials_markdown(tuning))
    path = tuning.out / PAGE_NAME
    write_text(path, page.render())
    return path


