// coaplab's reference star (docs/design.md §2, docs/model.md) in ns-3 3.37, for
// bench/ns3/compare.py. Two workloads:
//
//   --transport=tcp   the CoAP-over-TCP firmware transfer of examples/tcp-firmware.toml:
//                     client i connects at an offset uniform in [0, spread], both ends write a
//                     7-byte CSM, and once every client holds the server's CSM and has its own
//                     acknowledged, client i writes a 10-byte GET at that instant plus the same
//                     offset (docs/model.md, "Clients"); the server
//                     answers with one 102 407-byte message (RFC 8323 framing of 102 400 bytes).
//                     FCT = request written -> last response byte delivered to the client.
//   --transport=udp   CoAP over UDP, `continuous` workload: each client sends `exchanges` CON
//                     GETs back to back (NSTART 1), 12 B of CoAP (40 B IP), retransmitted by
//                     RFC 7252 §4.2 (first timer uniform in [ACK_TIMEOUT, ACK_TIMEOUT *
//                     ACK_RANDOM_FACTOR], doubled per retransmission, at most MAX_RETRANSMIT
//                     retransmissions, then the exchange fails and the next starts); the server
//                     answers every copy at once with a 65-byte piggybacked 2.05 (93 B IP).
//                     FCT = first request -> end (response or failure) of the last exchange.
//
// The network: every client application runs on one "devices" node (coaplab's clients share
// one uplink: one queue, one serializer), a router, a server.
//
//   devices --SimpleNetDevice 60 kbit/s, unlimited queue, 200 ms--> router --path U[10,20] ms--> server
//   devices <--400 ms, 30 kbit/s, DropTail queue of --buffer bytes-- router <--path U[10,20] ms-- server
//
// SimpleNetDevice adds no header (a packet tag carries its addresses), so a link serializes
// exactly the IP packet, as coaplab's links do (0 B link overhead). It dequeues the packet it
// serializes, so its DropTail queue holds only waiting packets, as coaplab's buffer. The
// channel below (StarChannel) gives each direction its own delay: fixed for the two links,
// uniform per packet with FIFO order kept (delivery = max(now + delay, previous delivery)) for
// the router <-> server path, as coaplab's `net/path.rs`.
//
// Output: one JSON object on stdout: per replication the clients' FCTs, the events ns-3
// executed, and the CPU time of the simulation (setup + run, process start excluded).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/simple-channel.h"
#include "ns3/simple-net-device.h"
#include "ns3/queue-disc.h"
#include "ns3/traffic-control-layer.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <sstream>
#include <vector>

using namespace ns3;

namespace
{

// CPU time of the process (every thread), as Python's time.process_time on coaplab's side.
double
CpuSeconds()
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// A two-device channel with a delay per direction: fixed, or uniform per packet with FIFO kept.

class StarChannel : public SimpleChannel
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("coaplab::StarChannel")
                                .SetParent<SimpleChannel>()
                                .SetGroupName("Network")
                                .AddConstructor<StarChannel>();
        return tid;
    }

    // Direction 0: from the first device added to the second; direction 1: the reverse.
    void SetDelay(int direction, Time min, Time max)
    {
        m_min[direction] = min;
        m_max[direction] = max;
        if (max > min && !m_rng[direction])
        {
            m_rng[direction] = CreateObject<UniformRandomVariable>();
        }
    }

    void Add(Ptr<SimpleNetDevice> device) override
    {
        SimpleChannel::Add(device);
        m_ends.push_back(device);
    }

    void Send(Ptr<Packet> p,
              uint16_t protocol,
              Mac48Address to,
              Mac48Address from,
              Ptr<SimpleNetDevice> sender) override
    {
        int dir = sender == m_ends[0] ? 0 : 1;
        Ptr<SimpleNetDevice> peer = m_ends[1 - dir];
        Time delay = m_min[dir];
        if (m_rng[dir])
        {
            delay = Seconds(m_rng[dir]->GetValue(m_min[dir].GetSeconds(), m_max[dir].GetSeconds()));
        }
        Time at = std::max(Simulator::Now() + delay, m_last[dir]);
        m_last[dir] = at;
        Simulator::ScheduleWithContext(peer->GetNode()->GetId(),
                                       at - Simulator::Now(),
                                       &SimpleNetDevice::Receive,
                                       peer,
                                       p,
                                       protocol,
                                       to,
                                       from);
    }

  private:
    std::vector<Ptr<SimpleNetDevice>> m_ends;
    Time m_min[2];
    Time m_max[2];
    Time m_last[2];
    Ptr<UniformRandomVariable> m_rng[2];
};

