//! End-to-end check of `PcapWriter` against Wireshark's dissectors.
//!
//! Writes a small capture (handshake with MSS/SACK-permitted/TS/WS, data with
//! timestamps, SACK and D-SACK ACKs, a 60-byte TCP header, a second
//! connection without timestamps carrying four SACK blocks, FIN exchange,
//! UDP), three times: payload snaplen 0, 64 and unlimited. `tshark` must
//! find no malformed packet and no error-level expert info (and no warning
//! other than the D-SACK one), must decode the
//! option values we wrote, and must validate every checksum it can see
//! (`Good` = 1; with a truncated payload TCP/UDP checksums are `Unverified`
//! = 2, since tshark will not checksum bytes it does not have).
//!
//! The test is skipped (with a message) when `tshark` is not installed.
//! tshark only warns when run as root while reading a file; no extra flags
//! are needed for that.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use tcplab_sim::pcap::PcapWriter;
use tcplab_tcp::segment::{Flags, SackBlock, Segment, TcpOptions, MAX_SACK_BLOCKS};

const A: [u8; 4] = [10, 0, 0, 1];
const B: [u8; 4] = [10, 0, 0, 2];

/// Expert-info severities (epan/proto.h).
const PI_WARN: u32 = 0x0060_0000;
const PI_ERROR: u32 = 0x0080_0000;

/// tcp/ip/udp `checksum.status` values.
const CHECKSUM_GOOD: &str = "1";
const CHECKSUM_UNVERIFIED: &str = "2";

enum Kind {
    Tcp(Segment),
    Udp { sport: u16, dport: u16, len: u32 },
}

struct Pkt {
    t_ns: u64,
    src: [u8; 4],
    dst: [u8; 4],
    ip_id: u16,
    ttl: u8,
    kind: Kind,
}

fn sack(blocks: &[(u32, u32)]) -> ([SackBlock; MAX_SACK_BLOCKS], u8) {
    let mut arr = [SackBlock::default(); MAX_SACK_BLOCKS];
    for (slot, &(left, right)) in arr.iter_mut().zip(blocks) {
        *slot = SackBlock { left, right };
    }
    (arr, blocks.len() as u8)
}

