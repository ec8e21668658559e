"""A grid of small panels, one per function, for the figures of every study (convergence, ECDF,
error vs time).

The layout is fixed in inches instead of measured by ``tight_layout``: with a hundred panels (a
LOP experiment has 99 instances) matplotlib spent most of a figure's time measuring every tick
label three times over (tight_layout, then the automatic title and axis-label positions at each
of the PNG and PDF draws). Fixed margins, title and label positions give the same picture at a
fraction of the cost, and leave room for the figure's own title above the first row.
"""

from __future__ import annotations

import math

# one panel's cell, in inches: the axes plus room on its left for the y tick labels and label,
# below for the x tick labels and label, above for the panel's title
LEFT, RIGHT, BELOW, ABOVE = 0.62, 0.12, 0.48, 0.28
SUPTITLE = 0.5  # above the first row: the figure's title (three lines of 9 pt)


def panel_grid(n: int, width: float = 3.2, height: float = 2.6, most_columns: int = 5):
    """A figure with ``n`` panels in rows of at most ``most_columns``; returns (fig, axes), axes a
    2-D array whose panels past ``n`` are switched off."""
    import matplotlib.pyplot as plt

    cols = max(1, min(most_columns, n))
    rows = max(1, math.ceil(n / cols))
    fig_w, fig_h = width * cols, height * rows + SUPTITLE
    fig, axes = plt.subplots(rows, cols, figsize=(fig_w, fig_h), squeeze=False)
    axes_w, axes_h = width - LEFT - RIGHT, height - BELOW - ABOVE
    fig.subplots_adjust(left=LEFT / fig_w, right=1 - RIGHT / fig_w, bottom=BELOW / fig_h,
                        top=1 - (SUPTITLE + ABOVE) / fig_h,
                        wspace=(LEFT + RIGHT) / axes_w, hspace=(BELOW + ABOVE) / axes_h)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    return fig, axes


def label_panel(ax, title: str, xlabel: str, ylabel: str, fontsize: int = 7) -> None:
    """Title and axis labels at fixed places (no automatic placement: see the module docstring)."""
    box, (fig_w, fig_h) = ax.get_position(), ax.figure.get_size_inches()
    axes_w, axes_h = box.width * fig_w, box.height * fig_h  # inches
    ax.set_title(title, fontsize=fontsize + 2, y=1.0, pad=3)
    ax.set_xlabel(xlabel, fontsize=fontsize)
    ax.set_ylabel(ylabel, fontsize=fontsize)
    ax.xaxis.set_label_coords(0.5, -0.3 / axes_h)
    ax.yaxis.set_label_coords(-0.5 / axes_w, 0.5)
    ax.tick_params(labelsize=fontsize)


def title_figure(fig, text: str, fontsize: int = 9) -> None:
    """The figure's title, in the band panel_grid leaves above the first row (wrapped to its width)."""
    fig.suptitle(wrap(text, int(fig.get_size_inches()[0] * 14 * 9 / fontsize)), fontsize=fontsize,
                 y=1 - 0.05 / fig.get_size_inches()[1], va="top")


def wrap(text: str, width: int = 110) -> str:
    """A figure's title broken into lines of at most ``width`` characters (matplotlib does not wrap)."""
    import textwrap

    return "\n".join(textwrap.wrap(text, width))
