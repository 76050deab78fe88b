//! In-memory capture builder for tests, the fuzz driver and examples:
//! classic pcap (ns timestamps, LINKTYPE_RAW) of IPv4/TCP packets whose
//! headers are encoded by `tcplab_tcp::wire`.

use tcplab_tcp::segment::{Flags, Segment, TcpOptions};
use tcplab_tcp::wire::{encode_tcp_header, internet_checksum};
use tcplab_tcp::Time;

/// A pcap file being built.
pub struct PcapBuilder {
    pub bytes: Vec<u8>,
    ip_id: u16,
}

impl Default for PcapBuilder {
    fn default() -> Self {
        Self::new(101)
    }
}

impl PcapBuilder {
    /// A file with link type `linktype` (101: raw IP).
    pub fn new(linktype: u32) -> Self {
        let mut b = Vec::with_capacity(1 << 16);
        b.extend(0xa1b2_3c4du32.to_le_bytes());
        b.extend(2u16.to_le_bytes());
        b.extend(4u16.to_le_bytes());
        b.extend([0u8; 8]);
        b.extend(65535u32.to_le_bytes());
        b.extend(linktype.to_le_bytes());
        PcapBuilder { bytes: b, ip_id: 0 }
    }

    /// Appends one record holding `frame` (captured whole).
    pub fn record(&mut self, t: Time, frame: &[u8]) {
        self.bytes
            .extend(((t / 1_000_000_000) as u32).to_le_bytes());
        self.bytes
            .extend(((t % 1_000_000_000) as u32).to_le_bytes());
        self.bytes.extend((frame.len() as u32).to_le_bytes());
        self.bytes.extend((frame.len() as u32).to_le_bytes());
        self.bytes.extend(frame);
    }

    /// Appends an IPv4/TCP packet carrying `seg` (payload zeros, or only the
    /// headers when `headers_only`, as `tcpdump -s` would store it).
    pub fn tcp(&mut self, t: Time, src: [u8; 4], dst: [u8; 4], seg: &Segment) {
        let f = ipv4_tcp(src, dst, self.ip_id, seg, true);
        self.ip_id = self.ip_id.wrapping_add(1);
        self.record(t, &f);
    }
}

/// An IPv4 datagram carrying `seg`; the payload is stored only with
/// `with_payload` (the IP total length always counts it).
pub fn ipv4_tcp(src: [u8; 4], dst: [u8; 4], id: u16, seg: &Segment, with_payload: bool) -> Vec<u8> {
    let mut tcp = [0u8; 60];
    let h = encode_tcp_header(seg, &mut tcp);
    let total = 20 + h + seg.payload_len as usize;
    let mut p = vec![0x45, 0, (total >> 8) as u8, total as u8];
    p.extend(id.to_be_bytes());
    p.extend([0x40, 0, 64, 6, 0, 0]);
    p.extend(src);
    p.extend(dst);
    let c = internet_checksum(&p[..20]);
    p[10..12].copy_from_slice(&c.to_be_bytes());
    p.extend(&tcp[..h]);
    if with_payload {
        p.resize(total, 0);
    }
    p
}

/// A segment with the usual fields.
pub fn seg(sport: u16, dport: u16, seq: u32, ack: u32, flags: Flags, len: u32) -> Segment {
    Segment {
        src_port: sport,
        dst_port: dport,
        seq,
        ack,
        flags,
        window: 65535,
        options: TcpOptions::default(),
        payload_len: len,
        ecn: 0,
    }
}

