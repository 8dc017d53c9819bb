//! The bytes security adds, from the RFCs' structures (docs/model.md "Security"): each record
//! layer's per-message overhead, OSCORE's, and every handshake flight, message by message,
//! packed into datagrams no larger than the path MTU as DTLS does (RFC 6347 §4.2.3).

use coaplab_wire::ip::{IPV4_HEADER, UDP_HEADER};

/// IPv4 + UDP headers of every datagram, bytes (the engine's packets, `coaplab_wire::ip`).
pub const IP_UDP: u32 = (IPV4_HEADER + UDP_HEADER) as u32;

// ---- Record layers ---------------------------------------------------------------------

/// DTLS 1.2 record header, RFC 6347 §4.1: type 1 + version 2 + epoch 2 + sequence_number 6 +
/// length 2 = 13 bytes. Also DTLS 1.3's `DTLSPlaintext` (RFC 9147 §4), used for its
/// unprotected ClientHello, HelloRetryRequest and ServerHello.
pub const DTLS12_HEADER: u32 = 13;
/// AES-128-CCM-8 in DTLS 1.2 (RFC 6655 §3, the suites of RFC 4279 PSK and RFC 7251 ECDHE_ECDSA):
/// an 8-byte explicit nonce (`GenericAEADCipher.nonce_explicit`, RFC 5246 §6.2.3.3) and an
/// 8-byte ICV: 8 + 8 = 16 bytes.
pub const CCM8_NONCE_AND_TAG: u32 = 8 + 8;
/// The 8-byte tag of AES-CCM-8 (RFC 6655 §3; TLS 1.3's TLS_AES_128_CCM_8_SHA256, RFC 8446
/// §B.4; OSCORE's default AEAD AES-CCM-16-64-128, RFC 8613 §3.2, RFC 8152 §10.2).
pub const CCM8_TAG: u32 = 8;
/// DTLS 1.3 unified header (RFC 9147 §4, Figure 3): the first byte `001CSLEE` + a 16-bit
/// sequence number (S = 1) + a 16-bit length (L = 1): 1 + 2 + 2 = 5 bytes — the full form; a
/// sender may shorten it (8-bit sequence number, no length in a datagram's last record).
pub const DTLS13_UNIFIED_HEADER: u32 = 1 + 2 + 2;
/// The real content type after the content, RFC 9147 §4 (`DTLSInnerPlaintext.type`) and RFC
/// 9146 §4 (`DTLSInnerPlaintext` of `tls12_cid` records): 1 byte (no padding).
pub const INNER_CONTENT_TYPE: u32 = 1;
/// The connection ID's length, bytes. RFC 9146 §3 leaves it to the receiver (0–255);
/// Californium's `DtlsConfig.DTLS_CONNECTION_ID_LENGTH` has no default and advises 100 times
/// more values than peers: 4 bytes (4 × 10⁹ values) assumed.
pub const CID_BYTES: u32 = 4;
/// DTLS handshake message header, RFC 6347 §4.2.2 (also RFC 9147 §5.2): msg_type 1 + length
/// 3 + message_seq 2 + fragment_offset 3 + fragment_length 3 = 12 bytes, on every fragment.
pub const HANDSHAKE_HEADER: u32 = 12;

/// How a secured message is carried: none, a DTLS record layer, or OSCORE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Protection {
    #[default]
    None,
    /// DTLS 1.2 (RFC 6347), `cid`: with a connection ID (RFC 9146).
    Dtls12 {
        cid: bool,
    },
    /// DTLS 1.3 (RFC 9147), `cid`: with a connection ID (RFC 9147 §9).
    Dtls13 {
        cid: bool,
    },
    Oscore,
}

