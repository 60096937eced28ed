# Proxy applications (one program per apps/NAME.c), included by csrc/Makefile.
APPS += fft_transpose fft_overlap halo3d cg_solver lu_wavefront monte_carlo multigrid
CHECKS += apps/tests/check.sh

# Every application includes the shared header. This fragment is read before
# the Makefile's first rule, so keep `all` the default goal.
.DEFAULT_GOAL := all
$(addprefix $(BINDIR)/,$(APPS)): apps/proxy.h
