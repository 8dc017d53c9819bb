//! The byte-level side of a CoAP-over-TCP connection (RFC 8323 §3–§5), sans-IO: bytes from
//! the peer go in, decoded messages and the signalling replies the RFC requires come out.
//! The simulator's endpoints exchange message descriptors (`over_tcp.rs`), so this is what a
//! real endpoint, or a test harness fed with captured bytes, runs on the stream:
//!
//! - the peer's first message must be a CSM (§4.3); anything else is a connection error;
//! - Ping (7.02) is answered with a Pong (7.03) echoing its token (§5.4);
//! - Release (7.04) ends the session gracefully, Abort (7.05) at once (§5.5, §5.6);
//! - a malformed frame, or one larger than the Max-Message-Size we announced (§5.3.1), is
//!   answered with an Abort and the connection is closed.

use coaplab_wire::coap_tcp::{decode_frame, frame_len, signal, DecodedTcp, FrameError};

/// What the application must act on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionEvent {
    /// The peer's CSM: its Max-Message-Size (default 1152 if absent) and whether it offered
    /// block-wise transfer.
    Csm {
        max_message_size: u32,
        block_wise: bool,
    },
    /// A request or response.
    Message(DecodedTcp),
    /// Send this Pong now (the answer to a Ping).
    SendPong { token: Vec<u8> },
    /// The peer released the connection: finish what is outstanding, then close.
    Released,
    /// The peer aborted: close now.
    Aborted,
    /// A protocol error: send an Abort with this diagnostic payload, then close.
    SendAbort { reason: String },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    AwaitingCsm,
    Open,
    Closed,
}

/// Reassembles the peer's byte stream into frames and applies RFC 8323's signalling rules.
#[derive(Clone, Debug)]
pub struct Session {
    buf: Vec<u8>,
    /// The Max-Message-Size we announced: larger frames are a protocol error.
    own_max_message_size: u32,
    phase: Phase,
}

impl Session {
    pub fn new(own_max_message_size: u32) -> Self {
        Session {
            buf: Vec::new(),
            own_max_message_size,
            phase: Phase::AwaitingCsm,
        }
    }

    /// The session ended (released, aborted, or a protocol error).
    pub fn is_closed(&self) -> bool {
        self.phase == Phase::Closed
    }

    /// Takes bytes received in order; appends what they mean to `out`.
    pub fn on_bytes(&mut self, bytes: &[u8], out: &mut Vec<SessionEvent>) {
        if self.phase == Phase::Closed {
            return;
        }
        self.buf.extend_from_slice(bytes);
        let mut used = 0;
        while self.phase != Phase::Closed {
            let rest = &self.buf[used..];
            // Size check before the body arrives: a peer must not make us buffer more than
            // we announced.
            match frame_len(rest) {
                Ok(Some(len)) if len as u64 > u64::from(self.own_max_message_size) => {
                    self.fail(
                        format!(
                            "message of {len} bytes exceeds our Max-Message-Size {}",
                            self.own_max_message_size
                        ),
                        out,
                    );
                    break;
                }
                Err(e) => {
                    self.fail(e.to_string(), out);
                    break;
                }
                _ => {}
            }
            match decode_frame(rest) {
                Ok(Some((frame, n))) => {
                    used += n;
                    self.on_frame(frame, out);
                }
                Ok(None) => break,
                Err(e) => {
                    self.fail(frame_error(e), out);
                    break;
                }
            }
        }
        self.buf.drain(..used.min(self.buf.len()));
    }

    fn on_frame(&mut self, frame: DecodedTcp, out: &mut Vec<SessionEvent>) {
        if self.phase == Phase::AwaitingCsm && frame.code != signal::CSM {
            self.fail(
                format!(
                    "first message has code 0x{:02X}; RFC 8323 §4.3 requires a CSM (7.01)",
                    frame.code
                ),
                out,
            );
            return;
        }
        match frame.code {
            signal::CSM => {
                self.phase = Phase::Open;
                let uint = |number| {
                    frame
                        .options
                        .iter()
                        .find(|(n, _)| *n == number)
                        .map(|(_, v)| v.iter().fold(0u32, |acc, b| (acc << 8) | u32::from(*b)))
                };
                out.push(SessionEvent::Csm {
                    max_message_size: uint(signal::MAX_MESSAGE_SIZE)
                        .unwrap_or(signal::DEFAULT_MAX_MESSAGE_SIZE),
                    block_wise: uint(signal::BLOCK_WISE_TRANSFER).is_some(),
                });
            }
            signal::PING => out.push(SessionEvent::SendPong { token: frame.token }),
            signal::PONG => {}
            signal::RELEASE => {
                self.phase = Phase::Closed;
                out.push(SessionEvent::Released);
            }
            signal::ABORT => {
                self.phase = Phase::Closed;
                out.push(SessionEvent::Aborted);
            }
            code if code >> 5 == 7 => {
                // An unknown signalling code (class 7) is a protocol error (§5.1).
                self.fail(format!("unknown signalling code 7.{:02}", code & 0x1F), out);
            }
            _ => out.push(SessionEvent::Message(frame)),
        }
    }

