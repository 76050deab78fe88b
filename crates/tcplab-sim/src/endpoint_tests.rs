//! Scripted interop checks of the emulator's tcplab endpoint, in the manner
//! of packetdrill: a scripted peer injects IPv4 packets with real bytes at
//! the far end of an emulated path, and each check states the segments the
//! endpoint must answer with (flags, sequence and acknowledgement numbers,
//! options, window, payload bytes, checksums) and when. The clock follows
//! the emulator's events (no real time passes), so every check is
//! deterministic and takes milliseconds.

use std::path::PathBuf;

use tcplab_tcp::wire::{decode_tcp_header, internet_checksum, tcp_checksum};
use tcplab_tcp::{Flags, Segment, TcpOptions, Time, NS_PER_MS};

use crate::config::{example_p2p, AppConfig, HopConfig, SimConfig};
use crate::emu::{Emu, EmuOptions, Wire};
use crate::endpoint_app::pattern_fill;
use crate::engine::Dir;
use crate::output::EventKind;

const S: [u8; 4] = [10, 99, 0, 1];
const C: [u8; 4] = [10, 99, 0, 2];
const SPORT: u16 = 8000;
const CPORT: u16 = 40000;
/// The scripted peer's ISN.
const PISS: u32 = 1_000_000;
const MS: Time = NS_PER_MS;

struct W {
    out: Vec<(Dir, Vec<u8>, Time)>,
    t: Time,
}

impl Wire for W {
    fn send(&mut self, dir: Dir, bytes: &[u8]) -> bool {
        self.out.push((dir, bytes.to_vec(), self.t));
        true
    }
    fn clock(&mut self) -> Time {
        self.t
    }
}

/// One decoded packet the endpoint's side sent to the peer.
#[derive(Debug, Clone)]
struct Got {
    seg: Segment,
    data: Vec<u8>,
    t: Time,
}

struct Script {
    e: Option<Emu>,
    w: W,
    seen: usize,
    /// The peer is the client (the endpoint a server) or the server.
    peer_is_client: bool,
    dir: PathBuf,
    /// The last TSval the endpoint sent (the peer's ACKs echo it once
    /// timestamps are on, RFC 7323 §3.2).
    ts_recent: Option<u32>,
}

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "tcplab-ep-{tag}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A 100 Mbit/s path with 5 ms one-way delay (lossless, 1000-packet queues).
fn path() -> SimConfig {
    let mut cfg = example_p2p(1_000_000_000, 0.0);
    if let HopConfig::Link(l) = &mut cfg.hops[0] {
        for d in [&mut l.fwd, &mut l.rev] {
            d.rate_bps = 100_000_000;
            d.delay_ns = 5 * MS;
            d.queue = crate::config::QueueConfig::Packets { limit: 1000 };
        }
    }
    cfg.flows[0].tcp.rto.min_ns = 200 * MS;
    cfg
}

fn packet(src: [u8; 4], dst: [u8; 4], seg: &Segment, payload: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    let thl = crate::emu::tcp_header_into(&mut b, seg);
    b.extend_from_slice(payload);
    crate::emu::ipv4_finish(&mut b, src, dst, thl);
    b
}

fn checksums_ok(b: &[u8]) -> bool {
    let src: [u8; 4] = b[12..16].try_into().unwrap();
    let dst: [u8; 4] = b[16..20].try_into().unwrap();
    internet_checksum(&b[..20]) == 0 && tcp_checksum(src, dst, &b[20..], &[]) == 0
}

fn seg(flags: Flags, seq: u32, ack: u32, window: u16) -> Segment {
    Segment {
        src_port: CPORT,
        dst_port: SPORT,
        seq,
        ack,
        flags,
        window,
        options: TcpOptions::default(),
        payload_len: 0,
        ecn: 0,
    }
}

/// A segment from the scripted server (port `SPORT`) to the client's `cport`,
/// window field 65160.
fn from_server(flags: Flags, seq: u32, ack: u32, cport: u16) -> Segment {
    Segment {
        src_port: SPORT,
        dst_port: cport,
        window: 65160,
        ..seg(flags, seq, ack, 0)
    }
}

/// The SYN Linux sends: MSS 1460, SACK permitted, timestamps, window scale 7.
fn linux_syn() -> Segment {
    let mut s = seg(Flags::SYN, PISS, 0, 64240);
    s.options.mss = Some(1460);
    s.options.sack_permitted = true;
    s.options.timestamps = Some((500, 0));
    s.options.wscale = Some(7);
    s
}