/// The capture: a Linux-like connection A:40000 -> B:5001 with timestamps
/// and one loss, a second connection A:40001 -> B:5002 without timestamps,
/// and two UDP datagrams.
fn scenario() -> Vec<Pkt> {
    const MSS: u32 = 1448;
    let c_isn = 1000u32;
    let s_isn = 5000u32;
    let mut pkts = Vec::new();
    let mut t = 1_000_000_123u64; // 1.000000123 s: exercises the ns magic
    let mut ids = [0u16; 2];
    let mut push = |pkts: &mut Vec<Pkt>, from_a: bool, kind: Kind| {
        let (src, dst, id) = if from_a {
            (A, B, &mut ids[0])
        } else {
            (B, A, &mut ids[1])
        };
        *id += 1;
        pkts.push(Pkt {
            t_ns: t,
            src,
            dst,
            ip_id: *id,
            ttl: if from_a { 64 } else { 63 },
            kind,
        });
        t += 1_234_567;
    };
    let c2s = |seq: u32, ack: u32, flags: Flags, ts: (u32, u32), len: u32| Segment {
        src_port: 40000,
        dst_port: 5001,
        seq,
        ack,
        flags,
        window: 502,
        options: TcpOptions {
            timestamps: Some(ts),
            ..Default::default()
        },
        payload_len: len,
        ecn: 0,
    };
    let s2c = |ack: u32, flags: Flags, ts: (u32, u32), blocks: &[(u32, u32)]| {
        let (sack, sack_len) = sack(blocks);
        Segment {
            src_port: 5001,
            dst_port: 40000,
            seq: s_isn + 1,
            ack,
            flags,
            window: 1000,
            options: TcpOptions {
                timestamps: Some(ts),
                sack,
                sack_len,
                ..Default::default()
            },
            payload_len: 0,
            ecn: 0,
        }
    };
    let ack = Flags::ACK;
    let data = Flags::ACK | Flags::PSH;
    let d = |i: u32| c_isn + 1 + i * MSS; // start of data segment i

    // Handshake.
    let syn = Segment {
        src_port: 40000,
        dst_port: 5001,
        seq: c_isn,
        ack: 0,
        flags: Flags::SYN,
        window: 64240,
        options: TcpOptions {
            mss: Some(1460),
            wscale: Some(7),
            sack_permitted: true,
            timestamps: Some((100, 0)),
            ..Default::default()
        },
        payload_len: 0,
        ecn: 0,
    };
    push(&mut pkts, true, Kind::Tcp(syn));
    let synack = Segment {
        src_port: 5001,
        dst_port: 40000,
        seq: s_isn,
        ack: c_isn + 1,
        flags: Flags::SYN | Flags::ACK,
        window: 65160,
        options: TcpOptions {
            mss: Some(1400),
            wscale: Some(9),
            sack_permitted: true,
            timestamps: Some((200, 100)),
            ..Default::default()
        },
        payload_len: 0,
        ecn: 0,
    };
    push(&mut pkts, false, Kind::Tcp(synack));
    push(
        &mut pkts,
        true,
        Kind::Tcp(c2s(d(0), s_isn + 1, ack, (101, 200), 0)),
    );

    // Four data segments; the second is lost after the capture point.
    for i in 0..4 {
        let seg = c2s(d(i), s_isn + 1, data, (102 + i, 200), MSS);
        push(&mut pkts, true, Kind::Tcp(seg));
    }
    push(&mut pkts, false, Kind::Tcp(s2c(d(1), ack, (210, 102), &[])));
    push(
        &mut pkts,
        false,
        Kind::Tcp(s2c(d(1), ack, (211, 104), &[(d(2), d(3))])),
    );
    push(
        &mut pkts,
        false,
        Kind::Tcp(s2c(d(1), ack, (212, 105), &[(d(2), d(4))])),
    );
    // Fast retransmit, cumulative ACK, then a spurious retransmission that
    // the receiver reports with a D-SACK block below the cumulative ACK.
    push(
        &mut pkts,
        true,
        Kind::Tcp(c2s(d(1), s_isn + 1, data, (110, 212), MSS)),
    );
    push(&mut pkts, false, Kind::Tcp(s2c(d(4), ack, (213, 110), &[])));
    push(
        &mut pkts,
        true,
        Kind::Tcp(c2s(d(1), s_isn + 1, data, (111, 213), MSS)),
    );
    push(
        &mut pkts,
        false,
        Kind::Tcp(s2c(d(4), ack, (214, 111), &[(d(1), d(2))])),
    );
    // Odd-length segment (odd zero payload in the checksum).
    push(
        &mut pkts,
        true,
        Kind::Tcp(c2s(d(4), s_isn + 1, data, (115, 214), 1001)),
    );
    let after = d(4) + 1001;
    // Three SACK blocks + timestamps: the maximum 60-byte header.
    push(
        &mut pkts,
        false,
        Kind::Tcp(s2c(
            after,
            ack,
            (215, 115),
            &[
                (after + 1000, after + 2000),
                (after + 3000, after + 4000),
                (after + 5000, after + 6000),
            ],
        )),
    );
    // FIN exchange.
    push(
        &mut pkts,
        true,
        Kind::Tcp(c2s(after, s_isn + 1, Flags::FIN | ack, (120, 215), 0)),
    );
    let mut finack = s2c(after + 1, Flags::FIN | ack, (220, 120), &[]);
    finack.seq = s_isn + 1;
    push(&mut pkts, false, Kind::Tcp(finack));
    push(
        &mut pkts,
        true,
        Kind::Tcp(c2s(after + 1, s_isn + 2, ack, (121, 220), 0)),
    );

    // Second connection without timestamps: SYN with MSS, NOP NOP
    // SACK-permitted, NOP WS; then an ACK with four SACK blocks.
    let syn2 = Segment {
        src_port: 40001,
        dst_port: 5002,
        seq: 0xffff_ff00,
        ack: 0,
        flags: Flags::SYN,
        window: 65535,
        options: TcpOptions {
            mss: Some(536),
            wscale: Some(0),
            sack_permitted: true,
            ..Default::default()
        },
        payload_len: 0,
        ecn: 0,
    };
    push(&mut pkts, true, Kind::Tcp(syn2));
    // Blocks straddle the 2^32 sequence wrap.
    let (blocks, n) = sack(&[
        (0xffff_ff80, 0x0000_0080),
        (0x0000_0100, 0x0000_0200),
        (0x0000_0300, 0x0000_0400),
        (0x0000_0500, 0x0000_0600),
    ]);
    let ack4 = Segment {
        src_port: 5002,
        dst_port: 40001,
        seq: 77,
        ack: 0xffff_ff01, // acknowledges the SYN only
        flags: Flags::ACK,
        window: 4096,
        options: TcpOptions {
            sack: blocks,
            sack_len: n,
            ..Default::default()
        },
        payload_len: 0,
        ecn: 0,
    };
    push(&mut pkts, false, Kind::Tcp(ack4));

    // UDP: odd payload, empty payload.
    for len in [37, 0] {
        push(
            &mut pkts,
            true,
            Kind::Udp {
                sport: 50000,
                dport: 50001,
                len,
            },
        );
    }
    pkts
}

