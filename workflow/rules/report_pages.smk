# Planning the report's pages (made by rules/report.smk): every table the report
# shows as a page of its own, each study's front page, the longer description
# and where the numbers come from; planned once every study has registered its targets.


def _shared_report_tables():
    """The platform's and the provenance's tables, by their report result."""
    tables = platform_paths().tables
    return {
        "claims": {
            "claims_summary": claims_summary_table(),
            "claims_beside": claims_beside_table(),
        },
        "platform": {
            "testbed_validation": f"{tables}/testbed_validation.csv",
            "baseline_latency_table": f"{tables}/baseline_latency.csv",
        },
        "provenance": {
            "cpu_summary": f"{tables}/cpu_summary.csv",
            "provenance": f"{tables}/provenance.csv",
        },
    }


def _study_report_pages(key, made):
    """The pages of study ``key``: its front page (when this config makes any of
    its results) and one per table of its REPORT_RESULTS that ``made`` holds."""
    paths = study_paths(key)
    shown = [
        r
        for r in report_results(key)
        if {f"{paths.tables}/{r.name}.csv", f"{paths.figures}/{r.name}.png"} & made
    ]
    if not shown:
        return []
    pages = [
        {
            "kind": "about",
            "category": key,
            "name": "about",
            "caption": "../report/study.rst",
            "study": key,
            "results": [r.title for r in report_results(key)],
            "missing": [
                r.title
                for r in report_results(key)
                if r not in shown and r != netnoise_report.ABOUT
            ],
        }
    ]
    for result in shown:
        csv = f"{paths.tables}/{result.name}.csv"
        if csv in made:
            # Every study's claims page shares one caption: the schema is one.
            shared = result.name == netnoise_report.HEADLINE_CLAIMS.name
            pages.append(
                {
                    "kind": "table",
                    "category": key,
                    "name": result.name,
                    "caption": (
                        f"../report/{result.name}.rst"
                        if shared
                        else f"{paths.captions}/{result.name}.rst"
                    ),
                    "csv": csv,
                    "title": result.title,
                    "units": dict(result.units),
                }
            )
    return pages


def _shared_report_pages(made):
    """The Platform's pages (the report's longer description, its tables) and the
    Provenance's (per-study summary, where the numbers come from, every result)."""
    captions = platform_paths().captions
    about = netnoise_report.find(netnoise_report.PLATFORM_RESULTS, "about_report")
    pages = [
        {
            "kind": "text",
            "category": "platform",
            "name": about.name,
            "caption": f"{captions}/{about.name}.rst",
            "title": about.title,
        }
    ]
    for category, tables in _shared_report_tables().items():
        for name, csv in tables.items():
            if category == "provenance" or csv in made:
                result = netnoise_report.find(report_results(category), name)
                pages.append(
                    {
                        "kind": "table",
                        "category": category,
                        "name": name,
                        "caption": f"{captions}/{name}.rst",
                        "csv": csv,
                        "title": result.title,
                        "units": dict(result.units),
                    }
                )
    pages.append(
        {
            "kind": "source",
            "category": "provenance",
            "name": "source",
            "caption": f"{captions}/source.rst",
        }
    )
    return pages


def report_page_specs():
    """Every page of the report: what it shows, its file (``html``), its report
    category, result name and caption."""
    made = set(all_targets())
    pages = [
        *(p for key in netnoise_studies.KEYS for p in _study_report_pages(key, made)),
        *_shared_report_pages(made),
    ]
    folder = f"{platform_paths().results}/report"
    return [{**p, "html": f"{folder}/{p['category']}/{p['name']}.html"} for p in pages]


def report_pages():
    """The files of every page of the report (targets of the workflow)."""
    return [page["html"] for page in report_page_specs()]


def report_inputs(pages):
    """What the report's pages are made from: the tables they show, the longer
    description, the claims summary where a study ran and, in a review, the
    bundle's manifest and record."""
    claims = claims_summary_table()
    return {
        "tables": sorted({p["csv"] for p in pages if "csv" in p}),
        "description": report_text("about.rst"),
        **({"claims": claims} if claims in all_targets() else {}),
        **reviewed_bundle(),
    }
