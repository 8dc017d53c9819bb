//! RPL's parent changes under ETX, as Contiki 2.6 makes them (`network.contiki_rpl_etx`,
//! docs/networks.md): each node estimates the ETX of the links it sends on from the MAC's
//! outcomes, and moves to another parent when that one's path ETX beats the current one's by
//! the objective function's hysteresis.
//!
//! - **Link ETX** (`core/net/neighbor-info.c`): when the MAC is done with a frame
//!   (`sicslowpan.c` `packet_sent` → `neighbor_info_packet_sent(status, numtx)`), the frame's
//!   metric is its transmissions `numtx` if it was acknowledged (`MAC_TX_OK`) and
//!   `ETX_NOACK_PENALTY` (15) if it was given up unacknowledged (`MAC_TX_NOACK`); collisions
//!   change nothing. `update_metric` keeps an EWMA in fixed point (ETX × 16,
//!   `NEIGHBOR_INFO_ETX_DIVISOR`): the first metric is taken as it is, later ones as
//!   `(old · 90 + new · 10) / 100` (`ETX_ALPHA` 90 of `ETX_SCALE` 100), in integers.
//! - **Path metric** (`core/net/rpl/rpl-of-etx.c` `calculate_path_metric`): a parent's
//!   advertised path ETX plus the link's ETX, in units of 1/128 ETX (`RPL_DAG_MC_ETX_DIVISOR`);
//!   a link never measured counts `INITIAL_LINK_METRIC` = 5 ETX (`rpl-private.h`).
//! - **Parent choice** (`rpl-dag.c` `rpl_select_parent`, `rpl-of-etx.c` `best_parent`): the
//!   candidates in turn, keeping the better; two within `RPL_DAG_MC_ETX_DIVISOR /
//!   PARENT_SWITCH_THRESHOLD_DIV` = 64 (half an ETX) of each other keep the preferred parent.
//!
//! Bounded to what changes routes under congestion: a node re-chooses when one of its links'
//! ETX changed (Contiki marks the parent `updated` and `rpl_recalculate_ranks` processes it on
//! its 1 s periodic timer; here at once), among its neighbours outside its own sub-DODAG (so
//! no loop forms; Contiki may form one briefly and repair it), reading their path ETX as it is
//! now — as if every DIO were heard at once, an upper bound on how fast routes follow the
//! links (Trickle, `RPL_DIO_INTERVAL_MIN` 12 and `RPL_DIO_INTERVAL_DOUBLINGS` 8, sends them
//! 4 s to 17 min apart). The new parent takes the node's downward routes at once (storing
//! mode's DAO, not simulated). Not modelled: DIO and DAO frames on the air, `acceptable_rank`'s
//! bound on rank increases, neighbour-table evictions.

use super::rpl::{Dodag, NO_PARENT};

/// `neighbor-info.c`: `ETX_LIMIT` 15, the metric of a frame given up unacknowledged
/// (`ETX_NOACK_PENALTY`).
pub const ETX_NOACK_PENALTY: u16 = 15;
/// `neighbor-info.c`: `ETX_SCALE` 100, `ETX_ALPHA` 90.
pub const ETX_SCALE: u32 = 100;
pub const ETX_ALPHA: u32 = 90;
/// `neighbor-info.h`: `NEIGHBOR_INFO_ETX_DIVISOR` 16 (link ETX in fixed point).
pub const LINK_DIVISOR: u16 = 16;
/// `rpl-private.h`: `RPL_DAG_MC_ETX_DIVISOR` 128 (path ETX in fixed point).
pub const PATH_DIVISOR: u32 = 128;
/// `rpl-private.h`: `INITIAL_LINK_METRIC` = `NEIGHBOR_INFO_ETX2FIX(5)`.
pub const INITIAL_LINK_METRIC: u16 = 5 * LINK_DIVISOR;
/// `rpl-of-etx.c`: `PARENT_SWITCH_THRESHOLD_DIV` 2: parents within 128 / 2 = 64 of each
/// other keep the preferred one.
pub const PARENT_SWITCH_MIN_DIFF: u32 = PATH_DIVISOR / 2;

