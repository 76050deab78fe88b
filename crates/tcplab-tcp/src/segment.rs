//! Wire-level TCP segment as the sans-IO endpoint sees it.
//!
//! Sequence and acknowledgement numbers are the real 32-bit wire values; the
//! endpoint unwraps them to 64-bit stream offsets internally (see `seq.rs`).
//! The payload is not carried: the simulator only needs its length, and a
//! driver for a real network supplies bytes beside the segment.

/// TCP header flags (RFC 9293 §3.1).
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug, Hash)]
pub struct Flags(pub u8);

impl Flags {
    pub const FIN: Flags = Flags(0x01);
    pub const SYN: Flags = Flags(0x02);
    pub const RST: Flags = Flags(0x04);
    pub const PSH: Flags = Flags(0x08);
    pub const ACK: Flags = Flags(0x10);
    pub const URG: Flags = Flags(0x20);
    pub const ECE: Flags = Flags(0x40);
    pub const CWR: Flags = Flags(0x80);

    #[inline]
    pub fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
    #[inline]
    pub fn syn(self) -> bool {
        self.contains(Flags::SYN)
    }
    #[inline]
    pub fn fin(self) -> bool {
        self.contains(Flags::FIN)
    }
    #[inline]
    pub fn rst(self) -> bool {
        self.contains(Flags::RST)
    }
    #[inline]
    pub fn ack(self) -> bool {
        self.contains(Flags::ACK)
    }
}

impl std::ops::BitOr for Flags {
    type Output = Flags;
    fn bitor(self, rhs: Flags) -> Flags {
        Flags(self.0 | rhs.0)
    }
}

impl std::ops::BitOrAssign for Flags {
    fn bitor_assign(&mut self, rhs: Flags) {
        self.0 |= rhs.0;
    }
}

/// One SACK block (RFC 2018 §3): `left` is the first sequence number of the
/// block, `right` the sequence number just past its last byte.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq, Hash)]
pub struct SackBlock {
    pub left: u32,
    pub right: u32,
}

/// Maximum SACK blocks one segment can carry (40 option bytes: 2 + 8·4 = 34).
pub const MAX_SACK_BLOCKS: usize = 4;

/// The TCP options tcplab speaks.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq, Hash)]
pub struct TcpOptions {
    /// Maximum segment size (RFC 9293 §3.7.1), SYN only.
    pub mss: Option<u16>,
    /// Window scale shift (RFC 7323 §2), SYN only.
    pub wscale: Option<u8>,
    /// SACK-permitted (RFC 2018 §2), SYN only.
    pub sack_permitted: bool,
    /// Timestamps (RFC 7323 §3): (TSval, TSecr).
    pub timestamps: Option<(u32, u32)>,
    /// SACK blocks (RFC 2018 §3); the first `sack_len` entries are valid.
    /// With DSACK (RFC 2883 §4) the first block may report a duplicate.
    pub sack: [SackBlock; MAX_SACK_BLOCKS],
    pub sack_len: u8,
}

impl TcpOptions {
    #[inline]
    pub fn sack_blocks(&self) -> &[SackBlock] {
        &self.sack[..self.sack_len as usize]
    }

    /// Length in bytes of the encoded options, padded to a multiple of 4,
    /// with the layout `wire::encode_options` writes.
    pub fn encoded_len(&self) -> usize {
        let mut n = 0;
        if self.mss.is_some() {
            n += 4;
        }
        if self.wscale.is_some() {
            n += 4; // NOP + 3-byte option
        }
        if self.timestamps.is_some() {
            n += 12; // NOP NOP + 10-byte option (or SACK-permitted + TS on SYN)
        } else if self.sack_permitted {
            n += 4; // NOP NOP + 2-byte option
        }
        if self.sack_len > 0 {
            n += 4 + 8 * self.sack_len as usize; // NOP NOP + 2 + 8n
        }
        n
    }
}

/// A TCP segment: the header fields and the payload length.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq, Hash)]
pub struct Segment {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: Flags,
    /// Window field as carried on the wire (already right-shifted by the
    /// sender's window scale, RFC 7323 §2.3).
    pub window: u16,
    pub options: TcpOptions,
    pub payload_len: u32,
    /// The ECN field of the IP header that carries the segment (RFC 3168
    /// §5: 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE; `ecn.rs`). Not part of the
    /// TCP header: the sender sets it, the network may change it to CE.
    pub ecn: u8,
}

impl Segment {
    /// TCP header length including options.
    #[inline]
    pub fn header_len(&self) -> usize {
        20 + self.options.encoded_len()
    }

    /// IPv4 datagram length (20-byte IP header, no IP options).
    #[inline]
    pub fn ip_len(&self) -> usize {
        20 + self.header_len() + self.payload_len as usize
    }

    /// Sequence space the segment occupies (payload + SYN + FIN).
    #[inline]
    pub fn seq_len(&self) -> u32 {
        self.payload_len + self.flags.syn() as u32 + self.flags.fin() as u32
    }
}
