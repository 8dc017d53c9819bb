//! Coverage: a device's coupling loss gives its RSRP, and SIB2's RSRP thresholds its coverage
//! level (TS 36.321 §5.1.1: the level whose `rsrp-ThresholdsPrachInfoList` range holds the
//! measured RSRP).
//!
//! RSRP is the power of one reference-signal resource element at the device:
//! `RSRP = P_RE − coupling_loss`, with `P_RE` the eNB's transmit power per subcarrier
//! (`Numerology::rs_power_dbm`: the carrier's power less 10·log10 of its subcarriers).

/// The device's RSRP at `coupling_loss_db`, dBm.
pub fn rsrp_dbm(rs_power_dbm: f64, coupling_loss_db: f64) -> f64 {
    rs_power_dbm - coupling_loss_db
}

/// The coverage level of `rsrp`: 0 at or above `thresholds[0]`, 1 at or above `thresholds[1]`,
/// else 2.
pub fn level(rsrp: f64, thresholds: [f64; 2]) -> u8 {
    if rsrp >= thresholds[0] {
        0
    } else if rsrp >= thresholds[1] {
        1
    } else {
        2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NB1: 43 dBm over 12 subcarriers = 32.21 dBm per subcarrier. 130 dB → −97.8 dBm, level
    /// 0; 144 dB → −111.8, level 1 (below −107); 164 dB → −131.8, level 2 (below −117). The
    /// level-1 boundary is at 32.21 + 107 = 139.2 dB coupling loss.
    #[test]
    fn levels_follow_the_thresholds() {
        let p = super::super::numerology::nb1().rs_power_dbm;
        assert!((p - 32.21).abs() < 0.01);
        let th = [-107.0, -117.0];
        assert_eq!(level(rsrp_dbm(p, 130.0), th), 0);
        assert_eq!(level(rsrp_dbm(p, 144.0), th), 1);
        assert_eq!(level(rsrp_dbm(p, 164.0), th), 2);
        assert_eq!(level(rsrp_dbm(p, 139.0), th), 0);
        assert_eq!(level(rsrp_dbm(p, 139.3), th), 1);
    }
}
