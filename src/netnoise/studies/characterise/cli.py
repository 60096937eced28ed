"""``netnoise characterise``: the study's runs on the configured platform and
their Congestion Impact Factors, one line per canary, congestor setting and
statistic; ``--results`` prints those of a run already made."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pandas as pd

from netnoise import config, project
from netnoise.estimates import Estimate
from netnoise.platform import from_settings
from netnoise.settings import Settings
from netnoise.studies.characterise import plan
from netnoise.studies.characterise.settings import CharacteriseSettings
from netnoise.study import StudyPaths
from netnoise.testbed.commands import whole_number

#: The working directory's study config, with this study's overlay over it.
STUDY_CONFIG = "config/config.yaml"
OVERLAY = ("config", "characterise-testbed.yaml")
#: What a line adds where the CPU-only control ran (cif.beyond_cpu_control).
CONTROL_WORDS = {
    True: "; beyond the CPU-only control: the network's",
    False: "; not beyond the CPU-only control",
}


def cif_lines(table: pd.DataFrame) -> list[str]:
    """One line per row of a CIF table: canary, congestor setting, statistic, the
    CIF with its interval and the rounds behind it, and where the CPU-only
    control ran, whether the CIF is beyond it."""
    lines = []
    for _, row in table.iterrows():
        estimate = Estimate.from_row(row, "cif", "rounds")
        beyond = row.get("beyond_cpu_control")
        control = "" if pd.isna(beyond) else CONTROL_WORDS[str(beyond) == "True"]
        lines.append(
            f"{row['canary']:<10} congestors {row['congestor']:<11} {row['statistic']:<8} "
            f"CIF {estimate.text('×')} over {estimate.samples} rounds{control}"
        )
    return lines


def _cif_table(results: Path) -> Path:
    return results / "tables" / "characterise" / "cif.csv"


def _run(args: argparse.Namespace) -> Path | None:
    """Run the study's part of the workflow in ``args.workdir``: its results
    folder, or None when Snakemake failed (it said why)."""
    configfiles = args.configfile or [
        str(Path(args.workdir) / STUDY_CONFIG),
        str(project.path(*OVERLAY)),
    ]
    resolved = config.load_files(configfiles)
    settings = Settings.of(resolved)
    study = settings.study(CharacteriseSettings)
    if not study.enabled:
        raise ValueError(f"characterise.enabled is false in {', '.join(configfiles)}")
    platform = from_settings(settings.effective(study))
    why = plan.skipped(platform)
    if why:
        raise ValueError(why)
    results = f"results/{settings.platform.kind}"
    targets = plan.targets(platform, StudyPaths.under(results, "characterise", ""))
    snakefile = str(project.path("workflow", "Snakefile"))
    # The targets come first: --configfile takes every word after it.
    argv = [*project.snakemake_command(), *targets, "--snakefile", snakefile]
    argv += ["--directory", str(args.workdir), "--cores", str(args.cores)]
    argv += ["--configfile", *(str(Path(c).resolve()) for c in configfiles)]
    if subprocess.run(argv).returncode != 0:
        return None
    return Path(args.workdir) / results


def run(args: argparse.Namespace) -> int:
    results = Path(args.results) if args.results else _run(args)
    if results is None:
        print("netnoise: the workflow failed (its output is above)", file=sys.stderr)
        return 1
    table = _cif_table(results)
    if not table.is_file():
        raise FileNotFoundError(
            f"{table}: no Congestion Impact Factors there (run netnoise characterise)"
        )
    print("\n".join(cif_lines(pd.read_csv(table))))
    print(
        f"figure: {results}/figures/characterise/fig_cif.png;"
        f" per round: {results}/tables/characterise/canaries.csv"
    )
    return 0


def register(subparsers) -> None:
    """Add ``characterise`` to the top-level sub-parsers of ``netnoise``."""
    cmd = subparsers.add_parser(
        "characterise",
        help="measure the platform's congestion as GPCNeT does (study 100)",
        description="Run GPCNeT's canaries alone and beside its congestors on the configured "
        "platform (the characterise section of the config) and print each canary's "
        "Congestion Impact Factor, average and 99th percentile, with its 95 % interval "
        "over rounds.",
    )
    cmd.add_argument(
        "--configfile",
        nargs="+",
        metavar="FILE",
        help=f"config files, merged in order (default: WORKDIR/{STUDY_CONFIG}, then the "
        f"project's {'/'.join(OVERLAY)})",
    )
    cmd.add_argument(
        "--workdir", default=".", help="where the workflow runs (default: %(default)s)"
    )
    cmd.add_argument(
        "--cores", type=_cores, default=2, help="cores Snakemake may use (default: %(default)s)"
    )
    cmd.add_argument(
        "--results",
        metavar="DIR",
        help="print the factors of a run already made (results/<platform>) instead of running",
    )
    cmd.set_defaults(func=run)


def _cores(text: str) -> int:
    return whole_number(text, "cores")
