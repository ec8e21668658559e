# gpude workflow: `snakemake --cores all` runs the default experiment (config/config.yaml);
# `--configfile config/experiments/<name>.yaml` runs another. `rule all` lives here, in the
# top-level Snakefile, because an included file's default target is lost (measured with Snakemake
# 9.27.1); the profiles are in profiles/ because Snakemake looks for them beside this file.
from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/run.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/paper.smk"


rule all:
    default_target: True
    input:
        # a scaling set's run (--config scaling=...): its batches and their merged table only
        [SCALING_TARGET] if SCALING_FILE else [
            LOCAL_TARGETS,
            expand("paper/{experiment}/table_error.csv", experiment=REPORTED),
            "paper/REPORT.md",
        ],
