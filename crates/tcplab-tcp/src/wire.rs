//! TCP header wire format: encoding, decoding and the Internet checksum.
//!
//! The simulator itself never needs bytes; this module exists for the pcap
//! writer, for a future driver on a real network, and for round-trip tests.
//!
//! Options are laid out the way Linux lays them out (`tcp_options_write`):
//!
//! ```text
//! MSS                      02 04 mm mm
//! SACK-permitted + TS      04 02 08 0a <TSval> <TSecr>        (both present)
//! TS only                  01 01 08 0a <TSval> <TSecr>
//! SACK-permitted only      01 01 04 02
//! window scale             01 03 03 ss
//! SACK blocks              01 01 05 (2+8n) <left right>...
//! ```
//!
//! Every item is a multiple of four bytes, so no trailing padding is needed
//! and the total is exactly [`TcpOptions::encoded_len`].

use crate::segment::{Flags, SackBlock, Segment, TcpOptions, MAX_SACK_BLOCKS};

/// Length of a TCP header without options.
pub const TCP_HEADER_MIN: usize = 20;
/// Maximum option bytes a TCP header can carry (data offset is 4 bits).
pub const TCP_OPTIONS_MAX: usize = 40;

const OPT_EOL: u8 = 0;
const OPT_NOP: u8 = 1;
const OPT_MSS: u8 = 2;
const OPT_WSCALE: u8 = 3;
const OPT_SACK_PERM: u8 = 4;
const OPT_SACK: u8 = 5;
const OPT_TIMESTAMPS: u8 = 8;

/// IP protocol number of TCP.
pub const IPPROTO_TCP: u8 = 6;
/// IP protocol number of UDP.
pub const IPPROTO_UDP: u8 = 17;

/// Why a TCP header could not be decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    /// The buffer is shorter than the header claims (`needed` bytes).
    Truncated { needed: usize, have: usize },
    /// Data offset below 5 words.
    BadDataOffset(u8),
    /// An option at byte `offset` of the header has a length byte that is
    /// missing, wrong for its kind, or runs past the end of the header.
    MalformedOption { kind: u8, offset: usize },
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            WireError::Truncated { needed, have } => {
                write!(f, "TCP header truncated: need {needed} bytes, have {have}")
            }
            WireError::BadDataOffset(off) => write!(f, "TCP data offset {off} < 5"),
            WireError::MalformedOption { kind, offset } => {
                write!(
                    f,
                    "malformed TCP option kind {kind} at header offset {offset}"
                )
            }
        }
    }
}

impl std::error::Error for WireError {}

/// Writes the options of `opts` into `buf` and returns the number of bytes
/// written, which is always `opts.encoded_len()`.
///
/// # Panics
/// If `buf` is shorter than `opts.encoded_len()`.
pub fn encode_options(opts: &TcpOptions, buf: &mut [u8]) -> usize {
    let total = opts.encoded_len();
    let out = &mut buf[..total];
    let mut i = 0;

    if let Some(mss) = opts.mss {
        out[i] = OPT_MSS;
        out[i + 1] = 4;
        out[i + 2..i + 4].copy_from_slice(&mss.to_be_bytes());
        i += 4;
    }

    if let Some((tsval, tsecr)) = opts.timestamps {
        if opts.sack_permitted {
            out[i] = OPT_SACK_PERM;
            out[i + 1] = 2;
        } else {
            out[i] = OPT_NOP;
            out[i + 1] = OPT_NOP;
        }
        out[i + 2] = OPT_TIMESTAMPS;
        out[i + 3] = 10;
        out[i + 4..i + 8].copy_from_slice(&tsval.to_be_bytes());
        out[i + 8..i + 12].copy_from_slice(&tsecr.to_be_bytes());
        i += 12;
    } else if opts.sack_permitted {
        out[i..i + 4].copy_from_slice(&[OPT_NOP, OPT_NOP, OPT_SACK_PERM, 2]);
        i += 4;
    }

    if let Some(shift) = opts.wscale {
        out[i..i + 4].copy_from_slice(&[OPT_NOP, OPT_WSCALE, 3, shift]);
        i += 4;
    }

    let blocks = opts.sack_blocks();
    if !blocks.is_empty() {
        // At most 4 blocks, so the length fits in a byte (2 + 32 = 34).
        let len = 2 + 8 * blocks.len();
        out[i..i + 4].copy_from_slice(&[OPT_NOP, OPT_NOP, OPT_SACK, len as u8]);
        i += 4;
        for b in blocks {
            out[i..i + 4].copy_from_slice(&b.left.to_be_bytes());
            out[i + 4..i + 8].copy_from_slice(&b.right.to_be_bytes());
            i += 8;
        }
    }

    debug_assert_eq!(i, total, "encode_options disagrees with encoded_len");
    total
}