impl Protection {
    /// Bytes a record or OSCORE adds to a CoAP message: `request`, and for OSCORE its
    /// sequence number `seq` (the client's exchange index; retransmissions repeat it).
    pub fn overhead(self, request: bool, seq: u32) -> u32 {
        match self {
            Protection::None => 0,
            // RFC 6347 §4.1 header 13 + RFC 6655 nonce 8 + tag 8 = 29 bytes.
            Protection::Dtls12 { cid: false } => DTLS12_HEADER + CCM8_NONCE_AND_TAG,
            // RFC 9146 §4: the 13-byte header grows by the CID (content type tls12_cid), the
            // content carries its real type byte: 13 + 4 + 1 + 16 = 34 bytes.
            Protection::Dtls12 { cid: true } => {
                DTLS12_HEADER + CID_BYTES + INNER_CONTENT_TYPE + CCM8_NONCE_AND_TAG
            }
            // RFC 9147 §4: unified header 5 + inner type 1 + tag 8 = 14 bytes (the nonce is
            // implicit in DTLS 1.3, RFC 8446 §5.3); with a CID (C = 1) 4 more: 18 bytes.
            Protection::Dtls13 { cid } => {
                DTLS13_UNIFIED_HEADER
                    + if cid { CID_BYTES } else { 0 }
                    + INNER_CONTENT_TYPE
                    + CCM8_TAG
            }
            Protection::Oscore => oscore_overhead(request, seq),
        }
    }
}

/// OSCORE's kid (the client's Sender ID), bytes: 1 assumed (RFC 8613 §3.3 lets Sender IDs be
/// short; Appendix C.2's client Sender ID is the single byte 0x00).
pub const OSCORE_KID_BYTES: u32 = 1;

/// Partial IV bytes of sequence number `seq`: as few as encode it, at least 1 (RFC 8613 §6.1,
/// "n" of the flag byte; Appendix C.4's sequence number 20 is the one byte 0x14).
pub fn partial_iv_bytes(seq: u32) -> u32 {
    (32 - seq.leading_zeros()).div_ceil(8).max(1)
}

/// Bytes OSCORE (RFC 8613) adds to a CoAP message whose options are all Class E (Uri-Path,
/// Block2, the Rexmit-Cnt option) and which travels without a proxy:
/// - the OSCORE option (number 9, §2): its header is one byte (delta 9 from 0, length < 13);
///   a request's value is the flag byte + Partial IV + kid (§6.1); a response's is empty (all
///   flags zero: no Partial IV, no kid, §6.1);
/// - the Class E options move unchanged into the plaintext (§5.3: same delta encoding, from 0);
/// - the plaintext's inner code: 1 byte (§5.3); the outer code (POST / 2.04, §4.2) replaces
///   the original in the 4-byte header;
/// - the payload marker 0xFF before the ciphertext: 1 byte (the original's marker, when it had
///   a payload, moves into the plaintext with the payload);
/// - AES-CCM-16-64-128's tag: 8 bytes (§3.2.1).
///
/// Request, sequence number < 256: (1 + 1 + 1 + 1) + 1 + 1 + 8 = 14 bytes; response: 1 + 1 +
/// 1 + 8 = 11 bytes.
pub fn oscore_overhead(request: bool, seq: u32) -> u32 {
    let option_value = if request {
        1 + partial_iv_bytes(seq) + OSCORE_KID_BYTES
    } else {
        0
    };
    let option = 1 + option_value;
    option + 1 + 1 + CCM8_TAG
}

// ---- Handshakes ------------------------------------------------------------------------

/// `dtls_suite`: pre-shared keys or P-256 certificates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Suite {
    /// DTLS 1.2: TLS_PSK_WITH_AES_128_CCM_8 (RFC 4279, RFC 6655); DTLS 1.3: an external PSK
    /// with `psk_ke` and TLS_AES_128_CCM_8_SHA256 (RFC 8446 §4.2.9, §B.4).
    Psk,
    /// DTLS 1.2: TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8 (RFC 7251) on secp256r1 (RFC 8422); DTLS
    /// 1.3: (EC)DHE on secp256r1, ECDSA certificates, TLS_AES_128_CCM_8_SHA256. Both ends
    /// authenticate (a CertificateRequest, RFC 7925 §4.4.2's mutual authentication).
    Cert,
}

