"""The papers the report reproduces, with their bibliographic data, and the other sources it cites.

Each paper groups the experiments whose names start with one of its prefixes (case study 1, case
study 2 and the side by side with the authors' code are one paper's); the report gives a paper's
sections under its heading, then the paper's one list of deviations, and cites it in the references.
Only what the repository's transcriptions (``paper/published/``) and docs say of a source is written
here: no DOI is given where none is recorded.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Paper:
    """One reproduced study.

    Parameters
    ----------
    key : str
        The reference label ([janssen2024]).
    prefixes : tuple of str
        The experiment names that belong to it start with one of these.
    heading : str
        The paper's heading in the report.
    reference : str
        The entry of the references (Markdown).
    """

    key: str
    prefixes: tuple[str, ...]
    heading: str
    reference: str

    def owns(self, experiment: str) -> bool:
        return experiment.startswith(self.prefixes)


#: the papers in the report's order (the order of :data:`gpude.report.document.STUDY_ORDER`)
PAPERS = (
    Paper("janssen2024", ("janssen", "side_by_side"),
          "Janssen, Pullan & Liew: GPU-based differential evolution, five implementation models [janssen2024]",
          "Janssen, Pullan & Liew, \"GPU Based Differential Evolution: New Insights and Comparative "
          "Study\", arXiv:2405.16551 (2024). Authors' code: DylanJanssen/GPU-Accelerated-Evolutionary-Optimisation "
          "at commit c2b3ef8."),
    Paper("qin2012", ("qin",),
          "Qin, Raimondo, Forbes & Ong: an improved CUDA-based DE [qin2012]",
          "Qin, Raimondo, Forbes & Ong, \"An Improved CUDA-Based Implementation of Differential "
          "Evolution on GPU\", Proc. GECCO 2012."),
    Paper("kromer", ("kromer",),
          "Krömer, Platoš, Snášel & Abraham: many-threaded DE on the GPU [kromer]",
          "Krömer, Platoš, Snášel & Abraham, \"Many-threaded differential evolution on the GPU\" (book "
          "chapter collecting the authors' GECCO 2011 and related results)."),
    Paper("nashed2012", ("nashed",),
          "Nashed, Ugolotti, Mesejo & Cagnoni: GPU DE, PSO and scatter search [nashed2012]",
          "Nashed, Ugolotti, Mesejo & Cagnoni, Proc. PPSN 2012 (HAL hal-01221645)."),
    Paper("lastra2015", ("lastra",),
          "Lastra, Molina & Benítez: GPU MA-SW-Chains at up to 3,000,000 dimensions [lastra2015]",
          "Lastra, Molina & Benítez, \"A high performance memetic algorithm for extremely "
          "high-dimensional problems\", Information Sciences (2015; online 22 Sep 2014)."),
    Paper("brest2017", ("cec2017_jso",),
          "jSO on CEC 2017: ours beside Brest's C++ [brest2017, cec2017]",
          "J. Brest, M. S. Maučec, B. Bošković, \"Single objective real-parameter optimization: algorithm jSO\", "
          "Proc. IEEE CEC 2017, 1311-1318. Code: Brest's release for the CEC 2017 competition (README dated May "
          "29, 2017), as copied in justinjk007/Pentagonal-tiling at commit 3c4ad79 (`docs/implementations.md`)."),
)

#: sources cited beside the papers: (label, entry)
OTHER_REFERENCES = (
    ("cec2017", "The CEC 2017 bound-constrained benchmark, the organisers' C++ code "
                "(P-N-Suganthan/CEC2017-BoundContrained, `CEC17_fast_pow-C++.zip`; `docs/functions.md`)."),
    ("tanabe2014", "R. Tanabe, A. Fukunaga, \"Improving the search performance of SHADE using linear population "
                   "size reduction\", Proc. IEEE CEC 2014, 1658-1665 (L-SHADE, which jSO extends)."),
)


def paper_of(experiment: str) -> Paper | None:
    """The paper an experiment belongs to (None: an experiment of no paper, e.g. this machine's run)."""
    return next((p for p in PAPERS if p.owns(experiment)), None)


def references() -> str:
    """The references section: the papers, then the other sources."""
    entries = [(p.key, p.reference) for p in PAPERS] + list(OTHER_REFERENCES)
    return "## References\n\n" + "".join(f"* [{key}] {text}\n" for key, text in entries)
