rule build_programs:
    input:
        makefile=str(CSRC / "Makefile"),
        sources=C_SOURCES,
    output:
        programs=expand("{bin}/{program}", bin=BIN, program=C_PROGRAMS),
        info=f"{BIN}/build-info.json",
    log:
        f"{LOGS}/build_programs.log",
    conda:
        "../../envs/build.yaml"
    params:
        build_dir=f"{RESULTS}/build",
        mpicc=config["build"]["mpicc"],
        cflags=config["build"]["cflags"],
    script:
        "../scripts/build_programs.py"


# Real applications (applications.<name>.source) and Netgauge: third-party
# code from a path or URL the user configures, built in a fresh copy.
rule build_application:
    output:
        binary=f"{BIN}/apps/{{app}}",
        info=f"{BIN}/apps/{{app}}.build.json",
    log:
        f"{LOGS}/build_application_{{app}}.log",
    wildcard_constraints:
        app=r"[a-z][a-z0-9_]*",
    conda:
        "../../envs/build.yaml"
    params:
        name=lambda wc: wc.app,
        source=lambda wc: config["applications"][wc.app]["source"],
        command=lambda wc: config["applications"][wc.app]["build"],
        binary=lambda wc: config["applications"][wc.app]["binary"],
        work_dir=lambda wc: f"{RESULTS}/build/apps/{wc.app}",
        env=build_environment(),
    script:
        "../scripts/build_external.py"
