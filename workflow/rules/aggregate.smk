# One table of all trials of the experiment, and the statistics over it.

rule merge_trials:
    input:
        batch_files(".csv"),
    output:
        "results/{experiment}/trials.csv",
    log:
        "logs/{experiment}/merge_trials.log",
    conda:
        "../envs/gpude.yaml"
    shell:
        "gpude merge --out {output} {input} > {log} 2>&1"


rule statistics:
    input:
        "results/{experiment}/trials.csv",
    output:
        scores_time="results/{experiment}/stats/rank_sum_time.csv",
        scores_fes="results/{experiment}/stats/rank_sum_fes.csv",
        kruskal="results/{experiment}/stats/kruskal.csv",
        pairwise="results/{experiment}/stats/pairwise_mannwhitney.csv",
    log:
        "logs/{experiment}/statistics.log",
    conda:
        "../envs/gpude.yaml"
    shell:
        "gpude stats --trials {input} --out-dir results/{wildcards.experiment}/stats > {log} 2>&1"
