"""Parse the workflow once per experiment file through Snakemake's API, all in one process, and
write what each parse raised and printed to a JSON file.

Used by tests/test_workflow.py for its table of bad experiments: a `snakemake -n` process per case
spent ~2.5 s starting up for a parse of a fraction of that. The parse is the one `snakemake -n`
makes (the Snakefile with the experiment as its config file); a few cases still go through the
command line there, to show the messages reach the user. An experiment given with --dry-run goes on
to the dry run of the default target, as `snakemake -n -p` makes it (the DAG built, every job listed
with its shell command).

    python tests/_parse_experiments.py OUT.json [EXPERIMENT.yaml...] [--dry-run EXPERIMENT.yaml]...
    (from the workflow's folder)

OUT.json: {experiment: {"error": what it raised (None: it parsed), "stderr": what it printed (the
workflow's notices; a dry run's job list)}}.
"""

import argparse
import contextlib
import io
import json
from pathlib import Path


def main(out, experiments, dry_run=()):
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

    results = {}
    for path in [*experiments, *dry_run]:
        printed = io.StringIO()
        try:
            with contextlib.redirect_stderr(printed), SnakemakeApi(OutputSettings(printshellcmds=True)) as api:
                dag = api.workflow(resource_settings=ResourceSettings(cores=1),
                                   config_settings=ConfigSettings(configfiles=[Path(path)]),
                                   snakefile=Path("Snakefile"), workdir=Path(".")).dag()
                if path in dry_run:
                    dag.execute_workflow(executor="dryrun")
            error = None
        except Exception as exc:  # what the command line would print
            error = f"{type(exc).__name__}: {exc}"
        results[path] = {"error": error, "stderr": printed.getvalue()}
    Path(out).write_text(json.dumps(results))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("experiments", nargs="*")
    parser.add_argument("--dry-run", action="append", default=[])
    args = parser.parse_intermixed_args()
    main(args.out, args.experiments, args.dry_run)
