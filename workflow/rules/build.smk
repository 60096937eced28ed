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
