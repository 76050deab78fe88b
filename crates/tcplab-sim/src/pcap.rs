//! Classic pcap writer for simulated traffic.
//!
//! Files use the nanosecond-resolution magic `0xa1b23c4d` (written
//! little-endian; readers detect the byte order from the magic) and
//! `LINKTYPE_RAW` (101): every record is a bare IPv4 datagram.
//!
//! The simulator carries payload lengths, not payload bytes, so payloads are
//! written as zeros. With `snaplen_payload = Some(n)` only the first `n`
//! payload bytes of each packet are stored (`incl_len`), while `orig_len`
//! keeps the full length, exactly like a capture taken with `tcpdump -s`.
//! Checksums are computed over the full (zero) payload, so they are the
//! checksums the real packet would carry: zero bytes add nothing to a one's
//! complement sum, and the length enters through the pseudo-header.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use tcplab_tcp::segment::Segment;
use tcplab_tcp::wire::{
    encode_tcp_header, internet_checksum, Checksum, IPPROTO_TCP, IPPROTO_UDP, TCP_HEADER_MIN,
    TCP_OPTIONS_MAX,
};

/// pcap magic for nanosecond timestamps.
pub const PCAP_MAGIC_NS: u32 = 0xa1b2_3c4d;
/// LINKTYPE_RAW: raw IPv4/IPv6 without a link-layer header.
pub const LINKTYPE_RAW: u32 = 101;

const RECORD_HEADER_LEN: usize = 16;
const IPV4_HEADER_LEN: usize = 20;
const UDP_HEADER_LEN: usize = 8;
const TCP_HEADER_MAX: usize = TCP_HEADER_MIN + TCP_OPTIONS_MAX;
const SCRATCH_LEN: usize = RECORD_HEADER_LEN + IPV4_HEADER_LEN + TCP_HEADER_MAX;
/// Largest IPv4 datagram (total length is a 16-bit field).
const IPV4_MAX_LEN: usize = 65535;
/// Don't Fragment, fragment offset 0.
const IPV4_FLAGS_DF: u16 = 0x4000;

/// Source of payload filler bytes.
static ZEROS: [u8; 4096] = [0; 4096];

/// Records held back until no earlier one can come (`PcapWriter::ordered`).
#[derive(Default)]
struct Reorder {
    /// (time, arrival number, buffer) of each held record, earliest first.
    heap: BinaryHeap<Reverse<(u64, u64, usize)>>,
    /// Record buffers, reused once written (no allocation per packet once
    /// the pool has grown to the number of records in flight).
    bufs: Vec<Vec<u8>>,
    free: Vec<usize>,
    seq: u64,
}

impl Reorder {
    /// A cleared buffer for a record stamped `t_ns`, queued to be written
    /// in time order.
    fn hold(&mut self, t_ns: u64) -> &mut Vec<u8> {
        let i = self.free.pop().unwrap_or_else(|| {
            self.bufs.push(Vec::new());
            self.bufs.len() - 1
        });
        self.heap.push(Reverse((t_ns, self.seq, i)));
        self.seq += 1;
        let buf = &mut self.bufs[i];
        buf.clear();
        buf
    }
}

/// Writes simulated IPv4 TCP/UDP packets to a classic pcap file.
pub struct PcapWriter {
    out: BufWriter<File>,
    snaplen_payload: Option<u32>,
    /// Set for a capture of both directions: a packet is tapped when its
    /// link accepts it, stamped with the time its transmission starts, which
    /// for a queued packet lies ahead; the other direction's packets tapped
    /// meanwhile start earlier. Records are held and written in timestamp
    /// order (ties in tap order) once the simulation has passed their time.
    order: Option<Reorder>,
    /// Record header + IPv4 header + transport header of the packet being
    /// written; reused for every packet.
    scratch: [u8; SCRATCH_LEN],
}

