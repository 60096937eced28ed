"""The ``netnoise`` command."""

from __future__ import annotations

import argparse
import errno
import os
import subprocess
import sys
from pathlib import Path
from typing import NoReturn

import pandas as pd
import yaml

from netnoise import (
    __version__,
    bundle,
    claims_summary,
    compare,
    config,
    config_docs,
    cpubench,
    headlines,
    inputs,
    io,
    project,
    report,
    studies,
)
from netnoise.atomic import atomic_open
from netnoise.platform import PlatformUnavailable
from netnoise.testbed import bench as testbed_bench
from netnoise.testbed import commands as testbed_commands
from netnoise.testbed.commands import whole_number
from netnoise.testbed.fabric import TestbedError

DEFAULT_CONFIG = Path("config/config.yaml")
REVIEW_WORKDIR = "results/review"
DEFAULT_RESULTS = "results"


def _cmd_version(_: argparse.Namespace) -> int:
    print(f"netnoise {__version__}")
    return 0


def _cmd_studies(args: argparse.Namespace) -> int:
    if args.files is None:
        print("\n".join(studies.status_lines()))
        return 0
    try:
        study = studies.get(args.files)
    except KeyError as err:
        raise config.ConfigError(err.args[0]) from None
    print("\n".join(study.files()))
    print(f"config section: {study.key} (config/config.yaml, config/paper.yaml)")
    return 0


def _cmd_config_check(args: argparse.Namespace) -> int:
    resolved = config.load_files(args.file)
    if args.show:
        yaml.safe_dump(resolved, sys.stdout, sort_keys=False)
    else:
        print(f"{', '.join(args.file)}: valid")
    return 0


def _cmd_config_docs(args: argparse.Namespace) -> int:
    text = config_docs.render()
    if args.output == "-":
        sys.stdout.write(text)
        return 0
    pages = {Path(args.output): text}
    if Path(args.output) == config_docs.REFERENCE:
        # The reference in its own place: the guide beside it is written too.
        pages[config_docs.GUIDE] = config_docs.render_guide()
    for path, page in pages.items():
        with atomic_open(path) as out:
            out.write(page)
        print(f"{path}: written")
    return 0


def _cmd_parse(args: argparse.Namespace) -> int:
    frame = io.tidy(io.read_benchmark(args.file))
    frame.to_csv(sys.stdout, index=False)
    return 0


def _cmd_claims(args: argparse.Namespace) -> int:
    if args.bundle:
        found = headlines.bundle_claims(args.bundle)
    elif args.results is None and not _holds_a_run(Path(DEFAULT_RESULTS)):
        print(
            f"netnoise: no run under {DEFAULT_RESULTS}/: the shipped bundle's claims"
            f" ({bundle.shown(bundle.SHIPPED)}; --bundle FILE judges another)",
            file=sys.stderr,
        )
        found = headlines.bundle_claims(bundle.SHIPPED)
    else:
        found = headlines.results_claims(Path(args.results or DEFAULT_RESULTS))
    if args.beside:
        by_platform = headlines.beside_bundle(
            args.beside, {name: claims for name, (claims, _) in found.items()}
        )
        numbers = {study.key: study.number for study in studies.STUDIES}
        print(claims_summary.beside_markdown(by_platform, numbers), end="")
        return 0
    if args.update:
        numbers = {study.key: study.number for study in studies.STUDIES}
        markdown = "".join(
            claims_summary.summary_markdown(claims, platform, numbers)
            for platform, (claims, _) in found.items()
        )
        document = Path(args.update)
        text = inputs.read_text(document, inputs.MAX_TABLE_BYTES, "text document (Markdown)")
        updated = claims_summary.with_section(text, markdown)
        with atomic_open(document) as out:
            out.write(updated)
        print(f"{document}: claims summary updated")
        return 0
    if args.csv:
        claims_summary.claims_csv(
            pd.concat([claims.assign(platform=p) for p, (claims, _) in found.items()]),
            sys.stdout,
        )
        return 0
    _print_claims(found, markdown=args.markdown)
    return 0


