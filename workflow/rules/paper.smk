# The studies' tables and figures, regenerated from the merged trials (no GPU needed).


rule paper_timing:
    input:
        "results/{experiment}/trials.csv",
    output:
        table=multiext("paper/{experiment}/table_time", ".csv", ".md", ".tex"),
        figure=multiext("paper/{experiment}/figure_time", ".png", ".pdf"),
    log:
        "logs/{experiment}/paper_timing.log",
    params:
        published=published_args,
    conda:
        "../envs/gpude.yaml"
    shell:
        "gpude paper --trials {input} --out-dir paper/{wildcards.experiment} {params.published} > {log} 2>&1"
