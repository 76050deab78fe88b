//! Bad input is counted and reported, never a crash; a file that is not a
//! capture is one error line. Plus the verdicts on hand-built RTOs and a
//! bounded fuzz run (the ≥ 1 M-input run is `bench/analyze_fuzz.py`).

use tcplab_tcp::segment::Flags;
use tcplab_trace::synth::{bulk_sender_side, ipv4_tcp, seg, PcapBuilder};
use tcplab_trace::{analyze_reader, Options, Report, Side, Skip};

fn run(bytes: &[u8]) -> Result<Report, String> {
    analyze_reader(
        bytes,
        "test.pcap",
        Options {
            side: Side::Sender,
            collect: true,
            ..Default::default()
        },
    )
}

fn skipped(r: &Report, s: Skip) -> u64 {
    r.skipped[Skip::ALL.iter().position(|&x| x == s).unwrap()]
}

#[test]
fn spurious_rto_found_by_eifel_and_genuine_one_not() {
    // Without the row tables the counts are the same (they once differed).
    for collect in [true, false] {
        let f = bulk_sender_side(30, Some(9), true);
        let r = analyze_reader(
            &f[..],
            "t",
            Options {
                side: Side::Sender,
                collect,
                ..Default::default()
            },
        )
        .unwrap();
        let h = &r.analyzer.finished[0].halves[0];
        assert_eq!(
            (
                h.rtos,
                h.rto_episodes,
                h.spurious_rtos,
                h.spurious_rto_episodes
            ),
            (1, 1, 1, 1)
        );
    }
    for spurious in [true, false] {
        let f = bulk_sender_side(20, Some(7), spurious);
        let r = run(&f).unwrap();
        let c = &r.analyzer.finished;
        assert_eq!(c.len(), 1);
        let h = &c[0].halves[0];
        assert!(c[0].handshake && c[0].closed);
        assert_eq!((h.retransmissions, h.rtos), (1, 1), "spurious={spurious}");
        assert_eq!(h.spurious_rtos, u64::from(spurious));
        assert_eq!(h.bytes_unique, 20 * 1000 + 1); // + FIN
        assert_eq!(h.mss, Some(1000));
        assert!(h.timestamps && h.sack_permitted);
        let row = &r.analyzer.rtx[0];
        assert_eq!(row.seq, 7 * 1000 + 1);
        assert_eq!(row.spurious, i8::from(spurious));
        assert_eq!(row.evidence.name(), "eifel");
        // Karn (RFC 6298 §3): 19 ACK samples of 100 ms, none from the
        // retransmitted segment (which would give 1.05 s or 1.1 s).
        let acks: Vec<u64> = r
            .analyzer
            .rtt
            .iter()
            .filter(|s| s.source == 0 && s.dir == 0)
            .map(|s| s.rtt_ns)
            .collect();
        assert!(acks.len() >= 19, "{acks:?}");
        assert!(acks.iter().all(|&x| x == 100_000_000), "{acks:?}");
        assert!(
            (h.rtt_min_ns as f64 - 100e6).abs() < 2e6,
            "{}",
            h.rtt_min_ns
        );
    }
}

#[test]
fn not_a_capture_is_one_line_error() {
    for bad in [&b""[..], b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", &[0u8; 100]] {
        let e = run(bad).err().expect("error");
        assert!(e.starts_with("test.pcap: not a capture:"), "{e}");
        assert!(!e.contains('\n'));
    }
}

#[test]
fn truncated_file_and_cut_off_last_packet() {
    let f = bulk_sender_side(10, None, false);
    // cut inside the last record's data, inside its header, and mid-file
    for cut in [f.len() - 5, f.len() - 60, f.len() / 2] {
        let r = run(&f[..cut]).unwrap();
        assert!(r.truncated_tail, "cut at {cut}");
        assert!(r.records > 0);
    }
    let r = run(&f).unwrap();
    assert!(!r.truncated_tail);
}

