# The studies' tables, figures and statistics, and paper/REPORT.md (no GPU needed): made from the
# committed reference results of every machine (results/reference/<machine>/<experiment>/) plus
# the local run of the configured experiment.


# What `gpude paper` writes for every experiment, and the wall-time outputs it writes only for the
# experiments whose report section wants them (WALL_TIME_EXPERIMENTS, common.smk): a study with a
# time budget (Nashed et al., Kromer et al.) gets no wall-time tables, which say nothing there.
PAPER_OUTPUTS = dict(
    errors="paper/{experiment}/table_error.csv",
    agreement="paper/{experiment}/table_agreement.csv",
    ranks="paper/{experiment}/stats/ranks_time.csv",
    scores=report("paper/{experiment}/stats/rank_sum_time.csv", caption="../report/rank_sum.rst",
                  category="Tables", subcategory="{experiment}"),
)
# The figures of every trial, a job of their own: drawn for the experiments whose report section shows
# them (FIGURE_EXPERIMENTS, common.smk), and for any other on request (`snakemake paper/qin/ecdf.png`)
FIGURE_OUTPUTS = dict(
    convergence=report("paper/{experiment}/convergence.png", caption="../report/convergence.rst",
                       category="Figures", subcategory="{experiment}"),
    **prints("convergence", "paper/{experiment}/convergence"),
    convergence_time=report("paper/{experiment}/convergence_time.png", caption="../report/convergence_time.rst",
                            category="Figures", subcategory="{experiment}"),
    **prints("convergence_time", "paper/{experiment}/convergence_time"),
    ecdf=report("paper/{experiment}/ecdf.png", caption="../report/ecdf.rst", category="Figures",
                subcategory="{experiment}"),
    **prints("ecdf", "paper/{experiment}/ecdf"),
    scatter=report("paper/{experiment}/error_vs_time.png", caption="../report/error_vs_time.rst",
                   category="Figures", subcategory="{experiment}"),
    **prints("scatter", "paper/{experiment}/error_vs_time"),
)
WALL_TIME_OUTPUTS = dict(
    table=report("paper/{experiment}/table_time.md", caption="../report/table_time.rst", category="Tables",
                 subcategory="{experiment}"),
    table_csv="paper/{experiment}/table_time.csv",
    table_tex="paper/{experiment}/table_time.tex",
    figure=report("paper/{experiment}/figure_time.png", caption="../report/figure_time.rst",
                  category="Figures", subcategory="{experiment}"),
    **prints("figure", "paper/{experiment}/figure_time"),
)


rule paper_tables:
    input:
        trials=paper_sources,
        traces=lambda wildcards: [beside(p, "traces.npz") for p in paper_sources(wildcards)],
        presentation=presentation_files,
    output:
        **WALL_TIME_OUTPUTS,
        **PAPER_OUTPUTS,
    wildcard_constraints:
        experiment=one_of(WALL_TIME_EXPERIMENTS),
    log:
        "logs/{experiment}/paper_tables.log",
    # a timing slot, as a warm-up takes: never beside a batch timed alone on the host, whose time a
    # figure drawn on the next core would stretch (the reference studies' tables are made while the
    # warm-ups compile, or between the timed batches)
    resources:
        timing_slot=1,
    params:
        trials=lambda wildcards, input: " ".join(f"--trials {p}" for p in input.trials),
        published=published_args,
        figures="none",  # drawn by paper_figures
    conda:
        "../envs/gpude.yaml"
    shell:
        "python3 -m gpude paper {params.trials} --out-dir paper/{wildcards.experiment} {params.published} "
        f"--figures {{params.figures}} --figure-formats {','.join(FIGURE_FORMATS)} "
        "> {log} 2>&1"


# the same for an experiment whose report section leaves the wall-time outputs out
use rule paper_tables as paper_tables_time_budget with:
    output:
        **PAPER_OUTPUTS,
    wildcard_constraints:
        experiment=one_of(set(EXPERIMENT_FILES) - set(WALL_TIME_EXPERIMENTS)),


# The figures of every trial of an experiment (FIGURE_OUTPUTS), from the same trials as its tables
use rule paper_tables as paper_figures with:
    output:
        **FIGURE_OUTPUTS,
    wildcard_constraints:
        experiment=one_of(EXPERIMENT_FILES),
    log:
        "logs/{experiment}/paper_figures.log",
    params:
        figures="only",


# Runs per hour against the number of GPUs: every committed scaling run, and the papers' GPU
# references regenerated on 1, 2, 4, 8 GPUs, projected from their trial times (GPU_SCALING_RUNS,
# PROJECTED_EXPERIMENTS: common.smk). The report asks for it only where a scaling run is committed.
rule paper_gpu_scaling:
    input:
        rows=[f"{d}/rows.csv" for d in GPU_SCALING_RUNS],
        batches=[f"{d}/batches.csv" for d in GPU_SCALING_RUNS],
        references=[t for e in PROJECTED_EXPERIMENTS for t in reference_tables(e)],
        experiments=[EXPERIMENT_FILES[e] for e in PROJECTED_EXPERIMENTS],
    output:
        table="paper/gpu_scaling/table_scaling.csv",
        projection="paper/gpu_scaling/projection.csv",
        figure=report("paper/gpu_scaling/runs_per_hour.png", caption="../report/runs_per_hour.rst",
                      category="Figures", subcategory="gpu_scaling"),
        **prints("figure", "paper/gpu_scaling/runs_per_hour"),
    log:
        "logs/paper_gpu_scaling.log",
    resources:
        timing_slot=1,
    conda:
        "../envs/gpude.yaml"
    shell:
        (f"python3 -m gpude paper-gpu-scaling --scaling-dir {GPU_SCALING_DIR} --out-dir paper/gpu_scaling "
         f"--figure-formats {','.join(FIGURE_FORMATS)} > {{log}} 2>&1")


rule report:
    input:
        tables=expand("paper/{experiment}/table_error.csv", experiment=REPORTED),
        # the figures the report shows (the other experiments' are drawn on request)
        figures=expand("paper/{experiment}/{figure}.png", experiment=FIGURE_EXPERIMENTS, figure=FIGURES),
        experiments=[EXPERIMENT_FILES[e] for e in REPORTED],
        gpu_scaling=["paper/gpu_scaling/table_scaling.csv"] if GPU_SCALING_RUNS else [],
    output:
        body=report("paper/REPORT.md", caption="../report/report_md.rst", category="Report"),
        # tables per cell, statistics and provenance: written by the same command beside the body
        appendix="paper/REPORT_appendix.md",
    log:
        "logs/report.log",
    params:
        sections=" ".join(f"--section {EXPERIMENT_FILES[e]}=paper/{e}" for e in REPORTED),
        gpu_scaling="--gpu-scaling paper/gpu_scaling" if GPU_SCALING_RUNS else "",
    conda:
        "../envs/gpude.yaml"
    shell:
        "python3 -m gpude report {params.sections} {params.gpu_scaling} --out {output.body} > {log} 2>&1"
