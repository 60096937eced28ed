/*
 * asymmetric_ns3: seed 003's concurrent transfers on a packet-level two-level tree
 * (ns-3), written as p2p_concurrent writes them.
 *
 * Hosts sit in racks behind a top-of-rack switch each; every ToR reaches a core
 * switch by one uplink (the backbone). Every link of the pattern is one TCP
 * connection from its source host to its destination host, carrying its bytes
 * once per iteration; all links of an iteration start within --jitter-us of one
 * another (seeded), and an iteration starts once the previous one has delivered
 * everything. Iterations repeat until every link's 95 % confidence interval is at
 * most --ci-width of its mean (at least --min-iterations, at most
 * --max-iterations), the rule of p2p_concurrent and of seed 003 (Sec. 3.1).
 * An iteration that has not delivered everything --stall-s after its start is a
 * connection ns-3 left stuck: it is dropped and counted (#@stalled_iterations).
 *
 * Every switch port and host NIC sends through the same queue discipline and depth
 * (--queue-disc, --queue: "<n>p" packets or "<n>B" bytes): fifo is the device's
 * drop-tail queue, red a RED queue disc above a one-packet device queue.
 */
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unistd.h>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#ifndef NN_GIT_SHA
#define NN_GIT_SHA "unknown"
#endif
#ifndef NN_VERSION
#define NN_VERSION "unknown"
#endif

using namespace ns3;

