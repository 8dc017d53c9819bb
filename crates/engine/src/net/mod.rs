//! The network model, mahimahi-style: one small abstraction per concern, composed by the
//! testbed. `queue` (byte-limited tail drop) → `link` (serializer + propagation + `loss`
//! after serialization); `path` (router ↔ server delay, FIFO); `gprs` (a GPRS uplink's time
//! per packet in radio blocks, which a link asks in place of its rate; `gprs_downlink` its
//! downlink TBF).

pub mod cellular;
pub mod common;
pub mod event;
pub mod gprs;
pub mod gprs_downlink;
pub mod link;
pub mod loss;
pub mod network;
pub mod path;
pub mod queue;
pub mod radio;
pub mod series;
pub mod topology;