/// A bulk transfer seen at the sender: handshake, `n` full segments each
/// acknowledged after `rtt`, FIN. With `stall_at = Some(k)`, segment k's ACK
/// is delayed by `stall`, the sender's RTO (1 s) fires and it retransmits k;
/// if `spurious`, the late ACK of the original echoes the original's TSval
/// (the original arrived), else segment k was lost and the ACK echoes the
/// retransmission's. Returns the file.
pub fn bulk_sender_side(n: u32, stall_at: Option<u32>, spurious: bool) -> Vec<u8> {
    let (a, b) = ([10, 0, 0, 1], [10, 0, 0, 2]);
    let (sp, dp) = (40000, 80);
    let mss = 1000u32;
    let rtt: Time = 100_000_000;
    let mut w = PcapBuilder::new(101);
    let mut t: Time = 1_000_000_000;
    let ts = |t: Time| (t / 1_000_000) as u32;
    let isn = 0xffff_f000u32; // wraps during the transfer
    let peer_isn = 7u32;
    let opts = |tsval: u32, tsecr: u32| TcpOptions {
        timestamps: Some((tsval, tsecr)),
        ..Default::default()
    };
    let mut syn = seg(sp, dp, isn, 0, Flags::SYN, 0);
    syn.options = TcpOptions {
        mss: Some(mss as u16),
        sack_permitted: true,
        wscale: Some(7),
        timestamps: Some((ts(t), 0)),
        ..Default::default()
    };
    w.tcp(t, a, b, &syn);
    let mut synack = seg(
        dp,
        sp,
        peer_isn,
        isn.wrapping_add(1),
        Flags::SYN | Flags::ACK,
        0,
    );
    synack.options = syn.options;
    synack.options.timestamps = Some((5, ts(t)));
    t += rtt;
    w.tcp(t, b, a, &synack);
    let mut ack = seg(sp, dp, isn.wrapping_add(1), peer_isn + 1, Flags::ACK, 0);
    ack.options = opts(ts(t), 5);
    w.tcp(t, a, b, &ack);
    let seqn = |k: u32| isn.wrapping_add(1 + k * mss);
    for k in 0..n {
        let mut d = seg(sp, dp, seqn(k), peer_isn + 1, Flags::ACK, mss);
        let sent = t;
        d.options = opts(ts(sent), 5);
        w.tcp(t, a, b, &d);
        let mut echo = ts(sent);
        let mut ack_at = sent + rtt;
        if stall_at == Some(k) {
            // RTO fires 1 s after the send: retransmission.
            let rto_t = sent + 1_000_000_000;
            let mut r = d;
            r.options = opts(ts(rto_t), 5);
            w.tcp(rto_t, a, b, &r);
            ack_at = rto_t + if spurious { 50_000_000 } else { rtt };
            if !spurious {
                echo = ts(rto_t);
            }
        }
        let mut ak = seg(dp, sp, 5, seqn(k + 1), Flags::ACK, 0);
        ak.options = opts(5, echo);
        w.tcp(ack_at, b, a, &ak);
        t = ack_at + 1_000_000;
    }
    let mut fin = seg(sp, dp, seqn(n), peer_isn + 1, Flags::FIN | Flags::ACK, 0);
    fin.options = opts(ts(t), 5);
    w.tcp(t, a, b, &fin);
    let mut fin2 = seg(
        dp,
        sp,
        peer_isn + 1,
        seqn(n) + 1,
        Flags::FIN | Flags::ACK,
        0,
    );
    fin2.options = opts(6, ts(t));
    w.tcp(t + rtt, b, a, &fin2);
    let mut last = seg(sp, dp, seqn(n) + 1, peer_isn + 2, Flags::ACK, 0);
    last.options = opts(ts(t + rtt), 6);
    w.tcp(t + rtt, a, b, &last);
    w.bytes
}

/// A random mutation of `base` for fuzzing: bit flips, byte overwrites with
/// boundary values, a truncation, or a 32-bit length-like field overwritten.
pub fn mutate(base: &[u8], rnd: &mut dyn FnMut() -> u64) -> Vec<u8> {
    let mut f = base.to_vec();
    let n = 1 + rnd() % 8;
    for _ in 0..n {
        if f.is_empty() {
            break;
        }
        let at = (rnd() % f.len() as u64) as usize;
        match rnd() % 6 {
            0 => f[at] ^= 1 << (rnd() % 8),
            1 => f[at] = [0u8, 0xff, 0x7f, 0x80, 5, 6][(rnd() % 6) as usize],
            2 => f.truncate(at),
            3 => {
                let v = [0u32, 1, 0xffff_ffff, 0x7fff_ffff, 65536, 40][(rnd() % 6) as usize];
                let end = (at + 4).min(f.len());
                let b = v.to_le_bytes();
                f[at..end].copy_from_slice(&b[..end - at]);
            }
            4 => {
                // duplicate a chunk (repeated records, reordering)
                let len = (rnd() % 200) as usize;
                let end = (at + len).min(f.len());
                let chunk = f[at..end].to_vec();
                let to = (rnd() % f.len() as u64) as usize;
                f.splice(to..to, chunk);
            }
            _ => f[at] = rnd() as u8,
        }
    }
    f
}
