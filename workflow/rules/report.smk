# The report's pages (netnoise.report). Snakemake's report shows HTML results in
# the page and offers a CSV only as a download, so every table the report shows
# is a page made from its CSV here, beside each study's front page (its paper
# and what the testbed changes), the longer description of the report and
# where its numbers come from. Figures are filed by their plot rules
# (report_result); tables stay CSV for the workflow and for bundles.


localrules:
    tabulate_headline_claims,
    tabulate_claims_summary,
    tabulate_claims_beside,
    tabulate_report,


# Every paper's headline claims, judged from the study's tables by its
# headline module (netnoise.verdicts), then all of them in one table: the
# first thing the report, the terminal and the README show.


rule tabulate_headline_claims:
    input:
        unpack(lambda wc: headline_inputs(wc.study)),
    output:
        headline_claims_table("{study}"),
    log:
        f"{platform_paths().logs}/{{study}}/tabulate_headline_claims.log",
    wildcard_constraints:
        study="|".join(netnoise_studies.PAPER_KEYS),
    conda:
        "../../envs/analysis.yaml"
    params:
        study=lambda wc: wc.study,
    script:
        "../scripts/tabulate_headline_claims.py"


rule tabulate_claims_summary:
    input:
        judged_tables(all_targets()),
    output:
        claims_summary_table(),
    log:
        f"{platform_paths().logs}/tabulate_claims_summary.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        platform=config["platform"]["kind"],
    script:
        "../scripts/tabulate_claims_summary.py"


# Off the testbed (simgrid, slurm, localhost), the same claims beside the
# shipped testbed run's, so a reader sees where each platform agrees.
rule tabulate_claims_beside:
    input:
        summary=claims_summary_table(),
        shipped=SHIPPED_BUNDLE,
    output:
        claims_beside_table(),
    log:
        f"{platform_paths().logs}/tabulate_claims_beside.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        platform=config["platform"]["kind"],
    script:
        "../scripts/tabulate_claims_beside.py"


REPORT_PAGES = report_page_specs()
REPORT_SOURCE = f"{platform_paths().results}/report/source.rst"
REPORT_CLAIMS = f"{platform_paths().results}/report/claims.rst"


rule tabulate_report:
    input:
        unpack(lambda wc: report_inputs(REPORT_PAGES)),
    output:
        **{
            f"{page['category']}__{page['name']}": report_result(
                page["html"], page["category"], page["name"], caption=page["caption"]
            )
            for page in REPORT_PAGES
        },
        # Included by the landing page (report/workflow.rst).
        source=REPORT_SOURCE,
        claims=REPORT_CLAIMS,
    log:
        f"{platform_paths().logs}/tabulate_report.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        pages=REPORT_PAGES,
        platform=config["platform"]["kind"],
        provenance=f"{platform_paths().tables}/provenance.csv",
        summary=f"{platform_paths().tables}/cpu_summary.csv",
    script:
        "../scripts/report_pages.py"
