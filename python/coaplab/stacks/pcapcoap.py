"""CoAP, DTLS 1.2, Observe and Q-Block read from the emulator's captures (docs/emulation.md,
"DTLS", "Observe, libcoap", "Q-Block, libcoap").

The captures are the emulator's raw-IPv4 pcaps (:func:`coaplab.stacks.pcapseq.read_pcap`):
``ingress.pcap`` (every packet as it entered the emulated network) and ``egress.pcap`` (every
delivered packet as it left). Everything here is a pure function of bytes, so the tests feed it
hand-built packets:

- :func:`udp_datagram`: an IPv4 / UDP packet (RFC 791 §3.1, RFC 768); a non-first IP fragment
  has no UDP header and is skipped, a first fragment is read as far as it goes;
- :func:`dtls_records`: the records of a DTLS 1.2 datagram (RFC 6347 §4.1: type 1, version 2,
  epoch 2, sequence number 6, length 2 bytes, then the fragment; several records may share a
  datagram, §4.1.1) and, for a plaintext handshake record (epoch 0), the handshake message type
  (RFC 6347 §4.2.2: the first byte of the handshake header);
- :func:`coap_message`: a CoAP message over UDP (RFC 7252 §3: 4-byte header, token, options
  with delta / length nibbles and their 13 / 14 extensions, §3.1), its Observe (RFC 7641 §2:
  option 6, a uint of 0–3 bytes), Block1 / Block2 (RFC 7959 §2.1: 27 / 23) and Q-Block1 /
  Q-Block2 (RFC 9177 §4: 19 / 31, the same value layout as Block1 / Block2: NUM, M, SZX).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .pcapseq import read_pcap

UDP = 17
#: DTLS record content types (RFC 5246 §6.2.1, which RFC 6347 §4.1 keeps).
CHANGE_CIPHER_SPEC, ALERT, HANDSHAKE, APPLICATION_DATA = 20, 21, 22, 23
#: Handshake message types (RFC 5246 §7.4, RFC 6347 §4.2.2 adds HelloVerifyRequest = 3,
#: RFC 5077 §3.3 NewSessionTicket = 4).
HANDSHAKE_TYPES = {0: "HelloRequest", 1: "ClientHello", 2: "ServerHello", 3: "HelloVerifyRequest", 4: "NewSessionTicket",
                   11: "Certificate", 12: "ServerKeyExchange", 13: "CertificateRequest", 14: "ServerHelloDone",
                   15: "CertificateVerify", 16: "ClientKeyExchange", 20: "Finished"}
#: RFC 6347 §4.1: the DTLS 1.2 record header is 13 bytes.
DTLS_RECORD_HEADER = 13
#: CoAP option numbers (RFC 7252 §12.2, RFC 7641 §2, RFC 7959 §2.1, RFC 9177 §4).
OBSERVE, URI_PATH, BLOCK2, BLOCK1, Q_BLOCK1, Q_BLOCK2 = 6, 11, 23, 27, 19, 31
#: CoAP message types (RFC 7252 §3).
COAP_TYPES = ("CON", "NON", "ACK", "RST")


@dataclass(frozen=True)
class Datagram:
    """A UDP datagram (or what a first IP fragment holds of it)."""

    src: str
    dst: str
    sport: int
    dport: int
    ip_bytes: int
    payload: bytes
    fragmented: bool


def _addr(b: bytes) -> str:
    return ".".join(str(x) for x in b)


def udp_datagram(packet: bytes) -> Datagram | None:
    """The UDP datagram of an IPv4 packet; None for another protocol, a non-first fragment or a
    truncated header."""
    if len(packet) < 20 or packet[0] >> 4 != 4 or packet[9] != UDP:
        return None
    ihl = (packet[0] & 0x0F) * 4
    flags_frag = struct.unpack_from("!H", packet, 6)[0]
    if flags_frag & 0x1FFF:  # fragment offset > 0: no UDP header here (RFC 791 §3.1)
        return None
    if len(packet) < ihl + 8:
        return None
    total = struct.unpack_from("!H", packet, 2)[0]
    sport, dport, ulen = struct.unpack_from("!HHH", packet, ihl)
    more = bool(flags_frag & 0x2000)
    end = min(len(packet), ihl + ulen, total)
    return Datagram(_addr(packet[12:16]), _addr(packet[16:20]), sport, dport, total, packet[ihl + 8:end], more)


@dataclass(frozen=True)
class Record:
    """One DTLS 1.2 record: its content type, epoch, sequence number, fragment length and (a
    plaintext handshake record) the handshake message type."""

    content_type: int
    version: int
    epoch: int
    sequence: int
    length: int
    handshake_type: int | None


def dtls_records(payload: bytes) -> list[Record]:
    """The DTLS records of a datagram (RFC 6347 §4.1); [] when it does not start with one (a
    content type of 20–23 and a DTLS version, 0xFEFD = 1.2 or 0xFEFF = 1.0). A record cut short
    ends the list."""
    out: list[Record] = []
    off = 0
    while off + DTLS_RECORD_HEADER <= len(payload):
        ctype, version, epoch = struct.unpack_from("!BHH", payload, off)
        if ctype not in (CHANGE_CIPHER_SPEC, ALERT, HANDSHAKE, APPLICATION_DATA) or version not in (0xFEFD, 0xFEFF):
            break
        seq = int.from_bytes(payload[off + 5:off + 11], "big")
        length = struct.unpack_from("!H", payload, off + 11)[0]
        body = off + DTLS_RECORD_HEADER
        if body + length > len(payload):
            break
        htype = payload[body] if ctype == HANDSHAKE and epoch == 0 and length > 0 else None
        out.append(Record(ctype, version, epoch, seq, length, htype))
        off = body + length
    return out


@dataclass
class CoapMessage:
    """The fields of a CoAP message this module reads (RFC 7252 §3)."""

    mtype: str
    code: int
    mid: int
    token: bytes
    options: list[tuple[int, bytes]] = field(default_factory=list)
    payload: bytes = b""

    def uint(self, number: int) -> int | None:
        """The first value of option `number` as a uint (RFC 7252 §3.2), None when absent."""
        for n, v in self.options:
            if n == number:
                return int.from_bytes(v, "big")
        return None

    def block(self, number: int) -> tuple[int, bool, int] | None:
        """(NUM, M, SZX) of a Block1 / Block2 / Q-Block1 / Q-Block2 option (RFC 7959 §2.2,
        RFC 9177 §4), None when absent."""
        v = self.uint(number)
        return None if v is None else (v >> 4, bool(v & 0x08), v & 0x07)


def coap_message(payload: bytes) -> CoapMessage | None:
    """A CoAP message over UDP (RFC 7252 §3), None when the bytes are not one (version ≠ 1, a
    token length over 8, an option running past the end, the reserved nibble 15)."""
    if len(payload) < 4 or payload[0] >> 6 != 1:
        return None
    tkl = payload[0] & 0x0F
    if tkl > 8 or len(payload) < 4 + tkl:
        return None
    msg = CoapMessage(COAP_TYPES[(payload[0] >> 4) & 0x03], payload[1], struct.unpack_from("!H", payload, 2)[0],
                      payload[4:4 + tkl])
    off, number = 4 + tkl, 0
    while off < len(payload):
        if payload[off] == 0xFF:
            msg.payload = payload[off + 1:]
            break
        delta, length = payload[off] >> 4, payload[off] & 0x0F
        off += 1
        ext = []
        for nib in (delta, length):
            if nib == 15:
                return None
            if nib == 13:
                if off >= len(payload):
                    return None
                ext.append(payload[off] + 13)
                off += 1
            elif nib == 14:
                if off + 2 > len(payload):
                    return None
                ext.append(struct.unpack_from("!H", payload, off)[0] + 269)
                off += 2
            else:
                ext.append(nib)
        number += ext[0]
        if off + ext[1] > len(payload):
            return None
        msg.options.append((number, payload[off:off + ext[1]]))
        off += ext[1]
    return msg


def datagrams(path: str | Path) -> Iterator[tuple[int, Datagram]]:
    """(timestamp ns, datagram) of every UDP datagram of a capture, IP fragments reassembled
    (RFC 791 §3.2: fragments share source, destination, protocol and identification; the
    offset counts 8-byte units; the last has MF clear): a fragmented datagram is yielded at its
    last fragment with its first fragment's time, its IP bytes the sum of its fragments'. A
    datagram whose fragments do not all appear (one was dropped) is not yielded."""
    partial: dict[tuple[bytes, int], tuple[int, Datagram, bytearray, int]] = {}
    for t, pkt in read_pcap(path):
        if len(pkt) < 20 or pkt[0] >> 4 != 4 or pkt[9] != UDP:
            continue
        flags_frag = struct.unpack_from("!H", pkt, 6)[0]
        key = (pkt[12:20], struct.unpack_from("!H", pkt, 4)[0])
        offset, more = (flags_frag & 0x1FFF) * 8, bool(flags_frag & 0x2000)
        if offset == 0:
            d = udp_datagram(pkt)
            if d is None:
                continue
            if not more:
                yield t, d
                continue
            ihl = (pkt[0] & 0x0F) * 4
            partial[key] = (t, d, bytearray(pkt[ihl:struct.unpack_from("!H", pkt, 2)[0]]), d.ip_bytes)
            continue
        if key not in partial:
            continue
        t0, d, data, total = partial[key]
        ihl = (pkt[0] & 0x0F) * 4
        frag = pkt[ihl:struct.unpack_from("!H", pkt, 2)[0]]
        if offset != len(data):  # a gap: a fragment is missing
            del partial[key]
            continue
        data += frag
        total += len(pkt)
        if more:
            partial[key] = (t0, d, data, total)
            continue
        del partial[key]
        yield t0, Datagram(d.src, d.dst, d.sport, d.dport, total, bytes(data[8:]), True)


def server_hello_suite(payload: bytes) -> int | None:
    """The cipher suite a plaintext ServerHello chose, None when the datagram has none. The
    ServerHello body (RFC 5246 §7.4.1.3) follows the 12-byte DTLS handshake header (RFC 6347
    §4.2.2): server_version 2, random 32, session_id (1-byte length + bytes), cipher_suite 2."""
    off = 0
    for r in dtls_records(payload):
        body = off + DTLS_RECORD_HEADER
        if r.handshake_type == 2:
            p = body + 12 + 2 + 32
            if p < body + r.length:
                sid = payload[p]
                if p + 1 + sid + 2 <= body + r.length:
                    return int(struct.unpack_from("!H", payload, p + 1 + sid)[0])
        off = body + r.length
    return None


#: IANA TLS cipher suite values (RFC 5487 §3.2, RFC 7905 §2, RFC 6655 §3) → names, for the report.
CIPHER_SUITES = {0xCCAC: "TLS_ECDHE_PSK_WITH_CHACHA20_POLY1305_SHA256", 0xC0A8: "TLS_PSK_WITH_AES_128_CCM_8",
                 0xC037: "TLS_ECDHE_PSK_WITH_AES_128_CBC_SHA256", 0x00A8: "TLS_PSK_WITH_AES_128_GCM_SHA256",
                 0xD001: "TLS_ECDHE_PSK_WITH_AES_128_GCM_SHA256"}


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def dtls_summary(run_dir: str | Path, server: str, port: int) -> dict:
    """A DTLS run read from ``ingress.pcap`` (each datagram as it entered the emulator) and
    ``egress.pcap`` (as delivered). A session is one client address and port. Per session:
    the handshake flights (consecutive datagrams of one direction carrying handshake or
    ChangeCipherSpec records, before its first application data), the handshake time (the
    first ClientHello entering → the client's first application data entering), each
    exchange's time (a client application-data datagram entering → the next server
    application-data datagram delivered to that session) and the IP bytes of both."""
    d = Path(run_dir)
    sessions: dict[tuple[str, int], dict] = {}
    suite = None
    for t, g in datagrams(d / "ingress.pcap"):
        up = g.dst == server and g.dport == port
        if not up and not (g.src == server and g.sport == port):
            continue
        key = (g.src, g.sport) if up else (g.dst, g.dport)
        s = sessions.setdefault(key, {"flights": [], "first": None, "app_t": None, "requests": [], "hs_bytes": 0,
                                      "app_bytes": 0, "app_records": 0})
        recs = dtls_records(g.payload)
        kinds = {r.content_type for r in recs}
        suite = suite or server_hello_suite(g.payload)
        if s["app_t"] is None and kinds & {HANDSHAKE, CHANGE_CIPHER_SPEC} and APPLICATION_DATA not in kinds:
            if s["first"] is None:
                s["first"] = t
            names = [HANDSHAKE_TYPES.get(r.handshake_type, str(r.handshake_type)) if r.handshake_type is not None
                     else ("ChangeCipherSpec" if r.content_type == CHANGE_CIPHER_SPEC else "encrypted")
                     for r in recs]
            direction = "client" if up else "server"
            if s["flights"] and s["flights"][-1]["from"] == direction:
                s["flights"][-1]["datagrams"].append(g.ip_bytes)
                s["flights"][-1]["messages"] += names
            else:
                s["flights"].append({"from": direction, "datagrams": [g.ip_bytes], "messages": names})
            s["hs_bytes"] += g.ip_bytes
        elif APPLICATION_DATA in kinds:
            s["app_bytes"] += g.ip_bytes
            s["app_records"] += sum(r.content_type == APPLICATION_DATA for r in recs)
            if up:
                s["app_t"] = s["app_t"] if s["app_t"] is not None else t
                s["requests"].append(t)
    answers: dict[tuple[str, int], list[int]] = {}
    for t, g in datagrams(d / "egress.pcap"):
        if g.src == server and g.sport == port and APPLICATION_DATA in {r.content_type for r in dtls_records(g.payload)}:
            answers.setdefault((g.dst, g.dport), []).append(t)
    rtts, hs_times = [], []
    for key, s in sessions.items():
        if s["first"] is not None and s["app_t"] is not None:
            hs_times.append((s["app_t"] - s["first"]) / 1e9)
        got = sorted(answers.get(key, []))
        for req in s["requests"]:
            nxt = next((a for a in got if a > req), None)
            if nxt is not None:
                rtts.append((nxt - req) / 1e9)
                got.remove(nxt)
    shook = [s for s in sessions.values() if s["flights"]]
    exchanges = sum(len(s["requests"]) for s in sessions.values())
    return {
        "sessions": len(sessions), "handshakes": len(shook),
        "cipher_suite": None if suite is None else CIPHER_SUITES.get(suite, f"0x{suite:04X}"),
        "flights": shook[0]["flights"] if shook else [],
        "handshake_bytes_mean": sum(s["hs_bytes"] for s in shook) / len(shook) if shook else None,
        "handshake_s_p50": _percentile(hs_times, 0.5), "handshake_s_max": max(hs_times, default=None),
        "exchanges": exchanges, "answered": len(rtts),
        "rtt_s_p50": _percentile(rtts, 0.5), "rtt_s_max": max(rtts, default=None),
        "app_records": sum(s["app_records"] for s in sessions.values()),
        "handshake_bytes": sum(s["hs_bytes"] for s in shook),
        "app_bytes_per_exchange": sum(s["app_bytes"] for s in sessions.values()) / exchanges if exchanges else None,
    }


def observe_summary(run_dir: str | Path, server: str, port: int) -> dict:
    """The notifications of an Observe run (RFC 7641 §2, §4.5) read from ``ingress.pcap`` (sent)
    and ``egress.pcap`` (delivered): every 2.05 from the server carrying an Observe option, by
    message type; each delivered one's age on arrival (its delivery time − the time it entered
    the emulator: queueing, serialization and propagation); per observer the longest gap between
    delivered notifications; the client's ACKs (to CON notifications) and RSTs (a notification
    the client no longer wants, RFC 7641 §3.6)."""
    d = Path(run_dir)

    def notifications(name: str) -> list[tuple[int, Datagram, CoapMessage]]:
        out = []
        for t, g in datagrams(d / name):
            if g.src == server and g.sport == port:
                m = coap_message(g.payload)
                if m is not None and m.code == 0x45 and m.uint(OBSERVE) is not None:
                    out.append((t, g, m))
        return out

    sent, delivered = notifications("ingress.pcap"), notifications("egress.pcap")
    entered = {(g.dst, g.dport, m.mid): t for t, g, m in sent}
    ages = [(t - entered[(g.dst, g.dport, m.mid)]) / 1e9 for t, g, m in delivered if (g.dst, g.dport, m.mid) in entered]
    by_observer: dict[tuple[str, int], list[int]] = {}
    for t, g, _m in delivered:
        by_observer.setdefault((g.dst, g.dport), []).append(t)
    gaps = [(b - a) / 1e9 for ts in by_observer.values() for a, b in zip(sorted(ts), sorted(ts)[1:])]
    acks = rsts = 0
    for _t, g in datagrams(d / "ingress.pcap"):
        if g.dst == server and g.dport == port:
            m = coap_message(g.payload)
            if m is not None and m.code == 0:
                acks += m.mtype == "ACK"
                rsts += m.mtype == "RST"
    count = lambda rows, kind: sum(m.mtype == kind for _t, _g, m in rows)
    return {
        "observers": len({(g.dst, g.dport) for _t, g, _m in sent}),
        "sent": len(sent), "delivered": len(delivered),
        "sent_by_type": {k: count(sent, k) for k in ("CON", "NON", "ACK")},
        "delivered_by_type": {k: count(delivered, k) for k in ("CON", "NON", "ACK")},
        "age_s_p50": _percentile(ages, 0.5), "age_s_max": max(ages, default=None),
        "gap_s_max": max(gaps, default=None), "client_acks": acks, "client_rsts": rsts,
    }


def _num(v: float | None, unit: str = "") -> str:
    return "n/a" if v is None else f"{v:.3f}{unit}"


def capture_lines(e: dict) -> list[str]:
    """The table lines of what :func:`dtls_summary` / :func:`observe_summary` read, one per
    replication (``coaplab emulate``'s table)."""
    out = []
    for r, d in enumerate(e.get("dtls") or []):
        if d:
            flights = " → ".join("+".join(str(b) for b in f["datagrams"]) for f in d["flights"])
            out.append(f"  DTLS r{r}: {d['cipher_suite']}; {d['handshakes']} handshakes of {_num(d['handshake_bytes_mean'])} IP B"
                       f" (first: {flights}); handshake p50 {_num(d['handshake_s_p50'], ' s')};"
                       f" {d['answered']}/{d['exchanges']} exchanges, p50 {_num(d['rtt_s_p50'], ' s')},"
                       f" {_num(d['app_bytes_per_exchange'])} IP B each")
    for r, o in enumerate(e.get("observe") or []):
        if o:
            st, dt = o["sent_by_type"], o["delivered_by_type"]
            out.append(f"  Observe r{r}: {o['observers']} observers; notifications sent {o['sent']} (CON {st['CON']}, NON {st['NON']},"
                       f" ACK {st['ACK']}), delivered {o['delivered']} (CON {dt['CON']}, NON {dt['NON']}, ACK {dt['ACK']});"
                       f" age p50 {_num(o['age_s_p50'], ' s')}, max {_num(o['age_s_max'], ' s')};"
                       f" longest gap {_num(o['gap_s_max'], ' s')}; client ACKs {o['client_acks']}, RSTs {o['client_rsts']}")
    return out
