from pathlib import Path

import pandas as pd

from netnoise import claims_summary, report, studies
from netnoise.jobs import logged
from netnoise.platform import from_settings
from netnoise.settings import Settings

with logged(snakemake.log[0]) as log:
    settings = Settings.of(snakemake.config)
    inputs = snakemake.input
    reviewed = hasattr(inputs, "review")
    source = report.describe_source(
        report.read_table(snakemake.params.provenance),
        snakemake.params.platform,
        manifest=report.read_json(inputs.manifest) if reviewed else None,
        review=report.read_json(inputs.review) if reviewed else None,
    )
    summary = report.table_html(
        pd.read_csv(snakemake.params.summary),
        report.find(report.PROVENANCE_RESULTS, "cpu_summary").units,
    )
    pages = {}
    for page in snakemake.params.pages:
        kind = page["kind"]
        if kind == "table":
            before = ""
            if page["csv"] == snakemake.params.provenance:
                before = f"<h2>Per study</h2>\n{summary}\n<h2>Every measured result</h2>\n"
            text = report.table_page(
                page["csv"],
                page["title"],
                page["units"],
                source=source.sentence_html,
                before=before,
            )
        elif kind == "about":
            study = studies.get(page["study"])
            platform = from_settings(settings.effective(settings.study(study.settings)))
            text = report.about_page(
                study,
                page["results"],
                source=source.sentence_html,
                facts=platform.facts(),
                missing=page["missing"],
            )
        elif kind == "text":
            text = report.text_page(
                page["title"], Path(inputs.description).read_text(), source=source.sentence_html
            )
        else:
            text = report.source_page(source)
        pages[page["html"]] = text
    pages[snakemake.output.source] = source.sentence_rst + "\n"
    # A run of the platform alone (no study enabled) has no claims to judge.
    pages[snakemake.output.claims] = (
        report.claims_rst(
            pd.read_csv(inputs.claims),
            snakemake.params.platform,
            {study.key: study.number for study in studies.STUDIES},
            claims_summary.cpu_records(pd.read_csv(snakemake.params.summary)),
        )
        if hasattr(inputs, "claims")
        else "No study ran, so no paper's claims are judged here.\n"
    )
    report.write_pages(pages)
    log.info("%d pages; %s", len(pages), source.sentence_html)
