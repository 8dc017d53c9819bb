//! The checks of `workload.kind = "observe"` and its keys (RFC 7641, docs/model.md "Observe"):
//! every wrong combination is one typed error naming the key and what is allowed.

use super::defaults;
use super::workload::{NotifyMode, WorkloadConfig, WorkloadKind};
use super::{CoapConfig, Security, Transport};
use crate::error::Error;

/// The observe keys of `[workload]`, refused with any other kind.
const OBSERVE_KEYS: [&str; 6] = [
    "notify",
    "con_every_s",
    "notify_period_s",
    "notify_rate_per_s",
    "notification_bytes",
    "max_age_s",
];

/// The observe workload's parameters, defaults applied.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ObserveParams {
    pub notify: NotifyMode,
    /// `non-con`: a CON when the last one is this old, s.
    pub con_every_s: f64,
    /// Exactly one of the two value processes.
    pub period_s: Option<f64>,
    pub rate_per_s: Option<f64>,
    pub notification_bytes: u32,
    pub max_age_s: f64,
    pub duration_s: f64,
}

/// Which observe keys `w` sets.
fn set_keys(w: &WorkloadConfig) -> [bool; 6] {
    [
        w.notify.is_some(),
        w.con_every_s.is_some(),
        w.notify_period_s.is_some(),
        w.notify_rate_per_s.is_some(),
        w.notification_bytes.is_some(),
        w.max_age_s.is_some(),
    ]
}

/// Checks a population's workload against the observe rules; for an observe workload returns
/// its parameters. `label` prefixes a group's keys (`group.<name>.`).
pub fn check(
    w: &WorkloadConfig,
    coap: &CoapConfig,
    label: &dyn Fn(&str) -> String,
) -> Result<Option<ObserveParams>, Error> {
    let err = |key: &str, m: String| Err(Error::key(label(&format!("workload.{key}")), m));
    if w.kind != WorkloadKind::Observe {
        if let Some(i) = set_keys(w).iter().position(|&s| s) {
            let kind = format!("{:?}", w.kind).to_lowercase();
            return err(
                OBSERVE_KEYS[i],
                format!("only meaningful when workload.kind = \"observe\" (kind is \"{kind}\")"),
            );
        }
        return Ok(None);
    }
    if coap.transport == Transport::Tcp {
        // RFC 8323 §7.1: over a reliable transport notifications are neither CON nor NON.
        if let Some(key) = [
            (w.notify.is_some(), "notify"),
            (w.con_every_s.is_some(), "con_every_s"),
        ]
        .iter()
        .find_map(|&(set, key)| set.then_some(key))
        {
            return err(
                key,
                "not meaningful with coap.transport = \"tcp\" (notifications over a reliable transport are neither CON nor NON, RFC 8323 §7.1); allowed: leave it unset".into(),
            );
        }
    }
    if coap.security != Security::None {
        return Err(Error::key(
            label("coap.security"),
            "\"observe\" runs without security in this version; allowed: \"none\"",
        ));
    }
    let Some(duration_s) = w.duration_s else {
        return err(
            "duration_s",
            "required when workload.kind = \"observe\"".into(),
        );
    };
    let (period_s, rate_per_s) = match (w.notify_period_s, w.notify_rate_per_s) {
        (Some(_), Some(_)) => {
            return err(
                "notify_period_s",
                "and workload.notify_rate_per_s both set; allowed: exactly one (a period process or a Poisson process)".into(),
            )
        }
        (None, None) => {
            return err(
                "notify_period_s",
                "or workload.notify_rate_per_s required when workload.kind = \"observe\" (exactly one)".into(),
            )
        }
        pair => pair,
    };
    let notify = w.notify.unwrap_or(defaults::WORKLOAD_NOTIFY);
    if w.con_every_s.is_some() && notify != NotifyMode::NonCon {
        return err(
            "con_every_s",
            "only meaningful with workload.notify = \"non-con\"".into(),
        );
    }
    if w.request_bytes.is_some() {
        return err(
            "request_bytes",
            "not allowed with workload.kind = \"observe\" (the registration is a plain GET)".into(),
        );
    }
    let max_age_s = w.max_age_s.unwrap_or(defaults::WORKLOAD_MAX_AGE_S);
    if let Some(p) = period_s.filter(|&p| p > max_age_s) {
        return err(
            "notify_period_s",
            format!(
                "{p} s is longer than workload.max_age_s ({max_age_s} s): every client would re-register between notifications; allowed: <= max_age_s (RFC 7641 §3.3.1)"
            ),
        );
    }
    Ok(Some(ObserveParams {
        notify,
        con_every_s: w.con_every_s.unwrap_or(defaults::WORKLOAD_CON_EVERY_S),
        period_s,
        rate_per_s,
        notification_bytes: w
            .notification_bytes
            .unwrap_or(defaults::WORKLOAD_NOTIFICATION_BYTES),
        max_age_s,
        duration_s,
    }))
}