impl Script {
    /// An endpoint server over `path()` changed by `f`, serving `files`
    /// (name, bytes) over HTTP, or the bulk source when `files` is None.
    fn server(f: impl FnOnce(&mut SimConfig), files: Option<&[(&str, &[u8])]>) -> Script {
        let mut cfg = path();
        f(&mut cfg);
        let dir = tmpdir("srv");
        let serve = files.map(|fs| {
            for (n, b) in fs {
                std::fs::write(dir.join(n), b).unwrap();
            }
            dir.display().to_string()
        });
        let opts = serde_json::json!({
            "endpoint": {"role": "server", "addr": "10.99.0.1", "port": SPORT, "serve": serve},
        });
        Script::new(cfg, opts, true, dir)
    }

    /// The emulator with `opts` over `cfg`, before any packet; the scripted
    /// peer is the client when `peer_is_client`.
    fn new(cfg: SimConfig, opts: serde_json::Value, peer_is_client: bool, dir: PathBuf) -> Script {
        let opts: EmuOptions = serde_json::from_value(opts).unwrap();
        Script {
            e: Some(Emu::new(cfg, &opts).unwrap()),
            w: W {
                out: Vec::new(),
                t: 0,
            },
            seen: 0,
            peer_is_client,
            dir,
            ts_recent: None,
        }
    }

    /// A server with one file `/f` of `n` pattern bytes (`body(n)`) over
    /// `path()` changed by `cfg`: the peer opens and asks for it with window
    /// field `window`. Returns the script and the server's ISN.
    fn get_file(n: usize, cfg: impl FnOnce(&mut SimConfig), window: u16) -> (Script, u32) {
        let f = body(n);
        let mut s = Script::server(cfg, Some(&[("f", &f)]));
        let isn = s.open().seg.seq;
        s.request(isn, GET, window);
        (s, isn)
    }

    /// An endpoint client fetching `/f` from the scripted server, saving to a file.
    fn client(f: impl FnOnce(&mut SimConfig)) -> Script {
        let mut cfg = path();
        f(&mut cfg);
        let dir = tmpdir("cli");
        let opts = serde_json::json!({
            "endpoint": {"role": "client", "addr": "10.99.0.2", "port": SPORT,
                         "peer": "10.99.0.1", "target": "/f", "host": "10.99.0.1:8000",
                         "save": dir.join("saved").display().to_string()},
        });
        Script::new(cfg, opts, false, dir)
    }

    /// The peer sends `s` with `payload` now.
    fn send(&mut self, mut s: Segment, payload: &[u8]) {
        s.payload_len = payload.len() as u32;
        let (src, dst, dir) = if self.peer_is_client {
            (C, S, Dir::Rev)
        } else {
            (S, C, Dir::Fwd)
        };
        let b = packet(src, dst, &s, payload);
        let t = self.w.t;
        let e = self.e.as_mut().unwrap();
        e.inject(dir, &b, t, &mut self.w);
    }

    /// Let `dt` pass.
    fn run(&mut self, dt: Time) {
        let end = self.w.t + dt;
        let e = self.e.as_mut().unwrap();
        while let Some(at) = e.next_deadline() {
            if at > end {
                break;
            }
            self.w.t = at;
            e.run_due(at, &mut self.w);
        }
        self.w.t = end;
        e.run_due(end, &mut self.w);
    }

    /// What reached the peer since the last call.
    fn recv(&mut self) -> Vec<Got> {
        let to_peer = if self.peer_is_client {
            Dir::Fwd
        } else {
            Dir::Rev
        };
        let new: Vec<_> = self.w.out[self.seen..]
            .iter()
            .filter(|o| o.0 == to_peer)
            .map(|(_, b, t)| {
                assert!(checksums_ok(b), "bad checksum");
                let (seg, hl) = decode_tcp_header(&b[20..]).unwrap();
                if let Some((v, _)) = seg.options.timestamps {
                    self.ts_recent = Some(v);
                }
                Got {
                    seg,
                    data: b[20 + hl..].to_vec(),
                    t: *t,
                }
            })
            .collect();
        self.seen = self.w.out.len();
        new
    }

    fn finish(&mut self) -> serde_json::Value {
        self.e.take().unwrap().finish().unwrap()
    }

    /// Handshake as Linux; returns the SYN-ACK.
    fn open(&mut self) -> Got {
        self.send(linux_syn(), &[]);
        self.run(20 * MS);
        let g = self.recv();
        assert_eq!(g.len(), 1, "{g:?}");
        let sa = g[0].clone();
        let mut a = seg(Flags::ACK, PISS + 1, sa.seg.seq.wrapping_add(1), 502);
        a.options.timestamps = Some((510, sa.seg.options.timestamps.unwrap().0));
        self.send(a, &[]);
        self.run(20 * MS);
        sa
    }

