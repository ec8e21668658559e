# The expensive step: all trials of one cell (or one chunk of it) in one process, so JIT
# compilation, the CUDA context and data uploads are paid once per job.

rule run_batch:
    input:
        instance_data,
    output:
        trials=f"{BATCH}.csv",
        traces=f"{BATCH}.npz",
    log:
        "logs/{experiment}/run_batch/{algorithm}/{implementation}/{function}/d{dim}/np{popsize}/{dtype}/chunk{chunk}.log",
    wildcard_constraints:
        implementation=implementations_on("cpu"),
    params:
        args=run_params,
    threads: batch_threads
    resources:
        gpu=gpus_taken,
        timing_slot=timing_slot,
    conda:
        "../envs/gpude.yaml"
    shell:
        "python3 -m gpude run --algorithm {wildcards.algorithm} --implementation {wildcards.implementation} "
        "--function {wildcards.function} --dim {wildcards.dim} --popsize {wildcards.popsize} "
        "--dtype {wildcards.dtype} {params.args} "
        "--out-csv {output.trials} --out-traces {output.traces} > {log} 2>&1"


use rule run_batch as run_batch_gpu with:
    wildcard_constraints:
        implementation=implementations_on("gpu"),
    threads: 1
    resources:
        gpu=gpus_taken,
        timing_slot=timing_slot,


# LOP and ETC instance files (not in the repository): downloaded from their public repositories and
# commits, or copied from `instance_data_from`, and checked against data/<set>/SHA256SUMS.
rule fetch_instance_data:
    output:
        f"{INSTANCE_ROOT}/{{dataset}}/.verified",
    log:
        "logs/fetch_instance_data/{dataset}.log",
    wildcard_constraints:
        dataset="lolib|etc",
    params:
        source=lambda wildcards: (f"--from {shlex.quote(str(Path(EXPERIMENT['instance_data_from']) / wildcards.dataset))}"
                                  if EXPERIMENT.get("instance_data_from") else ""),
    localrule: True
    conda:
        "../envs/gpude.yaml"
    shell:
        "python3 -m gpude fetch-data {wildcards.dataset} {params.source} > {log} 2>&1 && date -u > {output}"
