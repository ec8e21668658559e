"""Resumable reference campaigns: complete (or re-make) a committed reference run over several
time-limited commands on a GPU host without Snakemake, then merge what came back.

A reference (``results/reference/<machine>/<experiment>/trials.csv`` and ``traces.npz``) may need far
more device time than one command, or one session, has: Lastra et al.'s protocol is 1,250 runs of
10-100 s each (the paper has 10 runs per cell, 20 for Schwefel 1.2 and the CEC 2010 functions:
``--trials L06=20,C*=20``), Krömer et al.'s Table 4 1,080 runs of 30 s (three columns, 36 cells, 10 runs
each). This tool works in (cell, trial) units, so a campaign can stop anywhere and go on later, on
another instance of the same machine kind:

* ``plan``: the trials the reference lacks for the experiment's grid, and the *stale* ones it holds: a
  row whose algorithm parameters, budget or target differ from the experiment's, or that was timed
  ``shared`` where the experiment says ``exclusive`` (its wall time measured time-slicing); each with
  the seconds it is expected to take (a FE-budgeted run: the median of the same cell's exclusive rows
  in the reference or the campaign's folder; else, where it has rows timed side by side (``shared:N``)
  and other functions of the same D have both kinds, those rows' median times the others' ratio of the
  two; else, where other functions of the same algorithm, implementation, popsize and dtype have rows
  at that D, their median there times the function's ratio to theirs at the nearest D where both have
  rows (time need not be linear in D: Lastra's MA-SW-Chains runs have a large fixed part); else any
  function's median at that D; else the same function's nearest D scaled linearly; else
  ``--default-run-s``; a time-budgeted run: its budget), and the total;
* ``run`` (on the GPU host): runs them with the workflow rule's own ``python3 -m gpude run`` command
  line (the same arguments and seeds; :func:`gpude.campaign.cells.gpude_command`), contiguous trials of a
  cell in one process (``--group``, or the experiment's ``trials_per_launch``), into ``--out``.
  ``--alone K --per-launch B`` (a batched implementation, e.g. ``masw/gpu``): each cell's trials
  0..K-1 one per launch, the run times the REPORT compares, and the others B per launch (a fair
  share of a launch's time each: their errors count, their times do not; the rows' ``params`` say
  ``trials_per_launch``); the one-per-launch processes of every cell go before any batch, so a call
  that ends early leaves every cell it reached with its timed runs. A reference row of a trial below
  K made several per launch is stale.
  ``--alone K --alone-lanes L`` (a ``shared`` implementation, e.g. standard DE's single-threaded runs):
  each cell's trials 0..K-1 timed in lanes, at most L processes at once with nothing else on the host
  (rows say ``exclusive-cpu:L``; the REPORT times such rows as alone), before everything else; a
  reference row of a trial below K timed shared is stale.
  Runs the experiment times ``shared`` go next, ``--jobs`` at a time (their rows say ``shared:JOBS``: on
  a host of 32 vCPUs one ETC run alone made 2.0x the FEs of one of 29 side by side, one of 8 within
  1.2 %, results/benchmarks/kromer_contention_nvidia-h100.csv); then the ``exclusive`` GPU
  ones, one per GPU of the host at a time (``--gpus``; each ``gpude run`` leases its own GPU, and the
  rows say ``exclusive-gpu:N`` on a host of N > 1, as the workflow's do); then the ``exclusive`` CPU
  ones, one at a time with nothing beside them. A process starts only if its projection (plus
  ``--setup-s``) ends before ``--max-seconds``, so the command ends cleanly before the host's limit;
  a trial whose file in ``--out`` counts is not run again (one made under other parameters is).
  ``--archive`` packs ``--out`` into one .tar.gz (a GPU host's command returns a few files);
* ``merge`` (here, after unpacking the archive): adds the new rows and traces to the reference (a new
  folder if it has none yet), replacing the stale rows they re-make and nothing else; the old rows and
  traces are otherwise kept as they are; and writes the reference's ``CAMPAIGNS.md``: per cell the
  runs, the GPU, the machine instances (boot ids), commits and dates, so the README can say which cells
  ran where.

* ``pack``: the experiment's LOP and ETC instance files in one .tgz (``--archive``), for ``run
  --instance-data`` on the offline GPU host.

Every row names where it was made (GPU, CPU, cores, ``host`` and ``boot_id``). The REPORT times one
machine (GPU, CPU and cores: the machine of the reference's newest row made one per launch), so a row
made one per launch on another is stale; a row made several per launch counts from any host and any
GPU (its time is a share, never used; its result, the distance to the optimum included, is the same
bits there: ``gpude verify --any-gpu`` re-made H100 rows on an H200 the same,
``results/verify/cec2017_jso_h100_rows_on_h200.csv``). On another host (e.g. four H200s beside 64
cores for a reference made on two beside 32, or an H100 for an H200's reference) ``run`` makes only
the batched runs and leaves those made one per launch to the reference's machine; ``--new-machine``
makes the host the reference's machine instead.

    python -m gpude.campaign plan --experiment config/experiments/lastra.yaml \\
        --reference results/reference/nvidia-h100/lastra --trials 'L06=20,C*=20'
    # on the GPU host (source .whl-slim/activate.sh .whl-slim; export GPUDE_GIT_COMMIT=<commit>):
    python3 -m gpude.campaign run --experiment config/experiments/lastra.yaml \\
        --reference results/reference/nvidia-h100/lastra --trials 'L06=20,C*=20' \\
        --out .campaign/lastra --max-seconds 540 --archive $OUT/campaign.tar.gz
    # here: tar xzf <files_at>/campaign.tar.gz; then
    python -m gpude.campaign merge --experiment config/experiments/lastra.yaml \\
        --reference results/reference/nvidia-h100/lastra --out .campaign/lastra --trace-decades 0.1

The module, one job a file: ``cells`` (the one ``Cell`` and ``grid``, from the experiment model's
grid, :mod:`gpude.study.experiment`, as the workflow's rules plan; a cell's ``gpude run`` command line, as
the workflow's rules write theirs), ``plan`` (what a reference lacks or holds stale, projections, groups),
``run`` (the host's call), ``merge`` (the checked merge, ``CAMPAIGNS.md``), ``cli`` (this command line) and
``fill_reference`` (a reference's missing *cells* through the workflow's own rule and Snakemake:
``python -m gpude.campaign.fill_reference missing|run|merge|verify|fill``) and ``interleave`` (an
experiment's batch jobs in an order where implementations alternate, on a host without Snakemake:
``python -m gpude.campaign interleave``). Nothing of the package's
core imports it (docs/architecture.md, "Completing a reference").
"""

from .cells import CELL, DEFAULTS, Cell, gpude_command, grid, load_experiment, parse_trials, rule_command
from .cli import main
from .merge import campaigns_markdown
from .plan import Group, batch_share, campaign_rows, groups, projections, reference_machine, stale_reason, todo

__all__ = ["CELL", "DEFAULTS", "Cell", "Group", "batch_share", "campaign_rows", "campaigns_markdown", "gpude_command",
           "grid", "groups", "load_experiment", "main", "parse_trials", "projections", "reference_machine",
           "rule_command", "stale_reason", "todo"]
