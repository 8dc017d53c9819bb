"""Reading DTLS 1.2 records, Observe and Q-Block options from captures (coaplab.stacks.pcapcoap,
docs/emulation.md "DTLS", "Observe, libcoap", "Q-Block, libcoap"), on packets built by hand from
the RFCs' layouts."""

from __future__ import annotations

import struct
from pathlib import Path

from coaplab.stacks import pcapcoap as pc

CLIENT, SERVER = "10.0.0.1", "192.0.2.1"
T0 = 1_700_000_000_000_000_000


def _ip(a: str) -> bytes:
    return bytes(int(x) for x in a.split("."))


def _udp(src: str, dst: str, sport: int, dport: int, payload: bytes, frag: int = 0x4000) -> bytes:
    """IPv4 (RFC 791 §3.1: 20-byte header, flags/fragment offset at byte 6) + UDP (RFC 768: 8 bytes)."""
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    return struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, frag, 64, 17, 0, _ip(src), _ip(dst)) + udp


def _record(ctype: int, epoch: int, seq: int, fragment: bytes) -> bytes:
    """A DTLS 1.2 record, RFC 6347 §4.1: type 1, version 2 (0xFEFD = DTLS 1.2), epoch 2,
    sequence number 6, length 2, fragment."""
    return struct.pack("!BHH", ctype, 0xFEFD, epoch) + seq.to_bytes(6, "big") + struct.pack("!H", len(fragment)) + fragment


def _handshake(msg_type: int, body: bytes) -> bytes:
    """A DTLS handshake message, RFC 6347 §4.2.2: msg_type 1, length 3, message_seq 2,
    fragment_offset 3, fragment_length 3 (12 bytes), body."""
    n = len(body).to_bytes(3, "big")
    return bytes([msg_type]) + n + b"\x00\x00" + b"\x00\x00\x00" + n + body


def test_dtls_records_several_to_a_datagram():
    """RFC 6347 §4.1.1: records may share a datagram. A ChangeCipherSpec (epoch 0, one byte 0x01,
    RFC 5246 §7.1) and an encrypted Finished (epoch 1: its type is not readable) → two records,
    13 + 1 + 13 + 40 = 67 bytes."""
    dgram = _record(20, 0, 3, b"\x01") + _record(22, 1, 0, bytes(40))
    assert len(dgram) == 67
    recs = pc.dtls_records(dgram)
    assert [(r.content_type, r.epoch, r.sequence, r.length, r.handshake_type) for r in recs] == [
        (20, 0, 3, 1, None), (22, 1, 0, 40, None)]


def test_dtls_client_hello_type_and_bad_bytes():
    ch = _record(22, 0, 0, _handshake(1, bytes(50)))
    [r] = pc.dtls_records(ch)
    assert r.handshake_type == 1 and pc.HANDSHAKE_TYPES[r.handshake_type] == "ClientHello"
    assert r.length == 12 + 50
    assert pc.dtls_records(ch[:-1]) == []                     # cut short: no record
    assert pc.dtls_records(b"\x40\x01\x00\x01") == []         # a CoAP message, not DTLS
    assert pc.dtls_records(b"\x16\x03\x03" + bytes(20)) == []  # TLS 1.2's version 0x0303, not DTLS


def test_server_hello_cipher_suite():
    """RFC 5246 §7.4.1.3: server_version 2, random 32, session_id (length 1 + 32 bytes here),
    cipher_suite 2 — 0xCCAC = TLS_ECDHE_PSK_WITH_CHACHA20_POLY1305_SHA256 (RFC 7905 §2)."""
    body = b"\xfe\xfd" + bytes(32) + bytes([32]) + bytes(32) + b"\xcc\xac" + b"\x00"
    dgram = _record(22, 0, 1, _handshake(2, body)) + _record(22, 0, 2, _handshake(14, b""))
    assert pc.server_hello_suite(dgram) == 0xCCAC
    assert pc.CIPHER_SUITES[0xCCAC] == "TLS_ECDHE_PSK_WITH_CHACHA20_POLY1305_SHA256"
    assert pc.server_hello_suite(_record(22, 0, 0, _handshake(1, body))) is None  # a ClientHello