namespace
{

// Without --socket-buffer-bytes, Linux's largest autotuned socket buffers
// (tcp_wmem, tcp_rmem maxima): ns-3's 128 kB default would cap a window below the
// path's bandwidth-delay product.
constexpr uint32_t SEND_BUFFER_BYTES = 4194304;
constexpr uint32_t RECEIVE_BUFFER_BYTES = 6291456;
constexpr uint16_t FIRST_PORT = 5000;
// Quiet time between iterations: the last FINs and ACKs leave the queues.
const Time ITERATION_GAP = MilliSeconds(2);

struct Link
{
    uint32_t src, dst;
    uint64_t bytes;
};

struct Options
{
    std::string pattern;
    std::string output = "-";
    uint32_t nodes = 30;
    uint32_t racks = 2;
    double nicMbit = 1000;
    double backboneMbit = 10000;
    double delayUs = 5;
    std::string congestion = "cubic";
    std::string queueDisc = "fifo";
    std::string queue = "1000p";
    uint32_t segmentBytes = 1448;
    double minRtoMs = 200;
    double jitterUs = 20;
    uint32_t seed = 1;
    uint32_t minIterations = 5;
    uint32_t maxIterations = 2000;
    double ciWidth = 0.02;
    double stallS = 20;
    uint32_t socketBufferBytes = 0;
};

[[noreturn]] void
Fail(const std::string& message)
{
    std::fprintf(stderr, "asymmetric_ns3: %s\n", message.c_str());
    std::exit(2);
}

// Two-sided 95 % Student t quantile with df degrees of freedom.
double
T95(uint32_t df)
{
    static const double table[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                   2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                   2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                   2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
    if (df == 0)
        return INFINITY;
    if (df <= 30)
        return table[df - 1];
    // Cornish-Fisher expansion around the normal quantile: within 1e-4 from df 30.
    const double z = 1.959964, d = df;
    return z + (z * z * z + z) / (4 * d) + (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * d * d);
}

std::vector<Link>
ReadPattern(const std::string& path, uint32_t hosts)
{
    std::ifstream in(path);
    if (!in)
        Fail("cannot open pattern file '" + path + "'");
    std::string line;
    std::vector<Link> links;
    uint32_t lineno = 0;
    while (std::getline(in, line))
    {
        lineno++;
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        if (lineno == 1)
        {
            if (line != "src,dst,bytes")
                Fail(path + ":1: header must be 'src,dst,bytes', got '" + line + "'");
            continue;
        }
        if (line.empty() || line[0] == '#')
            continue;
        long long src, dst, bytes;
        char tail;
        if (std::sscanf(line.c_str(), "%lld,%lld,%lld%c", &src, &dst, &bytes, &tail) != 3)
            Fail(path + ":" + std::to_string(lineno) + ": expected 3 integers src,dst,bytes");
        if (src < 0 || dst < 0 || src >= hosts || dst >= hosts || src == dst)
            Fail(path + ":" + std::to_string(lineno) + ": hosts must differ and be in [0, " +
                 std::to_string(hosts) + ")");
        if (bytes <= 0 || bytes > (1LL << 32))
            Fail(path + ":" + std::to_string(lineno) + ": bytes must be in [1, 2^32]");
        links.push_back({uint32_t(src), uint32_t(dst), uint64_t(bytes)});
    }
    if (links.empty())
        Fail(path + ": no links");
    return links;
}

std::string
TcpType(const std::string& congestion)
{
    if (congestion == "cubic")
        return "ns3::TcpCubic";
    if (congestion == "bbr")
        return "ns3::TcpBbr";
    if (congestion == "reno")
        return "ns3::TcpNewReno";
    Fail("--congestion must be cubic, bbr or reno, got '" + congestion + "'");
}

QueueSize
ParseQueue(const std::string& text)
{
    const bool ok = text.size() >= 2 && (text.back() == 'p' || text.back() == 'B') &&
                    text.find_first_not_of("0123456789") == text.size() - 1 && text[0] != '0';
    if (!ok)
        Fail("--queue must be <n>p (packets) or <n>B (bytes), n > 0, got '" + text + "'");
    return QueueSize(text);
}

// The run: topology, one sink per link, and the iteration loop driven by completions.
class Trial
{
  public:
    Trial(const Options& o, std::vector<Link> links)
        : m_opt(o),
          m_links(std::move(links)),
          m_apps(m_links.size()),
          m_port(m_links.size(), 0),
          m_got(m_links.size(), 0),
          m_start(m_links.size()),
          m_time(m_links.size(), -1),
          m_sum(m_links.size(), 0),
          m_sumsq(m_links.size(), 0)
    {
    }

    void Build();
    void Run();
    void Write(int argc, char** argv) const;

  private:
    void StartIteration();
    void Received(uint32_t link, Ptr<const Packet> packet, const Address& from);
    void IterationDone();
    void Stalled();
    bool Converged() const;

    const Options& m_opt;
    std::vector<Link> m_links;
    NodeContainer m_hosts;
    std::vector<Ipv4Address> m_address;
    // Of the iteration under way: every link's sender, its port (bytes from an
    // earlier iteration's connection are not counted), bytes, start and time.
    std::vector<Ptr<BulkSendApplication>> m_apps;
    std::vector<uint16_t> m_port;
    std::vector<uint64_t> m_got;
    std::vector<Time> m_start;
    std::vector<double> m_time;
    std::vector<double> m_sum, m_sumsq;
    std::vector<std::vector<double>> m_rows; // link, iteration, time_s
    Ptr<UniformRandomVariable> m_jitter;
    uint32_t m_iteration = 0, m_pending = 0, m_stalled = 0;
    EventId m_watchdog;
    bool m_done = false;
};

void
Trial::Build()
{
    const uint32_t perRack = m_opt.nodes / m_opt.racks;
    m_hosts.Create(m_opt.nodes);
    NodeContainer tors, core;
    tors.Create(m_opt.racks);
    core.Create(1);
    InternetStackHelper stack;
    stack.Install(m_hosts);
    stack.Install(tors);
    stack.Install(core);

    PointToPointHelper nic, backbone;
    nic.SetDeviceAttribute("DataRate", DataRateValue(DataRate(uint64_t(m_opt.nicMbit * 1e6))));
    backbone.SetDeviceAttribute("DataRate",
                                DataRateValue(DataRate(uint64_t(m_opt.backboneMbit * 1e6))));
    // fifo: the device's own drop-tail queue is the port's buffer, with no queue
    // disc above it (a one-packet device queue under a FIFO disc left ports stopped
    // for good now and then, every flow through them stalled). red: the disc holds
    // the buffer above a one-packet device queue.
    const QueueSize depth = ParseQueue(m_opt.queue);
    const bool fifo = m_opt.queueDisc == "fifo";
    for (auto* helper : {&nic, &backbone})
    {
        helper->SetChannelAttribute("Delay", TimeValue(MicroSeconds(m_opt.delayUs)));
        helper->SetQueue("ns3::DropTailQueue<Packet>",
                         "MaxSize", QueueSizeValue(fifo ? depth : QueueSize("1p")));
    }
    TrafficControlHelper tc;
    if (m_opt.queueDisc == "red")
        // Marking starts at a quarter of the depth and is certain at three quarters.
        tc.SetRootQueueDisc("ns3::RedQueueDisc",
                            "MaxSize", QueueSizeValue(depth),
                            "MinTh", DoubleValue(depth.GetValue() / 4.0),
                            "MaxTh", DoubleValue(depth.GetValue() * 3.0 / 4.0));

    Ipv4AddressHelper ip;
    ip.SetBase("10.0.0.0", "255.255.255.252");
    m_address.resize(m_opt.nodes);
    for (uint32_t h = 0; h < m_opt.nodes; h++)
    {
        NetDeviceContainer devices = nic.Install(m_hosts.Get(h), tors.Get(h / perRack));
        // Installed before addresses are assigned, which would install ns-3's default.
        if (!fifo)
            tc.Install(devices);
        m_address[h] = ip.Assign(devices).GetAddress(0);
        if (fifo)
            tc.Uninstall(devices);
        ip.NewNetwork();
    }
    for (uint32_t r = 0; r < m_opt.racks; r++)
    {
        NetDeviceContainer devices = backbone.Install(tors.Get(r), core.Get(0));
        if (!fifo)
            tc.Install(devices);
        ip.Assign(devices);
        if (fifo)
            tc.Uninstall(devices);
        ip.NewNetwork();
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    for (uint32_t l = 0; l < m_links.size(); l++)
    {
        PacketSinkHelper sink("ns3::TcpSocketFactory",
                              InetSocketAddress(Ipv4Address::GetAny(), FIRST_PORT + l));
        ApplicationContainer app = sink.Install(m_hosts.Get(m_links[l].dst));
        app.Start(Seconds(0));
        app.Get(0)->TraceConnectWithoutContext("Rx", MakeCallback(&Trial::Received, this).Bind(l));
    }
    m_jitter = CreateObject<UniformRandomVariable>();
    m_jitter->SetAttribute("Max", DoubleValue(m_opt.jitterUs));
}

void
Trial::StartIteration()
{
    m_pending = m_links.size();
    const Time now = Simulator::Now();
    for (uint32_t l = 0; l < m_links.size(); l++)
    {
        BulkSendHelper send("ns3::TcpSocketFactory",
                            InetSocketAddress(m_address[m_links[l].dst], FIRST_PORT + l));
        send.SetAttribute("MaxBytes", UintegerValue(m_links[l].bytes));
        // A write the send buffer can never take would wait for good; half of it
        // keeps the next write queued while one is in flight.
        const uint32_t write = m_opt.socketBufferBytes ? m_opt.socketBufferBytes / 2
                                                       : m_opt.segmentBytes * 16;
        send.SetAttribute("SendSize", UintegerValue(std::min(write, m_opt.segmentBytes * 16)));
        ApplicationContainer app = send.Install(m_hosts.Get(m_links[l].src));
        m_apps[l] = DynamicCast<BulkSendApplication>(app.Get(0));
        m_start[l] = now + MicroSeconds(m_jitter->GetValue());
        m_got[l] = 0;
        m_time[l] = -1;
        m_port[l] = 0;
        app.Start(m_start[l] - now);
    }
    m_watchdog = Simulator::Schedule(Seconds(m_opt.stallS), &Trial::Stalled, this);
}

void
Trial::Received(uint32_t link, Ptr<const Packet> packet, const Address& from)
{
    if (m_port[link] == 0)
    {
        // The sender's socket exists from its start, before any of its bytes arrive.
        Address name;
        m_apps[link]->GetSocket()->GetSockName(name);
        m_port[link] = InetSocketAddress::ConvertFrom(name).GetPort();
    }
    if (InetSocketAddress::ConvertFrom(from).GetPort() != m_port[link] || m_time[link] >= 0)
        return;
    m_got[link] += packet->GetSize();
    if (m_got[link] < m_links[link].bytes)
        return;
    m_time[link] = (Simulator::Now() - m_start[link]).GetSeconds();
    if (--m_pending == 0)
        IterationDone();
}

void
Trial::IterationDone()
{
    m_watchdog.Cancel();
    for (uint32_t l = 0; l < m_links.size(); l++)
    {
        m_sum[l] += m_time[l];
        m_sumsq[l] += m_time[l] * m_time[l];
        m_rows.push_back({double(l), double(m_iteration), m_time[l]});
    }
    m_iteration++;
    if (Converged() || m_iteration >= m_opt.maxIterations)
    {
        m_done = true;
        Simulator::Stop();
        return;
    }
    Simulator::Schedule(ITERATION_GAP, &Trial::StartIteration, this);
}

void
Trial::Stalled()
{
    // ns-3's TCP can leave a connection stuck for good (no byte for many RTO floors,
    // which no queue here explains): the iteration is dropped, counted, and its
    // connections closed; a run where that is more than rare fails.
    m_stalled++;
    const uint32_t allowed = std::max(2u, m_iteration / 10);
    if (m_stalled > allowed)
    {
        std::string stuck;
        for (uint32_t l = 0; l < m_links.size(); l++)
            if (m_time[l] < 0)
                stuck += " " + std::to_string(l) + " (" + std::to_string(m_got[l]) + " of " +
                         std::to_string(m_links[l].bytes) + " bytes)";
        Fail(std::to_string(m_stalled) + " iterations stalled (at most " + std::to_string(allowed) +
             " allowed after " + std::to_string(m_iteration) + "); links unfinished after --stall-s:" +
             stuck);
    }
    for (uint32_t l = 0; l < m_links.size(); l++)
        if (m_time[l] < 0)
        {
            m_time[l] = 0; // ignore whatever the closed connection still delivers
            m_apps[l]->GetSocket()->Close();
        }
    Simulator::Schedule(ITERATION_GAP, &Trial::StartIteration, this);
}

bool
Trial::Converged() const
{
    if (m_iteration < m_opt.minIterations)
        return false;
    const double n = m_iteration;
    for (uint32_t l = 0; l < m_links.size(); l++)
    {
        const double mean = m_sum[l] / n;
        const double var = std::max(0.0, (m_sumsq[l] - n * mean * mean) / (n - 1));
        if (2 * T95(m_iteration - 1) * std::sqrt(var / n) > m_opt.ciWidth * mean)
            return false;
    }
    return true;
}

void
Trial::Run()
{
    Simulator::Schedule(MilliSeconds(1), &Trial::StartIteration, this);
    Simulator::Run();
    Simulator::Destroy();
}

void
Trial::Write(int argc, char** argv) const
{
    std::ostringstream out;
    std::string args;
    for (int i = 0; i < argc; i++)
        args += (i ? " " : "") + std::string(argv[i]);
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    out << "#@format=netnoise-2\n#@tool=asymmetric_ns3\n#@version=" << NN_VERSION
        << "\n#@git_sha=" << NN_GIT_SHA << "\n#@argv=" << args << "\n#@seed=" << m_opt.seed
        << "\n#@ranks=" << 2 * m_links.size() << "\n#@hosts=" << m_opt.nodes
        << "\n#@date=" << date << "\n#@simulator=ns-3\n#@links=" << m_links.size()
        << "\n#@ci_width=" << m_opt.ciWidth << "\n#@max_iterations=" << m_opt.maxIterations
        << "\n#@iterations=" << m_iteration << "\n#@stalled_iterations=" << m_stalled
        << "\n#@stall_s=" << m_opt.stallS << "\n";
    const double n = m_iteration;
    char value[160];
    for (uint32_t l = 0; l < m_links.size(); l++)
    {
        const double mean = m_sum[l] / n;
        const double var = n > 1 ? std::max(0.0, (m_sumsq[l] - n * mean * mean) / (n - 1)) : 0;
        std::snprintf(value, sizeof value, "%u %u %llu %u %.9f %.9f", m_links[l].src,
                      m_links[l].dst, (unsigned long long)m_links[l].bytes, m_iteration, mean,
                      T95(m_iteration - 1) * std::sqrt(var / n));
        out << "#@link_" << l << "=" << value << "\n";
    }
    out << "link,src,dst,size_bytes,iteration,time_s\n";
    std::vector<std::vector<double>> rows = m_rows;
    std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
        return a[0] < b[0];
    });
    for (const auto& r : rows)
    {
        const Link& k = m_links[size_t(r[0])];
        std::snprintf(value, sizeof value, "%.0f,%u,%u,%llu,%.0f,%.9f", r[0], k.src, k.dst,
                      (unsigned long long)k.bytes, r[1], r[2]);
        out << value << "\n";
    }
    out << "#@end=" << rows.size() << "\n";
    if (m_opt.output == "-")
    {
        std::fputs(out.str().c_str(), stdout);
        return;
    }
    // Written beside the result and renamed: a cut run leaves no result.
    const std::string tmp = m_opt.output + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream file(tmp);
        file << out.str();
        if (!file.flush())
            Fail("cannot write '" + tmp + "'");
    }
    if (std::rename(tmp.c_str(), m_opt.output.c_str()) != 0)
        Fail("cannot rename '" + tmp + "' to '" + m_opt.output + "'");
}

} // namespace

