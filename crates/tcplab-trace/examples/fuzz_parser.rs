//! Mutation fuzzing of the capture parser and analyser: `N` mutated captures
//! (pcap and pcapng, several link types, hand-built RTO patterns) through
//! `analyze_reader`; any panic is caught, counted and its input saved.
//!
//! cargo run -p tcplab-trace --example fuzz_parser -- [N] [SEED]
//! (driven by bench/analyze_fuzz.py)

use std::panic;
use std::time::Instant;

use tcplab_trace::synth::{bulk_sender_side, mutate};
use tcplab_trace::{analyze_reader, Options, Side};

/// Re-frames a raw-IP pcap as pcapng (one IDB, EPBs) for the second format.
fn to_pcapng(pcap: &[u8]) -> Vec<u8> {
    let mut rd = tcplab_trace::CaptureReader::new(pcap, "seed").expect("seed pcap");
    let mut f = Vec::new();
    f.extend(0x0a0d_0d0au32.to_le_bytes());
    f.extend(28u32.to_le_bytes());
    f.extend(0x1a2b_3c4du32.to_le_bytes());
    f.extend([1, 0, 0, 0]);
    f.extend((-1i64).to_le_bytes());
    f.extend(28u32.to_le_bytes());
    f.extend(1u32.to_le_bytes());
    f.extend(20u32.to_le_bytes());
    f.extend(101u16.to_le_bytes());
    f.extend([0u8; 6]);
    f.extend(20u32.to_le_bytes());
    while let Some(r) = rd.next_record().expect("seed") {
        let pad = r.data.len().div_ceil(4) * 4;
        let blen = (32 + pad) as u32;
        f.extend(6u32.to_le_bytes());
        f.extend(blen.to_le_bytes());
        f.extend(0u32.to_le_bytes());
        let us = r.ts_ns / 1000;
        f.extend(((us >> 32) as u32).to_le_bytes());
        f.extend((us as u32).to_le_bytes());
        f.extend((r.data.len() as u32).to_le_bytes());
        f.extend((r.data.len() as u32).to_le_bytes());
        f.extend(r.data);
        f.resize(f.len() + pad - r.data.len(), 0);
        f.extend(blen.to_le_bytes());
    }
    f
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args
        .get(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let mut state: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1) | 1;
    let mut seeds = vec![
        bulk_sender_side(12, Some(4), true),
        bulk_sender_side(6, Some(2), false),
        bulk_sender_side(3, None, false),
    ];
    let ng: Vec<Vec<u8>> = seeds.iter().map(|s| to_pcapng(s)).collect();
    seeds.extend(ng);
    panic::set_hook(Box::new(|_| {}));
    let start = Instant::now();
    let (mut panics, mut errors, mut packets) = (0u64, 0u64, 0u64);
    for i in 0..n {
        let mut rnd = || {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            state.wrapping_mul(0x2545_f491_4f6c_dd1d)
        };
        let base = &seeds[(rnd() % seeds.len() as u64) as usize];
        let input = mutate(base, &mut rnd);
        let res = panic::catch_unwind(|| {
            analyze_reader(
                &input[..],
                "fuzz",
                Options {
                    side: Side::Auto,
                    collect: true,
                    ..Default::default()
                },
            )
        });
        match res {
            Ok(Ok(r)) => packets += r.records,
            Ok(Err(_)) => errors += 1,
            Err(_) => {
                panics += 1;
                let path = std::env::temp_dir().join(format!("tcplab-fuzz-crash-{i}.pcap"));
                let _ = std::fs::write(&path, &input);
                eprintln!("panic on input {i}: saved to {}", path.display());
            }
        }
    }
    println!(
        "{{\"inputs\": {n}, \"panics\": {panics}, \"rejected_not_capture\": {errors}, \"records_parsed\": {packets}, \"wall_s\": {:.1}}}",
        start.elapsed().as_secs_f64()
    );
    std::process::exit(i32::from(panics > 0));
}
