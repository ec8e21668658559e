# gpude workflow entry point.
#
# The experiment fan-out (algorithm x implementation x function x dim x popsize x trials),
# the statistics and the paper tables arrive with the workflow issue; until then the
# default target is empty. The rule modules will live in workflow/rules/*.smk and be
# included here, with `rule all` defined in this file (a top-level Snakefile that only
# includes another one loses its default target: shared/guides/conventions.md, sec. 1.1).

rule all:
    default_target: True
