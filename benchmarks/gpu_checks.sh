#!/usr/bin/env bash
# The GPU host's checks and measurements as stages of one command each: the whole suite on the GPU,
# the timings and the experiments that need a GPU (results/campaigns/README.md). Each stage fits one 9-minute
# device call, writes into $OUT/<stage>/ and packs it as $OUT/<stage>.tar.gz (only 8 files come back
# from a call); a step that fails is logged and the stage goes on with the next.
# Usage, on the GPU host from the repository root, after
#   source .whl-slim/activate.sh .whl-slim >/dev/null && export NUMBA_ENABLE_CUDASIM=0 GPUDE_GIT_COMMIT=<sha>
#   benchmarks/gpu_checks.sh STAGE [STAGE ...]
# Stages: tests, fullsuite, gpu_scaling, verify, speed, cpu_speed, side_by_side, block_side_by_side, naive_floor,
# main_job, scaling_curves, cec2017_jso, jso_brest, lastra_profile, block_profile, block_profile_export, rotation_prototype,
# block_variants, resident_variants, sync_prototype, server_prime, jso_block_speed, jso_brest_host, kromer_fe_rate, kromer_eval_speed, cs2_probe, master_slave_wait (see each below; the masw floor's stages, done: `git show e4573c2:benchmarks/gpu_checks.sh`).
# Instance files (speed) come from .carry/kromer_instances.tgz, a .tgz of <set>/<file> (etc/, lolib/) of the LOP and ETC
# instances (`gpude fetch-data lolib|etc` fetches them; `python -m gpude.campaign pack` packs an experiment's),
# the authors' code (side_by_side) from .authors/GPU-Accelerated-Evolutionary-Optimisation (`python -m
# gpude.implementations.janssen pack`; carry it: it is git-ignored).
# Locally, after the call: tar xzf <files_at>/<stage>.tar.gz.
set -uo pipefail
: "${OUT:?OUT must name the folder whose files come back}"
device=$(python3 -c "from gpude.core import provenance; from numba import cuda; print(provenance.slug(provenance.gpu()['gpu']))" 2>/dev/null || echo unknown)
case "$device" in *h100*) device=nvidia-h100 ;; *h200*) device=nvidia-h200 ;; esac
# the host writes no bytecode: compiled once here (benchmarks/compile_bytecode.sh says why)
bash benchmarks/compile_bytecode.sh

step() {  # step NAME SECONDS COMMAND...: run, log, never stop the stage
  local name=$1 limit=$2; shift 2
  echo "== $name (limit ${limit}s): $*" | tee -a "$dir/steps.log"
  local t0=$SECONDS
  timeout "$limit" "$@" > "$dir/$name.log" 2>&1
  local rc=$?
  echo "== $name: exit $rc after $((SECONDS - t0)) s" | tee -a "$dir/steps.log"
  tail -5 "$dir/$name.log"
}

ncu_export() {  # ncu_export REPORT.ncu-rep: its details page as REPORT.csv, raw as _raw.csv, source as _sass.csv
  local rep=$1 base=${1%.ncu-rep}
  "$ncu" --import "$rep" --csv --page details > "$base.csv" 2>&1
  "$ncu" --import "$rep" --csv --page raw --print-metric-instances values > "${base}_raw.csv" 2>&1
  "$ncu" --import "$rep" --csv --page source --print-source cuda,sass > "${base}_sass.csv" 2>&1
}

instances() {
  if [ ! -d /tmp/inst ]; then mkdir -p /tmp/inst && tar xzf .carry/kromer_instances.tgz -C /tmp/inst; fi
  export GPUDE_INSTANCE_DATA=/tmp/inst
}

keep() {  # keep NAME...: results/NAME and logs/NAME go into the stage's archive
  mkdir -p "$dir/results" "$dir/logs"
  for name in "$@"; do cp -r "results/$name" "$dir/results/" 2>/dev/null; cp -r "logs/$name" "$dir/logs/" 2>/dev/null; done
}

