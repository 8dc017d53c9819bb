//! The sending side of a [`Connection`]: what [`Connection::poll_transmit`] sends next — a
//! RST, the SYN / SYN-ACK, a retransmission of the head, new data or a resend after a
//! timeout under the windows, Nagle and pacing, or a pure ACK.

use coaplab_cc::Instant;

use super::super::config::Nagle;
use super::super::segment::{Segment, Transmit};
use super::super::seq::Seq;
use super::{Connection, Sent, State};

impl Connection {
    /// The next segment to send now, if any.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        match self.state {
            State::Failed => {
                let segment = self.rst_due.take()?;
                self.stats.segments_sent += 1;
                self.stats.resets_sent += 1;
                Some(Transmit {
                    segment,
                    retransmission: false,
                    fast_retransmission: false,
                })
            }
            State::SynSent | State::SynReceived => self.transmit_syn(now),
            // Pacing re-arms itself below if it holds a segment back again.
            State::Established if self.pacing.take_blocked() => self.poll_transmit(now),
            State::Established if std::mem::take(&mut self.pure_ack_first) => {
                self.transmit_ack().or_else(|| self.poll_transmit(now))
            }
            State::Established => self
                .transmit_head(now)
                .or_else(|| self.transmit_data(now))
                .or_else(|| self.transmit_ack()),
        }
    }

    fn ack_field(&mut self) -> Option<Seq> {
        let r = self.rcv.as_mut()?;
        r.on_ack_sent();
        Some(r.rcv_nxt())
    }

    fn sent(&mut self, t: Transmit) -> Option<Transmit> {
        self.stats.segments_sent += 1;
        let seg = t.segment;
        if seg.is_pure_ack() && seg.ack.is_some() && seg.ack == self.last_ack_sent {
            self.stats.duplicate_acks_sent += 1;
        }
        if seg.ack.is_some() {
            self.last_ack_sent = seg.ack;
        }
        if t.segment.len > 0 || t.segment.fin {
            self.stats.data_segments_sent += 1;
            if t.retransmission {
                self.stats.retransmissions += 1;
            }
        }
        Some(t)
    }

    fn transmit_syn(&mut self, now: Instant) -> Option<Transmit> {
        if !std::mem::take(&mut self.syn_due) {
            return None; // nothing else is sent before the handshake completes
        }
        let retransmission = !self.rtx.is_empty();
        if retransmission {
            self.rtx[0].retransmitted = true;
            if self.state == State::SynSent {
                self.stats.syn_retransmissions += 1;
            } else {
                self.stats.synack_retransmissions += 1;
            }
        } else {
            let rate = self.rate_on_send(now);
            self.rtx.push_back(Sent {
                seq: self.iss,
                len: 1,
                syn: true,
                fin: false,
                sent_at: now,
                retransmitted: false,
                rate,
            });
            self.snd_nxt = self.iss + 1;
            self.snd_max = self.snd_nxt;
        }
        self.rto_at = Some(self.rto_deadline(now));
        let ack = self.ack_field();
        self.sent(Transmit {
            segment: Segment {
                seq: self.iss,
                ack,
                syn: true,
                fin: false,
                rst: false,
                len: 0,
                mss: Some(self.cfg.mss as u16),
            },
            retransmission,
            fast_retransmission: false,
        })
    }

    /// Fast retransmit or a partial ACK's retransmission of the first unacknowledged range.
    fn transmit_head(&mut self, now: Instant) -> Option<Transmit> {
        if self.rtx.is_empty() {
            self.head_due = false;
        }
        if !self.head_due {
            return None;
        }
        if self.rate_based {
            // Linux `tcp_xmit_retransmit_queue` (net/ipv4/tcp_output.c) retransmits a lost
            // segment only while `tcp_packets_in_flight` < cwnd. (New Reno's fast
            // retransmit and partial-ACK retransmission go out at once, RFC 6582 §3.2.)
            let flight = self.packets_in_flight();
            let len = self.rtx.first().map_or(0, |s| s.len);
            if flight > 0 && flight + len > self.cc.window() {
                return None;
            }
        }
        if self.pacing.holds(now) {
            return None;
        }
        self.head_due = false;
        let rate = self.rate_on_send(now);
        let s = self.rtx.first_mut()?;
        s.retransmitted = true;
        s.rate = rate;
        let s = *s;
        self.pacing.on_sent(now, s.len, &*self.cc);
        // Linux re-arms the timer when it retransmits the head (`tcp_xmit_retransmit_queue`).
        self.rto_at = Some(self.rto_deadline(now));
        let ack = self.ack_field();
        self.sent(Transmit {
            segment: data_segment(s.seq, ack, s.len, s.fin),
            retransmission: true,
            fast_retransmission: true,
        })
    }

    fn transmit_data(&mut self, now: Instant) -> Option<Transmit> {
        // A rate-based controller sends while Linux's `tcp_packets_in_flight` < cwnd
        // (`tcp_cwnd_test`): the segments duplicate ACKs reported received are not in flight.
        // New Reno and CUBIC count everything outstanding against the inflated window (RFC
        // 6582 §3.2). (Linux's Limited Transmit is that same count: each duplicate ACK takes a
        // segment out of flight, so a rate-based window gets no RFC 3042 allowance on top.)
        let (flight, window) = if self.rate_based {
            (self.packets_in_flight(), self.cc.window())
        } else {
            (
                self.snd_nxt - self.snd_una,
                self.cc.window() + self.recovery.allowance(),
            )
        };
        if self.snd_nxt < self.snd_max {
            // Resending after a timeout, range by range as first sent.
            let i = self.rtx.partition_point(|s| s.seq < self.snd_nxt);
            let s = self.rtx.get_mut(i)?;
            debug_assert_eq!(s.seq, self.snd_nxt);
            if flight > 0 && flight + s.len > window {
                return None;
            }
            if self.pacing.holds(now) {
                return None;
            }
            let rate = self.rate_on_send(now);
            let s = &mut self.rtx[i];
            s.retransmitted = true;
            s.rate = rate;
            let s = *s;
            self.pacing.on_sent(now, s.len, &*self.cc);
            self.snd_nxt = s.seq + s.len;
            let deadline = self.rto_deadline(now);
            self.rto_at.get_or_insert(deadline);
            let ack = self.ack_field();
            return self.sent(Transmit {
                segment: data_segment(s.seq, ack, s.len, s.fin),
                retransmission: true,
                fast_retransmission: false,
            });
        }
        let next = self.snd_nxt.max(self.iss + 1);
        let available = if next < self.write_end {
            self.write_end - next
        } else {
            0
        };
        let fin_unsent = self.fin_queued && self.snd_max < self.final_seq();
        let len = available.min(self.mss);
        let fin = fin_unsent && len == available;
        if len == 0 && !fin {
            return None;
        }
        if flight > 0 && flight + len.max(1) > window {
            return None;
        }
        if len < self.mss && len > 0 && self.nagle_holds(flight) {
            return None;
        }
        if self.pacing.holds(now) {
            return None;
        }
        if flight + len > self.cc.window() && !self.recovery.in_recovery() {
            // Only Limited Transmit's allowance let this segment out.
            self.limited_transmit_bytes += len;
        }
        if self.snd_una == self.snd_max && self.rate.app_limited != 0 {
            // `CA_EVENT_TX_START` after an application-limited idle period.
            self.cc.on_restart_from_idle();
        }
        let seq = self.snd_nxt;
        let s = Sent {
            seq,
            len: len + u32::from(fin),
            syn: false,
            fin,
            sent_at: now,
            retransmitted: false,
            rate: self.rate_on_send(now),
        };
        self.pacing.on_sent(now, len, &*self.cc);
        self.rtx.push_back(s);
        self.snd_nxt = seq + s.len;
        self.snd_max = self.snd_nxt;
        if len < self.mss {
            self.snd_sml = self.snd_nxt;
        }
        // RFC 6298 §5.1: start the timer if it is not running.
        let deadline = self.rto_deadline(now);
        self.rto_at.get_or_insert(deadline);
        let ack = self.ack_field();
        self.sent(Transmit {
            segment: data_segment(seq, ack, s.len, fin),
            retransmission: false,
            fast_retransmission: false,
        })
    }

    /// Whether Nagle's algorithm holds a less-than-full segment ([`Nagle`]).
    fn nagle_holds(&self, flight: u32) -> bool {
        match self.nagle {
            Nagle::Off => false,
            Nagle::Classic => flight > 0,
            // Linux `tcp_minshall_check`: the last small segment (ending at `snd_sml`) is
            // still unacknowledged.
            Nagle::Minshall => self.snd_sml > self.snd_una,
        }
    }

    fn transmit_ack(&mut self) -> Option<Transmit> {
        if !self.rcv.as_ref()?.ack_due() {
            return None;
        }
        let ack = self.ack_field();
        self.sent(Transmit {
            segment: Segment {
                seq: self.snd_nxt,
                ack,
                syn: false,
                fin: false,
                rst: false,
                len: 0,
                mss: None,
            },
            retransmission: false,
            fast_retransmission: false,
        })
    }
}

fn data_segment(seq: Seq, ack: Option<Seq>, seq_len: u32, fin: bool) -> Segment {
    Segment {
        seq,
        ack,
        syn: false,
        fin,
        rst: false,
        len: seq_len - u32::from(fin),
        mss: None,
    }
}
