//! Routing: an RPL-like DODAG (RFC 6550) built once, before any traffic, on perfect links —
//! rank = hop count from the root (the border router), each node's preferred parent its
//! lowest-numbered neighbour one hop closer to the root — used in storing mode: a packet
//! climbs towards the root until it reaches an ancestor of its destination (the lowest common
//! ancestor of source and destination), then descends. No control traffic is simulated.
//!
//! With per-link qualities (the `shadowing` loss model) the DODAG is built as Contiki 2.6's
//! default objective function does (`core/net/rpl/rpl-of-etx.c`): a node's path cost is its
//! parent's plus the link's ETX, its preferred parent the neighbour of least path cost
//! (`best_parent`; ties to the lowest number), links whose ETX exceeds `MAX_LINK_METRIC` (10)
//! and paths whose cost exceeds `MAX_PATH_COST` (100) are rejected — see [`Dodag::build_etx`].

/// A node with no parent (the root).
pub const NO_PARENT: u16 = u16::MAX;

/// Contiki 2.6 `rpl-of-etx.c`: "Reject parents that have a higher link metric than the
/// following" (`MAX_LINK_METRIC` 10) and "… a higher path cost" (`MAX_PATH_COST` 100), in ETX.
pub const MAX_LINK_METRIC: f64 = 10.0;
pub const MAX_PATH_COST: f64 = 100.0;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dodag {
    pub root: u16,
    /// Preferred parent of each node ([`NO_PARENT`] for the root).
    pub parent: Vec<u16>,
    /// Hops from each node to the root.
    pub depth: Vec<u16>,
}

impl Dodag {
    /// Builds the DODAG over the neighbour lists; `Err` names a node the root cannot reach.
    pub fn build(root: u16, neighbors: &[Vec<u16>]) -> Result<Dodag, u16> {
        let n = neighbors.len();
        let mut depth = vec![u16::MAX; n];
        depth[root as usize] = 0;
        let mut frontier = std::collections::VecDeque::from([root]);
        while let Some(u) = frontier.pop_front() {
            for &v in &neighbors[u as usize] {
                if depth[v as usize] == u16::MAX {
                    depth[v as usize] = depth[u as usize] + 1;
                    frontier.push_back(v);
                }
            }
        }
        if let Some(lost) = depth.iter().position(|&d| d == u16::MAX) {
            return Err(lost as u16);
        }
        let parent = (0..n)
            .map(|v| {
                if v == root as usize {
                    NO_PARENT
                } else {
                    neighbors[v]
                        .iter()
                        .copied()
                        .filter(|&u| depth[u as usize] + 1 == depth[v])
                        .min()
                        .expect("a node at depth d > 0 has a neighbour at depth d - 1")
                }
            })
            .collect();
        Ok(Dodag {
            root,
            parent,
            depth,
        })
    }

    /// Contiki 2.6 `rpl-of-etx.c`: the DODAG of least path ETX, `etx(v, u)` being the ETX of
    /// the link from `v` to its candidate parent `u` (links above [`MAX_LINK_METRIC`] unused,
    /// paths above [`MAX_PATH_COST`] rejected); `depth` is then the hop count along the
    /// parents. `Err` names a node with no acceptable path.
    pub fn build_etx(
        root: u16,
        neighbors: &[Vec<u16>],
        etx: impl Fn(u16, u16) -> f64,
    ) -> Result<Dodag, u16> {
        let n = neighbors.len();
        let mut cost = vec![f64::INFINITY; n];
        let mut parent = vec![NO_PARENT; n];
        let mut done = vec![false; n];
        cost[root as usize] = 0.0;
        // Dijkstra; n is small (a scenario's nodes), so a linear scan for the minimum does.
        for _ in 0..n {
            let Some(u) = (0..n)
                .filter(|&i| !done[i] && cost[i].is_finite())
                .min_by(|&a, &b| cost[a].total_cmp(&cost[b]).then(a.cmp(&b)))
            else {
                break;
            };
            done[u] = true;
            for &v in &neighbors[u] {
                let link = etx(v, u as u16);
                if done[v as usize] || link > MAX_LINK_METRIC {
                    continue;
                }
                let c = cost[u] + link;
                let better = c < cost[v as usize]
                    || (c == cost[v as usize] && (u as u16) < parent[v as usize]);
                if c <= MAX_PATH_COST && better {
                    cost[v as usize] = c;
                    parent[v as usize] = u as u16;
                }
            }
        }
        if let Some(lost) = (0..n).position(|i| !done[i]) {
            return Err(lost as u16);
        }
        let depth = (0..n as u16)
            .map(|v| {
                let (mut d, mut x) = (0u16, v);
                while x != root {
                    x = parent[x as usize];
                    d += 1;
                }
                d
            })
            .collect();
        Ok(Dodag {
            root,
            parent,
            depth,
        })
    }

    /// Node `v` takes `parent` as its preferred parent (which must not be in `v`'s
    /// sub-DODAG); every node's depth follows.
    pub fn set_parent(&mut self, v: u16, parent: u16) {
        self.parent[v as usize] = parent;
        for x in 0..self.parent.len() as u16 {
            let (mut d, mut y) = (0u16, x);
            while y != self.root {
                y = self.parent[y as usize];
                d += 1;
            }
            self.depth[x as usize] = d;
        }
    }

    /// The next hop from `u` towards `dst` (`u != dst`): the child of `u` on the way down if
    /// `dst` is in `u`'s sub-DODAG, else `u`'s parent.
    pub fn next_hop(&self, u: u16, dst: u16) -> u16 {
        let du = self.depth[u as usize];
        let mut x = dst;
        while self.depth[x as usize] > du + 1 {
            x = self.parent[x as usize];
        }
        if self.depth[x as usize] == du + 1 && self.parent[x as usize] == u {
            x
        } else {
            self.parent[u as usize]
        }
    }

    /// The route from `a` to `b`, both ends included.
    pub fn route(&self, a: u16, b: u16) -> Vec<u16> {
        let mut path = vec![a];
        let mut u = a;
        while u != b {
            u = self.next_hop(u, b);
            path.push(u);
        }
        path
    }

    /// Radio hops from `a` to `b`.
    pub fn hops(&self, a: u16, b: u16) -> u32 {
        self.route(a, b).len() as u32 - 1
    }
}