int
main(int argc, char** argv)
{
    // Defaults a command line may override (--ns3::TcpSocket::...=...).
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(SEND_BUFFER_BYTES));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(RECEIVE_BUFFER_BYTES));
    // Linux's initial window (ns-3's own is 1 segment); its RTO floor is --min-rto-ms.
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    // Every segment acknowledged: with ns-3's delayed ACKs (every second segment) a
    // connection now and then stops for good mid-transfer, with or without SACK, under
    // every congestion control; acknowledging each segment, none has.
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Options o;
    CommandLine cmd;
    cmd.Usage("Seed 003's concurrent transfers of a pattern (CSV src,dst,bytes; hosts numbered "
              "rack by rack) on a two-level tree, repeated until every link's mean time is "
              "known to --ci-width; writes p2p_concurrent's result format.");
    cmd.AddValue("pattern", "pattern file (CSV src,dst,bytes of host numbers)", o.pattern);
    cmd.AddValue("output", "result file ('-': standard output)", o.output);
    cmd.AddValue("nodes", "hosts, split evenly over the racks", o.nodes);
    cmd.AddValue("racks", "racks (ToR switches) below the core switch", o.racks);
    cmd.AddValue("nic-mbit", "rate of a host's link to its ToR, each direction (Mbit/s)", o.nicMbit);
    cmd.AddValue("backbone-mbit", "rate of a ToR's uplink to the core, each direction (Mbit/s)",
                 o.backboneMbit);
    cmd.AddValue("delay-us", "propagation delay of every link (us)", o.delayUs);
    cmd.AddValue("congestion", "TCP congestion control: cubic, bbr or reno (NewReno)", o.congestion);
    cmd.AddValue("queue-disc", "queue discipline of every port: fifo or red", o.queueDisc);
    cmd.AddValue("queue", "queue depth of every port: <n>p packets or <n>B bytes", o.queue);
    cmd.AddValue("segment-bytes", "TCP segment (payload) size (bytes)", o.segmentBytes);
    cmd.AddValue("min-rto-ms", "floor of TCP's retransmission timeout (Linux: 200 ms)", o.minRtoMs);
    cmd.AddValue("jitter-us", "links start uniformly within this many us of one another", o.jitterUs);
    cmd.AddValue("seed", "seed of the start jitter", o.seed);
    cmd.AddValue("min-iterations", "iterations before the confidence test applies", o.minIterations);
    cmd.AddValue("max-iterations", "iterations at most", o.maxIterations);
    cmd.AddValue("ci-width", "stop once every link's 95 % interval is this share of its mean",
                 o.ciWidth);
    cmd.AddValue("stall-s",
                 "simulated seconds after its start at which an unfinished iteration is dropped "
                 "as stalled (more than a tenth of the iterations, at least 2, fail the run)",
                 o.stallS);
    cmd.AddValue("socket-buffer-bytes",
                 "send and receive buffer of every socket, the window's ceiling (bytes; 0: "
                 "Linux's autotuning maxima), as MPI's btl_tcp_sndbuf and btl_tcp_rcvbuf set it",
                 o.socketBufferBytes);
    cmd.Parse(argc, argv);

    if (o.pattern.empty())
        Fail("--pattern FILE is required");
    if (o.racks < 1 || o.nodes < 2 * o.racks || o.nodes % o.racks != 0)
        Fail("--nodes must be a multiple of --racks with at least two hosts per rack");
    if (!(o.nicMbit > 0) || !(o.backboneMbit > 0) || !(o.delayUs >= 0))
        Fail("--nic-mbit and --backbone-mbit must be > 0, --delay-us >= 0");
    if (o.segmentBytes < 536 || o.segmentBytes > 8948)
        Fail("--segment-bytes must be in [536, 8948]");
    if (!(o.minRtoMs > 0) || !(o.jitterUs >= 0) || o.seed == 0)
        Fail("--min-rto-ms must be > 0, --jitter-us >= 0, --seed > 0");
    if (o.minIterations < 2 || o.maxIterations < o.minIterations)
        Fail("need 2 <= --min-iterations <= --max-iterations");
    if (!(o.stallS > 0))
        Fail("--stall-s must be > 0");
    if (!(o.ciWidth > 0 && o.ciWidth <= 1))
        Fail("--ci-width must be in (0, 1]");
    if (o.queueDisc != "fifo" && o.queueDisc != "red")
        Fail("--queue-disc must be fifo or red, got '" + o.queueDisc + "'");
    ParseQueue(o.queue);
    if (o.socketBufferBytes != 0 && o.socketBufferBytes < 4 * o.segmentBytes)
        Fail("--socket-buffer-bytes must be 0 or at least four segments");
    if (o.socketBufferBytes != 0)
    {
        Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(o.socketBufferBytes));
        Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(o.socketBufferBytes));
    }

    RngSeedManager::SetSeed(o.seed);
    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       TypeIdValue(TypeId::LookupByName(TcpType(o.congestion))));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(o.segmentBytes));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(o.minRtoMs)));
    // BBR paces its sending (Linux's BBR does so through the fq qdisc or TCP itself).
    Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(o.congestion == "bbr"));

    Trial trial(o, ReadPattern(o.pattern, o.nodes));
    trial.Build();
    trial.Run();
    trial.Write(argc, argv);
    return 0;
}