    /// The peer (a client) sends `req` after `open`; `server_isn` is the SYN-ACK's seq.
    fn request(&mut self, server_isn: u32, req: &[u8], window: u16) {
        let mut a = seg(Flags::ACK | Flags::PSH, PISS + 1, server_isn + 1, window);
        a.options.timestamps = Some((520, 0));
        self.send(a, req);
    }

    /// Acknowledge everything received so far (cumulative ACK `ack` bytes
    /// after `server_isn`), window field `window`.
    fn ack(&mut self, server_isn: u32, n: u32, window: u16, reqlen: u32) {
        let mut a = seg(Flags::ACK, PISS + 1 + reqlen, server_isn + 1 + n, window);
        a.options.timestamps = self.ts_recent.map(|e| (600 + (self.w.t / MS) as u32, e));
        self.send(a, &[]);
    }
}

impl Drop for Script {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

const GET: &[u8] = b"GET /f HTTP/1.1\r\nHost: x\r\n\r\n";

fn data_of(g: &[Got]) -> Vec<u8> {
    let mut d = Vec::new();
    for x in g {
        d.extend_from_slice(&x.data);
    }
    d
}

/// Acknowledge every data segment as it arrives until a FIN arrived or
/// `limit` passed; returns the byte stream in order (segments arrive in
/// order on a lossless path) and whether the FIN came.
fn drain_response(s: &mut Script, isn: u32, limit: Time) -> (Vec<u8>, bool) {
    let mut stream = Vec::new();
    let mut fin = false;
    let start = s.w.t;
    while s.w.t < start + limit && !fin {
        s.run(MS);
        for g in s.recv() {
            let off = g.seg.seq.wrapping_sub(isn + 1) as usize;
            if g.data.is_empty() && !g.seg.flags.fin() {
                continue;
            }
            assert_eq!(off, stream.len(), "in order on a lossless path");
            stream.extend_from_slice(&g.data);
            fin |= g.seg.flags.fin();
            let n = stream.len() as u32 + fin as u32;
            s.ack(isn, n, 2000, GET.len() as u32);
        }
    }
    (stream, fin)
}

fn body(n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    pattern_fill(7, &mut v);
    v
}

#[test]
fn synack_carries_every_option_linux_offers() {
    let mut s = Script::server(|_| {}, None);
    s.send(linux_syn(), &[]);
    s.run(20 * MS);
    let g = s.recv();
    assert_eq!(g.len(), 1);
    let sa = &g[0].seg;
    assert!(sa.flags.syn() && sa.flags.ack());
    assert_eq!(sa.ack, PISS + 1);
    assert_eq!(sa.src_port, SPORT);
    assert_eq!(
        sa.options.mss,
        Some(1460),
        "the flow's mss and room for timestamps (RFC 6691)"
    );
    assert!(sa.options.sack_permitted);
    let (_, ecr) = sa.options.timestamps.expect("timestamps");
    assert_eq!(ecr, 500, "TSecr echoes the SYN's TSval (RFC 7323 §3.2)");
    // rcv_buf 4 MiB: the smallest shift that fits it in 16 bits (RFC 7323 §2.3).
    assert_eq!(sa.options.wscale, Some(7));
    // 5 ms each way plus serialisation: it left after one one-way delay.
    assert!(g[0].t >= 10 * MS && g[0].t < 11 * MS, "{}", g[0].t);
}

#[test]
fn a_bare_syn_gets_no_options_it_did_not_offer_and_536_byte_segments() {
    let big = body(3000);
    let files: &[(&str, &[u8])] = &[("f", &big)];
    let mut s = Script::server(|_| {}, Some(files));
    s.send(seg(Flags::SYN, PISS, 0, 65535), &[]);
    s.run(20 * MS);
    let sa = s.recv()[0].seg;
    assert_eq!(sa.options.wscale, None);
    assert!(!sa.options.sack_permitted);
    assert_eq!(sa.options.timestamps, None);
    assert_eq!(sa.options.mss, Some(1460));
    s.send(seg(Flags::ACK, PISS + 1, sa.seq + 1, 65535), &[]);
    let mut r = seg(Flags::ACK | Flags::PSH, PISS + 1, sa.seq + 1, 65535);
    r.payload_len = GET.len() as u32;
    s.send(r, GET);
    s.run(30 * MS);
    let g = s.recv();
    let data: Vec<_> = g.iter().filter(|x| !x.data.is_empty()).collect();
    assert!(!data.is_empty());
    // RFC 9293 §3.7.1: without an MSS option the peer takes 536.
    assert!(
        data.iter().all(|x| x.data.len() <= 536),
        "{:?}",
        data.iter().map(|x| x.data.len()).collect::<Vec<_>>()
    );
}

#[test]
fn a_lost_handshake_ack_brings_the_synack_again_after_the_initial_rto() {
    let mut s = Script::server(|_| {}, None);
    s.send(linux_syn(), &[]);
    s.run(20 * MS);
    let first = s.recv();
    assert_eq!(first.len(), 1);
    // No ACK: RFC 6298 §2.1 initial RTO 1 s, then the SYN-ACK again.
    s.run(990 * MS);
    assert!(s.recv().is_empty(), "nothing before the RTO");
    s.run(30 * MS);
    let again = s.recv();
    assert_eq!(again.len(), 1);
    assert!(again[0].seg.flags.syn() && again[0].seg.flags.ack());
    assert_eq!(again[0].seg.seq, first[0].seg.seq);
}

#[test]
fn a_retransmitted_syn_is_answered_with_the_same_synack() {
    let mut s = Script::server(|_| {}, None);
    s.send(linux_syn(), &[]);
    s.run(20 * MS);
    let a = s.recv();
    s.send(linux_syn(), &[]);
    s.run(20 * MS);
    let b = s.recv();
    assert_eq!(b.len(), 1);
    assert!(b[0].seg.flags.syn() && b[0].seg.flags.ack());
    assert_eq!(a[0].seg.seq, b[0].seg.seq, "one connection, one ISN");
    let sum = s.finish();
    assert_eq!(sum["endpoint"]["connections"].as_array().unwrap().len(), 1);
}

#[test]
fn a_get_is_answered_with_the_file_byte_exact_then_fin() {
    let (mut s, isn) = Script::get_file(100_000, |_| {}, 2000);
    let (stream, fin) = drain_response(&mut s, isn, 3000 * MS);
    assert!(fin, "FIN after the data");
    let text = String::from_utf8_lossy(&stream[..120]).into_owned();
    assert!(text.starts_with("HTTP/1.0 200 OK\r\n"), "{text}");
    let head = stream.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    assert_eq!(&stream[head..], &body(100_000)[..], "the body is the file");
    let sum = s.finish();
    let c = &sum["endpoint"]["connections"][0];
    assert_eq!(c["request"], "GET /f HTTP/1.1");
    assert!(sum["violations"].as_array().unwrap().is_empty(), "{sum}");
}

#[test]
fn the_first_flight_is_the_initial_window() {
    let (mut s, _) = Script::get_file(
        200_000,
        |c| c.flows[0].tcp.initial_window_bytes = 4 * 1448,
        2000,
    );
    s.run(100 * MS);
    let g: Vec<_> = s
        .recv()
        .into_iter()
        .filter(|x| !x.data.is_empty())
        .collect();
    assert_eq!(g.len(), 4, "IW 4 segments and no more without ACKs");
    assert!(g
        .iter()
        .all(|x| x.data.len() == 1448 - 12 || x.data.len() == 1448));
}

#[test]
fn the_scaled_window_limits_the_flight() {
    // Window field 40 << 7 = 5120 bytes (RFC 7323 §2.3).
    let (mut s, _) = Script::get_file(
        200_000,
        |c| c.flows[0].tcp.initial_window_bytes = 40 * 1448,
        40,
    );
    s.run(100 * MS);
    let g = s.recv();
    let bytes: usize = g.iter().map(|x| x.data.len()).sum();
    assert!(bytes <= 5120 && bytes > 5120 - 1448, "{bytes}");
}

#[test]
fn a_zero_window_is_probed_and_data_resumes_when_it_opens() {
    let (mut s, isn) = Script::get_file(50_000, |_| {}, 0);
    s.run(100 * MS);
    // The window was closed with the request: nothing but the ACK of it.
    let g = s.recv();
    assert!(g.iter().all(|x| x.data.is_empty()), "{g:?}");
    // Persist timer (RFC 9293 §3.8.6.1): a probe after about an RTO.
    s.run(3000 * MS);
    let probes: Vec<_> = s.recv();
    assert!(!probes.is_empty(), "a zero-window probe");
    assert!(probes.iter().all(|x| x.data.is_empty()));
    assert_eq!(
        probes[0].seg.seq, isn,
        "a probe below SND.NXT (as Linux's tcp_xmit_probe_skb)"
    );
    // The window opens: data flows.
    s.ack(isn, 0, 2000, GET.len() as u32);
    s.run(50 * MS);
    let g = s.recv();
    assert!(g.iter().any(|x| !x.data.is_empty()));
    let sum = s.finish();
    assert!(
        sum["endpoint"]["connections"][0]["window_probes"]
            .as_u64()
            .unwrap()
            >= 1
    );
}

#[test]
fn three_sack_dupacks_bring_a_fast_retransmit_of_the_hole() {
    let (mut s, isn) = Script::get_file(100_000, |_| {}, 2000);
    s.run(30 * MS);
    let g: Vec<_> = s
        .recv()
        .into_iter()
        .filter(|x| !x.data.is_empty())
        .collect();
    assert!(g.len() >= 5);
    // Segment 1 "lost": ACK segment 0, then SACK 2, 2-3, 2-4.
    let l = |x: &Got| x.seg.seq.wrapping_sub(isn);
    let end = |x: &Got| l(x) + x.data.len() as u32;
    let rq = GET.len() as u32;
    s.ack(isn, end(&g[0]) - 1, 2000, rq);
    for k in 2..5 {
        let mut a = seg(Flags::ACK, PISS + 1 + rq, isn + end(&g[0]), 2000);
        a.options.sack[0] = tcplab_tcp::SackBlock {
            left: isn + l(&g[2]),
            right: isn + end(&g[k]),
        };
        a.options.sack_len = 1;
        s.send(a, &[]);
    }
    s.run(20 * MS);
    let r = s.recv();
    let rtx: Vec<_> = r.iter().filter(|x| x.seg.seq == g[1].seg.seq).collect();
    assert_eq!(rtx.len(), 1, "the hole, once");
    assert_eq!(rtx[0].data, g[1].data, "the same bytes");
    let sum = s.finish();
    assert_eq!(sum["endpoint"]["flows"][0]["fast_retransmits"], 1);
}

#[test]
fn an_unacknowledged_flight_times_out_and_the_truth_says_spurious() {
    let (mut s, _) = Script::get_file(20_000, |_| {}, 2000);
    s.run(30 * MS);
    let g = s.recv();
    let first = g.iter().find(|x| !x.data.is_empty()).unwrap().clone();
    // The peer got everything but stays silent: the RTO (≥ 200 ms) fires.
    s.run(1500 * MS);
    let r = s.recv();
    let rtx = r
        .iter()
        .find(|x| x.seg.seq == first.seg.seq)
        .expect("retransmission");
    assert_eq!(rtx.data, first.data);
    let sum = s.finish();
    let ev = &sum["endpoint"]["events"];
    let kinds = ev["kind"].as_array().unwrap();
    let to = kinds.iter().position(|k| k == 0).expect("a timeout row");
    assert_eq!(ev["spurious"][to], 1, "the original had reached the peer");
    // Backed off (200 ms, 400 ms, 800 ms): every one spurious.
    let fl = &sum["endpoint"]["flows"][0];
    assert_eq!(fl["timeouts"], 3);
    assert_eq!(fl["spurious_timeouts"], 3);
    assert!(sum["retransmissions"]["spurious"][0].as_bool().unwrap());
}

#[test]
fn frto_declares_a_delay_spike_timeout_spurious() {
    let (mut s, isn) = Script::get_file(
        200_000,
        |c| c.flows[0].tcp.spurious_detection = "frto".into(),
        2000,
    );
    s.run(30 * MS);
    let g: Vec<_> = s
        .recv()
        .into_iter()
        .filter(|x| !x.data.is_empty())
        .collect();
    // The ACKs are held up past the RTO (200 ms), then arrive.
    s.run(300 * MS);
    let r = s.recv();
    assert!(
        r.iter().any(|x| x.seg.seq == g[0].seg.seq),
        "timeout retransmission"
    );
    let rq = GET.len() as u32;
    let end = |x: &Got| x.seg.seq.wrapping_sub(isn) + x.data.len() as u32 - 1;
    s.ack(isn, end(&g[1]), 2000, rq);
    s.run(20 * MS);
    let new = s.recv();
    // RFC 5682 §2.1 step 2b: new data, not go-back-N.
    assert!(
        new.iter()
            .all(|x| x.seg.seq.wrapping_sub(isn) > end(&g[g.len() - 1])),
        "{new:?}"
    );
    s.ack(isn, end(&g[3]), 2000, rq);
    s.run(10 * MS);
    let sum = s.finish();
    let fl = &sum["endpoint"]["flows"][0];
    assert_eq!(fl["timeouts"], 1);
    assert_eq!(fl["spurious_detected"], 1);
    assert_eq!(fl["spurious_timeouts"], 1);
}

#[test]
fn a_peer_rst_ends_the_connection_quietly() {
    let (mut s, _) = Script::get_file(500_000, |_| {}, 2000);
    s.run(30 * MS);
    s.recv();
    s.send(seg(Flags::RST, PISS + 1 + GET.len() as u32, 0, 0), &[]);
    s.run(3000 * MS);
    assert!(s.recv().is_empty(), "nothing after the RST");
    let sum = s.finish();
    let ev = &sum["endpoint"]["events"]["kind"];
    assert!(ev.as_array().unwrap().iter().any(|k| k == 7), "a reset row");
}

#[test]
fn a_syn_to_a_closed_port_is_refused_with_rst_ack() {
    let mut s = Script::server(|_| {}, None);
    let mut syn = linux_syn();
    syn.dst_port = 9;
    s.send(syn, &[]);
    s.run(20 * MS);
    let g = s.recv();
    assert_eq!(g.len(), 1);
    let r = g[0].seg;
    assert!(r.flags.rst() && r.flags.ack());
    assert_eq!(
        r.ack,
        PISS + 1,
        "RFC 9293 §3.10.7.1: ACK = SEG.SEQ + SEG.LEN"
    );
    assert_eq!(r.seq, 0);
}

#[test]
fn an_ack_for_no_connection_is_answered_with_rst_at_its_ack_number() {
    let mut s = Script::server(|_| {}, None);
    s.send(seg(Flags::ACK, PISS, 77_777, 100), &[]);
    s.run(20 * MS);
    let g = s.recv();
    assert_eq!(g.len(), 1);
    assert!(g[0].seg.flags.rst() && !g[0].seg.flags.ack());
    assert_eq!(g[0].seg.seq, 77_777);
    // A RST for no connection gets nothing.
    s.send(seg(Flags::RST, PISS, 0, 0), &[]);
    s.run(20 * MS);
    assert!(s.recv().is_empty());
    assert_eq!(s.finish()["endpoint"]["stray_segments"], 2);
}

#[test]
fn a_peer_that_closes_before_asking_gets_a_fin() {
    let mut s = Script::server(|_| {}, Some(&[("f", b"x")]));
    let sa = s.open();
    let isn = sa.seg.seq;
    s.send(seg(Flags::ACK | Flags::FIN, PISS + 1, isn + 1, 2000), &[]);
    s.run(30 * MS);
    let g = s.recv();
    let fin = g.iter().find(|x| x.seg.flags.fin()).expect("our FIN");
    assert_eq!(fin.seg.ack, PISS + 2, "the peer's FIN acknowledged");
    assert_eq!(fin.seg.seq, isn + 1, "no data before it");
    s.send(seg(Flags::ACK, PISS + 2, isn + 2, 2000), &[]);
    s.run(30 * MS);
    let sum = s.finish();
    assert_eq!(sum["endpoint"]["connections"][0]["state"], "Closed");
}

#[test]
fn timestamps_echo_the_peer_and_feed_the_rtt_estimate() {
    let (mut s, isn) = Script::get_file(30_000, |c| c.sample_interval_ns = 10 * MS, 2000);
    s.run(12 * MS);
    let g = s.recv();
    let d = g.iter().find(|x| !x.data.is_empty()).unwrap();
    assert_eq!(
        d.seg.options.timestamps.unwrap().1,
        520,
        "TSecr = the request's TSval"
    );
    let (stream, _) = drain_response(&mut s, isn, 1000 * MS);
    assert!(stream.len() > 30_000);
    let sum = s.finish();
    let srtt = sum["endpoint"]["timeseries"]["srtt_ns"].as_array().unwrap();
    let last = srtt.iter().rev().find(|v| v.as_i64().unwrap() > 0).unwrap();
    // Path RTT 10 ms plus serialisation and the peer's 1 ms ACK step.
    let ms = last.as_i64().unwrap() as f64 / 1e6;
    assert!((10.0..14.0).contains(&ms), "srtt {ms} ms");
}

#[test]
fn a_missing_file_is_a_404_and_the_connection_closes() {
    let mut s = Script::server(|_| {}, Some(&[("f", b"x")]));
    let sa = s.open();
    s.request(sa.seg.seq, b"GET /nope HTTP/1.0\r\n\r\n", 2000);
    let isn = sa.seg.seq;
    let (stream, fin) = drain_response(&mut s, isn, 1000 * MS);
    assert!(fin);
    assert!(stream.starts_with(b"HTTP/1.0 404 Not Found\r\n"));
}

#[test]
fn the_bulk_source_sends_the_flows_bytes_of_the_pattern() {
    let mut s = Script::server(
        |c| {
            c.flows[0].app = AppConfig::Bulk {
                bytes: Some(25_000),
            }
        },
        None,
    );
    let sa = s.open();
    let isn = sa.seg.seq;
    let (stream, fin) = drain_response(&mut s, isn, 2000 * MS);
    assert!(fin);
    let mut want = vec![0u8; 25_000];
    pattern_fill(0, &mut want);
    assert_eq!(stream, want);
    // The peer acknowledges the FIN and closes: the sender's view of the transfer (first
    // data segment to the last byte acknowledged) is logged as the simulator logs it.
    let mut f = seg(Flags::ACK | Flags::FIN, PISS + 1, isn + 25_002, 2000);
    f.options.timestamps = Some((900, 0));
    s.send(f, &[]);
    s.run(20 * MS);
    let sum = s.finish();
    let ev = &sum["endpoint"]["events"];
    let at = |kind: EventKind| {
        let k = ev["kind"].as_array().unwrap();
        let i = k.iter().position(|x| x == kind as u8).expect("the event");
        (
            ev["t_ns"][i].as_i64().unwrap(),
            ev["value"][i].as_f64().unwrap(),
        )
    };
    let (t_acked, sender_s) = at(EventKind::SenderAcked);
    let (t_done, open_s) = at(EventKind::TransferDone);
    assert_eq!(t_acked, t_done);
    // The handshake (20 ms) is in the connection's time, not in the sender's.
    assert!(
        sender_s > 0.0 && sender_s < open_s - 0.015,
        "{sender_s} {open_s}"
    );
}

#[test]
fn an_unlimited_bulk_source_stops_with_a_fin_when_the_peer_closes() {
    let mut s = Script::server(|_| {}, None);
    let sa = s.open();
    let isn = sa.seg.seq;
    s.run(40 * MS);
    let got = s.recv();
    let n: u32 = got.iter().map(|x| x.data.len() as u32).sum();
    assert!(n > 0);
    s.send(
        seg(Flags::ACK | Flags::FIN, PISS + 1, isn + 1 + n, 2000),
        &[],
    );
    let mut fin = false;
    for _ in 0..400 {
        s.run(5 * MS);
        let g = s.recv();
        fin |= g.iter().any(|x| x.seg.flags.fin());
        if let Some(last) = g.last() {
            let e = last.seg.seq.wrapping_sub(isn)
                + last.data.len() as u32
                + last.seg.flags.fin() as u32;
            s.send(seg(Flags::ACK, PISS + 2, isn + e, 2000), &[]);
        }
        if fin {
            break;
        }
    }
    assert!(fin, "the source ends after the peer's FIN");
}

#[test]
fn the_client_opens_with_options_and_sends_its_get() {
    let mut s = Script::client(|_| {});
    s.run(20 * MS);
    let g = s.recv();
    assert_eq!(g.len(), 1);
    let syn = g[0].seg;
    assert!(syn.flags.syn() && !syn.flags.ack());
    assert_eq!(syn.dst_port, SPORT);
    assert_eq!(syn.options.mss, Some(1460));
    assert!(syn.options.sack_permitted && syn.options.timestamps.is_some());
    assert_eq!(syn.options.wscale, Some(7));
    let mut sa = from_server(Flags::SYN | Flags::ACK, PISS, syn.seq + 1, syn.src_port);
    sa.options.mss = Some(1460);
    sa.options.sack_permitted = true;
    sa.options.wscale = Some(7);
    sa.options.timestamps = Some((9, syn.options.timestamps.unwrap().0));
    s.send(sa, &[]);
    s.run(20 * MS);
    let g = s.recv();
    let req = data_of(&g);
    assert!(
        req.starts_with(b"GET /f HTTP/1.1\r\nHost: 10.99.0.1:8000\r\n"),
        "{}",
        String::from_utf8_lossy(&req)
    );
    assert!(req.ends_with(b"\r\n\r\n"));
}

/// Run the client against a scripted server that sends `resp` in
/// segments of `mss`, in the order `order` (indices), then FIN.
fn client_fetch(resp: &[u8], mss: usize, order: &[usize]) -> (Vec<u8>, serde_json::Value) {
    let mut s = Script::client(|_| {});
    s.run(20 * MS);
    let syn = s.recv()[0].seg;
    let cport = syn.src_port;
    let mut sa = from_server(Flags::SYN | Flags::ACK, PISS, syn.seq + 1, cport);
    sa.options.mss = Some(1460);
    sa.options.sack_permitted = true;
    s.send(sa, &[]);
    s.run(20 * MS);
    let req = data_of(&s.recv());
    let cack = syn.seq + 1 + req.len() as u32;
    let chunks: Vec<&[u8]> = resp.chunks(mss).collect();
    for &k in order {
        let d = from_server(Flags::ACK, PISS + 1 + (k * mss) as u32, cack, cport);
        s.send(d, chunks[k]);
        s.run(MS);
    }
    let fin = from_server(
        Flags::ACK | Flags::FIN,
        PISS + 1 + resp.len() as u32,
        cack,
        cport,
    );
    s.send(fin, &[]);
    s.run(50 * MS);
    let g = s.recv();
    assert!(g.iter().any(|x| x.seg.flags.fin()), "the client closes");
    let saved = std::fs::read(s.dir.join("saved")).unwrap_or_default();
    let sum = s.finish();
    (saved, sum)
}

fn response(b: &[u8]) -> Vec<u8> {
    let mut r = format!("HTTP/1.0 200 OK\r\nContent-Length: {}\r\n\r\n", b.len()).into_bytes();
    r.extend_from_slice(b);
    r
}

#[test]
fn the_client_saves_the_body_byte_exact() {
    let b = body(20_000);
    let r = response(&b);
    let n = r.len().div_ceil(1000);
    let (saved, sum) = client_fetch(&r, 1000, &(0..n).collect::<Vec<_>>());
    assert_eq!(saved, b);
    let c = &sum["endpoint"]["connections"][0];
    assert_eq!(c["status"], 200);
    assert_eq!(c["complete"], true, "{c}");
    assert!(sum["violations"].as_array().unwrap().is_empty(), "{sum}");
}

#[test]
fn the_client_reassembles_reordered_segments() {
    let b = body(9_000);
    let r = response(&b);
    let n = r.len().div_ceil(1000);
    // Every pair swapped, and the first segment last.
    let mut order: Vec<usize> = (1..n).collect();
    for k in (0..order.len() - 1).step_by(2) {
        order.swap(k, k + 1);
    }
    order.push(0);
    let (saved, _) = client_fetch(&r, 1000, &order);
    assert_eq!(saved, b);
}

#[test]
fn the_client_reports_a_short_body() {
    let b = body(5_000);
    let mut r = response(&b);
    r.truncate(r.len() - 100);
    let n = r.len().div_ceil(1000);
    let (_, sum) = client_fetch(&r, 1000, &(0..n).collect::<Vec<_>>());
    let c = &sum["endpoint"]["connections"][0];
    assert_eq!(c["complete"], false);
    assert_eq!(c["error"], "4900 of 5000 body bytes arrived");
}

#[test]
fn an_mss_that_does_not_fit_the_mtu_is_refused() {
    let mut cfg = path();
    cfg.flows[0].tcp.mss = 1460;
    let opts: EmuOptions = serde_json::from_value(serde_json::json!({
        "endpoint": {"role": "server", "addr": "10.99.0.1", "port": 8000},
    }))
    .unwrap();
    let err = Emu::new(cfg, &opts).err().unwrap();
    assert_eq!(
        err,
        "flows[0].tcp.mss: 1460 bytes and 52 of headers exceed the MTU 1500"
    );
}

#[test]
fn a_connection_that_gives_up_is_named_in_the_notes() {
    // The server never answers the client's SYN: after `syn_retries`
    // retransmissions the client gives up (give_up.rs), and the endpoint's
    // summary says so as a simulated run's notes do, besides its `reset` row.
    let mut s = Script::client(|c| c.flows[0].tcp.rto.syn_retries = 2);
    s.run(30_000 * MS);
    let syns = s.recv().iter().filter(|g| g.seg.flags.syn()).count();
    assert_eq!(syns, 3, "the SYN and 2 retransmissions");
    let sum = s.finish();
    let notes = sum["endpoint"]["notes"].as_array().unwrap();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(
        notes[0],
        "conn 0: the tcplab client gave up at 7.000 s after 2 timeout retransmissions of its SYN \
         (rto.syn_retries = 2); 0 bytes received, 0 bytes of its own acknowledged"
    );
    let ev = &sum["endpoint"]["events"];
    let reset = EventKind::Reset as u8;
    let rows: Vec<usize> = (0..ev["kind"].as_array().unwrap().len())
        .filter(|&i| ev["kind"][i] == reset)
        .collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(ev["reason"][rows[0]], 2);
}