/// `random`, RFC 5246 §7.4.1.2 / RFC 8446 §4.1.2: 32 bytes.
const RANDOM: u32 = 32;
/// The server's session ID (RFC 5246 §7.4.1.3, up to 32 bytes): 32, which a resuming client
/// sends back (RFC 5246 §7.3).
const SESSION_ID: u32 = 32;
/// The cookie of HelloVerifyRequest (RFC 6347 §4.2.1, up to 255 bytes) and of DTLS 1.3's
/// HelloRetryRequest (RFC 8446 §4.2.2): 32 bytes, an HMAC-SHA256 of the client's address and
/// hello (as RFC 6347 §4.2.1 suggests; Californium's cookie generator).
const COOKIE: u32 = 32;
/// The PSK identity (RFC 4279 §5.3, RFC 8446 §4.2.11): 16 bytes, assumed.
const PSK_IDENTITY: u32 = 16;
/// A DTLS 1.3 session ticket (RFC 8446 §4.6.1) a cert-suite client resumes with: 32 bytes,
/// assumed.
const TICKET: u32 = 32;
/// One P-256 X.509 certificate, DER, bytes: 400, assumed — its 91-byte SubjectPublicKeyInfo
/// (RFC 5480), a 72-byte ECDSA signature, short CN-only names, validity and the key-identifier
/// extensions (RFC 5280). Each end sends its own certificate only (RFC 7925 §4.4.2).
pub const CERT_BYTES: u32 = 400;
/// A DER ECDSA P-256 signature, at most 2 + 2 × (2 + 33) = 72 bytes (RFC 8422 §5.4, SEC 1).
const ECDSA_SIG: u32 = 72;
/// An uncompressed P-256 point: 0x04 + 32 + 32 = 65 bytes (RFC 8422 §5.4.1).
const P256_POINT: u32 = 65;
/// Finished's verify_data: 12 bytes in (D)TLS 1.2 (RFC 5246 §7.4.9); the SHA-256 hash length,
/// 32 bytes, in 1.3 (RFC 8446 §4.4.4).
const VERIFY_DATA_12: u32 = 12;
const VERIFY_DATA_13: u32 = 32;

/// Extensions: type 2 + length 2 + the content.
const fn ext(content: u32) -> u32 {
    4 + content
}
/// supported_groups with secp256r1: list length 2 + 2 (RFC 8422 §5.1.1).
const SUPPORTED_GROUPS: u32 = ext(2 + 2);
/// ec_point_formats with `uncompressed`: list length 1 + 1 (RFC 8422 §5.1.2).
const EC_POINT_FORMATS: u32 = ext(1 + 1);
/// signature_algorithms with ecdsa_secp256r1_sha256: list length 2 + 2 (RFC 5246
/// §7.4.1.4.1, RFC 8446 §4.2.3).
const SIGNATURE_ALGORITHMS: u32 = ext(2 + 2);

/// A record of a flight: a handshake message (fragmentable) or a ChangeCipherSpec / ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Msg {
    /// Content bytes (a handshake message's body, without its 12-byte header).
    pub body: u32,
    pub handshake: bool,
    /// Protected by the new keys (DTLS 1.2: epoch 1; DTLS 1.3: epochs 2 and 3).
    pub protected: bool,
}

const fn hs(body: u32) -> Msg {
    Msg {
        body,
        handshake: true,
        protected: false,
    }
}
const fn hs_enc(body: u32) -> Msg {
    Msg {
        body,
        handshake: true,
        protected: true,
    }
}
/// ChangeCipherSpec: one byte of content (RFC 5246 §7.1), not a handshake message.
const CCS: Msg = Msg {
    body: 1,
    handshake: false,
    protected: false,
};

/// The DTLS version of a handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    V12,
    V13,
}

/// Bytes around a record's content: its header and protection.
fn record_bytes(v: Version, protected: bool) -> u32 {
    match (v, protected) {
        (_, false) => DTLS12_HEADER,
        (Version::V12, true) => DTLS12_HEADER + CCM8_NONCE_AND_TAG,
        (Version::V13, true) => DTLS13_UNIFIED_HEADER + INNER_CONTENT_TYPE + CCM8_TAG,
    }
}

