//! The GPRS downlink's TBF (docs/networks.md "The GPRS preset"): a plain serializer of the
//! downlink rate that needs a downlink TBF to send on. A sans-IO model told `now`; the link
//! ([`crate::net::link::Link`]) keeps the network's buffer and asks it how long each packet
//! occupies the downlink.
//!
//! - Downlink TBF establishment (TS 44.060 §7.2; TS 44.018 §3.5.3): the network assigns a
//!   downlink TBF before its first block — an Immediate Assignment on the CCCH, within one
//!   51-multiframe (51 × 4.615 ms = 235 ms, TS 45.002 §4.3.3), as for the uplink's packet
//!   access (`net::gprs::GPRS_TBF_SETUP_MS`).
//! - Delayed release (TS 44.060 §9.3.1a): once its data is sent the network keeps the
//!   downlink TBF open a while, so that the next packet needs no new assignment: OsmoPCU
//!   keeps an idle downlink TBF 2 s (timer X2031 "Time to keep an idle DL TBF alive",
//!   src/gprs_pcu.c; `gprs_rlcmac_dl_tbf::keep_open`, src/tbf_dl.cpp).
//!
//! So a response that reaches the network more than `idle` after the downlink's last packet
//! pays `setup` before its blocks; one that comes sooner does not.

use coaplab_cc::{Duration, Instant};

/// Downlink TBF establishment, ms: an Immediate Assignment on the CCCH within one
/// 51-multiframe (TS 44.018 §3.5.3, TS 45.002 §4.3.3: 51 × 4.615 ms = 235 ms).
pub const GPRS_DL_TBF_SETUP_MS: f64 = 235.0;
/// Delayed release of the downlink TBF (TS 44.060 §9.3.1a), ms: OsmoPCU's default for timer
/// X2031 (src/gprs_pcu.c), 2000 ms.
pub const GPRS_DL_TBF_IDLE_MS: f64 = 2000.0;

/// The parameters of the downlink (each a `[network]` key, docs/networks.md).
#[derive(Clone, Debug, PartialEq)]
pub struct GprsDownlinkParams {
    /// Serialization rate, bit/s (at least 1).
    pub rate_bps: u64,
    /// Link-layer bytes added to each IP packet.
    pub overhead_bytes: u32,
    /// Downlink TBF establishment when the TBF had been released.
    pub tbf_setup: Duration,
    /// How long the network keeps an idle downlink TBF (delayed release).
    pub tbf_idle: Duration,
}

/// The downlink's TBF state.
#[derive(Clone, Debug)]
pub struct GprsDownlink {
    params: GprsDownlinkParams,
    /// The downlink TBF is open (or kept) until then; `None`: never opened.
    tbf_until: Option<Instant>,
    /// Downlink TBF establishments paid.
    pub tbf_setups: u64,
}

impl GprsDownlink {
    pub fn new(mut params: GprsDownlinkParams) -> Self {
        params.rate_bps = params.rate_bps.max(1);
        GprsDownlink {
            params,
            tbf_until: None,
            tbf_setups: 0,
        }
    }

    /// `(ip_bytes + overhead) · 8 / rate`, rounded up to the nanosecond (as `Link`'s).
    pub fn serialization_time(&self, ip_bytes: u32) -> Duration {
        let bits = u128::from(ip_bytes + self.params.overhead_bytes) * 8;
        let ns = (bits * 1_000_000_000).div_ceil(u128::from(self.params.rate_bps));
        Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
    }

    /// A packet of `ip_bytes` starts on the idle-or-just-freed downlink at `now`: how long it
    /// occupies it — the TBF establishment if the TBF was released (or never opened), then
    /// its serialization. The TBF is then kept `tbf_idle` after it.
    pub fn service_time(&mut self, now: Instant, ip_bytes: u32) -> Duration {
        let mut t = now;
        if self.tbf_until.is_none_or(|until| now > until) {
            self.tbf_setups += 1;
            t += self.params.tbf_setup;
        }
        t += self.serialization_time(ip_bytes);
        self.tbf_until = Some(t + self.params.tbf_idle);
        t - now
    }
}

impl crate::net::link::Medium for GprsDownlink {
    fn service_time(&mut self, now: Instant, ip_bytes: u32) -> Duration {
        GprsDownlink::service_time(self, now, ip_bytes)
    }
    fn on_downlink_packet(&mut self, _now: Instant, _busy: bool) {}
    fn on_idle(&mut self, _now: Instant) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn downlink() -> GprsDownlink {
        GprsDownlink::new(GprsDownlinkParams {
            rate_bps: 40_000,
            overhead_bytes: 0,
            tbf_setup: Duration::from_millis(235),
            tbf_idle: Duration::from_millis(2000),
        })
    }

    #[test]
    fn a_lone_response_pays_the_downlink_tbf_one_within_the_delayed_release_does_not() {
        let mut dl = downlink();
        // A 50-byte response at 40 kbit/s: 400 bit / 40 000 bit/s = 10 ms; no TBF yet: 235 +
        // 10 = 245 ms, ending at 1.245 s, the TBF kept until 3.245 s.
        assert_eq!(
            dl.service_time(Instant::from_secs(1), 50),
            Duration::from_millis(245)
        );
        // At 3.245 s exactly the TBF is still kept: 10 ms; it then ends at 3.255, kept to 5.255.
        assert_eq!(
            dl.service_time(Instant::from_millis(3245), 50),
            Duration::from_millis(10)
        );
        // At 5.256 s it was released 1 ms before: the establishment again.
        assert_eq!(
            dl.service_time(Instant::from_millis(5256), 50),
            Duration::from_millis(245)
        );
        assert_eq!(dl.tbf_setups, 2);
    }

    #[test]
    fn serialization_rounds_up_and_a_zero_rate_is_one_bit_per_second() {
        let dl = downlink();
        // 41 B = 328 bit at 40 kbit/s = 8.2 ms exactly; 1 B = 8 bit = 0.2 ms.
        assert_eq!(dl.serialization_time(41), Duration::from_micros(8200));
        // 3 kbit/s: 8 bit / 3000 = 2.666… ms → 2 666 667 ns (rounded up).
        let mut p = dl.params.clone();
        p.rate_bps = 3000;
        assert_eq!(
            GprsDownlink::new(p.clone()).serialization_time(1),
            Duration::from_nanos(2_666_667)
        );
        p.rate_bps = 0;
        assert_eq!(
            GprsDownlink::new(p).serialization_time(1),
            Duration::from_secs(8)
        );
    }
}
