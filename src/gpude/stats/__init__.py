"""Statistics for comparing competitors: the Janssen et al. / CEC'22 rank-sum score and
scipy-based tests (Kruskal-Wallis, pairwise Mann-Whitney U with Holm, Friedman).

A *competitor* is whatever is compared: an (algorithm, implementation) pair, or an
algorithm at one population size (Janssen et al.'s case study 2).

The names below load their modules on first use: importing a light submodule (e.g.
``gpude.stats.bootstrap``, which the workflow's report wiring reaches) does not import scipy.stats
(about a second of every Snakemake start).
"""

from importlib import import_module

_HOME = {"friedman": "comparisons", "holm": "comparisons", "kruskal_by_function": "comparisons",
         "pairwise_mannwhitney": "comparisons", "rank_sum_scores": "ranksum", "trial_ranks": "ranksum"}

__all__ = ["rank_sum_scores", "trial_ranks", "kruskal_by_function", "pairwise_mannwhitney",
           "friedman", "holm"]


def __getattr__(name):
    if name in _HOME:
        return getattr(import_module(f".{_HOME[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
