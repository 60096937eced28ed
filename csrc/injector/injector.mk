# libnnlatency.so: the latency injector of seed 004 (Sec. 3), loaded with
# LD_PRELOAD; see injector/README.md. Included by csrc/Makefile.

INJECTOR_SRC := injector/nnlat_core.c injector/nnlat_init.c injector/nnlat_mpi.c \
                injector/nnlat_tcp.c
INJECTOR_HDR := injector/nnlat.h common/nn_life.h

LIBRARIES += libnnlatency.so
CHECKS += injector/tests/check.sh

# SMPI loads no library into its ranks: there the injector is linked into every
# program (injector/nnlat_smpi.c), idle unless NN_LATENCY_TABLE is set, and its
# delays lengthen the latency of every message in SimGrid's network model.
ifeq ($(FLAVOUR),smpi)
PROGRAM_SRC += injector/nnlat_core.c injector/nnlat_smpi.c
PROGRAM_OBJ += $(BUILD)/nnlat_smpi_network.o
PROGRAM_LIBS += -lsimgrid -lstdc++
endif

$(BUILD)/nnlat_smpi_network.o: injector/nnlat_smpi_network.cpp injector/nnlat_smpi.h | $(BUILD)
	$(CXX) -std=c++17 -Wall -Wextra $(CXXFLAGS) -fPIC -c -o $@ $<

# Only the wrapped MPI and C library functions are exported (-fvisibility=hidden).
$(BINDIR)/libnnlatency.so: $(INJECTOR_SRC) $(INJECTOR_HDR) | $(BINDIR)
	$(MPICC) $(WARNINGS) $(CFLAGS) $(DEFS) -fPIC -shared -fvisibility=hidden -pthread \
	  -o $@ $(INJECTOR_SRC) $(LDFLAGS) -ldl -lm

# Unit tests of the core: plain C, no MPI.
$(BUILD)/test_nnlatency: injector/tests/test_nnlatency.c injector/nnlat_core.c $(INJECTOR_HDR) \
                         | $(BUILD)
	$(CC) $(WARNINGS) $(CFLAGS) $(DEFS) -Iinjector -o $@ injector/tests/test_nnlatency.c \
	  injector/nnlat_core.c $(LDFLAGS) -lm

# Calls every intercepted send once or more; check.sh counts the delays.
$(BUILD)/nnlat_sendfamily: injector/tests/sendfamily.c | $(BUILD)
	$(MPICC) $(WARNINGS) $(CFLAGS) -o $@ $< $(LDFLAGS)

# Times the MPI_Send wrapper against PMPI_Send in one process.
$(BUILD)/nnlat_wrapcost: injector/tests/wrapcost.c | $(BUILD)
	$(MPICC) $(WARNINGS) $(CFLAGS) -o $@ $< $(LDFLAGS)

check: $(BUILD)/test_nnlatency $(BUILD)/nnlat_sendfamily $(BUILD)/nnlat_wrapcost
