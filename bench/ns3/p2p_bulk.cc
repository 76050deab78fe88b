// p2p_bulk: ns-3 reference run of tcplab's scenarios/p2p-bulk.toml.
//
// Two nodes, one PointToPoint link (10 Mbps, 50 ms one-way, DropTail 100 packets
// on each device, no traffic-control queue disc), one unlimited BulkSend TCP flow
// from node 0 to node 1 using TcpLinuxReno with SACK, timestamps and window scaling.
//
// The settings actually in effect are read back from the live objects and printed
// on stderr; stdout carries exactly one JSON line with the results.
//
// Parameters (defaults: the p2p-bulk scenario) let bench/ns3_prr.py,
// bench/ns3_bbr.py and bench/ns3_aqm.py vary the path (--rate, --delay, --queue, --loss
// on the data direction; --aqm: a CoDel, FQ-CoDel, PIE or RED queue disc of --queue
// packets on the data direction, with --ecn marking and ECN-capable TCPs), the TCP (--cc linuxreno|cubic|bbr, --recovery, --minRto,
// --delAckTimeout, --bufBytes, --sndBufBytes) and what is measured (--warmup: goodput from
// then on; --sampleMs: the sender's smoothed RTT sampled that often after the
// warm-up, its median reported). Without --warmup and --sampleMs no extra
// event is scheduled.
//
// Build with bench/ns3/build.sh: against the headers and libraries that the PyPI
// `ns3` wheel ships (3.44), or with NS3_ROOT against a built ns-3 tree (compiles
// against ns-3 3.44 and ns-3-dev of 2026-07, ns-3.48-85-g140646449a33).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#ifndef P2P_NS3_VERSION
#define P2P_NS3_VERSION "unknown" // build.sh passes the version it built against
#endif

using namespace ns3;