NS_OBJECT_ENSURE_REGISTERED(StarChannel);

// ---------------------------------------------------------------------------------------------
// Parameters and results

struct Params
{
    std::string transport = "tcp";
    uint32_t clients = 1;
    uint32_t exchanges = 50;
    uint32_t bufferBytes = 1410000;
    double spreadS = 0.05;
    // TCP
    std::string slowStart = "linux"; // linux: TcpLinuxReno; rfc: TcpNewReno (1 MSS per ACK)
    uint32_t resourceBytes = 102400;
    // UDP (RFC 7252 §4.8 defaults)
    double ackTimeoutS = 2.0;
    double ackRandomFactor = 1.5;
    uint32_t maxRetransmit = 4;
    double maxTimerS = 60.0; // coaplab's cap on a CoAP timer (crates/cc Config::max_timer)
};

static const uint16_t kPort = 5683;
static const uint32_t kCsmBytes = 7;       // RFC 8323 CSM with Max-Message-Size 2^20 + BWT
static const uint32_t kTcpRequestBytes = 10; // GET, Uri-Path "sensors", no token
static const uint32_t kUdpRequestBytes = 12; // CoAP over UDP: 4 B header + 8 B Uri-Path
static const uint32_t kUdpResponseBytes = 65; // 2.05, 60-byte payload (4 + 1 marker + 60)

// RFC 8323 §3.2 framed length of a 2.05 with `payload` bytes and no options/token.
static uint32_t
FramedResponse(uint32_t payload)
{
    uint32_t len = payload ? payload + 1 : 0; // payload marker
    uint32_t ext = len < 13 ? 0 : len < 269 ? 1 : len < 65805 ? 2 : 4;
    return 1 + ext + 1 + len;
}

struct Outcome
{
    std::vector<double> fct;
    uint64_t failed = 0;
    uint64_t retransmissions = 0; // UDP: CoAP retransmissions
    uint64_t rtoExpirations = 0;  // TCP, server side: entries into CA_LOSS
    uint64_t fastRecoveries = 0;  // TCP, server side: entries into CA_RECOVERY
};

// ---------------------------------------------------------------------------------------------
// CoAP over TCP

struct TcpRun;

class TcpServerApp : public Application
{
  public:
    uint32_t responseBytes = 0;
    Outcome* out = nullptr;

  private:
    struct Conn
    {
        uint32_t received = 0;
        bool answered = false;
    };

    void StartApplication() override
    {
        m_listen = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
        m_listen->Bind(InetSocketAddress(Ipv4Address::GetAny(), kPort));
        m_listen->Listen();
        m_listen->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                    MakeCallback(&TcpServerApp::Accepted, this));
    }

    void StopApplication() override
    {
    }

    // Called when the handshake's final ACK arrives: the server writes its CSM then.
    void Accepted(Ptr<Socket> s, const Address&)
    {
        m_conns[PeekPointer(s)] = Conn{};
        m_sockets.push_back(s);
        s->SetRecvCallback(MakeCallback(&TcpServerApp::Readable, this));
        s->TraceConnectWithoutContext("CongState", MakeCallback(&TcpServerApp::CongState, this));
        s->Send(Create<Packet>(kCsmBytes));
    }

    void CongState(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
    {
        if (now == TcpSocketState::CA_LOSS)
        {
            ++out->rtoExpirations;
        }
        else if (now == TcpSocketState::CA_RECOVERY)
        {
            ++out->fastRecoveries;
        }
    }

    void Readable(Ptr<Socket> s)
    {
        Conn& c = m_conns[PeekPointer(s)];
        while (Ptr<Packet> p = s->Recv())
        {
            c.received += p->GetSize();
        }
        if (!c.answered && c.received >= kCsmBytes + kTcpRequestBytes)
        {
            c.answered = true;
            s->Send(Create<Packet>(responseBytes));
        }
    }

    Ptr<Socket> m_listen;
    std::vector<Ptr<Socket>> m_sockets;
    std::map<Socket*, Conn> m_conns;
};

