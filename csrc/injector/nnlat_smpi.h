/* The SimGrid side of libnnlatency in SMPI (nnlat_smpi_network.cpp, C++),
 * called from nnlat_smpi.c (C, compiled by smpicc). */
#ifndef NNLAT_SMPI_H
#define NNLAT_SMPI_H

#ifdef __cplusplus
extern "C" {
#endif

/* Makes every communication the network model starts from now on take
 * delay(source host name, context) seconds longer than its route's latency.
 * Returns -1 when the network model takes no latency callback. */
int nnlat_smpi_add_delays(double (*delay)(const char *host, void *context), void *context);

#ifdef __cplusplus
}
#endif

#endif