namespace
{

// Counters filled by trace sinks.
struct Counters
{
    uint64_t txPackets = 0;      // PhyTxEnd on both devices (data + ACK)
    uint64_t txFwdPackets = 0;   // of which sent by node 0 (data; plus SYN / handshake ACK)
    uint64_t txRevPackets = 0;   // of which sent by node 1 (ACKs; plus SYN-ACK)
    uint64_t txBytes = 0;        // bytes on the wire (incl. 2-byte PPP header)
    uint64_t queueDrops = 0;     // DropTail drops on the device queues
    uint64_t tcDrops = 0;        // drops in the traffic-control layer (expected 0)
    uint64_t retransmissions = 0; // TcpSocketBase "Retransmission" trace
    uint64_t fastRecoveries = 0; // entries into CA_RECOVERY
    uint64_t rtoLosses = 0;      // entries into CA_LOSS (retransmission timeouts)
    uint32_t firstCwnd = 0;      // first value written to the congestion window
    bool sawCwnd = false;
    uint32_t maxCwnd = 0;
    Time srtt;                   // latest smoothed RTT of the sender
    std::vector<double> srttSamplesMs; // sampled after the warm-up
    uint64_t rxAtWarmup = 0;     // bytes received by the sink at --warmup
    std::vector<double> sojournMs; // --aqm: each packet's time in the queue disc
};

Counters g;
bool g_verbose = true;

void
PhyTxEndSender(Ptr<const Packet> p)
{
    ++g.txPackets;
    ++g.txFwdPackets;
    g.txBytes += p->GetSize();
}

void
PhyTxEndReceiver(Ptr<const Packet> p)
{
    ++g.txPackets;
    ++g.txRevPackets;
    g.txBytes += p->GetSize();
}

void
QueueDrop(Ptr<const Packet>)
{
    ++g.queueDrops;
}

void
TcDrop(Ptr<const Packet>)
{
    ++g.tcDrops;
}

void
Retransmission(Ptr<const Packet>,
               const TcpHeader&,
               const Address&,
               const Address&,
               Ptr<const TcpSocketBase>)
{
    ++g.retransmissions;
}

void
CongStateChange(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    if (now == TcpSocketState::CA_RECOVERY)
    {
        ++g.fastRecoveries;
    }
    else if (now == TcpSocketState::CA_LOSS)
    {
        ++g.rtoLosses;
    }
}

void
SrttChange(Time, Time now)
{
    g.srtt = now;
}

void
SampleSrtt(Time every)
{
    if (g.srtt.IsStrictlyPositive())
    {
        g.srttSamplesMs.push_back(g.srtt.GetSeconds() * 1e3);
    }
    Simulator::Schedule(every, &SampleSrtt, every);
}

void
Sojourn(Time t)
{
    g.sojournMs.push_back(t.GetSeconds() * 1e3);
}

// The q-quantile of v (nearest rank), -1 for none.
double
Quantile(std::vector<double> v, double q)
{
    if (v.empty())
    {
        return -1.0;
    }
    std::sort(v.begin(), v.end());
    size_t i = static_cast<size_t>(q * static_cast<double>(v.size()));
    return v[std::min(i, v.size() - 1)];
}

// The --aqm queue disc on the data direction, its parameters those of Linux's qdisc
// defaults (as tcplab's `aqm` key fills them; RED's thresholds and weight come from
// the caller, derived as iproute2's tc does).
Ptr<QueueDisc>
InstallAqm(Ptr<NetDevice> dev,
           const std::string& aqm,
           bool ecn,
           uint32_t queue,
           double redMin,
           double redMax,
           double redQw,
           double redMaxP,
           uint32_t redAvpkt,
           const std::string& rate)
{
    TrafficControlHelper tch;
    const std::string limit = std::to_string(queue) + "p";
    if (aqm == "codel")
    {
        tch.SetRootQueueDisc("ns3::CoDelQueueDisc",
                             "MaxSize", StringValue(limit),
                             "Target", StringValue("5ms"),
                             "Interval", StringValue("100ms"),
                             "UseEcn", BooleanValue(ecn));
    }
    else if (aqm == "fq_codel")
    {
        tch.SetRootQueueDisc("ns3::FqCoDelQueueDisc",
                             "MaxSize", StringValue(limit),
                             "Target", StringValue("5ms"),
                             "Interval", StringValue("100ms"),
                             "Flows", UintegerValue(1024),
                             "DropBatchSize", UintegerValue(64),
                             "UseEcn", BooleanValue(ecn));
    }
    else if (aqm == "pie")
    {
        // sch_pie: target 15 ms, tupdate 15 ms, alpha 2/16, beta 20/16, 150 ms burst
        // allowance, derandomisation and the drop-adjustment cap, marking only while the
        // probability is at most 10 %.
        tch.SetRootQueueDisc("ns3::PieQueueDisc",
                             "MaxSize", StringValue(limit),
                             "QueueDelayReference", StringValue("15ms"),
                             "Tupdate", StringValue("15ms"),
                             "A", DoubleValue(0.125),
                             "B", DoubleValue(1.25),
                             "MaxBurstAllowance", StringValue("150ms"),
                             "UseDerandomization", BooleanValue(true),
                             "UseCapDropAdjustment", BooleanValue(true),
                             "MarkEcnThreshold", DoubleValue(0.1),
                             "UseDequeueRateEstimator", BooleanValue(false),
                             "UseEcn", BooleanValue(ecn));
    }
    else
    {
        // sch_red: byte thresholds, no gentle region, marks (not drops) above max with ECN.
        tch.SetRootQueueDisc("ns3::RedQueueDisc",
                             "MaxSize", StringValue(std::to_string(queue * redAvpkt) + "B"),
                             "MeanPktSize", UintegerValue(redAvpkt),
                             "MinTh", DoubleValue(redMin),
                             "MaxTh", DoubleValue(redMax),
                             "QW", DoubleValue(redQw),
                             "LInterm", DoubleValue(1.0 / redMaxP),
                             "LinkBandwidth", StringValue(rate),
                             "Gentle", BooleanValue(false),
                             "UseHardDrop", BooleanValue(false),
                             "UseEcn", BooleanValue(ecn));
    }
    QueueDiscContainer qd = tch.Install(dev);
    return qd.Get(0);
}

void
MarkWarmup(Ptr<PacketSink> sink)
{
    g.rxAtWarmup = sink->GetTotalRx();
}

double
Median(std::vector<double> v)
{
    if (v.empty())
    {
        return -1.0;
    }
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

void
CwndChange(uint32_t, uint32_t now)
{
    if (!g.sawCwnd)
    {
        g.firstCwnd = now;
        g.sawCwnd = true;
    }
    if (now > g.maxCwnd)
    {
        g.maxCwnd = now;
    }
}

std::string
AttrString(Ptr<Object> obj, const std::string& name)
{
    // Generic read-back: create a value of the attribute's own type, fetch it and
    // serialize it; Time values are shown in seconds for readability.
    TypeId::AttributeInformation info;
    if (!obj || !obj->GetInstanceTypeId().LookupAttributeByName(name, &info))
    {
        return "<unavailable>";
    }
    Ptr<AttributeValue> v = info.checker->Create();
    if (!obj->GetAttributeFailSafe(name, *v))
    {
        return "<unavailable>";
    }
    if (auto t = DynamicCast<TimeValue>(v))
    {
        std::ostringstream os;
        os << t->Get().GetSeconds() << " s";
        return os.str();
    }
    return v->SerializeToString(info.checker);
}

// Number of root queue discs installed on the node's devices (via the
// TrafficControlLayer's RootQueueDiscList attribute, which does not assert).
uint32_t
CountRootQueueDiscs(Ptr<Node> node)
{
    Ptr<TrafficControlLayer> tc = node->GetObject<TrafficControlLayer>();
    NS_ABORT_MSG_IF(!tc, "no TrafficControlLayer");
    ObjectMapValue list;
    tc->GetAttribute("RootQueueDiscList", list);
    uint32_t n = 0;
    for (auto it = list.Begin(); it != list.End(); ++it)
    {
        if (it->second)
        {
            ++n;
        }
    }
    return n;
}

void
HookSocket(Ptr<BulkSendApplication> app)
{
    Ptr<Socket> s = app->GetSocket();
    Ptr<TcpSocketBase> tcp = DynamicCast<TcpSocketBase>(s);
    NS_ABORT_MSG_IF(!tcp, "BulkSend socket is not a TcpSocketBase");

    bool ok = true;
    ok &= tcp->TraceConnectWithoutContext("Retransmission", MakeCallback(&Retransmission));
    ok &= tcp->TraceConnectWithoutContext("CongState", MakeCallback(&CongStateChange));
    ok &= tcp->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&CwndChange));
    ok &= tcp->TraceConnectWithoutContext("RTT", MakeCallback(&SrttChange));
    NS_ABORT_MSG_IF(!ok, "failed to connect a TCP socket trace source");
    if (!g_verbose)
    {
        return;
    }

