/*
 * The delay of libnnlatency in SimGrid's network model (see nnlat_smpi.c):
 * the latency factor of every communication, so that its latency becomes the
 * route's (the sum of its links') plus the delay drawn for its source host.
 * A communication within one host (no link, no latency) is not delayed, as
 * shared-memory messages pass no network adapter in the paper.
 */
#include "nnlat_smpi.h"

#include <exception>
#include <simgrid/kernel/resource/NetworkModelIntf.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

extern "C" int nnlat_smpi_add_delays(double (*delay)(const char *host, void *context),
                                     void *context)
{
    using namespace simgrid;
    try {
        auto *model = s4u::Engine::get_instance()->get_netzone_root()->get_network_model();
        model->set_lat_factor_cb([delay, context](double, const s4u::Host *source,
                                                  const s4u::Host *, const std::vector<s4u::Link *> &links,
                                                  const std::unordered_set<s4u::NetZone *> &) {
            double latency = 0;
            for (const auto *link : links)
                latency += link->get_latency();
            if (latency <= 0)
                return 1.0;
            return (latency + delay(source->get_cname(), context)) / latency;
        });
    } catch (const std::exception &) {
        return -1;
    }
    return 0;
}
