# The report's pages (netnoise.report). Snakemake's report shows HTML results in
# the page and offers a CSV only as a download, so every table the report shows
# is a page made from its CSV here, beside each study's front page (its paper
# and what the testbed changes), the longer description of the report and
# where its numbers come from. Figures are filed by their plot rules
# (report_result); tables stay CSV for the workflow and for bundles.


localrules:
    tabulate_report,


REPORT_PAGES = report_page_specs()
REPORT_SOURCE = f"{platform_paths().results}/report/source.rst"


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