/// Every node's link ETX estimates (`n × n`, fixed point × 16; 0: never measured).
#[derive(Clone, Debug)]
pub struct EtxRouting {
    n: usize,
    link: Vec<u16>,
    /// Parent changes made so far.
    pub changes: u64,
}

impl EtxRouting {
    pub fn new(n: usize) -> Self {
        EtxRouting {
            n,
            link: vec![0; n * n],
            changes: 0,
        }
    }

    /// The link metric node `v` holds for neighbour `u` (× 16): `INITIAL_LINK_METRIC` until
    /// measured.
    pub fn link_metric(&self, v: u16, u: u16) -> u16 {
        match self.link[v as usize * self.n + u as usize] {
            0 => INITIAL_LINK_METRIC,
            m => m,
        }
    }

    /// `neighbor_info_packet_sent` at node `v` for a frame to `u`: `acked` with `numtx`
    /// transmissions, or given up unacknowledged. Returns whether the estimate changed.
    pub fn packet_sent(&mut self, v: u16, u: u16, acked: bool, numtx: u8) -> bool {
        let packet = if acked {
            u16::from(numtx)
        } else {
            ETX_NOACK_PENALTY
        } * LINK_DIVISOR;
        let slot = &mut self.link[v as usize * self.n + u as usize];
        let old = *slot;
        let new = if old == 0 {
            packet
        } else {
            ((u32::from(old) * ETX_ALPHA + u32::from(packet) * (ETX_SCALE - ETX_ALPHA)) / ETX_SCALE)
                as u16
        };
        *slot = new;
        new != old
    }

    /// Node `v`'s path ETX (× 128) along its parents in `dodag`: 0 at the root.
    pub fn path_metric(&self, dodag: &Dodag, v: u16) -> u32 {
        let (mut x, mut m) = (v, 0u32);
        while x != dodag.root {
            let p = dodag.parent[x as usize];
            m += self.via(x, p);
            x = p;
        }
        m
    }

    /// `calculate_path_metric` without the parent's part: the link `v` → `p`, × 128.
    fn via(&self, v: u16, p: u16) -> u32 {
        u32::from(self.link_metric(v, p)) * PATH_DIVISOR / u32::from(LINK_DIVISOR)
    }

    /// `rpl_select_parent` for node `v` among `neighbors` (in order): the parent it should
    /// have now. The root, and a node with no candidate, keep theirs.
    pub fn best_parent(&self, dodag: &Dodag, neighbors: &[u16], v: u16) -> u16 {
        let preferred = dodag.parent[v as usize];
        if preferred == NO_PARENT {
            return preferred;
        }
        let metric = |p: u16| self.path_metric(dodag, p) + self.via(v, p);
        let mut best: Option<(u16, u32)> = None;
        for &p in neighbors {
            if in_subtree(dodag, p, v) {
                continue;
            }
            let m = metric(p);
            best = Some(match best {
                None => (p, m),
                Some((b, bm)) => {
                    // `best_parent(p1 = best, p2 = p)`: similar metrics keep the preferred one.
                    if (b == preferred || p == preferred)
                        && bm < m + PARENT_SWITCH_MIN_DIFF
                        && bm + PARENT_SWITCH_MIN_DIFF > m
                    {
                        (preferred, metric(preferred))
                    } else if bm < m {
                        (b, bm)
                    } else {
                        (p, m)
                    }
                }
            });
        }
        best.map_or(preferred, |(b, _)| b)
    }
}