for stage in "$@"; do
  dir=$OUT/$stage
  mkdir -p "$dir"
  case "$stage" in
    tests)  # the GPU paths the simulator cannot take: graphs captured, pre-bound launches, cooperative kernels
      step pytest 560 python3 -m pytest -q -n 4 -p no:cacheprovider -rs \
        tests/test_generation_graph.py tests/test_time_budget.py tests/test_trials_per_launch.py \
        tests/test_problem_runs.py tests/test_resident.py tests/test_masw_gpu.py tests/test_benchmark_kromer_eval_speed.py ;;
    speed)  # per-generation and per-evaluation times, start-up from the disk cache, masw batches
      instances
      step generation_time 200 python3 benchmarks/generation_time.py --generations 1000 \
        --out "$dir/generation_time_$device.csv"
      step kromer_eval_speed 120 python3 benchmarks/kromer_eval_speed.py --devices gpu,gpu_prebound \
        --out "$dir/kromer_eval_speed_$device.csv"
      step startup 120 python3 benchmarks/startup.py --device gpu --out "$dir/startup_gpu.csv"
      step masw_perf 120 python3 benchmarks/masw_perf.py --functions L01 --dims 100000,1000000 --cycles 4 \
        --trials-per-launch 10 --out "$dir/masw_perf" ;;
    kromer_eval_speed)  # Kromer et al.'s evaluation speed (Figs. 5 and 7) on every evaluator (CPU, the host's
      # cores, GPU, pre-bound launch), every repeat kept for the REPORT's intervals (~2 min); then here: point
      # config/experiments/kromer_etc.yaml's `eval_speed:` at the new results/benchmarks/kromer_eval_speed_<device>.csv
      instances
      step kromer_eval_speed 300 python3 benchmarks/kromer_eval_speed.py --out "$dir/kromer_eval_speed_$device.csv" ;;
    cs2_probe)  # case study 2's lone trials (issue 65): trials 0-2 of every competitor on F01 and F05, one trial a
      # launch, as the workflow's command lines make them (the campaign, an empty reference), then one CSV: the
      # report's `alone` input beside the batched reference: its rows one a launch only (~5 min; the campaign
      # also makes each cell's other 27 trials, batched, ~1 min of it: its --trials never lowers the experiment's n)
      mkdir -p /tmp/cs2_empty
      step cs2_probe 480 python3 -m gpude.campaign run --experiment config/experiments/janssen_cs2.yaml \
        --reference /tmp/cs2_empty --functions F01,F05 --alone 3 --per-launch 30 \
        --default-run-s 10 --max-seconds 450 --out "$dir/camp"
      python3 -c "import glob, json, pandas as pd; d = pd.concat([pd.read_csv(f) for f in sorted(glob.glob('$dir/camp/**/t*.csv', recursive=True))]); d[d.params.map(lambda p: json.loads(p).get('trials_per_launch', 1) == 1)].to_csv('$dir/janssen_cs2_probe_${device}.csv', index=False, float_format='%.17g')" ;;
    kromer_fe_rate)  # FEs per second of Krömer's three columns, three runs of 3 s a cell one after another
      # (benchmarks/kromer_fe_rate.py; the ratios' intervals need the three; ~4 minutes)
      instances
      step kromer_fe_rate 420 python3 benchmarks/kromer_fe_rate.py --seconds 3 --repeats 3 \
        --out "$dir/kromer_fe_rate_$device.csv" ;;
    cpu_speed)  # master_slave's workers against sequential, on the host's 16 cores
      instances
      step master_slave_speed 540 python3 benchmarks/master_slave_speed.py --machine "$device" \
        --out "$dir/master_slave_speed_$device.csv" --seconds 1 --repeats 3 ;;
    side_by_side)  # config/experiments/side_by_side.yaml's batches (the authors' CUDA programs as program
      # specs, built by nvcc from the carried .authors/ tree, beside ours), interleaved, without Snakemake; about
      # 20 minutes of one H100 in all. Resumable: carry the last call's results/side_by_side back (unpacked from its
      # tarball) and run the stage again until steps.log says exit 0; then here
      # `snakemake --cores all --configfile config/experiments/side_by_side.yaml --config gpu=yes` merges the
      # batches and writes the REPORT's side-by-side table
      step side_by_side ${SBS_LIMIT:-560} python3 -m gpude.campaign interleave \
        --experiment config/experiments/side_by_side.yaml --max-seconds ${SBS_MAX_SECONDS:-480}
      keep side_by_side ;;
    scaling_curves)  # the scaling curves through the workflow (config/experiments/scaling_curves.yaml
      # and scaling_curves_batched.yaml; an estimated 15-25 minutes of one H100 in all). Resumable: carry the last call's
      # results/scaling_curves* back (unpacked from its tarball: the finished batches) and run the stage again
      # until steps.log says exit 0 for both; then commit each results/<experiment>/{trials.csv,traces.npz} as
      # results/reference/<machine>/<experiment>/ with a README (the REPORT's case study 1 section draws them).
      # It needs snakemake: carry the wheelhouse of scripts/wheelhouse.sh (.whl), not .whl-slim
      t0=$SECONDS
      for e in scaling_curves scaling_curves_batched; do
        left=$((540 - (SECONDS - t0)))
        [ "$left" -gt 30 ] || { echo "== $e: no time left in this call" | tee -a "$dir/steps.log"; continue; }
        step "$e" "$left" snakemake --cores all --configfile "config/experiments/$e.yaml" --config gpu=yes \
          --keep-going -- "results/$e/trials.csv"
      done
      keep scaling_curves scaling_curves_batched ;;
    gpu_scaling)  # runs per hour against the number of GPUs (docs/scaling.md): the scaling set's batches
      # through the workflow on 1, 2, 4, ... of the host's GPUs (SCALING_CONFIG, default config/scaling/all_studies.yaml;
      # an experiment file also serves; SCALING_GPUS: the counts; SCALING_VARIANTS: GPUDE_GPU_PREFETCH values, one
      # run each into <variant>/, default auto); needs snakemake (.whl-slim); here, commit the rows as
      # results/benchmarks/gpu_scaling/<host>_<set>_<commit>/ with the stage's archive unpacked
      if [ ! -d /tmp/inst ]; then mkdir -p /tmp/inst && tar xzf .carry/kromer_instances.tgz -C /tmp/inst; fi
      nvidia-smi topo -m > "$dir/topology.txt" 2>&1; lscpu > "$dir/lscpu.txt" 2>&1
      for v in ${SCALING_VARIANTS:-auto}; do
        GPUDE_GPU_PREFETCH=$v SCALING_INSTANCES=/tmp/inst step "gpu_scaling_prefetch_$v" ${SCALING_LIMIT:-560} \
          bash benchmarks/gpu_scaling.sh "${SCALING_CONFIG:-config/scaling/all_studies.yaml}" "$dir/prefetch_$v" ${SCALING_GPUS:-}
      done ;;
    fullsuite)  # every test on the real GPU (skips must say why; ~4 min on 16 cores). `-v`: a test that fails
      # is named in the log as it fails, so a call cut short (its device time) still says which
      step pytest ${FULLSUITE_LIMIT:-560} python3 -m pytest -v -n ${FULLSUITE_WORKERS:-16} -o addopts="" -p no:cacheprovider -rs tests/ ;;
    verify)  # `gpude verify` over every committed reference's GPU rows (5 each, sampled among
      # those that ended at their target or budget; rows of another GPU model compared too); here
      # `python benchmarks/verify_references.py summary <files_at>/verify --out results/verify/<gpu>.md`
      instances
      step verify 560 python3 benchmarks/verify_references.py run --device gpu --out "$dir" --rows 5 \
        --max-row-seconds 15 --max-seconds 480 --remakable ;;
    naive_floor)  # naive_gpu's generation at D 30, NP 50 (target <= 100 us)
      # beside sequential's and all_gpu's, and a batch's start-up (first trial <= 1.0 s warm); ~4 minutes
      step generation_time 240 python3 benchmarks/generation_time.py --spans 1 --generations 2000 --repeats 3 \
        --cases naive_gpu:F01:30:50,naive_gpu:F10:30:50,sequential:F01:30:50,all_gpu:F01:30:50 \
        --out "$dir/generation_time_naive_$device.csv"
      step startup 240 python3 benchmarks/startup.py --device gpu --profile --out "$dir/startup_gpu_$device.csv" ;;
    main_job)  # the README's main job (`snakemake --cores all`, the wheelhouse's Snakemake) from
      # cold numba and matplotlib caches, timed; its Snakemake log and the batch logs come back (~3-5 minutes on a
      # GPU host). MAIN_JOB_RUNS (default 1) runs it again from cold caches each time; MAIN_JOB_ANCHOR=1 adds, in
      # between, a run with every GPU batch its own process (`--config batch_server=false`), the batch server's
      # anchor on the same boot. Here: the README's sentence on the GPU host's time
      for run in $(seq 1 "${MAIN_JOB_RUNS:-1}"); do
        for variant in ${MAIN_JOB_VARIANTS:-server $([ "${MAIN_JOB_ANCHOR:-0}" = 1 ] && echo process)}; do
          export NUMBA_CACHE_DIR=/tmp/gpude_main_job_cache/numba MPLCONFIGDIR=/tmp/gpude_main_job_cache/mpl
          # a fresh clone's state: every paper output made again too (only paper/published and paper/README.md are
          # committed), or a later run skips the reference studies' paper jobs
          rm -rf /tmp/gpude_main_job_cache results/default logs/default .snakemake
          find paper -mindepth 1 -maxdepth 1 ! -name published ! -name README.md -exec rm -rf {} +
          extra=(); [ $variant = process ] && extra=(--config batch_server=false)
          step "main_job_${variant}_$run" 560 /usr/bin/time -v snakemake --cores all "${extra[@]}"
          mkdir -p "$dir/logs_${variant}_$run" && cp -r .snakemake/log "$dir/logs_${variant}_$run/snakemake_log" 2>/dev/null
          cp -r logs/default "$dir/logs_${variant}_$run/" 2>/dev/null
        done
      done ;;
    block_side_by_side)  # de/block (a block per trial, a warp an individual) at a full H100 of trials
      # a launch (132: one block an SM) and at one trial a launch (one SM: once per function), beside the
      # committed authors' iDE and resident rows (results/reference/nvidia-h100/side_by_side)
      [ -n "${BLOCK_SKIP_TESTS:-}" ] || step block_tests 120 python3 -m pytest -q -n 4 -o addopts="" \
        -p no:cacheprovider -rs tests/test_block.py tests/test_resident.py
      step side_by_side 560 python3 -m gpude.campaign interleave --max-seconds "${BLOCK_MAX_SECONDS:-420}" \
        --experiment config/experiments/side_by_side.yaml --implementations "${BLOCK_IMPLEMENTATIONS:-authors_ide,block_x132,block}"
      keep side_by_side ;;
    lastra_profile)  # Lastra et al.'s Tables 13-14 on the GPU: one profiled masw/gpu run of L01 (the lastra
      # experiment's 500,000 FEs, popsize and seed) at D = 1e5, 5e5 and 1e6, each module timed, then the same with
      # the local search as separate kernels (ls_mode=steps: the Solis-Wets change and its evaluations apart, as
      # the paper's); ~3 minutes of one GPU. Here: commit <files_at>/lastra_profile/lastra_profile/*.csv under
      # results/benchmarks/lastra_profile/ (its README); the REPORT's Lastra section reads them
      step profile 300 python3 benchmarks/lastra_profile.py --device gpu --out "$dir/lastra_profile"
      step profile_steps 240 python3 benchmarks/lastra_profile.py --device gpu --ls-mode steps \
        --out "$dir/lastra_profile" ;;
    block_profile)  # Nsight Compute on de/block's kernel, F01 and F10 at D 100, NP 250, float32, 132-1056
      # trials a launch (BLOCK_PROFILE_FUNCTIONS, _SIZES): one launch after two (a wall-clock budget makes the run
      # chunks of 64 generations a launch: the profiled one is a chunk after the warm-up's and the first); speed
      # of light, occupancy, warp stalls, pipes, memory and source counters, each report as .ncu-rep and CSV (the
      # details page; the raw page's metrics, per-opcode counts among them; the source page, SASS beside the
      # Python lines: the kernel is built with line tables, GPUDE_CUDA_LINEINFO, in a cache of its own).
      # Summary: python benchmarks/block_profile_summary.py --profiles <unpacked>/block_profile --out ...
      ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
      export GPUDE_CUDA_LINEINFO=1 NUMBA_CACHE_DIR=/tmp/block_profile_cache
      for f in ${BLOCK_PROFILE_FUNCTIONS:-F01 F10}; do for k in ${BLOCK_PROFILE_SIZES:-132 264 528 1056}; do
        step "ncu_${f}_$k" 200 "$ncu" --clock-control none --kernel-name regex:block_kernel --launch-skip 2 \
          --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
          --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats \
          --section InstructionStats --section SourceCounters -f -o "$dir/ncu_${f}_$k" \
          python3 -m gpude run --implementation block --function "$f" --dim 100 --popsize 250 --max-fes 1000000 \
          --max-time-s 600 --dtype float32 --seed 1 --trials "$k" --trials-per-launch "$k" --out-csv "$dir/run_${f}_$k.csv" \
          --out-traces "/tmp/block_profile_${f}_$k.npz"
        ncu_export "$dir/ncu_${f}_$k.ncu-rep"
      done; done
      unset GPUDE_CUDA_LINEINFO NUMBA_CACHE_DIR ;;
    rotation_prototype)  # issue 67's prototype (benchmarks/rotation_prototype.py): a generation's rotation as
      # de/block's matrix-vector products against register-tiled products (whole, and a pass of individuals at a
      # time with z handed to warps through shared memory: gemm_chunked), beside de/block's whole generation,
      # F01's D 100, NP 250, 512 generations, 264 and 1,056 trials a launch (~2 minutes)
      for k in ${ROTATION_TRIALS:-264 1056}; do
        step "rotation_$k" 240 python3 benchmarks/rotation_prototype.py --trials "$k" --generations 512 \
          --layouts "${ROTATION_LAYOUTS:-32x16,64x8,32x8,16x16}" \
          --chunked "${ROTATION_CHUNKED:-16x32:64,32x16:64,16x16:32,8x32:32}" --out "$dir/rotation_${device}_$k.csv"
      done ;;
    resident_variants)  # issue 67, one run a launch (benchmarks/resident_variants.py): de/resident's generation
      # with pick's draws by four threads, the trace reduced a generation later instead of an atomic a survivor,
      # the function's data in shared memory, combinations; the generation without its evaluation and the barrier
      # alone (timing only), one trial, D 100, NP 250, 4,096 generations (~3 minutes, compiling most of it)
      step resident_variants 300 python3 benchmarks/resident_variants.py --generations "${RESIDENT_GENERATIONS:-4096}" \
        --functions "${RESIDENT_VARIANT_FUNCTIONS:-N00,F01,F10}" --variants "${RESIDENT_VARIANTS:-resident,copy,pick4,deferred,all,shared,fast,noeval,barrier}" --out "$dir/resident_variants_${device}.csv" ;;
    block_variants)  # issue 67 (benchmarks/block_variants.py): de/block's generation with pick's draws made by
      # four lanes, the parents loaded only where the crossover takes them, the selection by index, each alone and
      # together, checked bit for bit against de/block and timed beside it, D 100, NP 250, 512 generations (~3 minutes;
      # BLOCK_VARIANTS=block,before: de/block against its kernel before the cuts, ~1 minute)
      step block_variants 500 python3 benchmarks/block_variants.py --trials "${BLOCK_VARIANT_TRIALS:-264}" \
        --variants "${BLOCK_VARIANTS:-block,before,pick4,lazy,index,all}" --generations 512 \
        --functions "${BLOCK_VARIANT_FUNCTIONS:-N00,F01,F10}" --out "$dir/block_variants_${device}.csv" ;;
    sync_prototype)  # issue 67, step 3 (benchmarks/sync_prototype.py): a generation's barrier alone, grid sync,
      # a flag barrier and a launch a generation, at one and two blocks an SM (~1 minute)
      step sync 240 python3 benchmarks/sync_prototype.py --blocks-per-sm 1,2 --out "$dir/sync_${device}.csv" ;;
    server_prime)  # issue 66: what a batch server's first GPU batch pays before its first trial, cold and
      # primed as a server primes at its start (benchmarks/server_prime.py; ~2 minutes)
      step server_prime 560 python3 benchmarks/server_prime.py --repeats "${PRIME_REPEATS:-3}" \
        --modes "${PRIME_MODES:-cold,primed,primed_context,primed_server}" --out "$dir/server_prime_${device}.csv" ;;
    jso_block_speed)  # issue 67, step 4, the GPU side: jso/block at 51, 132 and 264 runs a launch
      # (benchmarks/jso_speed.py), CEC 2017 F3, F5, F10, F22 (Janssen's F01, F03, F04, F08) at D 30 and 100
      # (~5-8 minutes at two launches a cell: a call of its own; three launches a cell give the ratios their
      # intervals: JSO_DIMS=30 then JSO_DIMS=100, a call each, if one call cannot hold both)
      step jso_block 560 python3 benchmarks/jso_speed.py --functions F01,F03,F04,F08 --dims "${JSO_DIMS:-30,100}" \
        --trials "${JSO_TRIALS:-51,132,264}" --repeats "${JSO_REPEATS:-3}" --out "$dir/jso_block_${device}.csv" ;;
    jso_brest_host)  # issue 67, step 4, the host side: Brest's C++ on every core at once, a run a core
      # (benchmarks/jso_brest_runs.py host; carry .authors/jso: `python -m gpude.implementations.jso_brest
      # pack`), the same functions and D (JSO_HOST_DIMS), JSO_HOST_BATCHES batches a cell (default 1; 3 give the
      # host ratio its interval: ~20 s at D 30, ~6 minutes at D 100); then, unless JSO_HOST_ONLY=1, his one-core
      # speed again with three runs a cell, a process a cell pinned to its own core as before (~2-4 minutes)
      step brest_host 560 python3 benchmarks/jso_brest_runs.py host --functions 3,5,10,22 --dims "${JSO_HOST_DIMS:-30,100}" \
        --batches "${JSO_HOST_BATCHES:-1}" --out "$dir/brest_host_${device}.csv"
      if [ "${JSO_HOST_ONLY:-0}" != 1 ]; then
        core=2
        for cell in 3:30 5:30 10:30 22:30 3:100 5:100 10:100 22:100; do
          timeout 240 python3 benchmarks/jso_brest_runs.py speed --functions "${cell%%:*}" --dims "${cell##*:}" \
            --runs 3 --core $core --build "/tmp/jso_brest_core$core" --out "$dir/brest_core_${cell/:/_}.csv" \
            > "$dir/brest_core_${cell/:/_}.log" 2>&1 &
          core=$((core + 1))
        done
        wait
        python3 -c "import glob, pandas as pd; pd.concat([pd.read_csv(f) for f in sorted(glob.glob('$dir/brest_core_*.csv'))]).to_csv('$dir/brest_one_core_${device}.csv', index=False, float_format='%.17g')" \
          && rm "$dir"/brest_core_*.csv
      fi ;;
    block_profile_export)  # the pages of reports made before (BLOCK_PROFILE_REPORTS, default .carry/block_profile:
      # carry the .ncu-rep files): details, raw (per-opcode counts) and source, as block_profile writes them
      ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
      for rep in "${BLOCK_PROFILE_REPORTS:-.carry/block_profile}"/*.ncu-rep; do
        cp "$rep" "$dir/" && ncu_export "$dir/$(basename "$rep")" && rm "$dir/$(basename "$rep")"
      done ;;
    master_slave_wait)  # master_slave on the host's cores: today's code under libgomp's default wait policy,
      # OMP_WAIT_POLICY=PASSIVE and 15 workers, beside 22d492b's build-then-evaluate version (its src/ carried as
      # .carry/ms22/src: `git archive 22d492b src | tar x -C .carry/ms22`), F09 and F10 at D 100, NP 250,
      # float32, 2e6 FEs, two trials a process, interleaved (~4 minutes; the wheelhouse installed as for every
      # stage); the rows say whether the errors agree
      lscpu > "$dir/lscpu.txt"; uptime >> "$dir/lscpu.txt"
      for rep in 1 2; do for v in old new passive w15; do for f in F09 F10; do
        src=src; extra=""; policy=()
        # the old tree reads its own CEC data (`git archive 22d492b data/cec | tar x -C .carry/ms22`)
        [ $v = old ] && src=.carry/ms22/src && policy=(GPUDE_DATA_DIR=$PWD/.carry/ms22/data/cec)
        [ $v = passive ] && policy=(OMP_WAIT_POLICY=PASSIVE)
        [ $v = w15 ] && extra="--workers 15"
        PYTHONPATH=$HOME/.cache/gpude-site:$PWD/$src step "${v}_${f}_$rep" 200 env "${policy[@]}" python3 -m gpude run \
          --implementation master_slave --function $f --dim 100 --popsize 250 --max-fes 2000000 --dtype float32 \
          --seed 1 --trials 2 $extra --out-csv "$dir/${v}_${f}_$rep.csv" --out-traces "/tmp/ms_${v}_${f}_$rep.npz"
      done; done; done ;;
    cec2017_jso)  # the cec2017_jso reference's jso/block cells it lacks (~14 s a cell, its kernel's compile); then
      # here: python -m gpude.campaign merge --experiment config/experiments/cec2017_jso.yaml
      # --reference results/reference/nvidia-h100/cec2017_jso --out <files_at>/cec2017_jso/camp
      step campaign 540 python3 -m gpude.campaign run --experiment config/experiments/cec2017_jso.yaml \
        --reference "results/reference/$device/cec2017_jso" --implementations block --max-seconds 480 --out "$dir/camp" ;;
    jso_brest)  # Brest's jSO runs of cec2017_jso on the host's cores (15 lanes; ~6 min), then merge as above
      step campaign 540 python3 -m gpude.campaign run --experiment config/experiments/cec2017_jso.yaml \
        --reference "results/reference/$device/cec2017_jso" --implementations brest --jobs 15 --default-run-s 1 \
        --setup-s 2 --max-seconds 420 --out "$dir/camp" ;;
    *) echo "gpu_checks: unknown stage $stage (tests, fullsuite, gpu_scaling, cec2017_jso, jso_brest, verify, speed, cpu_speed, side_by_side, block_side_by_side, block_profile, block_profile_export, rotation_prototype, block_variants, resident_variants, sync_prototype, server_prime, jso_block_speed, jso_brest_host, kromer_fe_rate, kromer_eval_speed, cs2_probe, master_slave_wait, naive_floor, main_job, scaling_curves, lastra_profile)" >&2; exit 2 ;;
  esac
  tar czf "$OUT/$stage.tar.gz" -C "$OUT" "$stage" && rm -rf "$dir"
done