def _holds_a_run(results: Path) -> bool:
    return results.is_dir() and any(
        (folder / "tables").is_dir() for folder in (results, *results.iterdir())
    )


def _print_claims(found: headlines.PlatformClaims, *, markdown: bool = False) -> None:
    numbers = {study.key: study.number for study in studies.STUDIES}
    for platform, (claims, cpu) in found.items():
        if markdown:
            print(claims_summary.summary_markdown(claims, platform, numbers), end="")
        else:
            cpu_lines = claims_summary.cpu_records(cpu)
            print("\n".join(claims_summary.summary_lines(claims, platform, numbers, cpu_lines)))


def _cmd_bundle_create(args: argparse.Namespace) -> int:
    manifest = bundle.create(
        args.output,
        workdir=args.workdir,
        configfiles=args.configfile,
        include_raw=args.raw,
    )
    size = Path(args.output).stat().st_size
    print(f"{args.output}: {len(manifest['files'])} files, {size / 1e6:.1f} MB")
    return 0


def _cmd_bundle_verify(args: argparse.Namespace) -> int:
    verified = bundle.check(args.bundle)
    manifest, git = verified.manifest, verified.manifest["git"]
    print(
        f"{args.bundle}: ok, {len(manifest['files'])} files from netnoise "
        f"{manifest['netnoise_version']} ({git['sha'][:12]}{', dirty' if git['dirty'] else ''}) "
        f"on {manifest['platform']}, {manifest['created']}"
    )
    print(f"its results: {verified.identity.describe()}")
    return 0


def _cmd_bundle_describe(args: argparse.Namespace) -> int:
    verified = bundle.check(args.bundle)
    ((platform, (claims, cpu)),) = headlines.bundle_claims(args.bundle).items()
    numbers = {study.key: study.number for study in studies.STUDIES}
    text = bundle.describe(
        bundle.shown(args.bundle),
        verified.manifest,
        verified.identity,
        cpu,
        claims_summary.summary_markdown(claims, platform, numbers),
    )
    if args.update:
        with atomic_open(args.update) as out:
            out.write(text)
        print(f"{args.update}: the bundle's page written")
    else:
        print(text, end="")
    return 0


