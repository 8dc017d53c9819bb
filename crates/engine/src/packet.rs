//! What travels through the simulated network: a small `Copy` descriptor, not bytes. The
//! bytes are produced by the real encoders (`coaplab-wire`) — for the size at creation and,
//! when a pcap is requested, for the capture — from these same fields.

use coaplab_cc::Instant;

use crate::tcp::Transmit;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketKind {
    /// CON GET from a client.
    Request,
    /// Piggybacked ACK 2.05 from the server.
    Response,
    /// An LwM2M Server's CON GET (a read) to a device (`coap::lwm2m::requester`): downlink.
    ServerRequest,
    /// A device's piggybacked ACK 2.05 answering a [`PacketKind::ServerRequest`]: uplink.
    ServerAck,
    /// A datagram of a DTLS handshake flight (`coap.security`, docs/model.md "Security"):
    /// datagram `index` of the `count` of flight `flight` (even: the client's, odd: the
    /// server's) of the full handshake or, `resume`, of the one after a NAT binding expired.
    Handshake {
        resume: bool,
        flight: u8,
        index: u8,
        count: u8,
    },
    /// An RFC 7641 notification from the server (`coap::observe`, docs/model.md "Observe"):
    /// CON (or NON when `non`) 2.05 with the Observe option. `exchange` is the value's number,
    /// `request_sent` when the resource took it, `ordinal` the transmission ordinal.
    Notification,
    /// The client's empty ACK to a CON notification (RFC 7252 §4.2), uplink; `mid` is the
    /// notification's.
    NotificationAck,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    pub kind: PacketKind,
    pub client: u32,
    /// Client-local exchange index.
    pub exchange: u32,
    /// Request: its transmission ordinal (0 = original). Response: the ordinal of the request
    /// copy it answers.
    pub ordinal: u32,
    pub mid: u16,
    /// Block2 number for block-wise transfers.
    pub block: Option<u32>,
    /// Payload bytes of a response.
    pub payload: u32,
    /// Whether the message carries FASOR's Rexmit-Cnt option (`fasor-rc`).
    pub rexmit_cnt: bool,
    /// Block2 "more" flag of a response.
    pub more: bool,
    /// Size of the IP packet, bytes (IPv4 + UDP + CoAP, from the real encoding, + the bytes
    /// of `coap.security`'s record layer or OSCORE).
    pub ip_bytes: u32,
    /// When the request copy this packet is or answers was sent (the client's own record of
    /// transmission `ordinal`; used with the Rexmit-Cnt echo).
    pub request_sent: Instant,
    /// A NON request, or the NON response to one (RFC 7252 §4.3, §5.2.3); else CON / ACK.
    pub non: bool,
}

/// A TCP segment in the network.
#[derive(Clone, Copy, Debug)]
pub struct TcpPacket {
    /// Index of its connection.
    pub flow: u32,
    /// Sent by the client end.
    pub upstream: bool,
    pub t: Transmit,
}

/// What an application put on the network.
#[derive(Clone, Copy, Debug)]
pub enum AppPacket {
    /// CoAP over UDP.
    Udp(Packet),
    /// A TCP segment carrying CoAP over TCP.
    Tcp(TcpPacket),
    /// A message of an RFC 9177 Q-Block transfer (`coap.block_mode = "q-block"`).
    QBlock(QPacket),
}

/// What an RFC 9177 Q-Block message says (docs/model.md "Q-Block"); every one is NON.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QMsg {
    /// Q-Block2: the client's GET for the body.
    Request,
    /// A payload: block `n` (`again`: a re-send after a recovery request or a tail probe).
    Block { n: u32, again: bool },
    /// The receiver asks for the next set from block `n` (Q-Block1: 2.31 Continue; Q-Block2:
    /// GET with Q-Block2 `n`, M = 1).
    Continue(u32),
    /// The receiver lists missing blocks (Q-Block1: 4.08 Request Entity Incomplete; Q-Block2:
    /// GET with one Q-Block2 option each): `list` indexes the app's stored lists.
    Recover { list: u32 },
    /// Q-Block1: the server's 2.04 Changed for the whole body.
    Final,
}

/// A Q-Block message in the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QPacket {
    pub client: u32,
    /// Towards the server.
    pub up: bool,
    pub msg: QMsg,
    pub ip_bytes: u32,
}

/// A packet in flight: its application content, its size and where it is on its route
/// (`net::network`).
#[derive(Clone, Copy, Debug)]
pub struct NetPacket {
    pub app: AppPacket,
    /// Size of the IP packet, bytes.
    pub ip_bytes: u32,
    pub route: u16,
    /// Index of the element it is in (or entering) on its route.
    pub hop: u8,
}

impl NetPacket {
    pub fn udp(p: Packet) -> Self {
        NetPacket {
            ip_bytes: p.ip_bytes,
            app: AppPacket::Udp(p),
            route: 0,
            hop: 0,
        }
    }
    pub fn tcp(p: TcpPacket, ip_bytes: u32) -> Self {
        NetPacket {
            ip_bytes,
            app: AppPacket::Tcp(p),
            route: 0,
            hop: 0,
        }
    }
}