/// Writes the TCP header of `seg` (20 bytes plus options) into `buf` and
/// returns its length, `seg.header_len()`. The data offset is set from the
/// option length; the checksum and urgent pointer fields are zero.
///
/// # Panics
/// If the options need more than 40 bytes (they cannot be expressed in the
/// 4-bit data offset), or if `buf` is shorter than `seg.header_len()`.
pub fn encode_tcp_header(seg: &Segment, buf: &mut [u8]) -> usize {
    let opt_len = seg.options.encoded_len();
    assert!(
        opt_len <= TCP_OPTIONS_MAX,
        "TCP options need {opt_len} bytes, at most {TCP_OPTIONS_MAX} fit"
    );
    let hlen = TCP_HEADER_MIN + opt_len;
    let h = &mut buf[..hlen];
    h[0..2].copy_from_slice(&seg.src_port.to_be_bytes());
    h[2..4].copy_from_slice(&seg.dst_port.to_be_bytes());
    h[4..8].copy_from_slice(&seg.seq.to_be_bytes());
    h[8..12].copy_from_slice(&seg.ack.to_be_bytes());
    h[12] = ((hlen / 4) as u8) << 4;
    h[13] = seg.flags.0;
    h[14..16].copy_from_slice(&seg.window.to_be_bytes());
    h[16..20].fill(0); // checksum, urgent pointer
    encode_options(&seg.options, &mut h[TCP_HEADER_MIN..]);
    hlen
}

/// Parses a TCP header (with options) from the start of `buf`.
///
/// `buf` is taken to be the whole TCP segment, so the returned segment's
/// `payload_len` is `buf.len()` minus the header length (0 if `buf` holds
/// only the header). Unknown options are skipped; EOL ends option parsing.
/// SACK blocks beyond [`MAX_SACK_BLOCKS`] cannot occur in 40 option bytes
/// and are reported as malformed.
pub fn decode_tcp_header(buf: &[u8]) -> Result<(Segment, usize), WireError> {
    if buf.len() < TCP_HEADER_MIN {
        return Err(WireError::Truncated {
            needed: TCP_HEADER_MIN,
            have: buf.len(),
        });
    }
    let data_offset = buf[12] >> 4;
    if data_offset < 5 {
        return Err(WireError::BadDataOffset(data_offset));
    }
    let hlen = data_offset as usize * 4;
    if buf.len() < hlen {
        return Err(WireError::Truncated {
            needed: hlen,
            have: buf.len(),
        });
    }
    let be16 = |i: usize| u16::from_be_bytes([buf[i], buf[i + 1]]);
    let be32 = |i: usize| u32::from_be_bytes([buf[i], buf[i + 1], buf[i + 2], buf[i + 3]]);

    let mut seg = Segment {
        src_port: be16(0),
        dst_port: be16(2),
        seq: be32(4),
        ack: be32(8),
        flags: Flags(buf[13]),
        window: be16(14),
        options: TcpOptions::default(),
        payload_len: (buf.len() - hlen) as u32,
        ecn: 0,
    };

    let mut i = TCP_HEADER_MIN;
    while i < hlen {
        let kind = buf[i];
        match kind {
            OPT_EOL => break,
            OPT_NOP => {
                i += 1;
                continue;
            }
            _ => {}
        }
        let malformed = WireError::MalformedOption { kind, offset: i };
        if i + 1 >= hlen {
            return Err(malformed);
        }
        let len = buf[i + 1] as usize;
        if len < 2 || i + len > hlen {
            return Err(malformed);
        }
        let opts = &mut seg.options;
        match kind {
            OPT_MSS => {
                if len != 4 {
                    return Err(malformed);
                }
                opts.mss = Some(be16(i + 2));
            }
            OPT_WSCALE => {
                if len != 3 {
                    return Err(malformed);
                }
                opts.wscale = Some(buf[i + 2]);
            }
            OPT_SACK_PERM => {
                if len != 2 {
                    return Err(malformed);
                }
                opts.sack_permitted = true;
            }
            OPT_TIMESTAMPS => {
                if len != 10 {
                    return Err(malformed);
                }
                opts.timestamps = Some((be32(i + 2), be32(i + 6)));
            }
            OPT_SACK => {
                let n = (len - 2) / 8;
                if len < 10 || !(len - 2).is_multiple_of(8) || n > MAX_SACK_BLOCKS {
                    return Err(malformed);
                }
                for k in 0..n {
                    let at = i + 2 + 8 * k;
                    opts.sack[k] = SackBlock {
                        left: be32(at),
                        right: be32(at + 4),
                    };
                }
                for b in &mut opts.sack[n..] {
                    *b = SackBlock::default();
                }
                opts.sack_len = n as u8;
            }
            _ => {} // unknown option: skip by its length
        }
        i += len;
    }
    Ok((seg, hlen))
}

