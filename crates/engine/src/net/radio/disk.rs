//! The medium's geometry: which nodes hear, disturb and sense each other — a unit disk of a
//! given radius around each node, or explicit links (docs/networks.md).

/// `(x1, y1)` and `(x2, y2)` are at most `r` apart (with a relative tolerance of 1e-9, so
/// nodes placed exactly one range apart are neighbours).
pub fn within(a: (f64, f64), b: (f64, f64), r: f64) -> bool {
    let (dx, dy) = (a.0 - b.0, a.1 - b.1);
    dx * dx + dy * dy <= r * r * (1.0 + 1e-9)
}

/// The relation "within `r`" between `positions` (`n × n`, row-major, irreflexive), or, with
/// `links`, "linked" (both directions) whatever `r`.
pub fn relation(positions: &[(f64, f64)], links: Option<&[[u16; 2]]>, r: f64) -> Vec<bool> {
    let n = positions.len();
    match links {
        None => (0..n * n)
            .map(|k| {
                let (i, j) = (k / n, k % n);
                i != j && within(positions[i], positions[j], r)
            })
            .collect(),
        Some(links) => {
            let mut m = vec![false; n * n];
            for &[a, b] in links {
                let (a, b) = (a as usize, b as usize);
                if a != b {
                    m[a * n + b] = true;
                    m[b * n + a] = true;
                }
            }
            m
        }
    }
}