fn write_capture(path: &Path, snap: Option<u32>, pkts: &[Pkt]) {
    let mut w = PcapWriter::create(path, snap).unwrap();
    for p in pkts {
        match p.kind {
            Kind::Tcp(ref seg) => w.write_tcp(p.t_ns, p.src, p.dst, p.ip_id, p.ttl, seg),
            Kind::Udp { sport, dport, len } => {
                w.write_udp(p.t_ns, p.src, p.dst, p.ip_id, p.ttl, sport, dport, len)
            }
        }
        .unwrap();
    }
    w.flush().unwrap();
}

const FIELDS: &[&str] = &[
    "frame.time_epoch",
    "frame.len",
    "frame.cap_len",
    "ip.src",
    "ip.dst",
    "ip.len",
    "ip.id",
    "ip.ttl",
    "ip.flags.df",
    "ip.proto",
    "ip.checksum.status",
    "tcp.srcport",
    "tcp.dstport",
    "tcp.seq_raw",
    "tcp.ack_raw",
    "tcp.flags",
    "tcp.window_size_value",
    "tcp.hdr_len",
    "tcp.len",
    "tcp.option_kind",
    "tcp.options.mss_val",
    "tcp.options.sack_perm",
    "tcp.options.wscale.shift",
    "tcp.options.timestamp.tsval",
    "tcp.options.timestamp.tsecr",
    "tcp.options.sack_le",
    "tcp.options.sack_re",
    "tcp.options.sack.dsack_le",
    "tcp.options.sack.dsack_re",
    "tcp.checksum.status",
    "udp.srcport",
    "udp.dstport",
    "udp.length",
    "udp.checksum.status",
    "_ws.malformed",
    "_ws.short",
    "_ws.expert.severity",
    "_ws.expert.message",
];

fn tshark_available() -> bool {
    Command::new("tshark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs tshark over `path` and returns one field map per packet.
fn tshark_fields(path: &Path) -> Vec<HashMap<&'static str, String>> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r").arg(path).args([
        "-n",
        "-o",
        "ip.check_checksum:TRUE",
        "-o",
        "tcp.check_checksum:TRUE",
        "-o",
        "udp.check_checksum:TRUE",
        "-o",
        "tcp.relative_sequence_numbers:FALSE",
        "-T",
        "fields",
        "-E",
        "separator=/t",
        "-E",
        "occurrence=a",
        "-E",
        "aggregator=,",
        "-E",
        "quote=n",
    ]);
    for f in FIELDS {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("run tshark");
    assert!(
        out.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            assert_eq!(cols.len(), FIELDS.len(), "bad tshark line {line:?}");
            FIELDS
                .iter()
                .zip(cols)
                .map(|(&f, v)| (f, v.to_string()))
                .collect()
        })
        .collect()
}

