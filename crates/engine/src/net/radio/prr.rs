//! A distance-dependent packet reception ratio per link (`network.link_loss_model =
//! "shadowing"`, docs/networks.md "Link losses"): the log-normal shadowing path loss of the
//! link-layer model of Zuniga & Krishnamachari ("Analyzing the transitional region in low
//! power wireless links", IEEE SECON 2004, §III), with the bit error rate of the IEEE
//! 802.15.4 2.4 GHz O-QPSK PHY (IEEE 802.15.4-2006 Annex E.4.1.8) instead of their
//! NCFSK radio's, since the motes modelled (TelosB) carry a CC2420.
//!
//! - Received power: `Pr(d) = Pt − PL(d0) − 10·η·log10(d / d0) − X`, d0 = 1 m (distances
//!   below d0 count as d0), X ~ N(0, σ²) drawn once per link (both directions share it).
//! - SNR = Pr − noise floor (dB); γ = 10^(SNR/10).
//! - BER = (8/15)·(1/16)·Σ_{k=2}^{16} (−1)^k·C(16, k)·exp(20·γ·(1/k − 1)), within [0, 0.5].
//! - A frame of `b` bytes on the air (PHY header included) survives with (1 − BER)^(8·b).

use coaplab_cc::rng::Rng;

/// The shadowing model's parameters (the `[network]` keys of the same names).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shadowing {
    pub tx_power_dbm: f64,
    pub noise_floor_dbm: f64,
    pub path_loss_exponent: f64,
    pub path_loss_d0_db: f64,
    pub sigma_db: f64,
}

/// Mean SNR (dB) at `distance_m`, before shadowing.
pub fn mean_snr_db(p: &Shadowing, distance_m: f64) -> f64 {
    let d = distance_m.max(1.0);
    p.tx_power_dbm - p.path_loss_d0_db - 10.0 * p.path_loss_exponent * d.log10() - p.noise_floor_dbm
}

/// The O-QPSK bit error rate at `snr_db` (IEEE 802.15.4-2006 E.4.1.8).
pub fn oqpsk_ber(snr_db: f64) -> f64 {
    let g = 10f64.powf(snr_db / 10.0);
    let mut binom = 120.0; // C(16, 2)
    let mut sum = 0.0;
    for k in 2..=16u32 {
        let sign = if k % 2 == 0 { 1.0 } else { -1.0 };
        sum += sign * binom * (20.0 * g * (1.0 / f64::from(k) - 1.0)).exp();
        // C(16, k + 1) = C(16, k) · (16 − k) / (k + 1)
        binom = binom * f64::from(16 - k) / f64::from(k + 1);
    }
    (8.0 / 15.0 / 16.0 * sum).clamp(0.0, 0.5)
}

/// Probability that a frame of `bytes` on the air (PHY header included) is received.
pub fn prr(ber: f64, bytes: u32) -> f64 {
    (1.0 - ber).powf(8.0 * f64::from(bytes))
}

/// One standard normal draw (Box–Muller, two uniforms).
fn normal(rng: &mut dyn Rng) -> f64 {
    let u1 = 1.0 - rng.unit_f64(); // in (0, 1]
    let u2 = rng.unit_f64();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// The bit error rate of every link (`n × n`, symmetric) of nodes at `positions`: each pair
/// `i < j` with `linked(i, j)` draws its shadowing in that order from `rng`; other pairs get
/// BER 0 (they exchange no frames).
pub fn link_bers(
    p: &Shadowing,
    positions: &[(f64, f64)],
    linked: impl Fn(usize, usize) -> bool,
    rng: &mut dyn Rng,
) -> Vec<f64> {
    let n = positions.len();
    let mut ber = vec![0.0; n * n];
    for i in 0..n {
        for j in i + 1..n {
            if !linked(i, j) {
                continue;
            }
            let (dx, dy) = (
                positions[i].0 - positions[j].0,
                positions[i].1 - positions[j].1,
            );
            let snr = mean_snr_db(p, (dx * dx + dy * dy).sqrt()) - p.sigma_db * normal(rng);
            let b = oqpsk_ber(snr);
            ber[i * n + j] = b;
            ber[j * n + i] = b;
        }
    }
    ber
}
