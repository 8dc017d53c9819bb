//! The TCP model's parameters for a group: its `[tcp]` section (or the defaults of
//! docs/model.md "TCP model"), with the MSS from the MTU.

use coaplab_wire::ip::{IPV4_HEADER, TCP_HEADER};

use crate::basics::{millis, secs};
use crate::config::TcpSection;
use crate::error::Error;
use crate::tcp::{Nagle, TcpConfig};

/// Headers of a data segment: IPv4 and TCP without options (docs/design.md §2), bytes.
const SEGMENT_OVERHEAD: u32 = (IPV4_HEADER + TCP_HEADER) as u32;
/// The smallest MSS accepted: the largest message header plus a few bytes of payload; smaller
/// segments are outside anything the literature's testbeds used.
const MIN_MSS: u32 = 64;

/// The TCP model's parameters from a `[tcp]` section (or the defaults), with the MSS from
/// the MTU; `label` names a key for error messages.
pub(super) fn tcp_config(
    mtu: u32,
    section: Option<&TcpSection>,
    label: &dyn Fn(&str) -> String,
) -> Result<TcpConfig, Error> {
    if mtu < SEGMENT_OVERHEAD + MIN_MSS {
        return Err(Error::key(
            "link.mtu",
            format!(
            "{mtu} B leaves a TCP MSS below {MIN_MSS} B (MTU − {SEGMENT_OVERHEAD} B of IPv4 and TCP headers); allowed with transport tcp: >= {}",
            SEGMENT_OVERHEAD + MIN_MSS
        )));
    }
    let mut tcp = TcpConfig {
        mss: (mtu - SEGMENT_OVERHEAD).min(u32::from(u16::MAX)),
        ..TcpConfig::default()
    };
    let Some(t) = section else {
        return Ok(tcp);
    };
    tcp.nagle = match t.nagle.as_str() {
        "minshall" => Nagle::Minshall,
        "classic" => Nagle::Classic,
        "off" => Nagle::Off,
        other => {
            return Err(Error::key(
                label("tcp.nagle"),
                format!("'{other}' is not a Nagle mode; allowed: minshall, classic, off"),
            ))
        }
    };
    if t.initial_window == 0 || t.slow_start_limit == Some(0) {
        return Err(Error::key(
            "tcp.initial_window / tcp.slow_start_limit",
            "segments must be >= 1",
        ));
    }
    if !(t.initial_rto_s > 0.0 && t.max_rto_s >= t.initial_rto_s && t.delayed_ack_ms >= 0.0) {
        return Err(Error::key(
            "tcp.initial_rto_s / max_rto_s / delayed_ack_ms",
            format!(
                "{} / {} / {} must satisfy 0 < initial <= max and delay >= 0",
                t.initial_rto_s, t.max_rto_s, t.delayed_ack_ms
            ),
        ));
    }
    tcp.initial_window_segments = t.initial_window;
    tcp.slow_start_limit_segments = t.slow_start_limit;
    tcp.limited_transmit = t.limited_transmit;
    tcp.delayed_ack = millis(t.delayed_ack_ms);
    tcp.initial_rto = secs(t.initial_rto_s);
    tcp.max_rto = secs(t.max_rto_s);
    tcp.syn_retries = t.syn_retries;
    tcp.synack_retries = t.synack_retries;
    tcp.hz = t.hz;
    tcp.ack_every_segment = t.ack_every_segment;
    Ok(tcp)
}