/// The flights of a DTLS 1.2 handshake, each a list of messages, client's first.
/// `resume`: the abbreviated handshake (RFC 5246 §7.3 Figure 2, RFC 6347 §4.2.4 Figure 2)
/// without a cookie exchange (RFC 6347 §4.2.1: "The server MAY choose not to do a cookie
/// exchange when a session is resumed").
pub fn dtls12_flights(suite: Suite, resume: bool) -> Vec<Vec<Msg>> {
    // ClientHello, RFC 5246 §7.4.1.2 with RFC 6347 §4.2.1's cookie: client_version 2 + random
    // 32 + session_id (1 + len) + cookie (1 + len) + cipher_suites (2 + 2, one suite) +
    // compression_methods (1 + 1): 42 without session ID and cookie. The cert suite adds its
    // extensions: length 2 + supported_groups 8 + ec_point_formats 6 + signature_algorithms 8
    // = 24.
    let hello_exts = match suite {
        Suite::Psk => 0,
        Suite::Cert => 2 + SUPPORTED_GROUPS + EC_POINT_FORMATS + SIGNATURE_ALGORITHMS,
    };
    let client_hello = |session: u32, cookie: u32| {
        hs(2 + RANDOM + 1 + session + 1 + cookie + 2 + 2 + 1 + 1 + hello_exts)
    };
    // ServerHello, RFC 5246 §7.4.1.3: version 2 + random 32 + session_id 1 + 32 + cipher_suite
    // 2 + compression 1 = 70; the cert suite echoes ec_point_formats (RFC 8422 §5.2): + 2 + 6.
    let server_hello = hs(2
        + RANDOM
        + 1
        + SESSION_ID
        + 2
        + 1
        + match suite {
            Suite::Psk => 0,
            Suite::Cert => 2 + EC_POINT_FORMATS,
        });
    // Finished: 12 bytes of verify_data under the new keys (RFC 5246 §7.4.9).
    let finished = hs_enc(VERIFY_DATA_12);
    if resume {
        return vec![
            vec![client_hello(SESSION_ID, 0)],
            vec![server_hello, CCS, finished],
            vec![CCS, finished],
        ];
    }
    // HelloVerifyRequest, RFC 6347 §4.2.1: server_version 2 + cookie 1 + 32 = 35.
    let hello_verify = hs(2 + 1 + COOKIE);
    // ServerHelloDone: empty (RFC 5246 §7.4.5).
    let done = hs(0);
    // Certificate, RFC 5246 §7.4.2: certificate_list length 3 + (3 + the certificate).
    let certificate = hs(3 + 3 + CERT_BYTES);
    let (server_flight, client_flight) = match suite {
        // RFC 4279 §2: no Certificate; no ServerKeyExchange without an identity hint;
        // ClientKeyExchange is psk_identity: length 2 + 16.
        Suite::Psk => (
            vec![server_hello, done],
            vec![hs(2 + PSK_IDENTITY), CCS, finished],
        ),
        Suite::Cert => (
            vec![
                server_hello,
                certificate,
                // ServerKeyExchange, RFC 8422 §5.4: curve_type 1 + named_curve 2 + point
                // (1 + 65) + signature (algorithm 2 + length 2 + 72) = 145.
                hs(1 + 2 + 1 + P256_POINT + 2 + 2 + ECDSA_SIG),
                // CertificateRequest, RFC 5246 §7.4.4: certificate_types (1 + 1) +
                // supported_signature_algorithms (2 + 2) + certificate_authorities (2 + 0) = 8.
                hs(1 + 1 + 2 + 2 + 2),
                done,
            ],
            vec![
                certificate,
                // ClientKeyExchange, RFC 8422 §5.7: the point, length 1 + 65 = 66.
                hs(1 + P256_POINT),
                // CertificateVerify, RFC 5246 §7.4.8: algorithm 2 + length 2 + 72 = 76.
                hs(2 + 2 + ECDSA_SIG),
                CCS,
                finished,
            ],
        ),
    };
    vec![
        vec![client_hello(0, 0)],
        vec![hello_verify],
        vec![client_hello(0, COOKIE)],
        server_flight,
        client_flight,
        vec![CCS, finished],
    ]
}