fn ip_str(a: [u8; 4]) -> String {
    format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3])
}

fn join<T: ToString>(v: impl IntoIterator<Item = T>) -> String {
    v.into_iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Option kinds in wire order, as Linux lays them out.
fn expected_kinds(o: &TcpOptions) -> Vec<u8> {
    let mut k = Vec::new();
    if o.mss.is_some() {
        k.push(2);
    }
    match (o.timestamps.is_some(), o.sack_permitted) {
        (true, true) => k.extend([4, 8]),
        (true, false) => k.extend([1, 1, 8]),
        (false, true) => k.extend([1, 1, 4]),
        (false, false) => {}
    }
    if o.wscale.is_some() {
        k.extend([1, 3]);
    }
    if o.sack_len > 0 {
        k.extend([1, 1, 5]);
    }
    k
}

fn opt_str<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// Checks every packet of one capture; returns the expert messages seen
/// (for the report) as "frame: severity message".
fn check_capture(path: &Path, snap: Option<u32>, pkts: &[Pkt]) -> Vec<String> {
    let rows = tshark_fields(path);
    assert_eq!(rows.len(), pkts.len(), "{}: packet count", path.display());
    let mut experts = Vec::new();
    for (i, (p, r)) in pkts.iter().zip(&rows).enumerate() {
        let frame = i + 1;
        let ctx = format!("{} frame {frame}", path.display());
        let f = |name: &str| r[name].as_str();
        let eq = |name: &str, want: String| {
            assert_eq!(f(name), want, "{ctx}: field {name}");
        };

        assert_eq!(f("_ws.malformed"), "", "{ctx}: malformed");
        let sevs: Vec<u32> = f("_ws.expert.severity")
            .split(',')
            .filter(|s| !s.is_empty())
            .map(|s| s.parse().unwrap())
            .collect();
        assert!(
            sevs.iter().all(|&s| s < PI_ERROR),
            "{ctx}: error-level expert info: {}",
            f("_ws.expert.message")
        );
        // The only warning this traffic deserves is the D-SACK one (TCP
        // analysis notes such as "Duplicate ACK" or "retransmission" are
        // expected: the scenario has a loss and a spurious retransmission).
        let msgs: Vec<&str> = f("_ws.expert.message").split(',').collect();
        for (sev, msg) in sevs.iter().zip(&msgs) {
            assert!(
                *sev < PI_WARN || *msg == "D-SACK Sequence",
                "{ctx}: unexpected warning {msg:?}"
            );
        }
        if !f("_ws.expert.message").is_empty() {
            experts.push(format!(
                "frame {frame}: [{}] {}",
                f("_ws.expert.severity"),
                f("_ws.expert.message")
            ));
        }
        if !f("_ws.short").is_empty() {
            experts.push(format!("frame {frame}: _ws.short {}", f("_ws.short")));
        }

        // Nanosecond timestamp.
        eq(
            "frame.time_epoch",
            format!("{}.{:09}", p.t_ns / 1_000_000_000, p.t_ns % 1_000_000_000),
        );
        let (l4_hlen, payload, proto) = match p.kind {
            Kind::Tcp(ref s) => (s.header_len(), s.payload_len as usize, 6),
            Kind::Udp { len, .. } => (8, len as usize, 17),
        };
        let captured = snap.map_or(payload, |n| payload.min(n as usize));
        let full = captured == payload;
        eq("frame.len", (20 + l4_hlen + payload).to_string());
        eq("frame.cap_len", (20 + l4_hlen + captured).to_string());
        eq("ip.src", ip_str(p.src));
        eq("ip.dst", ip_str(p.dst));
        eq("ip.len", (20 + l4_hlen + payload).to_string());
        eq("ip.id", format!("0x{:04x}", p.ip_id));
        eq("ip.ttl", p.ttl.to_string());
        eq("ip.flags.df", "1".into());
        eq("ip.proto", proto.to_string());
        eq("ip.checksum.status", CHECKSUM_GOOD.into());
        let l4_status = if full {
            CHECKSUM_GOOD
        } else {
            CHECKSUM_UNVERIFIED
        };

        match p.kind {
            Kind::Tcp(ref s) => {
                let o = &s.options;
                eq("tcp.srcport", s.src_port.to_string());
                eq("tcp.dstport", s.dst_port.to_string());
                eq("tcp.seq_raw", s.seq.to_string());
                eq("tcp.ack_raw", s.ack.to_string());
                eq("tcp.flags", format!("0x{:04x}", s.flags.0));
                eq("tcp.window_size_value", s.window.to_string());
                eq("tcp.hdr_len", s.header_len().to_string());
                eq("tcp.len", s.payload_len.to_string());
                eq("tcp.option_kind", join(expected_kinds(o)));
                eq("tcp.options.mss_val", opt_str(o.mss));
                assert_eq!(
                    !f("tcp.options.sack_perm").is_empty(),
                    o.sack_permitted,
                    "{ctx}: sack_perm"
                );
                eq("tcp.options.wscale.shift", opt_str(o.wscale));
                eq(
                    "tcp.options.timestamp.tsval",
                    opt_str(o.timestamps.map(|t| t.0)),
                );
                eq(
                    "tcp.options.timestamp.tsecr",
                    opt_str(o.timestamps.map(|t| t.1)),
                );
                eq(
                    "tcp.options.sack_le",
                    join(o.sack_blocks().iter().map(|b| b.left)),
                );
                eq(
                    "tcp.options.sack_re",
                    join(o.sack_blocks().iter().map(|b| b.right)),
                );
                // D-SACK (RFC 2883): first block below the cumulative ACK.
                let dsack = o
                    .sack_blocks()
                    .first()
                    .filter(|b| s.flags.ack() && (b.left.wrapping_sub(s.ack) as i32) < 0);
                eq("tcp.options.sack.dsack_le", opt_str(dsack.map(|b| b.left)));
                eq("tcp.options.sack.dsack_re", opt_str(dsack.map(|b| b.right)));
                if dsack.is_some() {
                    assert!(f("_ws.expert.message").contains("D-SACK Sequence"), "{ctx}");
                }
                eq("tcp.checksum.status", l4_status.into());
            }
            Kind::Udp { sport, dport, len } => {
                eq("udp.srcport", sport.to_string());
                eq("udp.dstport", dport.to_string());
                eq("udp.length", (8 + len).to_string());
                eq("udp.checksum.status", l4_status.into());
            }
        }
    }
    experts
}

fn tmp_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("tcplab-tshark-{}-{name}.pcap", std::process::id()))
}