class TcpClientApp : public Application
{
  public:
    Address server;
    uint32_t responseBytes = 0;
    std::function<void()> onReady;           // holds the server's CSM, own CSM acknowledged
    std::function<void(double)> onDone;      // FCT

    void SendRequest()
    {
        m_requestAt = Simulator::Now();
        m_socket->Send(Create<Packet>(kTcpRequestBytes));
    }

  private:
    void StartApplication() override
    {
        m_socket = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
        m_socket->Bind();
        m_socket->SetConnectCallback(MakeCallback(&TcpClientApp::Connected, this),
                                     MakeCallback(&TcpClientApp::ConnectFailed, this));
        m_socket->SetRecvCallback(MakeCallback(&TcpClientApp::Readable, this));
        m_socket->SetSendCallback(MakeCallback(&TcpClientApp::TxSpace, this));
        m_socket->Connect(server);
    }

    void StopApplication() override
    {
    }

    void Connected(Ptr<Socket> s)
    {
        m_sndBuf = s->GetTxAvailable();
        s->Send(Create<Packet>(kCsmBytes));
    }

    void ConnectFailed(Ptr<Socket>)
    {
        NS_FATAL_ERROR("connection failed");
    }

    // ns-3 reports freed send-buffer space when ACKs remove data: the whole buffer free = the
    // CSM is acknowledged (no request written yet).
    void TxSpace(Ptr<Socket> s, uint32_t available)
    {
        if (!m_csmAcked && m_sndBuf > 0 && available == m_sndBuf)
        {
            m_csmAcked = true;
            CheckReady();
        }
    }

    void Readable(Ptr<Socket> s)
    {
        while (Ptr<Packet> p = s->Recv())
        {
            m_received += p->GetSize();
        }
        CheckReady();
        if (!m_done && m_received >= kCsmBytes + responseBytes)
        {
            m_done = true;
            onDone((Simulator::Now() - m_requestAt).GetSeconds());
        }
    }

    void CheckReady()
    {
        if (!m_ready && m_csmAcked && m_received >= kCsmBytes)
        {
            m_ready = true;
            onReady();
        }
    }

    Ptr<Socket> m_socket;
    uint32_t m_sndBuf = 0;
    uint32_t m_received = 0;
    bool m_csmAcked = false;
    bool m_ready = false;
    bool m_done = false;
    Time m_requestAt;
};

// ---------------------------------------------------------------------------------------------
// CoAP over UDP

class UdpServerApp : public Application
{
  private:
    void StartApplication() override
    {
        m_socket = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
        m_socket->Bind(InetSocketAddress(Ipv4Address::GetAny(), kPort));
        m_socket->SetRecvCallback(MakeCallback(&UdpServerApp::Readable, this));
    }

    void StopApplication() override
    {
    }

    // Every copy of a request gets the same piggybacked response at once (a duplicate of a
    // CON within EXCHANGE_LIFETIME is answered again, RFC 7252 §4.5).
    void Readable(Ptr<Socket> s)
    {
        Address from;
        while (Ptr<Packet> p = s->RecvFrom(from))
        {
            uint8_t req[kUdpRequestBytes];
            p->CopyData(req, kUdpRequestBytes);
            uint8_t resp[kUdpResponseBytes] = {};
            resp[0] = req[0]; // the Message ID (our bytes 0-1) identifies the exchange
            resp[1] = req[1];
            s->SendTo(Create<Packet>(resp, kUdpResponseBytes), 0, from);
        }
    }

    Ptr<Socket> m_socket;
};

class UdpClientApp : public Application
{
  public:
    Address server;
    const Params* params = nullptr;
    Time startOffset;
    std::function<void(double, uint64_t, uint64_t)> onDone; // FCT, failed, retransmissions

  private:
    void StartApplication() override
    {
        m_socket = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
        m_socket->Bind();
        m_socket->Connect(server);
        m_socket->SetRecvCallback(MakeCallback(&UdpClientApp::Readable, this));
        m_dither = CreateObject<UniformRandomVariable>();
        Simulator::Schedule(startOffset, &UdpClientApp::StartExchange, this);
    }

    void StopApplication() override
    {
        m_timer.Cancel();
    }