/// Whether `x` is `v` or below it in `dodag`.
fn in_subtree(dodag: &Dodag, x: u16, v: u16) -> bool {
    let mut y = x;
    loop {
        if y == v {
            return true;
        }
        if y == dodag.root {
            return false;
        }
        y = dodag.parent[y as usize];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A diamond: root 0; 1 and 2 its children; 3 a child of 1 that also hears 2.
    fn diamond() -> (Dodag, Vec<Vec<u16>>) {
        let neighbors = vec![vec![1, 2], vec![0, 3], vec![0, 3], vec![1, 2]];
        (Dodag::build(0, &neighbors).unwrap(), neighbors)
    }

    #[test]
    fn the_ewma_follows_neighbor_info() {
        let mut r = EtxRouting::new(4);
        // Never measured: INITIAL_LINK_METRIC 5 × 16 = 80.
        assert_eq!(r.link_metric(3, 1), 80);
        // First report (2 transmissions): taken as it is, 2 × 16 = 32.
        assert!(r.packet_sent(3, 1, true, 2));
        assert_eq!(r.link_metric(3, 1), 32);
        // Given up: 15 × 16 = 240; (32·90 + 240·10) / 100 = (2880 + 2400) / 100 = 52.8 → 52.
        assert!(r.packet_sent(3, 1, false, 4));
        assert_eq!(r.link_metric(3, 1), 52);
        // One transmission: (52·90 + 16·10) / 100 = (4680 + 160) / 100 = 48.4 → 48.
        assert!(r.packet_sent(3, 1, true, 1));
        assert_eq!(r.link_metric(3, 1), 48);
        // At 16 already: (16·90 + 16·10) / 100 = 16, unchanged.
        let mut s = EtxRouting::new(2);
        s.packet_sent(1, 0, true, 1);
        assert!(!s.packet_sent(1, 0, true, 1));
        assert_eq!(s.link_metric(1, 0), 16);
    }

    #[test]
    fn the_path_metric_sums_the_links_in_128ths() {
        let (d, _) = diamond();
        let mut r = EtxRouting::new(4);
        // 3 → 1 → 0, both links unmeasured: (80 + 80) · 128 / 16 = 1280 (10 ETX).
        assert_eq!(r.path_metric(&d, 3), 1280);
        r.packet_sent(1, 0, true, 1);
        // 16 · 8 + 80 · 8 = 128 + 640 = 768.
        assert_eq!(r.path_metric(&d, 3), 768);
        assert_eq!(r.path_metric(&d, 0), 0);
    }

    #[test]
    fn a_parent_is_left_only_beyond_half_an_etx() {
        let (d, nb) = diamond();
        assert_eq!(d.parent[3], 1);
        let mut r = EtxRouting::new(4);
        // Via 1: path(1) 640 + link 3→1; via 2: path(2) 640 + link 3→2 (unmeasured, 640)
        // = 1280. Link 3→1 measured at 5 ETX + 2/16 (82 → 656): 640 + 656 = 1296 is 16 more,
        // within 64: 1 stays.
        r.link[3 * 4 + 1] = 82;
        assert_eq!(r.best_parent(&d, &nb[3], 3), 1);
        // 89/16 ETX: 640 + 712 = 1352, 72 above 1280: beyond 64, 2 wins.
        r.link[3 * 4 + 1] = 89;
        assert_eq!(r.best_parent(&d, &nb[3], 3), 2);
        // 88/16: 640 + 704 = 1344, exactly 64 above: not strictly within, 2 wins
        // (`p1_metric > p2_metric - min_diff` fails at equality).
        r.link[3 * 4 + 1] = 88;
        assert_eq!(r.best_parent(&d, &nb[3], 3), 2);
        // 87/16: 1336, 56 above: within, 1 stays.
        r.link[3 * 4 + 1] = 87;
        assert_eq!(r.best_parent(&d, &nb[3], 3), 1);
    }

    #[test]
    fn no_child_becomes_a_parent() {
        let (d, nb) = diamond();
        let mut r = EtxRouting::new(4);
        // Node 1's link to the root very bad (15 ETX): its only other neighbour, 3, is its
        // child, so it keeps the root.
        r.link[4] = 240;
        assert_eq!(r.best_parent(&d, &nb[1], 1), 0);
        // The root keeps no parent.
        assert_eq!(r.best_parent(&d, &nb[0], 0), NO_PARENT);
    }
}
