//! Independent, named RNG streams (docs/design.md §1 "Determinism"): every random component draws from
//! its own stream derived from `(seed, replication, component)`, so adding a client does not
//! perturb the loss pattern of a link direction, and a run is a pure function of its inputs.

use coaplab_cc::rng::{derive_seed, Xoshiro256pp};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    UplinkErrors,
    DownlinkErrors,
    PathDelayUp,
    PathDelayDown,
    ClientStart,
    /// One client's dithering (and its workload's batch sizes).
    Client(u32),
    /// One mesh node's MAC backoffs (`u32::MAX`: the mesh's per-link losses).
    Radio(u32),
    /// A GPRS uplink's radio block errors (`net::gprs`).
    GprsBlocks,
    /// A cell's random access, block errors and back-offs (`net::cellular`).
    Cell,
    /// A cell's devices' coupling losses.
    CellCoverage,
    /// One reporting device's payloads and exception reports (`crate::reporting`).
    Report(u32),
    /// One observer's notifier at the server: its algorithm's dithering (`coap::observe`).
    Notifier(u32),
    /// One observed resource's values (a Poisson process's gaps, `coap::observe`).
    Values(u32),
    /// One LwM2M device's server reads: arrivals and retransmission dithering (`coap::lwm2m`).
    Lwm2m(u32),
}

impl Stream {
    fn id(self) -> [u64; 2] {
        match self {
            Stream::UplinkErrors => [1, 0],
            Stream::DownlinkErrors => [2, 0],
            Stream::PathDelayUp => [3, 0],
            Stream::PathDelayDown => [4, 0],
            Stream::ClientStart => [5, 0],
            Stream::Client(i) => [6, u64::from(i)],
            Stream::Radio(i) => [7, u64::from(i)],
            Stream::GprsBlocks => [8, 0],
            Stream::Cell => [9, 0],
            Stream::CellCoverage => [10, 0],
            Stream::Report(i) => [11, u64::from(i)],
            Stream::Notifier(i) => [12, u64::from(i)],
            Stream::Values(i) => [13, u64::from(i)],
            Stream::Lwm2m(i) => [14, u64::from(i)],
        }
    }
}

/// The RNG of `stream` for replication `replication` of base seed `seed`.
pub fn stream(seed: u64, replication: u64, stream: Stream) -> Xoshiro256pp {
    let [kind, index] = stream.id();
    Xoshiro256pp::seed_from_u64(derive_seed(&[seed, replication, kind, index]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use coaplab_cc::rng::Rng;

    #[test]
    fn streams_are_distinct_and_reproducible() {
        let a = stream(1, 0, Stream::Client(0)).next_u64();
        assert_eq!(a, stream(1, 0, Stream::Client(0)).next_u64());
        assert_ne!(a, stream(1, 0, Stream::Client(1)).next_u64());
        assert_ne!(a, stream(1, 1, Stream::Client(0)).next_u64());
        assert_ne!(a, stream(2, 0, Stream::Client(0)).next_u64());
        assert_ne!(
            stream(1, 0, Stream::UplinkErrors).next_u64(),
            stream(1, 0, Stream::DownlinkErrors).next_u64()
        );
    }
}