    void StartExchange()
    {
        if (m_started == params->exchanges)
        {
            onDone((m_lastEnd - m_firstRequest).GetSeconds(), m_failed, m_retransmissions);
            return;
        }
        if (m_started == 0)
        {
            m_firstRequest = Simulator::Now();
        }
        ++m_started;
        m_mid = static_cast<uint16_t>(m_mid + 1);
        m_copies = 0;
        m_timeout = Seconds(m_dither->GetValue(params->ackTimeoutS,
                                               params->ackTimeoutS * params->ackRandomFactor));
        Transmit();
    }

    void Transmit()
    {
        uint8_t req[kUdpRequestBytes] = {};
        req[0] = m_mid >> 8;
        req[1] = m_mid & 0xff;
        m_socket->Send(Create<Packet>(req, kUdpRequestBytes));
        m_timer = Simulator::Schedule(m_timeout, &UdpClientApp::Timeout, this);
    }

    void Timeout()
    {
        if (m_copies == params->maxRetransmit)
        {
            ++m_failed;
            m_lastEnd = Simulator::Now();
            StartExchange();
            return;
        }
        ++m_copies;
        ++m_retransmissions;
        m_timeout = std::min(m_timeout * 2, Seconds(params->maxTimerS));
        Transmit();
    }

    void Readable(Ptr<Socket> s)
    {
        while (Ptr<Packet> p = s->Recv())
        {
            uint8_t resp[2];
            p->CopyData(resp, 2);
            uint16_t mid = static_cast<uint16_t>(resp[0] << 8 | resp[1]);
            if (mid != m_mid || !m_timer.IsRunning())
            {
                continue; // a response to a completed exchange: a duplicate, ignored
            }
            m_timer.Cancel();
            m_lastEnd = Simulator::Now();
            StartExchange();
        }
    }

    Ptr<Socket> m_socket;
    Ptr<UniformRandomVariable> m_dither;
    EventId m_timer;
    uint32_t m_started = 0;
    uint16_t m_mid = 0;
    uint32_t m_copies = 0;
    uint64_t m_failed = 0;
    uint64_t m_retransmissions = 0;
    Time m_timeout;
    Time m_firstRequest;
    Time m_lastEnd;
};

// ---------------------------------------------------------------------------------------------
// The star and one replication

