//! The network model, mahimahi-style: one small abstraction per concern, composed by the
//! testbed. `queue` (byte-limited tail drop) → `link` (serializer + propagation + `loss`
//! after serialization); `path` (router ↔ server delay, FIFO).

pub mod gprs;
pub mod link;
pub mod loss;
pub mod network;
pub mod path;
pub mod queue;
pub mod radio;
pub mod topology;
