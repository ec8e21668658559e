# The studies' tables and figures, regenerated from the merged trials (no GPU needed).


rule paper_timing:
    input:
        trials="results/{experiment}/trials.csv",
        traces=batch_files(".npz"),
    output:
        table=multiext("paper/{experiment}/table_time", ".csv", ".md", ".tex"),
        figure=multiext("paper/{experiment}/figure_time", ".png", ".pdf"),
        convergence=multiext("paper/{experiment}/convergence", ".png", ".pdf"),
        ecdf=multiext("paper/{experiment}/ecdf", ".png", ".pdf"),
    log:
        "logs/{experiment}/paper_timing.log",
    params:
        published=published_args,
    conda:
        "../envs/gpude.yaml"
    shell:
        "python3 -m gpude paper --trials {input.trials} --out-dir paper/{wildcards.experiment} {params.published} > {log} 2>&1"
