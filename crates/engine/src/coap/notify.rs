//! `workload.notify`'s values (RFC 7641 §4.5), apart from `coap::observe` so that the
//! configuration (`config::workload`, `config::defaults`) names them without importing the
//! notifier.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `workload.notify` (observe only): the message type of the notifications (RFC 7641 §4.5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum NotifyMode {
    // Every notification confirmable (acknowledged by the client).
    #[default]
    Con,
    // Every notification non-confirmable.
    Non,
    // Non-confirmable, with a confirmable one at least every `con_every_s` (RFC 7641 §4.5:
    // at least every 24 hours).
    NonCon,
}