/// The flights of a DTLS 1.3 handshake (RFC 9147 §5, RFC 8446 §4), client's first; the last
/// is the server's ACK of the client's final flight (RFC 9147 §7). Full: with the
/// HelloRetryRequest cookie exchange (RFC 9147 §5.1). `resume`: a PSK handshake (the external
/// PSK, or the cert suite's session ticket) without the cookie exchange (RFC 9147 §5.1 lets a
/// server skip it; as RFC 6347 §4.2.1 on resumption).
pub fn dtls13_flights(suite: Suite, resume: bool) -> Vec<Vec<Msg>> {
    // supported_versions: list length 1 + DTLS 1.3 (2) (RFC 8446 §4.2.1).
    let supported_versions = ext(1 + 2);
    // psk_key_exchange_modes: length 1 + psk_ke (1) (RFC 8446 §4.2.9).
    let psk_modes = ext(1 + 1);
    // pre_shared_key, RFC 8446 §4.2.11: identities length 2 + (identity 2 + id +
    // obfuscated_ticket_age 4) + binders length 2 + (1 + 32, an HMAC-SHA256).
    let pre_shared_key = |id: u32| ext(2 + 2 + id + 4 + 2 + 1 + 32);
    // key_share with one secp256r1 share: client_shares length 2 + (group 2 + length 2 + 65)
    // (RFC 8446 §4.2.8).
    let key_share = ext(2 + 2 + 2 + P256_POINT);
    // cookie: length 2 + 32 (RFC 8446 §4.2.2).
    let cookie = ext(2 + COOKIE);
    let psk = matches!(suite, Suite::Psk) || resume;
    let identity = if matches!(suite, Suite::Psk) {
        PSK_IDENTITY
    } else {
        TICKET
    };
    // ClientHello, RFC 9147 §5.3: legacy_version 2 + random 32 + legacy_session_id 1 +
    // legacy_cookie 1 + cipher_suites (2 + 2) + legacy_compression_methods (1 + 1) +
    // extensions length 2 = 44, + the extensions (pre_shared_key last).
    let hello_exts = if psk {
        supported_versions + psk_modes + pre_shared_key(identity)
    } else {
        supported_versions + key_share + SUPPORTED_GROUPS + SIGNATURE_ALGORITHMS
    };
    let client_hello = |with_cookie: bool| {
        hs(2 + RANDOM
            + 1
            + 1
            + 2
            + 2
            + 1
            + 1
            + 2
            + hello_exts
            + if with_cookie { cookie } else { 0 })
    };
    // ServerHello (and HelloRetryRequest, RFC 8446 §4.1.3-4): legacy_version 2 + random 32 +
    // legacy_session_id_echo 1 + cipher_suite 2 + legacy_compression_method 1 + extensions
    // length 2 = 40, + supported_versions (2 + 2 + 2 = 6) + pre_shared_key's selected_identity
    // (2 + 2 + 2 = 6) or key_share's server_share (2 + 2 + 2 + 2 + 65 = 73).
    let sv_selected = ext(2);
    let server_hello = hs(40 + sv_selected + if psk { ext(2) } else { ext(2 + 2 + P256_POINT) });
    let hello_retry = hs(40 + sv_selected + cookie);
    // EncryptedExtensions: empty list, length 2 (RFC 8446 §4.3.1).
    let encrypted_extensions = hs_enc(2);
    let finished = hs_enc(VERIFY_DATA_13);
    // Certificate, RFC 8446 §4.4.2: certificate_request_context 1 + certificate_list length 3
    // + (cert_data length 3 + the certificate + extensions length 2).
    let certificate = hs_enc(1 + 3 + 3 + CERT_BYTES + 2);
    // CertificateVerify, RFC 8446 §4.4.3: algorithm 2 + length 2 + 72 = 76.
    let certificate_verify = hs_enc(2 + 2 + ECDSA_SIG);
    let (server_flight, client_flight) = if psk {
        (
            vec![server_hello, encrypted_extensions, finished],
            vec![finished],
        )
    } else {
        (
            vec![
                server_hello,
                encrypted_extensions,
                // CertificateRequest, RFC 8446 §4.3.2: context 1 + extensions length 2 +
                // signature_algorithms 8 = 11.
                hs_enc(1 + 2 + SIGNATURE_ALGORITHMS),
                certificate,
                certificate_verify,
                finished,
            ],
            vec![certificate, certificate_verify, finished],
        )
    };
    // ACK, RFC 9147 §7: record_numbers length 2 + 16 (epoch 8 + sequence number 8) per
    // acknowledged record — one per message of the client's final flight.
    let ack = Msg {
        body: 2 + 16 * client_flight.len() as u32,
        handshake: false,
        protected: true,
    };
    let mut flights = Vec::new();
    if !resume {
        flights.push(vec![client_hello(false)]);
        flights.push(vec![hello_retry]);
    }
    flights.push(vec![client_hello(!resume)]);
    flights.push(server_flight);
    flights.push(client_flight);
    flights.push(vec![ack]);
    flights
}

