"""The panel grid of the per-function figures: fixed margins instead of tight_layout, so the layout
must keep every label clear of its neighbours by itself."""

import numpy as np

from gpude.report.panels import label_panel, panel_grid, title_figure


def test_panel_grid_keeps_labels_clear_of_the_neighbouring_panels():
    import matplotlib

    matplotlib.use("Agg")
    fig, axes = panel_grid(7)
    assert axes.shape == (2, 5) and [ax.axison for ax in axes.flat] == [True] * 7 + [False] * 3
    for k, ax in enumerate(axes.flat[:7]):
        ax.plot([1, 1e7], [1e-12, 1e10])  # wide log axes: the longest tick labels
        ax.set_xscale("log")
        ax.set_yscale("log")
        label_panel(ax, f"F{k:02d}/d30", "function evaluations", "best error")
    title_figure(fig, "median best error vs FEs")
    renderer = fig.canvas.get_renderer()
    fig.draw(renderer)
    box = lambda artist: artist.get_window_extent(renderer)  # noqa: E731
    for row in range(2):
        for col in range(5):
            ax = axes[row, col]
            if not ax.axison:
                continue
            left = [ax.yaxis.label, *ax.get_yticklabels()]
            if col:  # the y label and tick labels stay right of the panel to the left
                assert min(box(t).x0 for t in left) > box(axes[row, col - 1]).x1
            else:
                assert min(box(t).x0 for t in left) >= 0
            below = [ax.xaxis.label, *ax.get_xticklabels()]
            if row == 0 and axes[1, col].axison:  # the x label stays above the next row's title
                assert min(box(t).y0 for t in below) > box(axes[1, col].title).y1
            assert min(box(t).y0 for t in below) >= 0
            assert box(ax.title).y0 >= box(ax).y1  # the title above its own panel
    assert box(fig._suptitle).y0 > max(box(ax.title).y1 for ax in axes[0])
    assert box(fig._suptitle).y1 <= fig.bbox.y1
    matplotlib.pyplot.close(fig)


def test_one_panel_is_one_cell_wide():
    import matplotlib.pyplot as plt

    fig, axes = panel_grid(1)
    assert axes.shape == (1, 1) and np.isclose(fig.get_size_inches()[0], 3.2)
    plt.close(fig)
