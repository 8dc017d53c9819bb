//! The TCP congestion controllers by name: what `coap.cc` selects with
//! `coap.transport = "tcp"`, what the scenario schema and the Python side enumerate. A
//! scenario's name is resolved here once, when the configuration is read
//! (`world::tcp_app`); from then on the configuration carries the entry
//! (`TcpConfig::congestion`, tcp/config.rs).

use coaplab_cc::Instant;

use super::bbr::Bbr;
use super::controller::{ControllerEntry, ControllerParams};
use super::cubic::Cubic;
use super::new_reno::NewReno;

/// Every TCP congestion controller. The first is the default.
pub static CONTROLLERS: &[ControllerEntry] = &[
    ControllerEntry {
        name: "newreno",
        summary: "RFC 5681 slow start and congestion avoidance with RFC 6582 fast recovery",
        source: "RFC 5681, RFC 6582",
        build: |p| Box::new(NewReno::new(p)),
    },
    ControllerEntry {
        name: "bbr",
        summary: "BBR v1 with pacing, as Linux 4.x-5.x implements it",
        source: "Linux net/ipv4/tcp_bbr.c",
        build: |p| {
            Box::new(Bbr::new(
                p.mss,
                p.initial_window_segments * p.mss,
                Instant::ZERO,
                None,
                0,
            ))
        },
    },
    ControllerEntry {
        name: "cubic",
        summary: "CUBIC with HyStart, as Linux implements it (its default controller)",
        source: "RFC 9438; Linux net/ipv4/tcp_cubic.c",
        build: |p| Box::new(Cubic::new(p)),
    },
];

/// The default controller (the literature's hosts: New Reno).
pub fn default_controller() -> &'static ControllerEntry {
    &CONTROLLERS[0]
}

/// The registered controller named `name`.
pub fn controller(name: &str) -> Option<&'static ControllerEntry> {
    CONTROLLERS.iter().find(|c| c.name == name)
}

/// The controllers' names, in registry order.
pub fn controller_names() -> Vec<&'static str> {
    CONTROLLERS.iter().map(|c| c.name).collect()
}

/// The controllers that report state for the `cc_state` trace
/// ([`super::controller::Controller::snapshot`]): each is built and asked (any parameters
/// do; these are the defaults).
pub fn controllers_with_state() -> Vec<&'static str> {
    let p = ControllerParams {
        mss: 256,
        initial_window_segments: 4,
        slow_start_limit_segments: None,
    };
    CONTROLLERS
        .iter()
        .filter(|c| c.build(&p).snapshot().is_some())
        .map(|c| c.name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_controller_builds_with_its_initial_window() {
        let p = ControllerParams {
            mss: 256,
            initial_window_segments: 4,
            slow_start_limit_segments: None,
        };
        let mut names = controller_names();
        assert_eq!(
            names[0],
            default_controller().name,
            "the first is the default"
        );
        for name in &names {
            let c = controller(name).expect("registered").build(&p);
            // IW 4 × MSS 256 = 1024 bytes for every controller.
            assert_eq!(c.window(), 1024, "{name}");
        }
        // New Reno has no state beyond its window; BBR and CUBIC trace theirs.
        let traced = controllers_with_state();
        assert!(
            !traced.contains(&"newreno") && traced.contains(&"bbr") && traced.contains(&"cubic")
        );
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), CONTROLLERS.len(), "names are unique");
        assert_eq!(controller("vegas"), None);
    }
}