#[test]
fn corrupt_headers_and_non_tcp_are_counted() {
    let mut w = PcapBuilder::new(101);
    let s = seg(1, 2, 100, 0, Flags::SYN, 0);
    let good = ipv4_tcp([1, 1, 1, 1], [2, 2, 2, 2], 1, &s, true);
    w.record(1, &good);
    let mut bad_ip = good.clone();
    bad_ip[0] = 0x42; // IHL 2 words
    w.record(2, &bad_ip);
    let mut bad_tcp = good.clone();
    bad_tcp[20 + 12] = 0x20; // data offset 2 words
    w.record(3, &bad_tcp);
    let mut bad_opt = good.clone();
    bad_opt[20 + 12] = 0x60;
    bad_opt[2..4].copy_from_slice(&44u16.to_be_bytes());
    bad_opt.extend([2, 9, 0, 0]); // MSS option with length 9
    w.record(4, &bad_opt);
    let mut udp = good.clone();
    udp[9] = 17;
    w.record(5, &udp);
    w.record(6, &good[..30]); // snaplen inside the TCP header
    w.record(7, &[0x45]); // one byte
    let r = run(&w.bytes).unwrap();
    assert_eq!(r.tcp_packets, 1);
    assert_eq!(skipped(&r, Skip::BadIp), 1);
    assert_eq!(skipped(&r, Skip::BadTcp), 2);
    assert_eq!(skipped(&r, Skip::NotTcp), 1);
    assert_eq!(skipped(&r, Skip::Truncated), 2);
    // Ethernet: ARP is "not IP"
    let mut w = PcapBuilder::new(1);
    let mut arp = vec![0u8; 12];
    arp.extend([0x08, 0x06]);
    arp.extend([0u8; 28]);
    w.record(1, &arp);
    let r = run(&w.bytes).unwrap();
    assert_eq!(skipped(&r, Skip::NotIp), 1);
    assert!(r.to_json(None)["skipped"]["not_ip"] == 1);
}

#[test]
fn mid_connection_start_is_analysed_and_reported() {
    let f = bulk_sender_side(30, Some(20), true);
    // Drop the file header's records up to segment 5: rebuild by re-reading.
    let mut rd = tcplab_trace::CaptureReader::new(&f[..], "x").unwrap();
    let mut w = PcapBuilder::new(101);
    let mut k = 0;
    while let Some(rec) = rd.next_record().unwrap() {
        k += 1;
        if k > 12 {
            w.record(rec.ts_ns, rec.data);
        }
    }
    let r = run(&w.bytes).unwrap();
    assert_eq!(r.midstream_conns, 1);
    let c = &r.analyzer.finished[0];
    assert!(!c.handshake);
    // The first packet seen (an ACK) names endpoint a: the data is b's.
    let h = c.halves.iter().find(|h| h.bytes_sent > 0).unwrap();
    assert_eq!(h.bytes_sent, 25 * 1000 + 1000); // segments 5..29 and one retransmission
    assert_eq!(h.mss, None);
    assert_eq!(h.rtos, 1, "{h:?} {:?}", r.analyzer.rtx);
    assert_eq!(h.spurious_rtos, 1, "{:?}", r.analyzer.rtx);
}

/// xorshift64*: deterministic mutations without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// Mutated valid captures (bit flips, byte overwrites, truncation, spliced
/// lengths): the parser and analyser must return, never panic or hang.
#[test]
fn fuzz_mutated_captures_never_panic() {
    let seeds = [
        bulk_sender_side(12, Some(4), true),
        bulk_sender_side(6, Some(2), false),
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..3000 {
        let base = &seeds[(rng.next() % 2) as usize];
        let f = tcplab_trace::synth::mutate(base, &mut || rng.next());
        let _ = run(&f);
    }
}

#[test]
fn a_long_analysis_asks_whether_to_stop() {
    // About 80,000 records: `stop` is asked once, after the first 65,536.
    let f = bulk_sender_side(40_000, None, false);
    for give_up in [true, false] {
        let mut calls = 0;
        let r = tcplab_trace::analyze_reader_until(&f[..], "t", Options::default(), &mut || {
            calls += 1;
            give_up
        });
        assert_eq!(calls, 1);
        match r {
            Err(e) => assert!(give_up && e == "interrupted", "{e}"),
            Ok(r) => assert!(!give_up && r.tcp_packets > 80_000),
        }
    }
}

#[test]
fn the_json_text_is_written_row_by_row_as_the_tree_would_print() {
    // Two connections (the second with a file name that holds the key's text).
    let mut f = bulk_sender_side(30, Some(20), true);
    let second = bulk_sender_side(10, None, false);
    f.extend_from_slice(&second[24..]);
    let r = analyze_reader(&f[..], r#"a"connections":[]"#, Options::default()).unwrap();
    assert_eq!(r.to_json(None)["connections"].as_array().unwrap().len(), 2);
    assert_eq!(r.to_json_string(None), r.to_json(None).to_string());
}