    std::cerr << "# sender socket (read back from the live object):\n";
    std::cerr << "#   socket class               " << tcp->GetInstanceTypeId().GetName() << "\n";
    for (const char* a : {"SegmentSize",
                          "InitialCwnd",
                          "InitialSlowStartThreshold",
                          "SndBufSize",
                          "RcvBufSize",
                          "DelAckCount",
                          "DelAckTimeout",
                          "TcpNoDelay",
                          "Sack",
                          "Timestamp",
                          "WindowScaling",
                          "MinRto",
                          "ClockGranularity",
                          "ReTxThreshold",
                          "LimitedTransmit",
                          "Fack",     // ns-3 >= 3.47 (off by default); "<unavailable>" before
                          "UseAbe"})  // likewise
    {
        std::cerr << "#   " << a << std::string(std::max<size_t>(1, 27 - std::string(a).size()), ' ')
                  << AttrString(tcp, a) << "\n";
    }
}

} // namespace

int
main(int argc, char* argv[])
{
    double duration = 600.0;
    uint32_t seed = 1;
    bool verbose = true;
    // Path and recovery (defaults: scenarios/p2p-bulk.toml); bench/ns3_prr.py varies them.
    std::string rate = "10Mbps";
    std::string delay = "50ms";
    uint32_t queue = 100;
    std::string recovery = "prr";
    std::string cc = "linuxreno";
    double loss = 0.0;
    double minRto = 1.0;
    double delAckTimeout = 0.2;
    uint32_t bufBytes = 4 * 1024 * 1024;
    uint32_t sndBufBytes = 0;
    double warmup = 0.0;
    double sampleMs = 0.0;
    std::string aqm = "none";
    bool ecn = false;
    double redMin = 0;
    double redMax = 0;
    double redQw = 0;
    double redMaxP = 0.02;
    uint32_t redAvpkt = 1000;

    CommandLine cmd(__FILE__);
    cmd.AddValue("duration", "Simulated duration in seconds", duration);
    cmd.AddValue("seed", "RNG seed (RngSeedManager::SetSeed)", seed);
    cmd.AddValue("verbose", "Print the settings on stderr", verbose);
    cmd.AddValue("rate", "Link rate, each way (ns-3 DataRate string)", rate);
    cmd.AddValue("delay", "One-way delay (ns-3 Time string)", delay);
    cmd.AddValue("queue", "DropTail limit of each device queue, packets", queue);
    cmd.AddValue("recovery", "prr (TcpPrrRecovery) or classic (TcpClassicRecovery)", recovery);
    cmd.AddValue("cc", "Congestion control: linuxreno, cubic or bbr (TcpBbr, paced)", cc);
    cmd.AddValue("loss", "Packet loss probability on the data direction (node 1 receive)", loss);
    cmd.AddValue("minRto", "Minimum RTO, seconds", minRto);
    cmd.AddValue("delAckTimeout", "Delayed-ACK timeout, seconds", delAckTimeout);
    cmd.AddValue("bufBytes", "Receive (and send) buffer, bytes", bufBytes);
    cmd.AddValue("sndBufBytes", "Send buffer, bytes [0: --bufBytes]", sndBufBytes);
    cmd.AddValue("warmup", "Goodput is also reported from this time on, seconds", warmup);
    cmd.AddValue("sampleMs", "Sample the smoothed RTT this often after --warmup, ms", sampleMs);
    cmd.AddValue("aqm", "Data direction's queue disc: none, codel, fq_codel, pie or red", aqm);
    cmd.AddValue("ecn", "ECN: the TCPs negotiate it and the queue disc marks", ecn);
    cmd.AddValue("redMin", "--aqm=red: minimum threshold, bytes", redMin);
    cmd.AddValue("redMax", "--aqm=red: maximum threshold, bytes", redMax);
    cmd.AddValue("redQw", "--aqm=red: averaging weight", redQw);
    cmd.AddValue("redMaxP", "--aqm=red: marking probability at the maximum", redMaxP);
    cmd.AddValue("redAvpkt", "--aqm=red: average packet size, bytes", redAvpkt);
    cmd.Parse(argc, argv);
    NS_ABORT_MSG_IF(aqm != "none" && aqm != "codel" && aqm != "fq_codel" && aqm != "pie" &&
                        aqm != "red",
                    "--aqm must be none, codel, fq_codel, pie or red");
    NS_ABORT_MSG_IF(ecn && aqm == "none", "--ecn needs an --aqm");
    NS_ABORT_MSG_IF(aqm == "red" && (redMin <= 0 || redMax <= redMin || redQw <= 0),
                    "--aqm=red needs 0 < --redMin < --redMax and --redQw > 0");
    g_verbose = verbose;
    NS_ABORT_MSG_IF(duration <= 0, "--duration must be > 0");
    NS_ABORT_MSG_IF(seed == 0, "--seed must be >= 1");
    NS_ABORT_MSG_IF(queue == 0, "--queue must be >= 1");
    NS_ABORT_MSG_IF(recovery != "prr" && recovery != "classic",
                    "--recovery must be prr or classic");
    NS_ABORT_MSG_IF(cc != "linuxreno" && cc != "cubic" && cc != "bbr",
                    "--cc must be linuxreno, cubic or bbr");
    NS_ABORT_MSG_IF(loss < 0 || loss >= 1, "--loss must be in [0, 1)");
    NS_ABORT_MSG_IF(warmup < 0 || warmup >= duration, "--warmup must be in [0, duration)");
    NS_ABORT_MSG_IF(sampleMs < 0, "--sampleMs must be >= 0");

    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(1);

    // ---- TCP defaults (applied to every TCP socket created afterwards) ----
    const uint32_t segSize = 1448;
    const uint32_t bufSize = bufBytes;
    TypeId ccType = TcpLinuxReno::GetTypeId();
    if (cc == "cubic")
    {
        ccType = TcpCubic::GetTypeId();
    }
    else if (cc == "bbr")
    {
        ccType = TcpBbr::GetTypeId();
        // BBR paces (TcpBbr turns pacing on itself; set it so the run says so).
        Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(true));
    }
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(ccType));
    // PRR is the ns-3 default; set explicitly so the run is self-describing.
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(recovery == "prr" ? TcpPrrRecovery::GetTypeId()
                                                     : TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segSize));
    Config::SetDefault("ns3::TcpSocket::SndBufSize",
                       UintegerValue(sndBufBytes ? sndBufBytes : bufSize));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(bufSize));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(Seconds(delAckTimeout)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(minRto)));
    if (ecn)
    {
        // RFC 3168 at both ends (Linux's net.ipv4.tcp_ecn = 1 on the sender).
        Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue("On"));
    }

    // ---- topology ----
    NodeContainer nodes;
    nodes.Create(2);

    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue(rate));
    p2p.SetChannelAttribute("Delay", StringValue(delay));
    const bool managed = aqm != "none";
    // With --aqm the device queues hold one packet and flow control is on: the queue
    // discs (the AQM on node 0, a FIFO of --queue packets on node 1) hold the rest.
    p2p.SetQueue("ns3::DropTailQueue<Packet>",
                 "MaxSize",
                 StringValue(managed ? std::string("1p") : std::to_string(queue) + "p"));
    // With no queue disc, flow control would make the traffic-control layer drop
    // packets while the device queue is "stopped". Disable it so the 100-packet
    // DropTail device queue is the only queue and the only place packets are dropped.
    if (!managed)
    {
        p2p.DisableFlowControl();
    }
    NetDeviceContainer devices = p2p.Install(nodes);

    InternetStackHelper stack;
    stack.Install(nodes);
    Ptr<QueueDisc> aqmDisc;
    if (managed)
    {
        aqmDisc = InstallAqm(devices.Get(0), aqm, ecn, queue, redMin, redMax, redQw, redMaxP,
                             redAvpkt, rate);
        TrafficControlHelper fifo;
        fifo.SetRootQueueDisc("ns3::FifoQueueDisc",
                              "MaxSize", StringValue(std::to_string(queue) + "p"));
        fifo.Install(devices.Get(1));
        NS_ABORT_MSG_IF(!aqmDisc->TraceConnectWithoutContext("SojournTime",
                                                             MakeCallback(&Sojourn)),
                        "failed to connect SojournTime");
    }

    Ipv4AddressHelper address;
    address.SetBase("10.1.1.0", "255.255.255.0");
    // Assign() installs the default root queue disc (FqCoDel) on devices that have a
    // NetDeviceQueueInterface. DisableFlowControl() above means the p2p devices have
    // none, so no queue disc should be installed; remove any that is, and verify.
    Ipv4InterfaceContainer ifaces = address.Assign(devices);
    bool removedQdisc = false;
    for (uint32_t i = 0; i < nodes.GetN() && !managed; ++i)
    {
        if (CountRootQueueDiscs(nodes.Get(i)) > 0)
        {
            TrafficControlHelper tch;
            tch.Uninstall(devices.Get(i));
            removedQdisc = true;
        }
        NS_ABORT_MSG_IF(CountRootQueueDiscs(nodes.Get(i)) != 0,
                        "a root queue disc is still installed on node " << i);
    }

    // ---- traces on devices / queues ----
    Ptr<PointToPointNetDevice> dev0 = DynamicCast<PointToPointNetDevice>(devices.Get(0));
    Ptr<PointToPointNetDevice> dev1 = DynamicCast<PointToPointNetDevice>(devices.Get(1));
    bool traced = true;
    traced &= dev0->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&PhyTxEndSender));
    traced &= dev1->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&PhyTxEndReceiver));
    traced &= dev0->GetQueue()->TraceConnectWithoutContext("Drop", MakeCallback(&QueueDrop));
    traced &= dev1->GetQueue()->TraceConnectWithoutContext("Drop", MakeCallback(&QueueDrop));
    for (uint32_t i = 0; i < nodes.GetN(); ++i)
    {
        Ptr<TrafficControlLayer> tc = nodes.Get(i)->GetObject<TrafficControlLayer>();
        NS_ABORT_MSG_IF(!tc, "no TrafficControlLayer");
        traced &= tc->TraceConnectWithoutContext("TcDrop", MakeCallback(&TcDrop));
    }
    NS_ABORT_MSG_IF(!traced, "failed to connect a device / queue trace source");
    if (loss > 0)
    {
        // Bernoulli loss of data packets: on what node 1 receives (as tcplab's
        // `down.loss` and the Linux testbed's data-direction loss).
        Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
        em->SetAttribute("ErrorUnit", StringValue("ERROR_UNIT_PACKET"));
        em->SetAttribute("ErrorRate", DoubleValue(loss));
        dev1->SetAttribute("ReceiveErrorModel", PointerValue(em));
    }

    // ---- applications ----
    const uint16_t port = 5001;
    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sinkApps = sinkHelper.Install(nodes.Get(1));
    sinkApps.Start(Seconds(0));

    BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(ifaces.GetAddress(1), port));
    bulk.SetAttribute("MaxBytes", UintegerValue(0)); // unlimited
    bulk.SetAttribute("SendSize", UintegerValue(segSize));
    ApplicationContainer srcApps = bulk.Install(nodes.Get(0));
    srcApps.Start(Seconds(0));

    Ptr<BulkSendApplication> bulkApp = DynamicCast<BulkSendApplication>(srcApps.Get(0));
    // The socket is created in StartApplication (t=0); hook it right after.
    Simulator::Schedule(NanoSeconds(1), &HookSocket, bulkApp);
    Ptr<PacketSink> sink = DynamicCast<PacketSink>(sinkApps.Get(0));
    if (warmup > 0)
    {
        Simulator::Schedule(Seconds(warmup), &MarkWarmup, sink);
    }
    if (sampleMs > 0)
    {
        Simulator::Schedule(Seconds(warmup), &SampleSrtt, Seconds(sampleMs / 1e3));
    }

    if (verbose)
    {
        Ptr<TcpL4Protocol> l4 = nodes.Get(0)->GetObject<TcpL4Protocol>();
        std::cerr << "# ns-3 " << P2P_NS3_VERSION << " p2p_bulk settings\n";
        std::cerr << "#   duration_s                 " << duration << "\n";
        std::cerr << "#   seed                       " << seed << "\n";
        std::cerr << "#   link                       " << AttrString(dev0, "DataRate") << ", delay "
                  << AttrString(DynamicCast<Object>(dev0->GetChannel()), "Delay")
                  << ", mtu " << dev0->GetMtu() << "\n";
        std::cerr << "#   device queue               DropTailQueue<Packet> MaxSize "
                  << AttrString(dev0->GetQueue(), "MaxSize") << " (each device)\n";
        std::cerr << "#   root queue disc            none" << (removedQdisc ? " (default one removed)" : "")
                  << ", device flow control disabled\n";
        std::cerr << "#   SocketType                 " << AttrString(l4, "SocketType") << "\n";
        std::cerr << "#   RecoveryType               " << AttrString(l4, "RecoveryType") << "\n";
        std::cerr << "#   RttEstimatorType           " << AttrString(l4, "RttEstimatorType") << "\n";
    }
    Simulator::Stop(Seconds(duration));
    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    auto t1 = std::chrono::steady_clock::now();
    const double runWall = std::chrono::duration<double>(t1 - t0).count();
    const uint64_t events = Simulator::GetEventCount();

    const uint64_t delivered = sink->GetTotalRx();
    uint64_t aqmDrops = 0;
    uint64_t aqmMarks = 0;
    if (aqmDisc)
    {
        const QueueDisc::Stats& st = aqmDisc->GetStats();
        aqmDrops = st.nTotalDroppedPackets;
        aqmMarks = st.nTotalMarkedPackets;
    }
    Simulator::Destroy();

    if (verbose)
    {
        std::cerr << "# observed: initial cwnd " << g.firstCwnd << " bytes ("
                  << (g.firstCwnd / segSize) << " segments), max cwnd " << g.maxCwnd
                  << " bytes, fast recoveries " << g.fastRecoveries << ", RTO losses "
                  << g.rtoLosses << "\n";
    }

    const double goodput = static_cast<double>(delivered) * 8.0 / duration;
    const double goodputWarm =
        static_cast<double>(delivered - g.rxAtWarmup) * 8.0 / (duration - warmup);
    char buf[2048];
    std::snprintf(buf,
                  sizeof(buf),
                  "{\"simulator\":\"ns-3\",\"ns3_version\":\"" P2P_NS3_VERSION "\","
                  "\"bytes_delivered\":%llu,"
                  "\"goodput_bps\":%.3f,\"duration_s\":%.9g,\"packets\":%llu,"
                  "\"fwd_packets\":%llu,\"rev_packets\":%llu,\"wire_bytes\":%llu,"
                  "\"queue_drops\":%llu,\"tc_drops\":%llu,\"retransmissions\":%llu,"
                  "\"fast_recoveries\":%llu,\"rto_losses\":%llu,\"initial_cwnd_bytes\":%u,"
                  "\"max_cwnd_bytes\":%u,\"events\":%llu,\"run_wall_s\":%.6f,"
                  "\"cc\":\"%s\",\"warmup_s\":%.9g,\"goodput_after_warmup_bps\":%.3f,"
                  "\"srtt_median_ms\":%.6f,\"aqm\":\"%s\",\"ecn\":%s,"
                  "\"aqm_drops\":%llu,\"ecn_marks\":%llu,"
                  "\"sojourn_p50_ms\":%.6f,\"sojourn_p99_ms\":%.6f}",
                  static_cast<unsigned long long>(delivered),
                  goodput,
                  duration,
                  static_cast<unsigned long long>(g.txPackets),
                  static_cast<unsigned long long>(g.txFwdPackets),
                  static_cast<unsigned long long>(g.txRevPackets),
                  static_cast<unsigned long long>(g.txBytes),
                  static_cast<unsigned long long>(g.queueDrops),
                  static_cast<unsigned long long>(g.tcDrops),
                  static_cast<unsigned long long>(g.retransmissions),
                  static_cast<unsigned long long>(g.fastRecoveries),
                  static_cast<unsigned long long>(g.rtoLosses),
                  g.firstCwnd,
                  g.maxCwnd,
                  static_cast<unsigned long long>(events),
                  runWall,
                  cc.c_str(),
                  warmup,
                  goodputWarm,
                  Median(g.srttSamplesMs),
                  aqm.c_str(),
                  ecn ? "true" : "false",
                  static_cast<unsigned long long>(aqmDrops),
                  static_cast<unsigned long long>(aqmMarks),
                  Quantile(g.sojournMs, 0.5),
                  Quantile(g.sojournMs, 0.99));
    std::cout << buf << std::endl;
    return 0;
}