/// Incremental RFC 1071 Internet checksum over a byte stream.
///
/// Bytes are summed as big-endian 16-bit words; data may be fed in pieces of
/// any length (an odd trailing byte is carried into the next piece).
#[derive(Clone, Copy, Debug, Default)]
pub struct Checksum {
    sum: u64,
    /// High byte of a word whose low byte has not arrived yet.
    pending: Option<u8>,
}

impl Checksum {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds bytes to the sum.
    pub fn add_bytes(&mut self, mut data: &[u8]) {
        if let Some(hi) = self.pending.take() {
            match data.split_first() {
                Some((&lo, rest)) => {
                    self.sum += u64::from(u16::from_be_bytes([hi, lo]));
                    data = rest;
                }
                None => {
                    self.pending = Some(hi);
                    return;
                }
            }
        }
        let mut words = data.chunks_exact(2);
        for w in &mut words {
            self.sum += u64::from(u16::from_be_bytes([w[0], w[1]]));
        }
        if let [last] = words.remainder() {
            self.pending = Some(*last);
        }
    }

    /// Adds one big-endian 16-bit word (must be word-aligned in the stream).
    pub fn add_u16(&mut self, v: u16) {
        debug_assert!(self.pending.is_none(), "add_u16 on an odd offset");
        self.sum += u64::from(v);
    }

    /// Adds the IPv4 pseudo-header of RFC 9293 §3.1 / RFC 768.
    pub fn add_ipv4_pseudo_header(&mut self, src: [u8; 4], dst: [u8; 4], proto: u8, len: u16) {
        self.add_bytes(&src);
        self.add_bytes(&dst);
        self.add_u16(u16::from(proto));
        self.add_u16(len);
    }

    /// The one's complement of the one's complement sum, ready to be stored
    /// big-endian in a checksum field.
    pub fn finish(self) -> u16 {
        let mut sum = self.sum;
        if let Some(hi) = self.pending {
            sum += u64::from(hi) << 8; // pad with a zero byte
        }
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        !(sum as u16)
    }
}

/// RFC 1071 checksum of a whole byte slice (e.g. an IPv4 header whose
/// checksum field is zero).
pub fn internet_checksum(data: &[u8]) -> u16 {
    let mut c = Checksum::new();
    c.add_bytes(data);
    c.finish()
}