def _cmd_review(args: argparse.Namespace) -> int:
    project.snakemake_command()  # its one-line error before anything is made
    if args.workdir == REVIEW_WORKDIR:
        # The default lies under the current directory, wherever that is; a path the
        # user names must have its parent already, so that a typo is refused.
        Path(REVIEW_WORKDIR).parent.mkdir(exist_ok=True)
    out = bundle.review(args.bundle, args.workdir, cores=args.cores, report=not args.no_report)
    verdicts = bundle.compare_tables(bundle.verify(args.bundle), out)
    identical = sum(v == bundle.IDENTICAL for v in verdicts.values())
    close = sum(v == bundle.CLOSE for v in verdicts.values())
    extended = sum(v == bundle.EXTENDED for v in verdicts.values())
    rejudged = sum(v == bundle.REJUDGED for v in verdicts.values())
    print(
        f"{identical} of {len(verdicts)} tables identical to the bundled run's"
        + (f", {close} equal to a relative 1e-6" if close else "")
        + (f", {extended} so with columns this version adds" if extended else "")
        + (
            f"; {rejudged} claims tables judged again by this version's rules"
            " (the bundle's revision is another)"
            if rejudged
            else ""
        )
    )
    disagreeing = [p for p, v in verdicts.items() if v not in bundle.ACCEPTED]
    for path in disagreeing:
        print(f"  {verdicts[path]}: {path}")
    print(f"figures: {out}/results/*/figures, tables: {out}/results/*/tables", end="")
    print("" if args.no_report else f", report: {out}/report.html")
    if disagreeing:
        print(
            f"netnoise: {len(disagreeing)} table(s) differ from the bundled run's or are missing",
            file=sys.stderr,
        )
        return 1
    numbers = {study.key: study.number for study in studies.STUDIES}
    for platform, (claims, _) in headlines.results_claims(out / "results").items():
        print("\n".join(claims_summary.brief_lines(claims, platform, numbers)))
    print(f"each verdict's reason and the CPU records: netnoise claims {out}/results")
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    runs = [compare.load(path) for path in args.runs]
    if args.save_reference:
        count = compare.save_reference(runs[0], args.save_reference)
        print(f"{args.save_reference}: {count} figures of {runs[0].name} on {runs[0].platform}")
        return 0
    if args.reference:
        reference = compare.read_reference(args.reference)
        failed = 0
        for run in runs:
            checked = compare.check_reference(run, reference)
            counts = checked["status"].value_counts() if len(checked) else pd.Series(dtype=int)
            print(
                f"{run.name} against {args.reference}: {counts.get('pass', 0)} pass,"
                f" {counts.get('fail', 0)} fail, {counts.get('missing', 0)} missing"
            )
            for _, row in checked[checked["status"] == "fail"].iterrows():
                print(
                    f"  fail: {row['table']} [{row['point']}] {row['figure']} {row['value']:.3g}"
                    f" outside {row['lower']:.3g} to {row['upper']:.3g}"
                )
            failed += int(counts.get("fail", 0))
        return 1 if failed else 0
    if len(runs) < 2:
        raise ValueError("compare needs two runs or bundles (or one with --save-reference)")
    changed = 0
    tables = []
    for other in runs[1:]:
        comparison = compare.compare(runs[0], other)
        print("\n".join(compare.summary_lines(comparison)))
        changed += len(comparison.changed_claims)
        tables.append(comparison.figures.assign(run_a=runs[0].name, run_b=other.name))
    if args.csv:
        with atomic_open(args.csv) as out:
            pd.concat(tables, ignore_index=True).to_csv(out, index=False)
        print(f"{args.csv}: every figure of merit side by side")
    return 1 if changed else 0


def _cmd_report(args: argparse.Namespace) -> int:
    _check_output(args.output)
    try:
        report.build(args.output, workdir=args.workdir, configfiles=args.configfile)
    except subprocess.CalledProcessError:
        print("netnoise: the report could not be built (see above)", file=sys.stderr)
        return 1
    print(f"report: {args.output}")
    return 0


def _check_output(path: str) -> None:
    """A file a command is to write (or replace), refused before any work when it
    is a directory, a FIFO or a device."""
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, "is a directory, not a file to write", path)
    if os.path.exists(path) and not os.path.isfile(path):
        raise FileExistsError(errno.EEXIST, "not a regular file (a FIFO or device) to write", path)


def _cores(text: str) -> int:
    return whole_number(text, "cores")


