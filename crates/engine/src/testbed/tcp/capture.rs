//! The capture of a TCP run: every segment as its sender sent it, written as a pcap of real
//! IPv4/TCP headers carrying the RFC 8323 bytes of the connection's streams.

use std::io::Write;

use coaplab_wire::ip::COAP_PORT;
use coaplab_wire::pcap::PcapWriter;
use coaplab_wire::tcp::{write_tcp_segment, TcpFlags};

use super::{data_start, TcpTestbed, CLIENT, SERVER};
use crate::testbed::{client_addr, SERVER_ADDR};

impl TcpTestbed {
    /// Writes the capture (segments as their senders sent them) as a pcap file of real
    /// IPv4/TCP/CoAP-over-TCP bytes.
    pub fn write_pcap(&self, out: impl Write) -> std::io::Result<()> {
        let mut w = PcapWriter::new(out)?;
        let mut buf = Vec::with_capacity(512);
        let mut payload = Vec::with_capacity(512);
        for (i, (at, p)) in self.capture.iter().flatten().enumerate() {
            let f = &self.flows[p.flow as usize];
            let end = if p.upstream { CLIENT } else { SERVER };
            let conn = f.ends[end].as_ref().expect("a sender exists");
            let seg = p.t.segment;
            payload.clear();
            if seg.len > 0 {
                f.streams[end].bytes(u64::from(seg.seq - data_start(conn)), seg.len, &mut payload);
            }
            let client = (client_addr(f.client), f.port);
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
            if seg.ack.is_some() {
                flags = flags | TcpFlags::ACK;
            }
            if seg.len > 0 {
                flags = flags | TcpFlags::PSH;
            }
            buf.clear();
            write_tcp_segment(
                &mut buf,
                src,
                dst,
                i as u16,
                seg.seq.0,
                seg.ack.map_or(0, |a| a.0),
                flags,
                u16::MAX,
                seg.mss,
                &payload,
            );
            w.write_packet(at.nanos(), &buf)?;
        }
        Ok(())
    }
}
