//! One TCP connection as the application sees it ([`Flow`]): both ends, the message streams,
//! the timer bookkeeping and the trace.
//!
//! Laid out for thousands of connections (docs/performance.md, "TCP at scale: the
//! connection's hot and cold fields"): every event of a flow (a segment's arrival, a timer)
//! reads its first cache line — the client, the routes, the pending timers, the
//! application's flags — then the two streams' fronts and one end's hot block
//! ([`Connection`] puts its own hot fields first); what only BBR, traces or the results read
//! comes last. `repr(C, align(64))`: the order written is the order in memory and a flow
//! starts a cache line.

use coaplab_cc::Instant;

use crate::coap::over_tcp::MessageStream;
use crate::metrics::{CcTraceRow, SeqTraceRow};
use crate::net::network::RouteId;
use crate::tcp::Connection;

/// A flow's time-sequence trace and BBR's state trace (with `trace = true` only; boxed, so
/// that a flow without one carries a single null pointer in its first line).
#[derive(Default)]
pub(crate) struct FlowTrace {
    pub points: Vec<SeqTraceRow>,
    /// BBR's state after each ACK that changed it.
    pub cc: Vec<CcTraceRow>,
}

/// One TCP connection: both ends, the application's message streams, and its trace.
#[repr(C, align(64))]
pub(crate) struct Flow {
    // ---- The first line: read by every event of the flow. ----
    /// Local index of its client.
    pub client: u32,
    /// Length of the client's CSM (0 until written).
    pub(super) csm_bytes: u32,
    /// The group's response payload, bytes (a copy of `TcpGroup::response_payload`: the
    /// server's application reads it on every request without touching the client).
    pub(super) response_payload: u32,
    /// The client's routes, to the server and back (a copy of `TcpClient::routes`: every
    /// segment sent reads one).
    pub(super) routes: [RouteId; 2],
    pub port: u16,
    pub(super) server_closed: bool,
    /// The client has a request to send once connected (`random`).
    pub(super) pending_request: bool,
    /// That request is written once the CSM has gone to the connection (a second write).
    pub(super) deferred_request: bool,
    /// The server's CSM arrived at the client.
    pub(super) server_csm: bool,
    /// The earliest pending timer event of each end: an event at another time is stale; one
    /// that fires before the connection's deadline re-schedules itself.
    pub(super) timer: [Option<Instant>; 2],
    pub trace: Option<Box<FlowTrace>>,
    // ---- Then the streams' fronts (each stream's counters and queue header first). ----
    /// Client → server and server → client messages.
    pub streams: [MessageStream; 2],
    /// Counters that need ground truth from the other end (written by a segment's arrival;
    /// in a congestion collapse, often).
    pub unnecessary: u64,
    pub csm_retransmissions: u64,
    /// The client's end, then the server's (each 64-byte aligned, its hot block first).
    pub ends: [Option<Connection>; 2],
    // ---- Cold: BBR's pacing. ----
    /// The pending pacing event of each end (an event at another time is stale).
    pub(super) pace: [Option<Instant>; 2],
}

impl Flow {
    /// A new flow of local client `client` with its client end `conn`; `routes` and
    /// `response_payload` are the client's and its group's (copied into the first line);
    /// `pending_request`: a `random` client's request waits for the connection; `keep_all`
    /// keeps every message of the streams (a capture rebuilds segment bytes from them).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        client: u32,
        port: u16,
        routes: [RouteId; 2],
        response_payload: u32,
        conn: Connection,
        pending_request: bool,
        keep_all: bool,
        trace: bool,
    ) -> Self {
        let stream = || {
            if keep_all {
                MessageStream::keeping_all()
            } else {
                MessageStream::default()
            }
        };
        Flow {
            client,
            csm_bytes: 0,
            response_payload,
            routes,
            port,
            server_closed: false,
            pending_request,
            deferred_request: false,
            server_csm: false,
            timer: [None, None],
            trace: trace.then(Box::default),
            streams: [stream(), stream()],
            ends: [Some(conn), None],
            pace: [None, None],
            unnecessary: 0,
            csm_retransmissions: 0,
        }
    }

    /// The time-sequence trace, when traced.
    pub(super) fn points(&mut self) -> Option<&mut Vec<SeqTraceRow>> {
        self.trace.as_deref_mut().map(|t| &mut t.points)
    }
}

#[cfg(test)]
mod tests {
    use std::mem::{align_of, offset_of};

    use super::super::TcpClient;
    use super::*;

    /// The fields every event reads fill the first line: 4 × 4 B (client, CSM length, payload,
    /// routes) + 2 B port + 4 flags + 2 B padding + 2 × 16 B timers + 8 B trace pointer = 64 B;
    /// the streams start the second line, the ends start lines of their own.
    #[test]
    fn first_line_is_the_hot_header() {
        println!(
            "Flow {} B (streams at {}, ends at {}), TcpClient {} B",
            std::mem::size_of::<Flow>(),
            offset_of!(Flow, streams),
            offset_of!(Flow, ends),
            std::mem::size_of::<TcpClient>()
        );
        assert_eq!(align_of::<Flow>(), 64);
        assert!(offset_of!(Flow, trace) + 8 <= 64);
        assert_eq!(offset_of!(Flow, streams), 64);
        assert_eq!(offset_of!(Flow, ends) % 64, 0);
        assert!(offset_of!(Flow, pace) > offset_of!(Flow, ends));
    }

    /// A client's first line holds its flow (8 B), id, routes (4 B each), group (2 B), four
    /// flags and, 8-aligned at 24, its plan (32 B): 24 + 32 = 56 ≤ 64; the counters follow.
    #[test]
    fn client_first_line() {
        assert_eq!(align_of::<TcpClient>(), 64);
        assert_eq!(offset_of!(TcpClient, plan), 24);
        assert!(offset_of!(TcpClient, plan) + std::mem::size_of::<crate::workload::Plan>() <= 64);
        assert_eq!(offset_of!(TcpClient, stats), 24 + 32);
    }
}
