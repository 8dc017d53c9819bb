"""Time-sequence points of an emulated TCP run, read from the emulator's captures.

The emulator (docs/emulation.md "Architecture") writes, in each run's directory,
``ingress.pcap`` (every packet as it entered the emulated network, at its read time),
``egress.pcap`` (every delivered packet as it left), ``dropped.pcap`` (every dropped packet at
the model's instant of the drop) and ``emulator.json`` (``wall_start_ns``: the wall clock at
the run's time 0). All three are classic pcap files of raw IPv4 packets (LINKTYPE_RAW, 101).
The reader here is a few lines of ``struct`` for exactly that format (the emulator writes it,
``crates/wire``): a pcap library (dpkt, scapy) would add a dependency to every install for
what the emulation — an optional, root-only feature — reads from its own files.

:func:`time_sequence_points` turns them into the rows of the simulator's time-sequence trace
(:meth:`coaplab.Result.time_sequence_frame`) for the server → client direction of one
connection: ``time_s`` (from the run's time 0), ``event`` (``send``, ``retransmit``, ``drop``,
``ack``), ``seq`` (bytes from the server's first data byte, its ISN + 1, RFC 9293 §3.4) and
``length`` (payload bytes; 0 for ACKs). The rules are the simulator's:

- ``send`` / ``retransmit``: each server → client segment with a payload as it entered the
  emulator; a retransmission is a segment whose first byte was sent before (it starts below the
  highest sequence number sent so far);
- ``drop``: each such segment in ``dropped.pcap``, at the instant the model dropped it;
- ``ack``: the acknowledgment number of each client → server segment reaching the server
  (``egress.pcap``) once the connection is established — every segment after the one that
  completes the three-way handshake, as the simulator records ACKs only in the established state.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import CoaplabError

#: pcap magic numbers (as read little-endian) → (byte order, timestamp fraction unit in ns).
_MAGICS = {0xA1B2C3D4: ("<", 1000), 0xA1B23C4D: ("<", 1), 0xD4C3B2A1: (">", 1000), 0x4D3CB2A1: (">", 1)}
LINKTYPE_RAW = 101
#: TCP header flags (RFC 9293 §3.1).
FIN, SYN, ACK = 0x01, 0x02, 0x10
MOD = 1 << 32


def read_pcap(path: str | Path) -> Iterator[tuple[int, bytes]]:
    """(timestamp in ns since the Unix epoch, packet bytes) of each record of a classic pcap
    file (libpcap format: a 24-byte file header, then per packet a 16-byte header — seconds,
    fraction (µs, or ns with the nanosecond magic), captured length, original length — and the
    captured bytes). Only raw IP captures (link type 101) are accepted."""
    data = Path(path).read_bytes()
    if len(data) < 24:
        raise CoaplabError(f"{path}: not a pcap file (shorter than its 24-byte header)")
    magic = struct.unpack_from("<I", data, 0)[0]
    if magic not in _MAGICS:
        raise CoaplabError(f"{path}: not a pcap file (magic {magic:#010x})")
    order, unit = _MAGICS[magic]
    linktype = struct.unpack_from(order + "I", data, 20)[0] & 0x0FFFFFFF
    if linktype != LINKTYPE_RAW:
        raise CoaplabError(f"{path}: link type {linktype}; only raw IP captures (101) are read")
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, _orig = struct.unpack_from(order + "IIII", data, off)
        off += 16
        if off + incl > len(data):
            break  # a record cut short (the writer was stopped mid-write)
        yield sec * 1_000_000_000 + frac * unit, data[off:off + incl]
        off += incl


@dataclass(frozen=True)
class Segment:
    """The fields of an IPv4 TCP segment the time-sequence graph needs."""

    src: str
    dst: str
    sport: int
    dport: int
    seq: int
    ack: int
    flags: int
    length: int  # payload bytes


def _addr(b: bytes) -> str:
    return ".".join(str(x) for x in b)


def parse_tcp(packet: bytes) -> Segment | None:
    """The TCP segment in a raw IPv4 packet (RFC 791, RFC 9293), or None for anything else
    (another protocol, IPv6, a fragment, a truncated packet)."""
    if len(packet) < 20 or packet[0] >> 4 != 4 or packet[9] != 6:
        return None
    ihl = (packet[0] & 0x0F) * 4
    total = struct.unpack_from("!H", packet, 2)[0]
    if struct.unpack_from("!H", packet, 6)[0] & 0x3FFF:  # MF set or a fragment offset
        return None
    if len(packet) < ihl + 20:
        return None
    sport, dport, seq, ack = struct.unpack_from("!HHII", packet, ihl)
    doff = (packet[ihl + 12] >> 4) * 4
    flags = packet[ihl + 13]
    return Segment(_addr(packet[12:16]), _addr(packet[16:20]), sport, dport, seq, ack, flags,
                   max(0, total - ihl - doff))


def time_sequence_points(run_dir: str | Path, client_addr: str, connection: int = 0) -> list[dict]:
    """The server → client time-sequence points of connection ``connection`` (0 = the first the
    client opened) of the client at address ``client_addr``, from the emulator's files in
    ``run_dir`` (see the module's docstring for the rules). Points are in time order within
    each event kind: sends and retransmissions, then drops, then ACKs."""
    run_dir = Path(run_dir)
    report = run_dir / "emulator.json"
    if not report.exists():
        raise CoaplabError(f"{run_dir}: no emulator.json (not an emulated run's directory?)")
    t0 = int(json.loads(report.read_text())["wall_start_ns"])

    def segments(name: str) -> Iterator[tuple[float, Segment]]:
        f = run_dir / name
        if not f.exists():
            return
        for ts, pkt in read_pcap(f):
            s = parse_tcp(pkt)
            if s is not None:
                yield (ts - t0) / 1e9, s

    # The connection: the client's SYNs in order of entry; its port identifies it.
    syns = []
    for _, s in segments("ingress.pcap"):
        if s.src == client_addr and s.flags & SYN and not s.flags & ACK and s.sport not in syns:
            syns.append(s.sport)
    if connection >= len(syns):
        raise CoaplabError(f"{run_dir}: client {client_addr} opened {len(syns)} TCP connections; "
                           f"there is no connection {connection}")
    port = syns[connection]

    def down(s: Segment) -> bool:
        return s.dst == client_addr and s.dport == port

    def up(s: Segment) -> bool:
        return s.src == client_addr and s.sport == port

    isn = next((s.seq for _, s in segments("ingress.pcap") if down(s) and s.flags & SYN and s.flags & ACK), None)
    if isn is None:
        raise CoaplabError(f"{run_dir}: the server never answered connection {connection} of {client_addr}")
    start = (isn + 1) % MOD
    points: list[dict] = []
    high = 0  # highest relative sequence number sent so far (the end of the data sent)
    for t, s in segments("ingress.pcap"):
        if down(s) and s.length > 0:
            rel = (s.seq - start) % MOD
            points.append({"time_s": t, "event": "retransmit" if rel < high else "send", "seq": rel, "length": s.length})
            high = max(high, rel + s.length)
    for t, s in segments("dropped.pcap"):
        if down(s) and s.length > 0:
            points.append({"time_s": t, "event": "drop", "seq": (s.seq - start) % MOD, "length": s.length})
    established = False
    for t, s in segments("egress.pcap"):
        if up(s) and s.flags & ACK and not s.flags & SYN:
            if established:
                points.append({"time_s": t, "event": "ack", "seq": (s.ack - start) % MOD, "length": 0})
            established = True  # the first one completed the handshake
    return points