/// A flight's datagrams, each its IP size: records packed in order, several per datagram
/// (RFC 6347 §4.1.1: "Multiple DTLS records may be placed in a single datagram"); a handshake
/// message that does not fit a whole datagram is fragmented (RFC 6347 §4.2.3), every
/// fragment with its own record and handshake headers, each filling its datagram; a message
/// that fits a datagram starts a new one rather than being split. `None`: `mtu` cannot carry
/// a record.
pub fn pack(flight: &[Msg], v: Version, mtu: u32) -> Option<Vec<u32>> {
    let room = mtu.checked_sub(IP_UDP)?;
    let mut datagrams = Vec::new();
    let mut used = 0u32;
    for m in flight {
        let fixed = record_bytes(v, m.protected) + if m.handshake { HANDSHAKE_HEADER } else { 0 };
        let mut left = m.body;
        loop {
            if used + fixed + left <= room {
                used += fixed + left;
                break;
            }
            if fixed + left <= room || !m.handshake {
                // Fits a datagram of its own (or cannot be split): start one.
                if used == 0 {
                    return None;
                }
                datagrams.push(used);
                used = 0;
                continue;
            }
            // A fragment fills what is left of this datagram (at least one body byte).
            if used + fixed >= room {
                if used == 0 {
                    return None;
                }
                datagrams.push(used);
                used = 0;
                continue;
            }
            let part = room - used - fixed;
            left -= part;
            datagrams.push(room);
            used = 0;
        }
    }
    if used > 0 {
        datagrams.push(used);
    }
    Some(datagrams.into_iter().map(|d| d + IP_UDP).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtls12_record_overhead() {
        // RFC 6347 §4.1: 13-byte header; RFC 6655: 8-byte explicit nonce + 8-byte tag.
        assert_eq!(
            Protection::Dtls12 { cid: false }.overhead(true, 0),
            13 + 8 + 8
        );
    }

    #[test]
    fn cid_record_overhead() {
        // RFC 9146 §4: 13 + 4 (CID) + 1 (inner content type) + 8 + 8 = 34 bytes.
        assert_eq!(Protection::Dtls12 { cid: true }.overhead(false, 0), 34);
        // DTLS 1.3 with a CID: 1 + 4 (CID) + 2 (seq) + 2 (length) + 1 + 8 = 18 bytes.
        assert_eq!(Protection::Dtls13 { cid: true }.overhead(true, 0), 18);
    }

    #[test]
    fn dtls13_record_overhead() {
        // RFC 9147 §4: flags 1 + 16-bit sequence 2 + length 2, inner type 1, CCM-8 tag 8 = 14.
        assert_eq!(Protection::Dtls13 { cid: false }.overhead(true, 7), 14);
    }

    #[test]
    fn oscore_request_and_response() {
        // Request: option header 1 + (flag 1 + Partial IV 1 + kid 1) + 0xFF 1 + inner code 1 +
        // tag 8 = 14; response: empty option 1 + 0xFF 1 + code 1 + tag 8 = 11 (RFC 8613 §6.1).
        assert_eq!(Protection::Oscore.overhead(true, 0), 14);
        assert_eq!(Protection::Oscore.overhead(false, 0), 11);
        // Sequence number 256 needs a 2-byte Partial IV: 15.
        assert_eq!(Protection::Oscore.overhead(true, 255), 14);
        assert_eq!(Protection::Oscore.overhead(true, 256), 15);
        assert_eq!(Protection::None.overhead(true, 0), 0);
    }

    #[test]
    fn dtls12_psk_flights_byte_by_byte() {
        let f = dtls12_flights(Suite::Psk, false);
        let sizes: Vec<Vec<u32>> = f
            .iter()
            .map(|fl| pack(fl, Version::V12, 1500).unwrap())
            .collect();
        // 1 ClientHello: body 2 + 32 + 1 + 1 + 2 + 2 + 1 + 1 = 42; + 12 + 13 = 67; IP + 28 = 95.
        // 2 HelloVerifyRequest: 2 + 1 + 32 = 35; + 25 = 60; IP 88.
        // 3 ClientHello with cookie: 42 + 32 = 74; + 25 = 99; IP 127.
        // 4 ServerHello 2 + 32 + 1 + 32 + 2 + 1 = 70 (+25 = 95) + ServerHelloDone 0 (+25 = 25)
        //   = 120; IP 148.
        // 5 ClientKeyExchange 2 + 16 = 18 (+25 = 43) + ChangeCipherSpec 13 + 1 = 14 + Finished
        //   12 + 12 + 13 + 16 = 53: 110; IP 138.
        // 6 ChangeCipherSpec 14 + Finished 53 = 67; IP 95.
        assert_eq!(
            sizes,
            vec![
                vec![95],
                vec![88],
                vec![127],
                vec![148],
                vec![138],
                vec![95]
            ]
        );
    }

    #[test]
    fn dtls12_resumption_flights() {
        // ClientHello with the 32-byte session ID, no cookie: 42 + 32 = 74 → 99 → IP 127;
        // ServerHello 95 + CCS 14 + Finished 53 = 162 → IP 190; CCS + Finished 67 → IP 95.
        let f = dtls12_flights(Suite::Psk, true);
        let sizes: Vec<Vec<u32>> = f
            .iter()
            .map(|fl| pack(fl, Version::V12, 1500).unwrap())
            .collect();
        assert_eq!(sizes, vec![vec![127], vec![190], vec![95]]);
    }

    #[test]
    fn a_certificate_is_fragmented_at_the_mtu() {
        // DTLS 1.2 cert suite, MTU 296: datagram room 296 − 28 = 268 bytes.
        // ServerHello 78 + 25 = 103 (room left 165); Certificate body 3 + 3 + 400 = 406 does
        // not fit a datagram (406 + 25 > 268): a first fragment fills the 165 − 25 = 140
        // bytes left (datagram 268), then 268 − 25 = 243 more (datagram 268), then the last
        // 406 − 140 − 243 = 23 bytes (+25 = 48); ServerKeyExchange 145 + 25 = 170 joins it
        // (218); CertificateRequest 8 + 25 = 33 fits the 50 left (251); ServerHelloDone's 25
        // does not (276 > 268): a datagram of its own.
        // Datagrams: 268, 268, 251, 25 → IP + 28: 296, 296, 279, 53.
        let f = dtls12_flights(Suite::Cert, false);
        assert_eq!(
            pack(&f[3], Version::V12, 296).unwrap(),
            vec![296, 296, 279, 53]
        );
        // An MTU that cannot carry a record header is refused.
        assert_eq!(pack(&f[0], Version::V12, 40), None);
    }

    #[test]
    fn dtls13_psk_flights() {
        // 1 ClientHello: 44 + supported_versions 7 + psk_key_exchange_modes 6 + pre_shared_key
        //   (4 + 2 + 2 + 16 + 4 + 2 + 33 = 63) = 120; + 12 + 13 = 145; IP 173.
        // 2 HelloRetryRequest: 40 + 6 + cookie 38 = 84; + 25 = 109; IP 137.
        // 3 ClientHello + cookie: 158; 183; IP 211.
        // 4 ServerHello 40 + 6 + 6 = 52 (+25 = 77) + EncryptedExtensions 2 (+12 + 5 + 1 + 8 =
        //   28) + Finished 32 (+26 = 58) = 163; IP 191.
        // 5 Finished 58; IP 86. 6 ACK: 2 + 16 = 18 + 14 = 32; IP 60.
        let f = dtls13_flights(Suite::Psk, false);
        let sizes: Vec<Vec<u32>> = f
            .iter()
            .map(|fl| pack(fl, Version::V13, 1500).unwrap())
            .collect();
        assert_eq!(
            sizes,
            vec![
                vec![173],
                vec![137],
                vec![211],
                vec![191],
                vec![86],
                vec![60]
            ]
        );
    }
}
