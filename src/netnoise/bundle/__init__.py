"""Results bundles: a run's cached results, from which every figure and table is rebuilt.

A bundle holds what the workflow's analysis rules read but do not make
themselves (tidy tables, fitted models, measured summaries) and every file a
measurement rule makes that nothing consumes (provenance sidecars, the testbed
validation table), found from the workflow's own job graph
(``snakemake --detailed-summary``), so a new rule needs no bundle code. Raw
per-sample files are left out unless asked for. ``manifest.json`` lists every
other file, ``config.yaml`` (the run's validated config) included, with its
SHA-256 and size, and records the software of the run.

A bundle carries data only (:data:`DATA_SUFFIXES`: tables, JSON, YAML, numpy
arrays): no format that runs code when read. :func:`verify` refuses anything
else, and a bundle whose manifest is malformed, lists no files, or does not
match its members name for name, byte for byte. It reads every member as the
review's jobs will (tables of consistent width, arrays no larger than their
bytes, plain YAML, sidecars the provenance table can read), within bounds on
sizes and counts checked from the tar headers before any data is read, so a
bundle that passes never crashes a review job.

Reviewer mode (:func:`review`) unpacks a verified bundle into a scratch
working directory (new, empty, or marked as one a review made: it empties no
other, and never one holding the bundle) and runs the workflow there with only
the analysis rules allowed: nothing is built or measured, and a bundle lacking a file the
current analysis needs is refused before any job runs. The run has testbed
names of its own and keeps the testbed up at its end: it never tears down a
testbed, least of all one of a run in progress under the bundle's names.

The package's parts, by what they do: :mod:`~netnoise.bundle.plan` (what a run's
bundle carries), :mod:`~netnoise.bundle.pack` (packing and describing one),
:mod:`~netnoise.bundle.verification` and :mod:`~netnoise.bundle.contents`
(checking one), :mod:`~netnoise.bundle.reviewer` (rebuilding from one), on the
format and bounds of :mod:`~netnoise.bundle.layout`.
"""

from netnoise.bundle.layout import (
    CONFIG,
    DATA_SUFFIXES,
    EXPECTED,
    FORMAT,
    MANIFEST,
    READABLE_FORMATS,
    REVIEWED,
    SHIPPED,
    WORKDIR_MARK,
    BundleError,
    add_member,
    sha256,
)
from netnoise.bundle.pack import create, describe
from netnoise.bundle.plan import (
    ANALYSIS_PREFIXES,
    PlannedFile,
    analysis_inputs,
    cached_files,
    is_analysis,
    parse_summary,
    planned_files,
    raw_files,
    run_config,
    run_directory,
)
from netnoise.bundle.reviewer import (
    ACCEPTED,
    AGREEING,
    CLAIMS_TABLES,
    CLOSE,
    EXTENDED,
    IDENTICAL,
    REJUDGED,
    REVIEW_PREFIX,
    analysis_rules,
    compare_tables,
    fresh_workdir,
    missing_for_analysis,
    open_results,
    review,
    review_configfiles,
    shown,
    tidy_table,
    unpack,
)
from netnoise.bundle.verification import Verified, check, identify, verify

__all__ = [
    "ACCEPTED",
    "AGREEING",
    "ANALYSIS_PREFIXES",
    "CLAIMS_TABLES",
    "CLOSE",
    "CONFIG",
    "DATA_SUFFIXES",
    "EXPECTED",
    "EXTENDED",
    "FORMAT",
    "IDENTICAL",
    "MANIFEST",
    "READABLE_FORMATS",
    "REJUDGED",
    "REVIEWED",
    "REVIEW_PREFIX",
    "SHIPPED",
    "WORKDIR_MARK",
    "BundleError",
    "PlannedFile",
    "Verified",
    "add_member",
    "analysis_inputs",
    "analysis_rules",
    "cached_files",
    "check",
    "compare_tables",
    "create",
    "describe",
    "fresh_workdir",
    "identify",
    "is_analysis",
    "missing_for_analysis",
    "open_results",
    "parse_summary",
    "planned_files",
    "raw_files",
    "review",
    "review_configfiles",
    "run_config",
    "run_directory",
    "sha256",
    "shown",
    "tidy_table",
    "unpack",
    "verify",
]
