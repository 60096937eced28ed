# netnoise: the two commands of README.md.
#   make reproduce   set up, then run the quick study and build the report
#   make test        set up, then run every check CI runs
#   make review      make the venv, then rebuild every figure and table from a
#                    results bundle (BUNDLE=..., default: the shipped one), running nothing
# `make setup` alone installs the Debian packages (when missing) and the venv.

SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
PYTHON ?= python3
SNAKEMAKE := $(BIN)/snakemake
CONFIG ?= config/config.yaml
REPORT := results/report.html
# CONFIG may list overlays after the study, e.g. "config/config.yaml config/testbed-bundle.yaml".
PLATFORM_KIND = $(shell $(BIN)/python -c "import sys; from netnoise.bundle import run_config; print(run_config(sys.argv[1:])['platform']['kind'])" $(CONFIG))
BUNDLE ?= resources/cache/quick-testbed.tar.gz

# chromium: the test that opens the report in a real browser (tests/core/test_report_browser.py);
# libns3-dev: seed 003's packet-level reference (csrc/ns3, asymmetric.network: ns3);
# bpftrace: the testbed's queue-time counters (netnoise.testbed.queue_time), with util-linux's
# unshare and mount where the host has not mounted tracefs; libsimgrid-dev: SimGrid with
# smpicc and smpirun, for platform.kind simgrid (Debian has no package named simgrid).
APT_PACKAGES := build-essential git make openmpi-bin libopenmpi-dev hwloc libhwloc-dev \
	iproute2 iperf3 bpftrace util-linux mount python3 python3-venv python3-dev chromium \
	libsimgrid-dev libns3-dev
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

.PHONY: setup system-packages reproduce review test lint clean cluster-profile \
	check-citation check-install
setup: system-packages $(VENV)/.installed

# Installs only what is missing, so a second run costs one dpkg query.
system-packages:
	@missing=$$(for p in $(APT_PACKAGES); do \
	    dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	  done); \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:" $$missing; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

$(VENV)/.installed: pyproject.toml requirements.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip==25.3
	$(BIN)/python -m pip install --quiet -c requirements.lock -e '.[workflow,dev]'
	touch $@

# CONFIG's files are read and validated by netnoise before Snakemake reads them:
# a missing file, a directory, a FIFO or a bad value ends in one line naming it,
# where Snakemake's own reader would end in a traceback (or wait on a FIFO).
reproduce: setup
	$(BIN)/netnoise config check $(CONFIG)
	$(SNAKEMAKE) --configfile $(CONFIG)
	$(BIN)/netnoise report --configfile $(CONFIG) --output $(REPORT)
	$(BIN)/netnoise bundle create --configfile $(CONFIG) --output results/bundle-$(PLATFORM_KIND).tar.gz
	@echo "figures and tables: results/*/figures, results/*/tables; report: $(REPORT)"
	@echo "results bundle: results/bundle-$(PLATFORM_KIND).tar.gz"
	@$(BIN)/netnoise claims results/$(PLATFORM_KIND)

# Reviewing runs only the analysis: it needs the venv, no Debian package and no root.
review: $(VENV)/.installed
	$(BIN)/netnoise review --bundle $(BUNDLE)

lint: setup
	$(SNAKEMAKE) --lint
	$(BIN)/snakefmt --check workflow
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# The slowest tests are listed so the suite's time (about 20 minutes on 2
# cores) stays visible in every CI log.
test: lint check-citation check-install
	$(MAKE) -C csrc check
	$(BIN)/pytest --durations=25

# CITATION.cff against the Citation File Format's schema. cffconvert has a venv
# of its own: it needs a jsonschema older than the project's.
CFFCONVERT := $(VENV)/tools/cffconvert
check-citation: $(VENV)/.installed
	test -x $(CFFCONVERT)/bin/cffconvert || { $(PYTHON) -m venv $(CFFCONVERT) && \
	  $(CFFCONVERT)/bin/python -m pip install --quiet cffconvert==2.0.0; }
	$(CFFCONVERT)/bin/cffconvert --validate -i CITATION.cff

# `pip install` as a user would, into a fresh venv: pyproject.toml's ranges
# alone, no lock, so pip takes the newest releases they allow; then quick tests
# of the installed package (a range that lets in a breaking release fails here).
RANGES_VENV := $(VENV)/tools/ranges
RANGES_TESTS := tests/core/test_config.py tests/core/test_io.py \
	tests/variability/test_model.py tests/latency_variation/test_fits.py \
	tests/impact_compression/test_figures.py tests/network_noise/test_figures.py
check-install: $(VENV)/.installed
	rm -rf $(RANGES_VENV)
	$(PYTHON) -m venv $(RANGES_VENV)
	$(RANGES_VENV)/bin/python -m pip install --quiet '.[workflow,dev]'
	$(RANGES_VENV)/bin/python -m pytest -q -m "not slow" -p no:cacheprovider $(RANGES_TESTS)

# `snakemake --profile slurm` finds a bare profile name only in the user's
# Snakemake profile directory (or /etc/xdg/snakemake, or the working directory).
PROFILE_HOME := $(or $(XDG_CONFIG_HOME),$(HOME)/.config)/snakemake
cluster-profile:
	@if [ -e $(PROFILE_HOME)/slurm ] && [ ! -L $(PROFILE_HOME)/slurm ]; then \
	  echo "$(PROFILE_HOME)/slurm exists and is not a link: move it aside first"; exit 1; fi
	mkdir -p $(PROFILE_HOME)
	ln -sfn $(CURDIR)/profiles/slurm $(PROFILE_HOME)/slurm
	@echo "snakemake --profile slurm now uses $(CURDIR)/profiles/slurm"

clean:
	rm -rf results .snakemake csrc/build