def test_observe_notification():
    """RFC 7641 §2 / RFC 7252 §3: a NON 2.05 notification, token 0xAA, Observe 0x1234 (2 bytes):
    header 0x51 (version 1, type NON = 1, TKL 1), code 0x45 (2.05), MID 0x0007; option delta 6,
    length 2 → 0x62; payload marker 0xFF, payload "22"."""
    m = pc.coap_message(bytes([0x51, 0x45, 0x00, 0x07, 0xAA, 0x62, 0x12, 0x34, 0xFF]) + b"22")
    assert m is not None
    assert (m.mtype, m.code, m.mid, m.token, m.payload) == ("NON", 0x45, 7, b"\xaa", b"22")
    assert m.uint(pc.OBSERVE) == 0x1234
    # The registration (RFC 7641 §2: Observe 0 = register) is an empty uint (RFC 7252 §3.2): 0x60.
    reg = pc.coap_message(bytes([0x41, 0x01, 0x00, 0x01, 0xAA, 0x60]))
    assert reg is not None and reg.mtype == "CON" and reg.uint(pc.OBSERVE) == 0


def test_q_block2_and_q_block1_options():
    """RFC 9177 §4: Q-Block1 = 19, Q-Block2 = 31, valued as Block1 / Block2 (RFC 7959 §2.2:
    NUM << 4 | M << 3 | SZX). Q-Block2 NUM 3, M 1, SZX 2 (64 B) = 0x3A after Uri-Path "a"
    (option 11: 0xB1 'a'): delta 31 − 11 = 20 = 13 + 7 → 0xD1 0x07 0x3A. Q-Block1 NUM 300,
    M 0, SZX 6 = 300 << 4 | 6 = 0x12C6 (2 bytes) alone: delta 19 = 13 + 6 → 0xD2 0x06 0x12 0xC6."""
    m = pc.coap_message(bytes([0x60, 0x45, 0x00, 0x02, 0xB1]) + b"a" + bytes([0xD1, 0x07, 0x3A]))
    assert m is not None and m.mtype == "ACK"
    assert m.block(pc.Q_BLOCK2) == (3, True, 2) and m.block(pc.Q_BLOCK1) is None
    m1 = pc.coap_message(bytes([0x40, 0x03, 0x00, 0x03, 0xD2, 0x06, 0x12, 0xC6]))
    assert m1 is not None and m1.block(pc.Q_BLOCK1) == (300, False, 6)


def test_bad_coap_bytes_are_not_messages():
    assert pc.coap_message(bytes([0x49, 0x01, 0, 1]) + bytes(9)) is None      # TKL 9 (RFC 7252 §3: reserved)
    assert pc.coap_message(bytes([0x80, 0x01, 0, 1])) is None                 # version 2
    assert pc.coap_message(bytes([0x40, 0x01, 0, 1, 0x62, 0x12])) is None     # option runs past the end
    assert pc.coap_message(bytes([0x40, 0x01, 0, 1, 0xF1, 0x00])) is None     # delta nibble 15 (RFC 7252 §3.1)


def test_a_non_first_fragment_has_no_udp_header():
    """RFC 791 §3.1: a fragment offset above 0 → no UDP header in this packet."""
    assert pc.udp_datagram(_udp(CLIENT, SERVER, 40000, 5684, b"x", frag=0x0023)) is None
    d = pc.udp_datagram(_udp(CLIENT, SERVER, 40000, 5684, b"xyz", frag=0x2000))  # first fragment (MF)
    assert d is not None and d.fragmented and d.payload == b"xyz" and d.ip_bytes == 20 + 8 + 3


