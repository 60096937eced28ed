SHARED = platform_paths()
C_BUILD = c_sources()


rule build_programs:
    input:
        makefile=C_BUILD.makefile,
        sources=C_BUILD.files,
    output:
        programs=expand("{bin}/{program}", bin=SHARED.bin, program=C_BUILD.programs),
        info=f"{SHARED.bin}/build-info.json",
    log:
        f"{SHARED.logs}/build_programs.log",
    conda:
        "../../envs/build.yaml"
    params:
        build_dir=SHARED.build,
        flavour=C_BUILD.flavour,
        mpicc=C_BUILD.mpicc,
        cflags=config["build"]["cflags"],
        target="install",
    script:
        "../scripts/build_programs.py"


# The ns-3 programs (csrc/ns3), only where a study simulates: against the
# system's ns-3 (Debian libns3-dev; conda-forge has none for every platform).
rule build_ns3_programs:
    input:
        makefile=C_BUILD.makefile,
        sources=C_BUILD.ns3_files,
    output:
        programs=expand("{bin}/{program}", bin=SHARED.bin, program=C_BUILD.ns3_programs),
        info=f"{SHARED.bin}/build-info-ns3.json",
    log:
        f"{SHARED.logs}/build_ns3_programs.log",
    conda:
        "../../envs/build.yaml"
    params:
        build_dir=SHARED.build,
        # Not an MPI program: built alike on every platform.
        flavour="native",
        mpicc=config["build"]["mpicc"],
        cflags=config["build"]["cflags"],
        target="install-ns3",
    script:
        "../scripts/build_programs.py"


# Real applications (applications.<name>.source) and Netgauge: third-party
# code from a path or URL the user configures, built in a fresh copy, on the
# submitting host under a cluster executor: a login node reaches the internet
# where compute nodes usually do not, and has the MPI the jobs use.
localrules:
    build_application,


rule build_application:
    output:
        binary=f"{SHARED.bin}/apps/{{app}}",
        info=f"{SHARED.bin}/apps/{{app}}.build.json",
    log:
        f"{SHARED.logs}/build_application_{{app}}.log",
    wildcard_constraints:
        app=r"[a-z][a-z0-9_]*",
    conda:
        "../../envs/build.yaml"
    params:
        name=lambda wc: wc.app,
        source=lambda wc: config["applications"][wc.app]["source"],
        command=lambda wc: config["applications"][wc.app]["build"],
        binary=lambda wc: config["applications"][wc.app]["binary"],
        work_dir=lambda wc: f"{SHARED.build}/apps/{wc.app}",
        env=build_environment(),
    script:
        "../scripts/build_external.py"
