//! The values of `coap.security` and `coap.dtls_suite` (docs/model.md "Security"): a leaf, so
//! `[coap]` (`coap.rs`) and its defaults (`defaults.rs`) both use it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `coap.security`: how CoAP over UDP is secured (docs/model.md "Security").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum Security {
    // Plain CoAP (RFC 7252).
    #[default]
    #[serde(rename = "none")]
    None,
    // DTLS 1.2 (RFC 6347, RFC 7925's profile).
    #[serde(rename = "dtls1.2")]
    Dtls12,
    // DTLS 1.3 (RFC 9147).
    #[serde(rename = "dtls1.3")]
    Dtls13,
    // OSCORE (RFC 8613) with a pre-shared security context.
    #[serde(rename = "oscore")]
    Oscore,
}

impl Security {
    pub const fn as_str(self) -> &'static str {
        match self {
            Security::None => "none",
            Security::Dtls12 => "dtls1.2",
            Security::Dtls13 => "dtls1.3",
            Security::Oscore => "oscore",
        }
    }
    pub const fn is_dtls(self) -> bool {
        matches!(self, Security::Dtls12 | Security::Dtls13)
    }
}

/// `coap.dtls_suite`: how the DTLS handshake authenticates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DtlsSuite {
    // Pre-shared keys (RFC 4279; DTLS 1.3: an external PSK, RFC 8446 §2.2).
    #[default]
    Psk,
    // ECDHE with ECDSA P-256 certificates (RFC 7251, RFC 8422; DTLS 1.3: RFC 8446 §4.4).
    Cert,
}

impl DtlsSuite {
    pub const fn as_str(self) -> &'static str {
        match self {
            DtlsSuite::Psk => "psk",
            DtlsSuite::Cert => "cert",
        }
    }
}
