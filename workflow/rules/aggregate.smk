# One table of all trials of the experiment, and the statistics over it.

rule merge_trials:
    input:
        trials=batch_files(".csv"),
        traces=batch_files(".npz"),
    output:
        trials="results/{experiment}/trials.csv",
        traces="results/{experiment}/traces.npz",
    log:
        "logs/{experiment}/merge_trials.log",
    # concatenating CSVs: on a cluster, not worth a job of its own (and a status-check cycle)
    localrule: True
    conda:
        "../envs/gpude.yaml"
    shell:
        "python3 -m gpude merge --out {output.trials} --traces-out {output.traces} {input.trials} > {log} 2>&1"


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
        "python3 -m gpude stats --trials {input} --out-dir results/{wildcards.experiment}/stats > {log} 2>&1"


# A scaling set's batches (several experiments') as one table; their traces stay beside each batch
if SCALING_FILE:

    rule merge_scaling_set:
        input:
            [b.path + ext for b in SCALING_BATCHES for ext in (".csv", ".npz")],
        output:
            SCALING_TARGET,
        log:
            f"logs/gpu_scaling/{SCALING_SET['name']}/merge_trials.log",
        localrule: True
        conda:
            "../envs/gpude.yaml"
        params:
            trials=[b.path + ".csv" for b in SCALING_BATCHES],
        shell:
            "python3 -m gpude merge --out {output} {params.trials} > {log} 2>&1"
