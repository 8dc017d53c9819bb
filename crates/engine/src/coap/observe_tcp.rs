//! Observe over CoAP over TCP (RFC 7641 over RFC 8323 §7, docs/model.md "Observe", "Over
//! TCP"), sans-IO: the server's notifier for one observer on its client's connection, and the
//! observation (the resource's values, the notifier, the client's observer).
//!
//! RFC 8323 §7.1: over a reliable transport the notifications are not confirmable or
//! non-confirmable messages and are not acknowledged at the CoAP layer; TCP carries them
//! reliably and in order, under its own congestion control. What is left to the server is
//! freshness: RFC 7641 §4.5.2 lets it skip a notification that a newer one makes stale. The
//! rule here: a notification is written to the connection only when the connection has no
//! unsent bytes (every byte written before has left at least once, as an application does
//! with Linux's `TCP_NOTSENT_LOWAT` socket option, tcp(7), at 1 byte); otherwise it waits,
//! at most one per observer, and a newer value replaces the waiting one
//! (`notifications_superseded`). So the send buffer never holds a stale value behind a
//! congested stream, and a value, once written, arrives (TCP retransmits what is lost).

use coaplab_cc::rng::Xoshiro256pp;
use coaplab_cc::{Duration, Instant};

use super::observe::{Observer, Resource, Value};

/// The server's counters for one observer.
#[derive(Clone, Debug, Default)]
pub struct TcpNotifierStats {
    /// Notifications written to the connection (the registration's response not counted).
    pub sent: u64,
    /// Values replaced while waiting for the connection's unsent bytes to drain.
    pub superseded: u64,
}

/// The server's notifier for one observer over TCP (see the module's documentation).
#[derive(Clone, Debug, Default)]
pub struct TcpNotifier {
    registered: bool,
    waiting: Option<Value>,
    pub stats: TcpNotifierStats,
}

impl TcpNotifier {
    /// The registration reached the server: its response carries the newest value, so a
    /// waiting one is dropped (it is not newer).
    pub fn register(&mut self) {
        self.registered = true;
        self.waiting = None;
    }

    /// The resource took `value` while the connection holds `unsent` bytes not yet sent:
    /// the value to write now, if any.
    pub fn on_value(&mut self, value: Value, unsent: u64) -> Option<Value> {
        if !self.registered {
            return None;
        }
        if unsent > 0 {
            if self.waiting.replace(value).is_some() {
                self.stats.superseded += 1;
            }
            return None;
        }
        // Nothing unsent: a waiting value (if the caller did not flush it yet) is stale.
        if self.waiting.take().is_some() {
            self.stats.superseded += 1;
        }
        self.stats.sent += 1;
        Some(value)
    }

    /// The connection now holds `unsent` bytes not yet sent: the waiting value to write, if
    /// the connection has drained.
    pub fn on_drained(&mut self, unsent: u64) -> Option<Value> {
        if unsent > 0 {
            return None;
        }
        let v = self.waiting.take()?;
        self.stats.sent += 1;
        Some(v)
    }
}

/// One observation over TCP: the resource's values, the server's notifier, the client's
/// observer (whose freshness rule and counters are UDP's; over TCP it never re-registers on
/// silence: the observation lasts as long as the connection, RFC 8323 §7).
pub struct TcpObservation {
    pub notifier: TcpNotifier,
    pub observer: Observer,
    pub resource: Resource,
    pub payload: u32,
    /// Max-Age, s, when not the default (RFC 7252 §5.10.5).
    pub max_age: Option<u32>,
}

impl TcpObservation {
    /// Values every `period` or at `rate_per_s` (exactly one is given) until `deadline`,
    /// drawn from `values`; notifications carry `payload` bytes.
    pub fn new(
        observer: Observer,
        values: Xoshiro256pp,
        process: (Option<Duration>, Option<f64>, Instant),
        payload: u32,
        max_age: Option<u32>,
    ) -> Self {
        TcpObservation {
            notifier: TcpNotifier::default(),
            observer,
            resource: Resource::new(values, process),
            payload,
            max_age,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(seq: u32) -> Value {
        Value {
            seq,
            generated: Instant::ZERO + Duration::from_secs(u64::from(seq)),
        }
    }

    #[test]
    fn a_value_waits_while_bytes_are_unsent_and_a_newer_one_replaces_it() {
        let mut n = TcpNotifier::default();
        // Before the registration nothing is sent.
        assert_eq!(n.on_value(v(0), 0), None);
        n.register();
        // An idle connection takes the value at once.
        assert_eq!(n.on_value(v(1), 0), Some(v(1)));
        // 66 bytes still unsent: value 2 waits, value 3 replaces it, value 4 replaces 3.
        assert_eq!(n.on_value(v(2), 66), None);
        assert_eq!(n.on_value(v(3), 66), None);
        assert_eq!(n.on_value(v(4), 66), None);
        assert_eq!(n.on_drained(10), None);
        // Drained: the newest (4) goes; nothing waits after it.
        assert_eq!(n.on_drained(0), Some(v(4)));
        assert_eq!(n.on_drained(0), None);
        // 1 + 3 + 1 = 5 values after the registration = 2 sent + 2 superseded + value 0 lost
        // before the registration.
        assert_eq!((n.stats.sent, n.stats.superseded), (2, 2));
        // A waiting value the registration's response makes stale is dropped, not counted.
        assert_eq!(n.on_value(v(5), 1), None);
        n.register();
        assert_eq!(n.on_drained(0), None);
        assert_eq!((n.stats.sent, n.stats.superseded), (2, 2));
    }
}
