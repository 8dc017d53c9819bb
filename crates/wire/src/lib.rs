//! # coaplab-wire — bytes on the wire
//!
//! Byte-exact CoAP messages (RFC 7252, Block2 of RFC 7959), CoAP-over-TCP framing (RFC 8323),
//! IPv4/UDP/TCP headers with their checksums, and pcap files, so that simulated packet sizes
//! come from real encodings and captures decode in Wireshark/tshark.

pub mod coap;
pub mod coap_tcp;
pub mod ip;
pub mod pcap;
pub mod tcp;
