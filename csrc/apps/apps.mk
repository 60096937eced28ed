# Proxy applications (one program per apps/NAME.c), included by csrc/Makefile.
APPS += fft_transpose fft_overlap halo3d cg_solver lu_wavefront monte_carlo multigrid
CHECKS += apps/tests/check.sh

# This fragment is read before the Makefile's first rule, so keep `all` the
# default goal.
.DEFAULT_GOAL := all

# The code every application shares (apps/proxy.c) is compiled once and
# linked into each of them with the common layer.
PROXY_OBJ := $(BUILD)/proxy.o

$(PROXY_OBJ): apps/proxy.c apps/proxy.h $(COMMON_HDR) | $(BUILD)
	$(MPICC) $(WARNINGS) $(CFLAGS) $(DEFS) -Icommon -c -o $@ $<

$(BINDIR)/%: apps/%.c apps/proxy.h $(PROXY_OBJ) $(PROGRAM_SRC) $(PROGRAM_OBJ) $(COMMON_HDR) \
              | $(BINDIR)
	$(MPICC) $(WARNINGS) $(CFLAGS) $(DEFS) -Icommon -o $@ $< $(PROXY_OBJ) $(PROGRAM_SRC) \
	  $(PROGRAM_OBJ) $(LDFLAGS) $(PROGRAM_LIBS) -lm
