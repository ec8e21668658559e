"""Statistics for comparing competitors: the Janssen et al. / CEC'22 rank-sum score and
scipy-based tests (Kruskal-Wallis, pairwise Mann-Whitney U with Holm, Friedman).

A *competitor* is whatever is compared: an (algorithm, implementation) pair, or an
algorithm at one population size (Janssen et al.'s case study 2).
"""

from .comparisons import friedman, holm, kruskal_by_function, pairwise_mannwhitney
from .ranksum import rank_sum_scores, trial_ranks

__all__ = ["rank_sum_scores", "trial_ranks", "kruskal_by_function", "pairwise_mannwhitney",
           "friedman", "holm"]