static Outcome
RunOnce(const Params& prm, uint64_t& events)
{
    Ptr<Node> devices = CreateObject<Node>();
    Ptr<Node> router = CreateObject<Node>();
    Ptr<Node> server = CreateObject<Node>();

    auto device = [](Ptr<Node> node, const char* rate, uint32_t queueBytes) {
        Ptr<SimpleNetDevice> d = CreateObject<SimpleNetDevice>();
        d->SetAttribute("PointToPointMode", BooleanValue(true)); // no ARP
        d->SetAttribute("DataRate", DataRateValue(DataRate(rate)));
        Ptr<DropTailQueue<Packet>> q = CreateObject<DropTailQueue<Packet>>();
        q->SetMaxSize(QueueSize(QueueSizeUnit::BYTES, queueBytes));
        d->SetQueue(q);
        d->SetAddress(Mac48Address::Allocate());
        node->AddDevice(d);
        return d;
    };
    const uint32_t unlimited = 0xffffffffu;

    // Access link: uplink 60 kbit/s, 200 ms; downlink 30 kbit/s, 400 ms behind the bottleneck.
    Ptr<SimpleNetDevice> devUp = device(devices, "60kbps", unlimited);
    Ptr<SimpleNetDevice> rtrDown = device(router, "30kbps", prm.bufferBytes);
    Ptr<StarChannel> access = CreateObject<StarChannel>();
    devUp->SetChannel(access);
    rtrDown->SetChannel(access);
    access->SetDelay(0, MilliSeconds(200), MilliSeconds(200));
    access->SetDelay(1, MilliSeconds(400), MilliSeconds(400));

    // Router <-> server path: no rate limit, uniform 10-20 ms per packet, FIFO kept.
    Ptr<SimpleNetDevice> rtrPath = device(router, "0bps", unlimited);
    Ptr<SimpleNetDevice> srvPath = device(server, "0bps", unlimited);
    Ptr<StarChannel> path = CreateObject<StarChannel>();
    rtrPath->SetChannel(path);
    srvPath->SetChannel(path);
    path->SetDelay(0, MilliSeconds(10), MilliSeconds(20));
    path->SetDelay(1, MilliSeconds(10), MilliSeconds(20));

    InternetStackHelper stack;
    NodeContainer all(devices, router, server);
    stack.Install(all);

    auto pair = [](Ptr<NetDevice> a, Ptr<NetDevice> b) {
        NetDeviceContainer c(a);
        c.Add(b);
        return c;
    };
    Ipv4AddressHelper addr;
    addr.SetBase("10.1.1.0", "255.255.255.0");
    addr.Assign(pair(devUp, rtrDown));
    addr.SetBase("10.1.2.0", "255.255.255.0");
    Ipv4InterfaceContainer pathIfs = addr.Assign(pair(rtrPath, srvPath));
    Ipv4Address serverAddr = pathIfs.GetAddress(1);

    // Ipv4AddressHelper::Assign installs ns-3's default queue disc (FqCoDel) in front of a
    // device that has a NetDeviceQueueInterface (the device helpers aggregate one). Ours have
    // none, so the bottleneck is the device's DropTail queue alone, as in coaplab.
    for (auto [node, dev] : {std::make_pair(devices, devUp), std::make_pair(router, rtrDown)})
    {
        NS_ABORT_MSG_IF(node->GetObject<TrafficControlLayer>()->GetRootQueueDiscOnDevice(dev),
                        "a queue disc was installed on an access-link device");
    }

    Ipv4StaticRoutingHelper routing;
    routing.GetStaticRouting(devices->GetObject<Ipv4>())
        ->SetDefaultRoute(Ipv4Address("10.1.1.2"), 1);
    routing.GetStaticRouting(server->GetObject<Ipv4>())
        ->SetDefaultRoute(Ipv4Address("10.1.2.1"), 1);

    Outcome out;
    uint32_t done = 0;
    Ptr<UniformRandomVariable> offsets = CreateObject<UniformRandomVariable>();
    Address serverSock = InetSocketAddress(serverAddr, kPort);

    if (prm.transport == "tcp")
    {
        uint32_t response = FramedResponse(prm.resourceBytes);
        Ptr<TcpServerApp> srv = CreateObject<TcpServerApp>();
        srv->responseBytes = response;
        srv->out = &out;
        server->AddApplication(srv);
        srv->SetStartTime(Seconds(0));
        // As coaplab (docs/model.md, "Clients"): client i connects at its offset, and sends
        // its request at the instant every client is ready plus the same offset.
        std::vector<Ptr<TcpClientApp>> cls;
        std::vector<Time> offset;
        for (uint32_t i = 0; i < prm.clients; ++i)
        {
            offset.push_back(Seconds(offsets->GetValue(0, prm.spreadS)));
        }
        uint32_t ready = 0;
        for (uint32_t i = 0; i < prm.clients; ++i)
        {
            Ptr<TcpClientApp> c = CreateObject<TcpClientApp>();
            c->server = serverSock;
            c->responseBytes = response;
            c->onReady = [&]() {
                if (++ready == prm.clients)
                {
                    for (uint32_t j = 0; j < cls.size(); ++j)
                    {
                        Simulator::Schedule(offset[j], &TcpClientApp::SendRequest, cls[j]);
                    }
                }
            };
            c->onDone = [&](double fct) {
                out.fct.push_back(fct);
                if (++done == prm.clients)
                {
                    Simulator::Stop();
                }
            };
            devices->AddApplication(c);
            c->SetStartTime(offset[i]);
            cls.push_back(c);
        }
        Simulator::Run();
    }
    else
    {
        Ptr<UdpServerApp> srv = CreateObject<UdpServerApp>();
        server->AddApplication(srv);
        srv->SetStartTime(Seconds(0));
        for (uint32_t i = 0; i < prm.clients; ++i)
        {
            Ptr<UdpClientApp> c = CreateObject<UdpClientApp>();
            c->server = serverSock;
            c->params = &prm;
            c->startOffset = Seconds(offsets->GetValue(0, prm.spreadS));
            c->onDone = [&](double fct, uint64_t failed, uint64_t rexmit) {
                out.fct.push_back(fct);
                out.failed += failed;
                out.retransmissions += rexmit;
                if (++done == prm.clients)
                {
                    Simulator::Stop();
                }
            };
            devices->AddApplication(c);
            c->SetStartTime(Seconds(0));
        }
        Simulator::Run();
    }
    events = Simulator::GetEventCount();
    if (done != prm.clients)
    {
        NS_FATAL_ERROR("only " << done << " of " << prm.clients << " clients finished");
    }
    Simulator::Destroy();
    Ipv4AddressGenerator::Reset();
    return out;
}

