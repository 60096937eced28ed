# Provenance of every measured result, tabulated for the report.

PROVENANCE_TABLE = f"{RESULTS}/tables/provenance.csv"


rule tabulate_provenance:
    input:
        # After every table, so every measurement (and its sidecar) exists.
        tables=[t for t in all_targets() if t.endswith(".csv")],
    output:
        report(
            PROVENANCE_TABLE,
            caption="../report/provenance.rst",
            category="Provenance",
            labels={"table": "provenance"},
        ),
    log:
        f"{LOGS}/tabulate_provenance.log",
    conda:
        "../../envs/analysis.yaml"
    params:
        results=lambda wc, output: str(Path(output[0]).parent.parent),
    script:
        "../scripts/tabulate_provenance.py"