def _pcap(path: Path, records: list[tuple[float, bytes]]) -> None:
    out = struct.pack("<IHHiIII", 0xA1B23C4D, 2, 4, 0, 0, 65535, 101)
    for t, pkt in records:
        ns = T0 + round(t * 1e9)
        out += struct.pack("<IIII", ns // 10**9, ns % 10**9, len(pkt), len(pkt)) + pkt
    path.write_bytes(out)


def test_dtls_summary_of_a_hand_made_handshake(tmp_path):
    """One session, RFC 6347 §4.2.4's full handshake with a cookie exchange (figure 1): six
    flights entering at 0.0 … 0.5 s, then the client's first application data at 0.6 s,
    delivered to the server; the server's answer is delivered to the client at 1.0 s. So the
    handshake takes 0.6 s, the exchange 1.0 − 0.6 = 0.4 s; handshake bytes = the six datagrams'
    IP sizes, application bytes = request + response."""
    up = lambda b: _udp(CLIENT, SERVER, 40000, 5684, b)
    down = lambda b: _udp(SERVER, CLIENT, 5684, 40000, b)
    flights = [up(_record(22, 0, 0, _handshake(1, bytes(60)))),
               down(_record(22, 0, 0, _handshake(3, bytes(35)))),
               up(_record(22, 0, 1, _handshake(1, bytes(92)))),
               down(_record(22, 0, 1, _handshake(2, b"\xfe\xfd" + bytes(32) + b"\x00\xcc\xac\x00"))
                    + _record(22, 0, 2, _handshake(12, bytes(40))) + _record(22, 0, 3, _handshake(14, b""))),
               up(_record(22, 0, 2, _handshake(16, bytes(50))) + _record(20, 0, 3, b"\x01") + _record(22, 1, 0, bytes(28))),
               down(_record(20, 0, 4, b"\x01") + _record(22, 1, 0, bytes(28)))]
    request, response = up(_record(23, 1, 1, bytes(30))), down(_record(23, 1, 1, bytes(40)))
    ingress = [(0.1 * i, p) for i, p in enumerate(flights)] + [(0.6, request), (0.8, response)]
    _pcap(tmp_path / "ingress.pcap", ingress)
    _pcap(tmp_path / "egress.pcap", [(0.7, request), (1.0, response)])
    s = pc.dtls_summary(tmp_path, SERVER, 5684)
    assert (s["sessions"], s["handshakes"], s["exchanges"], s["answered"]) == (1, 1, 1, 1)
    assert s["cipher_suite"] == "TLS_ECDHE_PSK_WITH_CHACHA20_POLY1305_SHA256"
    assert [f["from"] for f in s["flights"]] == ["client", "server"] * 3
    assert s["flights"][3]["messages"] == ["ServerHello", "ServerKeyExchange", "ServerHelloDone"]
    assert s["flights"][4]["messages"] == ["ClientKeyExchange", "ChangeCipherSpec", "encrypted"]
    assert s["handshake_s_p50"] == 0.6 and abs(s["rtt_s_p50"] - 0.4) < 1e-9
    assert s["handshake_bytes_mean"] == sum(len(p) for p in flights)
    # request: 20 + 8 + 13 + 30 = 71 B; response: 20 + 8 + 13 + 40 = 81 B.
    assert s["app_bytes_per_exchange"] == 71 + 81


def test_ip_fragments_are_reassembled(tmp_path):
    """RFC 791 §3.2: a 325-byte datagram (a DTLS ClientHello with its cookie: 13 + 284 = 297
    bytes of UDP payload, + 8 + 20) over a 296-byte MTU is two fragments: the first carries
    296 − 20 = 276 → 272 bytes (a multiple of 8) of the UDP datagram, MF set (292 B of IP);
    the second the remaining 305 − 272 = 33 bytes at offset 272 / 8 = 34 (53 B of IP). Read
    back: one datagram of 292 + 53 = 345 IP bytes whose payload is the whole record."""
    record = _record(22, 0, 1, _handshake(1, bytes(284 - 12)))
    assert len(record) == 297
    whole = _udp(CLIENT, SERVER, 40000, 5684, record)
    udp = whole[20:]
    ident = 0x1234

    def fragment(chunk: bytes, offset: int, more: bool) -> bytes:
        frag = (0x2000 if more else 0) | offset // 8
        return struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(chunk), ident, frag, 64, 17, 0, _ip(CLIENT), _ip(SERVER)) + chunk

    first, second = fragment(udp[:272], 0, True), fragment(udp[272:], 272, False)
    assert (len(first), len(second)) == (292, 53)
    _pcap(tmp_path / "f.pcap", [(0.0, first), (0.001, second)])
    [(t, d)] = list(pc.datagrams(tmp_path / "f.pcap"))
    assert t == T0 and d.ip_bytes == 345 and d.fragmented and d.payload == record
    assert [r.handshake_type for r in pc.dtls_records(d.payload)] == [1]
    _pcap(tmp_path / "lost.pcap", [(0.0, first)])  # the second fragment never came
    assert list(pc.datagrams(tmp_path / "lost.pcap")) == []
