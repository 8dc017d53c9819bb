//! The capture of a run: every packet as its sender sent it, written as a pcap of real
//! IPv4/UDP/CoAP and IPv4/TCP/RFC 8323 bytes with simulated timestamps.

use std::io::Write;

use coaplab_wire::ip::{write_udp_datagram, COAP_PORT};
use coaplab_wire::pcap::PcapWriter;
use coaplab_wire::tcp::{write_tcp_segment, TcpFlags};

use super::tcp_app::{data_start, CLIENT, SERVER};
use super::World;
use crate::basics::{client_addr, CLIENT_PORT, SERVER_ADDR};
use crate::packet::{AppPacket, PacketKind, TcpPacket};

impl World {
    /// Writes the capture as a pcap file.
    pub fn write_pcap(&self, out: impl Write) -> std::io::Result<()> {
        let mut w = PcapWriter::new(out)?;
        let mut buf = Vec::with_capacity(512);
        let mut payload = Vec::with_capacity(512);
        for (i, (at, p)) in self.sh.capture.iter().flatten().enumerate() {
            buf.clear();
            payload.clear();
            match p {
                AppPacket::Udp(p) => {
                    self.udp
                        .msgs_of(p.client)
                        .with_message(p, |m| m.encode(&mut payload));
                    let client = (client_addr(p.client), CLIENT_PORT);
                    let server = (SERVER_ADDR, COAP_PORT);
                    let up = matches!(
                        p.kind,
                        PacketKind::Request | PacketKind::NotificationAck | PacketKind::ServerAck
                    );
                    let (src, dst) = if up {
                        (client, server)
                    } else {
                        (server, client)
                    };
                    write_udp_datagram(&mut buf, src, dst, i as u16, &payload);
                }
                AppPacket::Tcp(p) => self.tcp_segment(i, p, &mut payload, &mut buf),
                // Q-Block messages are sized by the encoder but not written to the capture
                // (docs/model.md "Q-Block").
                AppPacket::QBlock(_) => continue,
            }
            w.write_packet(at.nanos(), &buf)?;
        }
        Ok(())
    }

    fn tcp_segment(&self, i: usize, p: &TcpPacket, payload: &mut Vec<u8>, buf: &mut Vec<u8>) {
        let f = &self.tcp.flows[p.flow as usize];
        let end = if p.upstream { CLIENT } else { SERVER };
        let conn = f.ends[end].as_ref().expect("a sender exists");
        let seg = p.t.segment;
        if seg.len > 0 {
            f.streams[end].bytes(u64::from(seg.seq - data_start(conn)), seg.len, payload);
        }
        let client = (client_addr(self.tcp.clients[f.client as usize].id), f.port);
        let server = (SERVER_ADDR, COAP_PORT);
        let (src, dst) = if p.upstream {
            (client, server)
        } else {
            (server, client)
        };
        let mut flags = TcpFlags::default();
        if seg.syn {
            flags = flags | TcpFlags::SYN;
        }
        if seg.fin {
            flags = flags | TcpFlags::FIN;
        }
        if seg.rst {
            flags = flags | TcpFlags::RST;
        }
        if seg.ack.is_some() {
            flags = flags | TcpFlags::ACK;
        }
        if seg.len > 0 {
            flags = flags | TcpFlags::PSH;
        }
        write_tcp_segment(
            buf,
            src,
            dst,
            i as u16,
            seg.seq.0,
            seg.ack.map_or(0, |a| a.0),
            flags,
            u16::MAX,
            seg.mss,
            payload,
        );
    }
}