#[test]
fn tshark_accepts_pcap() {
    if !tshark_available() {
        eprintln!("tshark not installed: skipping pcap_tshark test");
        return;
    }

    // Positive control: a 4-byte "DNS" message is malformed for tshark, so
    // the `_ws.malformed` check below is known to fire.
    let ctl = tmp_path("control");
    {
        let mut w = PcapWriter::create(&ctl, None).unwrap();
        w.write_udp(0, A, B, 1, 64, 40000, 53, 4).unwrap();
        w.flush().unwrap();
    }
    let rows = tshark_fields(&ctl);
    std::fs::remove_file(&ctl).unwrap();
    assert_eq!(rows.len(), 1);
    assert_ne!(rows[0]["_ws.malformed"], "", "control packet not malformed");
    assert_eq!(rows[0]["udp.checksum.status"], CHECKSUM_GOOD);

    let pkts = scenario();
    for (name, snap) in [("snap0", Some(0)), ("snap64", Some(64)), ("full", None)] {
        let path = tmp_path(name);
        write_capture(&path, snap, &pkts);
        let experts = check_capture(&path, snap, &pkts);
        eprintln!("{name}: {} packets, expert infos:", pkts.len());
        for e in &experts {
            eprintln!("  {e}");
        }
        std::fs::remove_file(&path).unwrap();
    }
}
