rule validate_testbed:
    output:
        table=report(
            f"{RESULTS}/tables/testbed_validation.csv",
            caption="../report/testbed_validation.rst",
            category="Platform",
            labels={"table": "testbed validation"},
        ),
        provenance=f"{RESULTS}/tables/testbed_validation.csv.prov.json",
    log:
        f"{LOGS}/validate_testbed.log",
    benchmark:
        f"{BENCHMARKS}/validate_testbed.tsv"
    conda:
        "../../envs/build.yaml"
    resources:
        network=1,
    params:
        platform=config["platform"],
        seconds=5,
    script:
        "../scripts/validate_testbed.py"


onsuccess:
    release_testbed()


onerror:
    release_testbed()
