"""Parse the workflow once per experiment file through Snakemake's API, all in one process, and
write what each parse raised (None: it parsed) to a JSON file.

Used by tests/test_workflow.py for its table of bad experiments: a `snakemake -n` process per case
spent ~2.5 s starting up for a parse of a fraction of that. The parse is the one `snakemake -n`
makes (the Snakefile with the experiment as its config file); a few cases still go through the
command line there, to show the messages reach the user.

    python tests/_parse_experiments.py OUT.json EXPERIMENT.yaml...   (from the workflow's folder)
"""

import json
import sys
from pathlib import Path


def main(out, *experiments):
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

    errors = {}
    for path in experiments:
        try:
            with SnakemakeApi(OutputSettings()) as api:
                api.workflow(resource_settings=ResourceSettings(cores=1),
                             config_settings=ConfigSettings(configfiles=[Path(path)]),
                             snakefile=Path("Snakefile"), workdir=Path(".")).dag()
            errors[path] = None
        except Exception as exc:  # what the command line would print
            errors[path] = f"{type(exc).__name__}: {exc}"
    Path(out).write_text(json.dumps(errors))


if __name__ == "__main__":
    main(*sys.argv[1:])