    fn fail(&mut self, reason: String, out: &mut Vec<SessionEvent>) {
        self.phase = Phase::Closed;
        self.buf.clear();
        out.push(SessionEvent::SendAbort { reason });
    }
}

fn frame_error(e: FrameError) -> String {
    format!("malformed message: {e}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coap::over_tcp::{TcpMsg, MAX_MESSAGE_SIZE};
    use coaplab_wire::coap::Payload;
    use coaplab_wire::coap_tcp::TcpMessage;

    fn bytes(m: TcpMsg) -> Vec<u8> {
        let mut v = Vec::new();
        m.with_message(|f| f.encode(&mut v));
        v
    }

    fn signal_frame(code: u8, token: &[u8]) -> Vec<u8> {
        TcpMessage {
            code,
            token,
            options: &[],
            payload: Payload::Pattern(0),
        }
        .to_vec()
    }

    #[test]
    fn csm_then_messages_split_anywhere() {
        // The simulator's own client stream: CSM, then a GET, delivered one byte at a time.
        let mut stream = bytes(TcpMsg::Csm);
        stream.extend(bytes(TcpMsg::Request));
        let mut s = Session::new(MAX_MESSAGE_SIZE);
        let mut out = Vec::new();
        for b in &stream {
            s.on_bytes(std::slice::from_ref(b), &mut out);
        }
        assert_eq!(
            out[0],
            SessionEvent::Csm {
                max_message_size: MAX_MESSAGE_SIZE,
                block_wise: true
            }
        );
        assert!(matches!(&out[1], SessionEvent::Message(m) if m.code == 0x01));
        assert_eq!(out.len(), 2);
    }

    #[test]
    fn ping_gets_a_pong_with_its_token_release_and_abort_close() {
        let mut s = Session::new(1152);
        let mut out = Vec::new();
        let mut stream = signal_frame(signal::CSM, &[]);
        stream.extend(signal_frame(signal::PING, &[7, 7]));
        stream.extend(signal_frame(signal::PONG, &[]));
        stream.extend(signal_frame(signal::RELEASE, &[]));
        stream.extend(bytes(TcpMsg::Request)); // after Release: ignored
        s.on_bytes(&stream, &mut out);
        assert_eq!(
            out,
            vec![
                SessionEvent::Csm {
                    max_message_size: 1152,
                    block_wise: false
                },
                SessionEvent::SendPong { token: vec![7, 7] },
                SessionEvent::Released,
            ]
        );
        assert!(s.is_closed());
        let mut a = Session::new(1152);
        let mut out = Vec::new();
        let mut stream = signal_frame(signal::CSM, &[]);
        stream.extend(signal_frame(signal::ABORT, &[]));
        a.on_bytes(&stream, &mut out);
        assert_eq!(out.last(), Some(&SessionEvent::Aborted));
    }

    #[test]
    fn protocol_errors_are_answered_with_abort() {
        let cases: [(Vec<u8>, &str); 4] = [
            // A request before any CSM.
            (bytes(TcpMsg::Request), "requires a CSM"),
            // After a CSM, TKL 9 (reserved).
            (
                [bytes(TcpMsg::Csm), vec![0x09, 0x01]].concat(),
                "token length 9",
            ),
            // After a CSM, a 2.05 larger than our 1152-byte Max-Message-Size (header only:
            // the size is refused before the body arrives).
            (
                [
                    bytes(TcpMsg::Csm),
                    bytes(TcpMsg::Response { payload: 2000 })[..4].to_vec(),
                ]
                .concat(),
                "exceeds our Max-Message-Size 1152",
            ),
            // After a CSM, an unknown signalling code 7.09.
            (
                [bytes(TcpMsg::Csm), signal_frame(0xE9, &[])].concat(),
                "7.09",
            ),
        ];
        for (stream, reason) in cases {
            let mut s = Session::new(1152);
            let mut out = Vec::new();
            s.on_bytes(&stream, &mut out);
            match out.last() {
                Some(SessionEvent::SendAbort { reason: r }) => assert!(r.contains(reason), "{r}"),
                other => panic!("{reason}: {other:?}"),
            }
            assert!(s.is_closed());
            // Nothing more is processed after the error.
            s.on_bytes(&bytes(TcpMsg::Request), &mut out);
            assert!(matches!(out.last(), Some(SessionEvent::SendAbort { .. })));
        }
        // A malformed body (empty payload after the marker) is an error too.
        let mut s = Session::new(1152);
        let mut out = Vec::new();
        s.on_bytes(
            &[bytes(TcpMsg::Csm), vec![0x10, 0x45, 0xFF]].concat(),
            &mut out,
        );
        assert!(
            matches!(out.last(), Some(SessionEvent::SendAbort { reason }) if reason.contains("malformed"))
        );
    }
}
