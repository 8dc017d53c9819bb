//! What `workload.kind = "lwm2m"` keeps on the UDP application (docs/model.md "LwM2M devices"):
//! every device with the server's view of it, and the checks of a population's `lwm2m` keys. A
//! leaf beside `udp_app` (which holds the state) and `lwm2m_app` (which plays it).

use coaplab_cc::rng::Xoshiro256pp;
use coaplab_cc::Instant;

use crate::coap::lwm2m::device::Device;
use crate::coap::lwm2m::requester::Requester;
use crate::coap::lwm2m::Params;
use crate::config::WorkloadKind;
use crate::error::Error;

/// One device with what the server keeps of it.
pub(crate) struct Lwm2mDevice {
    pub(crate) dev: Device,
    /// Its index in the requester.
    pub(crate) peer: u32,
    /// The reads' arrivals and the requester's random factors (`Stream::Lwm2m`).
    pub(crate) rng: Xoshiro256pp,
    pub(crate) params: Params,
}

/// Every LwM2M device of the run (by local client index) and the server's requester.
#[derive(Default)]
pub(crate) struct Lwm2mState {
    pub(crate) devices: Vec<Option<Lwm2mDevice>>,
    pub(crate) requester: Requester,
    /// Requester peer → local client.
    pub(crate) client_of_peer: Vec<u32>,
    /// Ended exchanges of the client being served (tag, block, ok).
    pub(crate) ended: Vec<(u8, Option<u32>, bool)>,
}

/// The `lwm2m` keys of population `g`: refused with other kinds, and the combinations the
/// model does not take (docs/model.md "LwM2M devices").
pub(crate) fn check(
    g: &crate::config::GroupConfig,
    label: &dyn Fn(&str) -> String,
) -> Result<(), Error> {
    let w = &g.workload;
    let set = [
        ("lwm2m_register_bytes", w.lwm2m_register_bytes.is_some()),
        ("lwm2m_lifetime_s", w.lwm2m_lifetime_s.is_some()),
        ("lwm2m_queue_mode", w.lwm2m_queue_mode.is_some()),
        ("lwm2m_queue_window_s", w.lwm2m_queue_window_s.is_some()),
        ("lwm2m_reads_per_day", w.lwm2m_reads_per_day.is_some()),
        ("lwm2m_notify_period_s", w.lwm2m_notify_period_s.is_some()),
        ("lwm2m_notify_bytes", w.lwm2m_notify_bytes.is_some()),
        ("lwm2m_firmware_bytes", w.lwm2m_firmware_bytes.is_some()),
        ("lwm2m_firmware_at_s", w.lwm2m_firmware_at_s.is_some()),
    ];
    let err = |key: &str, m: String| Err(Error::key(label(&format!("workload.{key}")), m));
    if w.kind != WorkloadKind::Lwm2m {
        if let Some((key, _)) = set.iter().find(|(_, on)| *on) {
            let kind = format!("{:?}", w.kind).to_lowercase();
            return err(
                key,
                format!("only meaningful when workload.kind = \"lwm2m\" (kind is \"{kind}\")"),
            );
        }
        return Ok(());
    }
    if w.duration_s.is_none() {
        return err(
            "duration_s",
            "required when workload.kind = \"lwm2m\" (the devices' updates, reads and notifications run until then)".into(),
        );
    }
    if w.request_bytes.is_some() {
        return err(
            "request_bytes",
            "not allowed with workload.kind = \"lwm2m\" (each uplink has its own size: lwm2m_register_bytes, lwm2m_notify_bytes)".into(),
        );
    }
    if w.lwm2m_queue_window_s.is_some() && w.lwm2m_queue_mode != Some(true) {
        return err(
            "lwm2m_queue_window_s",
            "only meaningful with workload.lwm2m_queue_mode = true".into(),
        );
    }
    if w.lwm2m_firmware_at_s.is_some() && w.lwm2m_firmware_bytes.is_none() {
        return err(
            "lwm2m_firmware_at_s",
            "only meaningful with workload.lwm2m_firmware_bytes (the image to pull)".into(),
        );
    }
    if g.coap.security != crate::config::security::Security::None {
        return Err(Error::key(
            label("coap.security"),
            "workload.kind = \"lwm2m\" runs without security; allowed: \"none\"",
        ));
    }
    Ok(())
}

/// The largest LwM2M uplink (a Register, a notification) fits the MTU.
pub(crate) fn check_mtu(
    w: &crate::config::workload::WorkloadConfig,
    msgs: &crate::coap::messages::MessageFactory,
    mtu: u32,
) -> Result<(), Error> {
    let reg = w
        .lwm2m_register_bytes
        .unwrap_or(crate::config::defaults::WORKLOAD_LWM2M_REGISTER_BYTES);
    let notify = w
        .lwm2m_notify_bytes
        .unwrap_or(crate::config::defaults::WORKLOAD_LWM2M_NOTIFY_BYTES);
    let payload = reg.max(notify) as u16;
    let p = msgs.request_carrying(0, 0, 1, 0, None, Instant::ZERO, Some(payload));
    if p.ip_bytes > mtu {
        return Err(Error::key(
            "link.mtu",
            format!(
                "{mtu} B is smaller than the largest LwM2M uplink ({} B); raise link.mtu or lower workload.lwm2m_register_bytes / lwm2m_notify_bytes",
                p.ip_bytes
            ),
        ));
    }
    Ok(())
}