/// TCP checksum over the IPv4 pseudo-header, `tcp_header` (checksum field
/// zero) and `payload`. Store the result big-endian at header bytes 16..18.
pub fn tcp_checksum(src: [u8; 4], dst: [u8; 4], tcp_header: &[u8], payload: &[u8]) -> u16 {
    let tcp_len = tcp_header.len() + payload.len();
    debug_assert!(tcp_len <= usize::from(u16::MAX));
    let mut c = Checksum::new();
    c.add_ipv4_pseudo_header(src, dst, IPPROTO_TCP, tcp_len as u16);
    c.add_bytes(tcp_header);
    c.add_bytes(payload);
    c.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sack(blocks: &[(u32, u32)]) -> ([SackBlock; MAX_SACK_BLOCKS], u8) {
        let mut arr = [SackBlock::default(); MAX_SACK_BLOCKS];
        for (slot, &(left, right)) in arr.iter_mut().zip(blocks) {
            *slot = SackBlock { left, right };
        }
        (arr, blocks.len() as u8)
    }

    fn round_trip(seg: &Segment) -> Vec<u8> {
        let mut buf = [0u8; 60];
        let n = encode_tcp_header(seg, &mut buf);
        assert_eq!(n, seg.header_len());
        assert_eq!(n % 4, 0);
        assert_eq!(usize::from(buf[12] >> 4) * 4, n);
        // Decode header + payload-length worth of bytes.
        let mut wire = buf[..n].to_vec();
        wire.resize(n + seg.payload_len as usize, 0);
        let (back, hlen) = decode_tcp_header(&wire).unwrap();
        assert_eq!(hlen, n);
        assert_eq!(&back, seg);
        buf[..n].to_vec()
    }

    #[test]
    fn syn_linux_layout() {
        let seg = Segment {
            src_port: 40000,
            dst_port: 5001,
            seq: 0x1122_3344,
            ack: 0,
            flags: Flags::SYN,
            window: 64240,
            options: TcpOptions {
                mss: Some(1460),
                wscale: Some(7),
                sack_permitted: true,
                timestamps: Some((0xdead_beef, 0)),
                ..Default::default()
            },
            payload_len: 0,
            ecn: 0,
        };
        let hdr = round_trip(&seg);
        assert_eq!(hdr.len(), 40);
        // Exactly what a Linux SYN carries.
        assert_eq!(
            &hdr[20..],
            &[
                2, 4, 0x05, 0xb4, // MSS 1460
                4, 2, 8, 10, // SACK-permitted, TS kind/len
                0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 0, // TSval, TSecr
                1, 3, 3, 7, // NOP, WS 7
            ]
        );
        assert_eq!(hdr[12], 0xa0);
        assert_eq!(hdr[13], 0x02);
    }

    #[test]
    fn data_with_timestamps_only() {
        let seg = Segment {
            src_port: 1,
            dst_port: 2,
            seq: 0xffff_fff0,
            ack: 77,
            flags: Flags::ACK | Flags::PSH,
            window: 501,
            options: TcpOptions {
                timestamps: Some((123_456, 654_321)),
                ..Default::default()
            },
            payload_len: 1448,
            ecn: 0,
        };
        let hdr = round_trip(&seg);
        assert_eq!(hdr.len(), 32);
        assert_eq!(&hdr[20..24], &[1, 1, 8, 10]);
    }

    #[test]
    fn sack_perm_only_and_ws_only() {
        let seg = Segment {
            flags: Flags::SYN | Flags::ACK,
            options: TcpOptions {
                mss: Some(536),
                sack_permitted: true,
                wscale: Some(14),
                ..Default::default()
            },
            ..Default::default()
        };
        let hdr = round_trip(&seg);
        assert_eq!(&hdr[20..], &[2, 4, 2, 24, 1, 1, 4, 2, 1, 3, 3, 14]);
    }

    #[test]
    fn ack_with_three_sack_blocks_and_ts() {
        let (blocks, n) = sack(&[(1000, 2000), (3000, 4000), (0xffff_ff00, 0x0000_0100)]);
        let seg = Segment {
            src_port: 5001,
            dst_port: 40000,
            seq: 1,
            ack: 900,
            flags: Flags::ACK,
            window: 1000,
            options: TcpOptions {
                timestamps: Some((5, 6)),
                sack: blocks,
                sack_len: n,
                ..Default::default()
            },
            payload_len: 0,
            ecn: 0,
        };
        let hdr = round_trip(&seg);
        assert_eq!(hdr.len(), 60); // the maximum header
        assert_eq!(&hdr[32..36], &[1, 1, 5, 26]);
    }

    #[test]
    fn ack_with_four_sack_blocks_no_ts() {
        let (blocks, n) = sack(&[(10, 20), (30, 40), (50, 60), (70, 80)]);
        let seg = Segment {
            flags: Flags::ACK,
            ack: 5,
            options: TcpOptions {
                sack: blocks,
                sack_len: n,
                ..Default::default()
            },
            ..Default::default()
        };
        let hdr = round_trip(&seg);
        assert_eq!(hdr.len(), 56);
        assert_eq!(&hdr[20..24], &[1, 1, 5, 34]);
    }

    #[test]
    fn decode_skips_unknown_and_stops_at_eol() {
        let mut h = [0u8; 32];
        h[12] = 8 << 4;
        // unknown kind 30 (MPTCP) len 4, MSS, EOL, then garbage.
        h[20..32].copy_from_slice(&[30, 4, 0xaa, 0xbb, 2, 4, 1, 0, 0, 0xff, 0xff, 0xff]);
        let (seg, hlen) = decode_tcp_header(&h).unwrap();
        assert_eq!(hlen, 32);
        assert_eq!(seg.options.mss, Some(256));
        assert_eq!(seg.options.timestamps, None);
    }

    #[test]
    fn decode_rejects_malformed() {
        let mut h = [0u8; 24];
        h[12] = 6 << 4;
        h[20..24].copy_from_slice(&[2, 3, 0, 0]); // MSS with len 3
        assert_eq!(
            decode_tcp_header(&h),
            Err(WireError::MalformedOption {
                kind: 2,
                offset: 20
            })
        );
        h[20..24].copy_from_slice(&[1, 1, 8, 10]); // TS runs past the header
        assert_eq!(
            decode_tcp_header(&h),
            Err(WireError::MalformedOption {
                kind: 8,
                offset: 22
            })
        );
        h[20..24].copy_from_slice(&[1, 1, 1, 99]); // kind without length byte
        assert_eq!(
            decode_tcp_header(&h),
            Err(WireError::MalformedOption {
                kind: 99,
                offset: 23
            })
        );
        h[20..24].copy_from_slice(&[99, 0, 0, 0]); // length < 2
        assert!(decode_tcp_header(&h).is_err());
        h[20..24].copy_from_slice(&[5, 4, 0, 0]); // SACK with no block
        assert!(decode_tcp_header(&h).is_err());
        h[12] = 4 << 4;
        assert_eq!(decode_tcp_header(&h), Err(WireError::BadDataOffset(4)));
        h[12] = 7 << 4;
        assert_eq!(
            decode_tcp_header(&h),
            Err(WireError::Truncated {
                needed: 28,
                have: 24
            })
        );
        assert!(decode_tcp_header(&h[..19]).is_err());
    }

    /// Known vector, computed independently of this code:
    ///
    /// ```python
    /// import struct
    /// def csum(b):
    ///     if len(b) % 2: b += b"\0"
    ///     s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    ///     while s >> 16: s = (s & 0xffff) + (s >> 16)
    ///     return ~s & 0xffff
    /// src, dst = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])
    /// tcp = bytes.fromhex("9c40 1389 11223344 00000000 a002 faf0 0000 0000"
    ///                     "020405b4 0402080a deadbeef 00000000 01030307")
    /// pseudo = src + dst + bytes([0, 6]) + struct.pack("!H", len(tcp))
    /// hex(csum(pseudo + tcp))                       # -> 0xa73f
    /// # with payload b"hello" after the same header bytes but flags
    /// # PSH|ACK (0x18), ack 0x55667788, no options (data offset 5):
    /// tcp2 = bytes.fromhex("9c40 1389 11223345 55667788 5018 faf0 0000 0000")
    /// pseudo2 = src + dst + bytes([0, 6]) + struct.pack("!H", len(tcp2) + 5)
    /// hex(csum(pseudo2 + tcp2 + b"hello"))          # -> 0x9be2
    /// ```
    ///
    /// Both packets (with "hello" as the second one's payload) were also
    /// written to a pcap by hand and tshark 4.0 reported
    /// `Checksum: 0xa73f [correct]` and `Checksum: 0x9be2 [correct]`.
    #[test]
    fn checksum_known_vectors() {
        let src = [10, 0, 0, 1];
        let dst = [10, 0, 0, 2];
        let syn = Segment {
            src_port: 40000,
            dst_port: 5001,
            seq: 0x1122_3344,
            ack: 0,
            flags: Flags::SYN,
            window: 64240,
            options: TcpOptions {
                mss: Some(1460),
                wscale: Some(7),
                sack_permitted: true,
                timestamps: Some((0xdead_beef, 0)),
                ..Default::default()
            },
            payload_len: 0,
            ecn: 0,
        };
        let mut buf = [0u8; 60];
        let n = encode_tcp_header(&syn, &mut buf);
        assert_eq!(tcp_checksum(src, dst, &buf[..n], &[]), 0xa73f);

        let data = Segment {
            src_port: 40000,
            dst_port: 5001,
            seq: 0x1122_3345,
            ack: 0x5566_7788,
            flags: Flags::PSH | Flags::ACK,
            window: 64240,
            options: TcpOptions::default(),
            payload_len: 5,
            ecn: 0,
        };
        let n = encode_tcp_header(&data, &mut buf);
        let c = tcp_checksum(src, dst, &buf[..n], b"hello");
        assert_eq!(c, 0x9be2);

        // Verifying: the sum over a packet with its checksum filled in is 0.
        buf[16..18].copy_from_slice(&c.to_be_bytes());
        let mut v = Checksum::new();
        v.add_ipv4_pseudo_header(src, dst, IPPROTO_TCP, (n + 5) as u16);
        v.add_bytes(&buf[..n]);
        v.add_bytes(b"hello");
        assert_eq!(v.finish(), 0);
    }

    #[test]
    fn checksum_odd_pieces_match_whole() {
        let data: Vec<u8> = (0u32..301).map(|i| (i * 37 + 11) as u8).collect();
        let whole = internet_checksum(&data);
        for split in [0, 1, 2, 3, 150, 151, 300, 301] {
            let mut c = Checksum::new();
            c.add_bytes(&data[..split]);
            c.add_bytes(&[]);
            c.add_bytes(&data[split..]);
            assert_eq!(c.finish(), whole, "split at {split}");
        }
        // RFC 1071 §3 example bytes: 00 01 f2 03 f4 f5 f6 f7 sum to 0xddf2.
        assert_eq!(
            internet_checksum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]),
            !0xddf2
        );
    }
}