class _Parser(argparse.ArgumentParser):
    """Usage errors end as every other error does: ``netnoise: <message>``, status 2."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"netnoise: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="netnoise", description="Reproducible experiments on network interference."
    )
    parser.add_argument("--version", action="version", version=f"netnoise {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("version", help="print the version").set_defaults(func=_cmd_version)
    listing = sub.add_parser(
        "studies", help="list the five studies, or (--files KEY) every file of one"
    )
    listing.add_argument("--files", metavar="KEY", help=f"a study key: {', '.join(studies.KEYS)}")
    listing.set_defaults(func=_cmd_studies)

    claims = sub.add_parser(
        "claims", help="every paper's headline claims, judged on a run's results or a bundle"
    )
    claims.add_argument(
        "results",
        nargs="?",
        help=f"a run's results folder (default: {DEFAULT_RESULTS}, or the shipped bundle"
        " when it holds no run)",
    )
    claims.add_argument("--bundle", metavar="FILE", help="judge a results bundle instead")
    shown = claims.add_mutually_exclusive_group()
    shown.add_argument(
        "--markdown", action="store_true", help="a Markdown table (the README's status)"
    )
    shown.add_argument(
        "--csv",
        action="store_true",
        help="the claims table as CSV: every claim with its quote, kind, band"
        " (target_low, target_high), unit of replication, value, interval and verdict",
    )
    claims.add_argument(
        "--beside",
        metavar="BUNDLE",
        help="each claim's verdict on every platform side by side, a results bundle's "
        "(the shipped testbed run, say) beside this run's (Markdown)",
    )
    claims.add_argument(
        "--update",
        metavar="FILE",
        help="write the Markdown table between FILE's claims-summary markers (README.md)",
    )
    claims.set_defaults(func=_cmd_claims)

    comparing = sub.add_parser(
        "compare",
        help="two or more runs or bundles side by side: figures of merit with their intervals,"
        " claims, provenance; exit status 1 when a claim's verdict changes",
    )
    comparing.add_argument(
        "runs", nargs="+", metavar="RUN_OR_BUNDLE", help="results folders or results bundles"
    )
    comparing.add_argument(
        "--csv", metavar="FILE", help="write every figure of merit side by side to FILE"
    )
    comparing.add_argument(
        "--save-reference",
        metavar="FILE",
        help="write the first run's figures, each with its interval as bounds, as a reference",
    )
    comparing.add_argument(
        "--reference",
        metavar="FILE",
        help="check each run's figures against a reference's bounds; exit 1 on a failure",
    )
    comparing.set_defaults(func=_cmd_compare)

    check = sub.add_parser("config", help="validate a workflow config file").add_subparsers(
        dest="action", required=True
    )
    check_cmd = check.add_parser(
        "check", help="validate FILE (several: merged in order, as --configfile merges them)"
    )
    check_cmd.add_argument("file", nargs="+", help="config files (YAML)")
    check_cmd.add_argument("--show", action="store_true", help="print it with defaults filled in")
    check_cmd.set_defaults(func=_cmd_config_check)
    docs_cmd = check.add_parser(
        "docs", help="write the configuration reference (every key) from the schemas"
    )
    docs_cmd.add_argument("--output", "-o", default="docs/config.md", help="'-': print it")
    docs_cmd.set_defaults(func=_cmd_config_docs)

    testbed_commands.add_parser(sub, DEFAULT_CONFIG)

    for study in studies.STUDIES:
        if study.commands is not None:
            study.commands(sub)

    bundles = sub.add_parser(
        "bundle", help="pack or check a run's cached results (tidy tables, models, provenance)"
    ).add_subparsers(dest="bundle_command", required=True)
    create = bundles.add_parser("create", help="pack the finished run in WORKDIR")
    create.add_argument("--output", "-o", required=True, help="bundle file (.tar.gz)")
    create.add_argument("--workdir", default=".", help="where the workflow ran")
    create.add_argument(
        "--configfile", nargs="+", default=[str(DEFAULT_CONFIG)], help="the run's config files"
    )
    create.add_argument("--raw", action="store_true", help="include the raw per-sample files")
    create.set_defaults(func=_cmd_bundle_create)
    verify = bundles.add_parser("verify", help="check format, checksums and config")
    verify.add_argument("bundle", help="a results bundle (.tar.gz)")
    verify.set_defaults(func=_cmd_bundle_verify)
    describe = bundles.add_parser(
        "describe", help="the bundle's page: its run, CPU record and claims (Markdown)"
    )
    describe.add_argument("bundle", help="a results bundle (.tar.gz)")
    describe.add_argument("--update", metavar="FILE", help="write the page to FILE")
    describe.set_defaults(func=_cmd_bundle_describe)

    review = sub.add_parser(
        "review",
        help="rebuild every figure and table (and the report) from a bundle, running nothing",
    )
    review.add_argument(
        "--bundle", default=str(bundle.SHIPPED), help="default: the bundle shipped in resources/"
    )
    review.add_argument(
        "--workdir",
        default=REVIEW_WORKDIR,
        help="a new or empty directory, or one an earlier review made (emptied, then "
        "filled); never one holding the bundle (default: %(default)s)",
    )
    review.add_argument(
        "--cores", type=_cores, default=2, help="cores the analysis jobs use (default: %(default)s)"
    )
    review.add_argument("--no-report", action="store_true", help="skip the HTML report")
    review.set_defaults(func=_cmd_review)

    report_cmd = sub.add_parser(
        "report", help="the Snakemake report of a finished run, with netnoise's page style"
    )
    report_cmd.add_argument(
        "--output", "-o", default="results/report.html", help="the HTML file (default: %(default)s)"
    )
    report_cmd.add_argument("--workdir", default=".", help="where the workflow ran")
    report_cmd.add_argument(
        "--configfile", nargs="+", default=[str(DEFAULT_CONFIG)], help="the run's config files"
    )
    report_cmd.set_defaults(func=_cmd_report)

    benches = sub.add_parser(
        "bench", help="benchmarks that print figures: timing, not checked by the tests"
    ).add_subparsers(dest="bench_command", required=True)
    cpu = benches.add_parser(
        "cpu",
        help="CPU load and run-to-run spread of each study's heaviest co-run per wait policy "
        "(needs root: it uses testbeds)",
    )
    cpubench.add_arguments(cpu)
    cpu.set_defaults(func=cpubench.run)
    links = benches.add_parser(
        "testbed",
        help="what the testbed's shaped links carry and how its backbone queues a probe "
        "beside a bulk flow (needs root)",
    )
    testbed_bench.add_arguments(links)
    links.set_defaults(func=testbed_bench.run)
    for study in studies.STUDIES:
        if study.benches is not None:
            study.benches(benches)

    parse = sub.add_parser("parse", help="print a benchmark result file as a tidy CSV")
    parse.add_argument("file", help="a benchmark's result file (its #@ preamble and rows)")
    parse.set_defaults(func=_cmd_parse)
    return parser


def main(argv: list[str] | None = None) -> int:
    # A terminal or pipe of another encoding (LC_ALL=C, PYTHONIOENCODING=ascii)
    # gets what it cannot show as escapes, never an error halfway through.
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    args = build_parser().parse_args(argv)
    if getattr(args, "argv", None) and args.argv[0] == "--":
        args.argv = args.argv[1:]
    if getattr(args, "argv", None) == []:
        print("netnoise: give the command after --", file=sys.stderr)
        return 2
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("netnoise: interrupted", file=sys.stderr)
        return 130
    # Bad input of every kind (config, bundle, result file, topology, model) is a
    # ValueError naming what is wrong; OSError a file that cannot be read or written.
    except (ValueError, OSError, PlatformUnavailable, TestbedError) as err:
        print(f"netnoise: {_message(err)}", file=sys.stderr)
        return 2
    except Exception as err:
        if os.environ.get("NETNOISE_TRACEBACK"):
            raise
        print(
            f"netnoise: unexpected {type(err).__name__}: {_message(err)} "
            "(NETNOISE_TRACEBACK=1 shows where)",
            file=sys.stderr,
        )
        return 1


def _message(err: BaseException) -> str:
    """One line or paragraph for the user; control characters (a NUL of a file
    name or a value) shown as escapes, so a terminal never receives them raw."""
    if isinstance(err, OSError) and err.strerror and err.filename is not None:
        text = f"{err.filename}: {err.strerror}"
    elif isinstance(err, OSError) and err.strerror:
        text = f"{err.strerror} (error {err.errno})"
    else:
        text = str(err) or type(err).__name__
    return "".join(c if c.isprintable() or c in "\n\t" else ascii(c)[1:-1] for c in text)


if __name__ == "__main__":
    sys.exit(main())