int
main(int argc, char* argv[])
{
    Params prm;
    uint32_t seed = 1;
    uint32_t firstRun = 0;
    uint32_t replications = 1;
    double minRtoS = 0.2; // Linux TCP_RTO_MIN
    CommandLine cmd(__FILE__);
    cmd.AddValue("transport", "tcp (firmware) or udp (continuous)", prm.transport);
    cmd.AddValue("clients", "number of clients", prm.clients);
    cmd.AddValue("exchanges", "UDP: exchanges per client", prm.exchanges);
    cmd.AddValue("buffer", "bottleneck (downlink) buffer, bytes", prm.bufferBytes);
    cmd.AddValue("spread", "client start offsets uniform in [0, spread] s", prm.spreadS);
    cmd.AddValue("slowStart", "TCP: linux (TcpLinuxReno) or rfc (TcpNewReno)", prm.slowStart);
    cmd.AddValue("resource", "TCP: firmware resource, bytes", prm.resourceBytes);
    cmd.AddValue("maxRetransmit", "UDP: MAX_RETRANSMIT", prm.maxRetransmit);
    cmd.AddValue("minRto", "TCP: ns-3's MinRto, s (diagnostic: large = no RTO)", minRtoS);
    cmd.AddValue("seed", "ns-3 RNG seed", seed);
    cmd.AddValue("run", "first ns-3 RNG run number (replication r uses run + r)", firstRun);
    cmd.AddValue("replications", "replications", replications);
    cmd.Parse(argc, argv);
    if (prm.transport != "tcp" && prm.transport != "udp")
    {
        std::fprintf(stderr, "--transport: '%s' is not allowed; allowed: tcp, udp\n",
                     prm.transport.c_str());
        return 2;
    }
    if (prm.slowStart != "linux" && prm.slowStart != "rfc")
    {
        std::fprintf(stderr, "--slowStart: '%s' is not allowed; allowed: linux, rfc\n",
                     prm.slowStart.c_str());
        return 2;
    }

    // TCP aligned with coaplab's model (docs/model.md, "CoAP over TCP"); the differences that
    // remain are listed in docs/performance.md ("Against ns-3").
    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       TypeIdValue(prm.slowStart == "linux" ? TcpLinuxReno::GetTypeId()
                                                            : TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpClassicRecovery::GetTypeId())); // RFC 6582 inflation
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(256)); // MTU 296 - 40
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(4));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(200)));
    // Nagle off: the firmware's 7-byte tail leaves as soon as the window allows, as under
    // coaplab's Minshall rule (no earlier small segment is unacknowledged then); ns-3's Nagle is
    // the classic one and would hold it until every byte is acknowledged.
    Config::SetDefault("ns3::TcpSocket::TcpNoDelay", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 20));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(2)));
    Config::SetDefault("ns3::TcpSocket::ConnCount", UintegerValue(40));
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(100));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(minRtoS)));
    Config::SetDefault("ns3::RttEstimator::InitialEstimation", TimeValue(Seconds(2)));

    std::ostringstream json;
    json << "{\"simulator\": \"ns-3 " << "3.37" << "\", \"replications\": [";
    double cpu0 = CpuSeconds();
    uint64_t totalEvents = 0;
    for (uint32_t r = 0; r < replications; ++r)
    {
        RngSeedManager::SetSeed(seed);
        RngSeedManager::SetRun(firstRun + r);
        uint64_t events = 0;
        Outcome o = RunOnce(prm, events);
        totalEvents += events;
        json << (r ? ", " : "") << "{\"run\": " << firstRun + r << ", \"events\": " << events
             << ", \"failed\": " << o.failed << ", \"retransmissions\": " << o.retransmissions
             << ", \"rto_expirations\": " << o.rtoExpirations
             << ", \"fast_recoveries\": " << o.fastRecoveries
             << ", \"fct\": [";
        for (size_t i = 0; i < o.fct.size(); ++i)
        {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%.9f", o.fct[i]);
            json << (i ? ", " : "") << buf;
        }
        json << "]}";
    }
    double cpu = CpuSeconds() - cpu0;
    json << "], \"events\": " << totalEvents << ", \"cpu_s\": " << cpu << "}";
    std::printf("%s\n", json.str().c_str());
    return 0;
}
