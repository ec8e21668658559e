# The expensive step: all trials of one cell (or one chunk of it) in one process, so JIT
# compilation, the CUDA context and data uploads are paid once per job.

rule run_batch:
    input:
        instance_data,
        warmup_marker,
    output:
        trials=f"{BATCH}.csv",
        traces=f"{BATCH}.npz",
    log:
        batch_log("run_batch"),
    wildcard_constraints:
        implementation=implementations_on("cpu"),
    params:
        args=run_params,
    threads: batch_threads
    resources:
        gpu=gpus_taken,
        timing_slot=timing_slot,
        cpu_lane=lane_taken,
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


# What a batch compiles, compiled before it, outside the timed window (gpude.study.batch_inputs): in
# parallel on the host's cores, and before the timed batches (priority). One timing slot, as a
# shared batch takes: never beside a batch timed exclusive (nor, on a one-GPU host, beside a timed
# GPU batch), whose timing it would disturb; no `gpu`: a GPU warm-up only compiles and runs a few
# launches (its CUDA context on the default device) and takes no lease.
rule warmup:
    input:
        instance_data,
    output:
        WARMUP,
    log:
        batch_log("warmup"),
    params:
        args=configuration_args,
    threads: 1
    resources:
        gpu=0,
        timing_slot=1,
    priority: 1
    conda:
        "../envs/gpude.yaml"
    shell:
        "python3 -m gpude warmup --algorithm {wildcards.algorithm} --implementation {wildcards.implementation} "
        "--function {wildcards.function} --dim {wildcards.dim} --popsize {wildcards.popsize} "
        "--dtype {wildcards.dtype} {params.args} --out {output} > {log} 2>&1"


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
        source=lambda wildcards: batch_inputs.fetch_source_args(EXPERIMENT.get("instance_data_from"),
                                                                wildcards.dataset),
    localrule: True
    conda:
        "../envs/gpude.yaml"
    shell:
        "python3 -m gpude fetch-data {wildcards.dataset} {params.source} > {log} 2>&1 && date -u > {output}"
