//! OMA LwM2M 1.1 devices (docs/model.md "LwM2M devices"): the phases of one LwM2M Client
//! (`device`) and the LwM2M Server's requester of reads to its devices (`requester`). Both are
//! sans-IO: they are told `now` and events and answer with what to send and when to wake.
//!
//! Sources: OMA-TS-LightweightM2M_Core-V1_1 (registration, its retries, the Server object's
//! defaults), OMA-TS-LightweightM2M_Transport-V1_1 §6.5 (queue mode), Eclipse Wakaama
//! `core/registration.c` (when an Update is sent, the registration retry back-off).

pub mod device;
pub mod requester;

use coaplab_cc::Duration;

use crate::config::defaults;
use crate::config::workload::WorkloadConfig;

/// A device's own timers (`device::Device::on_timer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    /// The next Registration Update is due.
    Update,
    /// The next Register attempt of a sequence (after a failed one).
    RegisterRetry,
    /// The observed resource's next notification.
    Notify,
    /// The firmware pull starts.
    Firmware,
}

/// An LwM2M event of a device (its local client index travels with it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// One of the device's own timers.
    Device(Timer),
    /// The server wants the device's next read (a Poisson arrival).
    Read,
    /// The server's retransmission timer of its read to the device.
    ServerTimer(u32),
}

/// What an uplink exchange of a device is (the tag its exchange record carries; 0 = none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Uplink {
    /// CON POST /rd with the link-format payload (Core 1.1 §5.3.1 Register).
    Register = 1,
    /// CON POST /rd/{location} without payload (Core 1.1 §5.3.2 Update).
    Update = 2,
    /// CON notification of the observed resource (Core 1.1 §5.5.2 Notify).
    Notify = 3,
    /// CON GET with Block2 of the firmware image (RFC 7959; Core 1.1 Firmware Update object,
    /// pull mode).
    Firmware = 4,
}

impl Uplink {
    pub fn from_tag(tag: u8) -> Option<Uplink> {
        match tag {
            1 => Some(Uplink::Register),
            2 => Some(Uplink::Update),
            3 => Some(Uplink::Notify),
            4 => Some(Uplink::Firmware),
            _ => None,
        }
    }
}

/// The Communication Retry Count's default: registration attempts in one sequence
/// (OMA-TS-LightweightM2M_Core-V1_1 §6.2.1.1, Server object resource 17; Wakaama
/// `prv_getRegistrationAttemptLimit`: 5 when the resource is absent).
pub const COMMUNICATION_RETRY_COUNT: u32 = 5;
/// The Communication Retry Timer's default, s: attempt `n` failed → the next one after
/// `60 · 2^(n−1)` s (Core 1.1 §6.2.1.1, resource 18; Wakaama `prv_getRegistrationAttemptLimit`
/// 60, `prv_handleRegistrationAttemptFailure`: `attemptDelay * (1 << (attempt - 1))`).
pub const COMMUNICATION_RETRY_TIMER_S: u64 = 60;
/// MAX_TRANSMIT_WAIT with the default transmission parameters, s (RFC 7252 §4.8.2:
/// 2 · (2^5 − 1) · 1.5 = 93); Wakaama `COAP_MAX_TRANSMIT_WAIT`.
pub const MAX_TRANSMIT_WAIT_S: u64 = 93;

/// A group's LwM2M parameters, resolved from `[workload]` with their named defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    pub register_bytes: u16,
    pub lifetime: Duration,
    /// `Some(window)` in queue mode.
    pub queue_window: Option<Duration>,
    pub reads_per_day: f64,
    pub notify_period: Option<Duration>,
    pub notify_bytes: u16,
    /// Blocks of the firmware image (0: no pull) and when the pull starts.
    pub firmware_blocks: u32,
    pub firmware_at: Duration,
    pub deadline: coaplab_cc::Instant,
}

impl Params {
    pub fn of(w: &WorkloadConfig, firmware_blocks: u32) -> Params {
        let secs = Duration::from_secs_f64;
        Params {
            register_bytes: w
                .lwm2m_register_bytes
                .unwrap_or(defaults::WORKLOAD_LWM2M_REGISTER_BYTES)
                as u16,
            lifetime: secs(
                w.lwm2m_lifetime_s
                    .unwrap_or(defaults::WORKLOAD_LWM2M_LIFETIME_S),
            ),
            queue_window: w.lwm2m_queue_mode.unwrap_or(false).then(|| {
                secs(
                    w.lwm2m_queue_window_s
                        .unwrap_or(defaults::WORKLOAD_LWM2M_QUEUE_WINDOW_S),
                )
            }),
            reads_per_day: w.lwm2m_reads_per_day.unwrap_or(0.0),
            notify_period: w.lwm2m_notify_period_s.map(secs),
            notify_bytes: w
                .lwm2m_notify_bytes
                .unwrap_or(defaults::WORKLOAD_LWM2M_NOTIFY_BYTES) as u16,
            firmware_blocks: if w.lwm2m_firmware_bytes.is_some() {
                firmware_blocks
            } else {
                0
            },
            firmware_at: secs(w.lwm2m_firmware_at_s.unwrap_or(0.0)),
            deadline: coaplab_cc::Instant::from_secs_f64(w.duration_s.unwrap_or(0.0)),
        }
    }

    /// When the next Update goes, after the last reply to a Register or Update: Wakaama's
    /// `registration_step` (STATE_REGISTERED) sends it at `registration + lifetime −
    /// COAP_MAX_TRANSMIT_WAIT` when the lifetime exceeds MAX_TRANSMIT_WAIT, else at half the
    /// lifetime (`nextUpdate >> 1`, here in nanoseconds).
    pub fn update_interval(&self) -> Duration {
        let mtw = Duration::from_secs(MAX_TRANSMIT_WAIT_S);
        if self.lifetime > mtw {
            self.lifetime - mtw
        } else {
            Duration::from_nanos(self.lifetime.nanos() / 2)
        }
    }
}

/// One UDP group's LwM2M measurements (summed over its devices; times in s, one per event:
/// the Python front pools them into percentiles). docs/model.md "LwM2M devices", "Metrics".
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Counters {
    pub register_s: Vec<f64>,
    pub registrations_failed: u64,
    pub updates_sent: u64,
    pub updates_failed: u64,
    pub read_wait_s: Vec<f64>,
    pub reads_failed: u64,
    pub notifications_delivered: u64,
    pub firmware_s: Vec<f64>,
    pub firmware_failed: u64,
}

impl crate::coap::client::Client {
    /// An LwM2M device asks for an uplink (`Plan::Lwm2m`); it starts when NSTART allows
    /// (`Client::poll_start`).
    pub fn push_uplink(&mut self, r: crate::workload::NextRequest) {
        if let crate::workload::Plan::Lwm2m { queue } = &mut self.plan {
            queue.push_back(r);
        }
    }
}