fn invalid(msg: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

impl PcapWriter {
    /// Creates `path` (truncating it) and writes the pcap global header.
    ///
    /// `snaplen_payload` limits how many payload bytes of each packet are
    /// stored; `None` stores every byte.
    pub fn create(path: &Path, snaplen_payload: Option<u32>) -> io::Result<Self> {
        let mut out = BufWriter::new(File::create(path)?);
        // The file's snaplen: the longest record it may contain.
        let snaplen = match snaplen_payload {
            None => IPV4_MAX_LEN as u32,
            Some(n) => n
                .saturating_add((IPV4_HEADER_LEN + TCP_HEADER_MAX) as u32)
                .min(IPV4_MAX_LEN as u32),
        };
        // magic, version 2.4, thiszone = 0, sigfigs = 0, snaplen, link type.
        let mut hdr = [0u8; 24];
        hdr[0..4].copy_from_slice(&PCAP_MAGIC_NS.to_le_bytes());
        hdr[4..6].copy_from_slice(&2u16.to_le_bytes());
        hdr[6..8].copy_from_slice(&4u16.to_le_bytes());
        hdr[16..20].copy_from_slice(&snaplen.to_le_bytes());
        hdr[20..24].copy_from_slice(&LINKTYPE_RAW.to_le_bytes());
        out.write_all(&hdr)?;
        Ok(PcapWriter {
            out,
            snaplen_payload,
            order: None,
            scratch: [0; SCRATCH_LEN],
        })
    }

    /// Write records in timestamp order although they are handed over out of
    /// order (a capture of both directions): each is held until
    /// `release_until` passes its time.
    pub fn ordered(mut self) -> Self {
        self.order = Some(Reorder::default());
        self
    }

    /// Write every held record stamped at or before `now` (the caller
    /// promises no later record is stamped before `now`).
    pub fn release_until(&mut self, now: u64) -> io::Result<()> {
        let Some(o) = self.order.as_mut() else {
            return Ok(());
        };
        while let Some(&Reverse((t, _, i))) = o.heap.peek() {
            if t > now {
                break;
            }
            o.heap.pop();
            self.out.write_all(&o.bufs[i])?;
            o.free.push(i);
        }
        Ok(())
    }

    /// Writes one IPv4/TCP packet carrying `seg` (payload: `seg.payload_len`
    /// zero bytes, truncated to the snaplen) at simulated time `t_ns`.
    pub fn write_tcp(
        &mut self,
        t_ns: u64,
        src: [u8; 4],
        dst: [u8; 4],
        ip_id: u16,
        ttl: u8,
        seg: &Segment,
    ) -> io::Result<()> {
        if seg.options.encoded_len() > TCP_OPTIONS_MAX {
            return Err(invalid("TCP options exceed 40 bytes"));
        }
        let payload_len = seg.payload_len as usize;
        let tcp_hlen = seg.header_len();
        let tcp_len = tcp_hlen + payload_len;
        if IPV4_HEADER_LEN + tcp_len > IPV4_MAX_LEN {
            return Err(invalid("IPv4 datagram longer than 65535 bytes"));
        }

        let l4_at = RECORD_HEADER_LEN + IPV4_HEADER_LEN;
        let tcp = &mut self.scratch[l4_at..l4_at + tcp_hlen];
        encode_tcp_header(seg, tcp);
        let mut sum = Checksum::new();
        sum.add_ipv4_pseudo_header(src, dst, IPPROTO_TCP, tcp_len as u16);
        sum.add_bytes(tcp);
        // The zero payload adds nothing to the sum.
        tcp[16..18].copy_from_slice(&sum.finish().to_be_bytes());

        self.finish_packet(
            t_ns,
            src,
            dst,
            ip_id,
            ttl,
            IPPROTO_TCP,
            tcp_hlen,
            payload_len,
        )
    }

    /// Writes one IPv4/UDP datagram with `payload_len` zero payload bytes
    /// (truncated to the snaplen) at simulated time `t_ns`.
    #[allow(clippy::too_many_arguments)]
    pub fn write_udp(
        &mut self,
        t_ns: u64,
        src: [u8; 4],
        dst: [u8; 4],
        ip_id: u16,
        ttl: u8,
        sport: u16,
        dport: u16,
        payload_len: u32,
    ) -> io::Result<()> {
        let payload_len = payload_len as usize;
        let udp_len = UDP_HEADER_LEN + payload_len;
        if IPV4_HEADER_LEN + udp_len > IPV4_MAX_LEN {
            return Err(invalid("IPv4 datagram longer than 65535 bytes"));
        }

        let l4_at = RECORD_HEADER_LEN + IPV4_HEADER_LEN;
        let udp = &mut self.scratch[l4_at..l4_at + UDP_HEADER_LEN];
        udp[0..2].copy_from_slice(&sport.to_be_bytes());
        udp[2..4].copy_from_slice(&dport.to_be_bytes());
        udp[4..6].copy_from_slice(&(udp_len as u16).to_be_bytes());
        udp[6..8].fill(0);
        let mut sum = Checksum::new();
        sum.add_ipv4_pseudo_header(src, dst, IPPROTO_UDP, udp_len as u16);
        sum.add_bytes(udp);
        // RFC 768: a computed checksum of zero is sent as all ones (zero
        // means "no checksum").
        let csum = match sum.finish() {
            0 => 0xffff,
            c => c,
        };
        udp[6..8].copy_from_slice(&csum.to_be_bytes());

        self.finish_packet(
            t_ns,
            src,
            dst,
            ip_id,
            ttl,
            IPPROTO_UDP,
            UDP_HEADER_LEN,
            payload_len,
        )
    }

    /// Writes one real IP datagram (`ip`, as read from a TUN device) at
    /// `t_ns`; the payload beyond the IP and transport headers is cut to the
    /// snaplen as for simulated packets (`tcplab emu`).
    pub fn write_raw(&mut self, t_ns: u64, ip: &[u8]) -> io::Result<()> {
        if ip.len() > IPV4_MAX_LEN {
            return Err(invalid("IP datagram longer than 65535 bytes"));
        }
        let secs = u32::try_from(t_ns / 1_000_000_000)
            .map_err(|_| invalid("timestamp beyond the pcap 32-bit seconds range"))?;
        let incl = match self.snaplen_payload {
            None => ip.len(),
            Some(n) => ip.len().min(n as usize + raw_headers_len(ip)),
        };
        let mut rec = [0u8; RECORD_HEADER_LEN];
        rec[0..4].copy_from_slice(&secs.to_le_bytes());
        rec[4..8].copy_from_slice(&((t_ns % 1_000_000_000) as u32).to_le_bytes());
        rec[8..12].copy_from_slice(&(incl as u32).to_le_bytes());
        rec[12..16].copy_from_slice(&(ip.len() as u32).to_le_bytes());
        if let Some(o) = self.order.as_mut() {
            let buf = o.hold(t_ns);
            buf.extend_from_slice(&rec);
            buf.extend_from_slice(&ip[..incl]);
            return Ok(());
        }
        self.out.write_all(&rec)?;
        self.out.write_all(&ip[..incl])
    }

    /// Writes every held record and flushes buffered records to the file.
    pub fn flush(&mut self) -> io::Result<()> {
        self.release_until(u64::MAX)?;
        self.out.flush()
    }

    /// Fills in the record and IPv4 headers around the transport header
    /// already in `scratch`, then writes the record and its zero payload.
    #[allow(clippy::too_many_arguments)]
    fn finish_packet(
        &mut self,
        t_ns: u64,
        src: [u8; 4],
        dst: [u8; 4],
        ip_id: u16,
        ttl: u8,
        proto: u8,
        l4_hlen: usize,
        payload_len: usize,
    ) -> io::Result<()> {
        let secs = u32::try_from(t_ns / 1_000_000_000)
            .map_err(|_| invalid("timestamp beyond the pcap 32-bit seconds range"))?;
        let nanos = (t_ns % 1_000_000_000) as u32;
        let ip_len = IPV4_HEADER_LEN + l4_hlen + payload_len;
        let captured = match self.snaplen_payload {
            Some(n) => payload_len.min(n as usize),
            None => payload_len,
        };
        let incl_len = IPV4_HEADER_LEN + l4_hlen + captured;

        let rec = &mut self.scratch[..RECORD_HEADER_LEN];
        rec[0..4].copy_from_slice(&secs.to_le_bytes());
        rec[4..8].copy_from_slice(&nanos.to_le_bytes());
        rec[8..12].copy_from_slice(&(incl_len as u32).to_le_bytes());
        rec[12..16].copy_from_slice(&(ip_len as u32).to_le_bytes());

        let ip = &mut self.scratch[RECORD_HEADER_LEN..RECORD_HEADER_LEN + IPV4_HEADER_LEN];
        ip[0] = 0x45; // version 4, IHL 5
        ip[1] = 0; // DSCP/ECN
        ip[2..4].copy_from_slice(&(ip_len as u16).to_be_bytes());
        ip[4..6].copy_from_slice(&ip_id.to_be_bytes());
        ip[6..8].copy_from_slice(&IPV4_FLAGS_DF.to_be_bytes());
        ip[8] = ttl;
        ip[9] = proto;
        ip[10..12].fill(0);
        ip[12..16].copy_from_slice(&src);
        ip[16..20].copy_from_slice(&dst);
        let csum = internet_checksum(ip);
        ip[10..12].copy_from_slice(&csum.to_be_bytes());

        let headers = RECORD_HEADER_LEN + IPV4_HEADER_LEN + l4_hlen;
        if let Some(o) = self.order.as_mut() {
            let buf = o.hold(t_ns);
            buf.extend_from_slice(&self.scratch[..headers]);
            buf.resize(headers + captured, 0);
            return Ok(());
        }
        self.out.write_all(&self.scratch[..headers])?;
        let mut left = captured;
        while left > 0 {
            let n = left.min(ZEROS.len());
            self.out.write_all(&ZEROS[..n])?;
            left -= n;
        }
        Ok(())
    }
}

/// IPv4 header plus TCP/UDP header length of a raw datagram (what a
/// payload snaplen keeps besides the payload); the whole IP header for
/// other protocols.
fn raw_headers_len(ip: &[u8]) -> usize {
    if ip.len() < IPV4_HEADER_LEN || ip[0] >> 4 != 4 {
        return ip.len().min(40);
    }
    let ihl = (ip[0] & 0x0f) as usize * 4;
    match ip[9] {
        IPPROTO_TCP if ip.len() >= ihl + TCP_HEADER_MIN => ihl + (ip[ihl + 12] >> 4) as usize * 4,
        IPPROTO_UDP => ihl + UDP_HEADER_LEN,
        _ => ihl,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_tcp::segment::{Flags, TcpOptions};

    #[test]
    fn raw_records_keep_the_headers_and_cut_the_payload() {
        let path = tmp("raw.pcap");
        let mut w = PcapWriter::create(&path, Some(2)).unwrap();
        let mut ip = vec![0u8; 20 + 32 + 10];
        ip[0] = 0x45;
        ip[9] = IPPROTO_TCP;
        ip[20 + 12] = 8 << 4; // 32-byte TCP header
        w.write_raw(1_500_000_007, &ip).unwrap();
        w.flush().unwrap();
        let b = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).ok();
        let rec = &b[24..];
        assert_eq!(u32::from_le_bytes(rec[0..4].try_into().unwrap()), 1);
        assert_eq!(
            u32::from_le_bytes(rec[4..8].try_into().unwrap()),
            500_000_007
        );
        assert_eq!(u32::from_le_bytes(rec[8..12].try_into().unwrap()), 54);
        assert_eq!(u32::from_le_bytes(rec[12..16].try_into().unwrap()), 62);
        assert_eq!(rec.len(), 16 + 54);
    }

    fn tmp(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("tcplab-pcap-{}-{name}", std::process::id()))
    }

    #[test]
    fn layout_and_checksums() {
        let path = tmp("unit.pcap");
        let mut w = PcapWriter::create(&path, Some(4)).unwrap();
        let seg = Segment {
            src_port: 1,
            dst_port: 2,
            seq: 3,
            ack: 4,
            flags: Flags::ACK,
            window: 5,
            options: TcpOptions {
                timestamps: Some((6, 7)),
                ..Default::default()
            },
            payload_len: 11,
            ecn: 0,
        };
        let (a, b) = ([10, 0, 0, 1], [10, 0, 0, 2]);
        w.write_tcp(2_000_000_007, a, b, 9, 64, &seg).unwrap();
        w.write_udp(3, a, b, 10, 63, 53, 54, 5).unwrap();
        w.flush().unwrap();
        drop(w);
        let f = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();

        assert_eq!(&f[0..4], &[0x4d, 0x3c, 0xb2, 0xa1]);
        assert_eq!(u32::from_le_bytes(f[20..24].try_into().unwrap()), 101);
        // TCP record: 20 + 32 + min(11, 4) captured of 20 + 32 + 11.
        let r = &f[24..];
        assert_eq!(u32::from_le_bytes(r[0..4].try_into().unwrap()), 2);
        assert_eq!(u32::from_le_bytes(r[4..8].try_into().unwrap()), 7);
        assert_eq!(u32::from_le_bytes(r[8..12].try_into().unwrap()), 56);
        assert_eq!(u32::from_le_bytes(r[12..16].try_into().unwrap()), 63);
        let ip = &r[16..36];
        assert_eq!(internet_checksum(ip), 0);
        assert_eq!(u16::from_be_bytes([ip[2], ip[3]]), 63);
        assert_eq!(&ip[6..10], &[0x40, 0, 64, 6]);
        // Re-verify the TCP checksum over header + materialised payload.
        let tcp = &r[36..68];
        let mut c = Checksum::new();
        c.add_ipv4_pseudo_header(a, b, IPPROTO_TCP, 43);
        c.add_bytes(tcp);
        c.add_bytes(&[0; 11]);
        assert_eq!(c.finish(), 0);

        // UDP record follows the 56 captured bytes.
        let r = &r[16 + 56..];
        assert_eq!(u32::from_le_bytes(r[8..12].try_into().unwrap()), 32);
        assert_eq!(u32::from_le_bytes(r[12..16].try_into().unwrap()), 33);
        let ip = &r[16..36];
        assert_eq!(internet_checksum(ip), 0);
        assert_eq!(ip[9], 17);
        let udp = &r[36..44];
        let mut c = Checksum::new();
        c.add_ipv4_pseudo_header(a, b, IPPROTO_UDP, 13);
        c.add_bytes(udp);
        assert_eq!(c.finish(), 0);
        assert_eq!(r.len(), 16 + 32);
    }

    #[test]
    fn rejects_oversized() {
        let path = tmp("big.pcap");
        let mut w = PcapWriter::create(&path, None).unwrap();
        let mut seg = Segment {
            payload_len: 65_535 - 40,
            ..Default::default()
        };
        assert!(w.write_tcp(0, [0; 4], [0; 4], 0, 1, &seg).is_ok());
        seg.payload_len += 1;
        assert!(w.write_tcp(0, [0; 4], [0; 4], 0, 1, &seg).is_err());
        seg.payload_len = 0;
        seg.options.sack_len = 4;
        seg.options.timestamps = Some((1, 2)); // 12 + 36 > 40 option bytes
        assert!(w.write_tcp(0, [0; 4], [0; 4], 0, 1, &seg).is_err());
        assert!(w
            .write_udp(0, [0; 4], [0; 4], 0, 1, 1, 2, 65_535 - 28 + 1)
            .is_err());
        assert!(w
            .write_udp(0, [0; 4], [0; 4], 0, 1, 1, 2, 65_535 - 28)
            .is_ok());
        drop(w);
        std::fs::remove_file(&path).unwrap();
    }
}
