//! # coaplab-wire — bytes on the wire
//!
//! Byte-exact CoAP messages (RFC 7252, Block2 of RFC 7959), IPv4/UDP headers with checksums,
//! and pcap files, so that simulated packet sizes come from real encodings and captures
//! decode in Wireshark/tshark.

pub mod coap;
pub mod ip;
pub mod pcap;
