//! Streaming reader for classic pcap and pcapng files.
//!
//! A hand parser (≈ 300 lines) rather than the `pcap-parser` crate: tcplab
//! needs only record framing (pcap: 24-byte file header + 16-byte record
//! headers; pcapng: SHB, IDB, EPB, SPB and the obsolete PB, every other block
//! skipped by its length), and a crate would bring `nom` and its macro crates
//! into a workspace that CI builds from scratch on 2 cores.
//!
//! One record is held at a time in a reused buffer, so memory does not grow
//! with the file. A file that ends inside a record is not an error: the
//! reader stops and reports it in [`CaptureReader::truncated_tail`].

use std::io::{self, Read};

/// Longest record accepted. Anything longer is a corrupt length field
/// (pcap snaplens are ≤ 256 KiB; pcapng blocks of that size are absurd).
pub const MAX_RECORD: usize = 16 << 20;

/// Link-layer header types (tcpdump.org/linktypes.html) the decoder knows.
pub mod linktype {
    pub const NULL: u32 = 0;
    pub const ETHERNET: u32 = 1;
    /// OpenBSD's value of DLT_RAW.
    pub const RAW_OPENBSD: u32 = 14;
    pub const RAW: u32 = 101;
    pub const LOOP: u32 = 108;
    pub const LINUX_SLL: u32 = 113;
    pub const IPV4: u32 = 228;
    pub const IPV6: u32 = 229;
    pub const LINUX_SLL2: u32 = 276;
}

/// Why a file cannot be read as a capture at all.
#[derive(Debug)]
pub enum CaptureError {
    /// The first bytes are not a pcap or pcapng magic number.
    NotACapture(String),
    Io(io::Error),
}

impl std::fmt::Display for CaptureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CaptureError::NotACapture(m) => write!(f, "{m}"),
            CaptureError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl From<io::Error> for CaptureError {
    fn from(e: io::Error) -> Self {
        CaptureError::Io(e)
    }
}

/// One captured packet, borrowed from the reader's buffer.
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    /// Capture time in ns since the Unix epoch (or since the file's zero).
    pub ts_ns: u64,
    pub linktype: u32,
    /// Bytes on the wire (may exceed `data.len()` when a snaplen cut it).
    pub orig_len: u32,
    pub data: &'a [u8],
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Format {
    Pcap,
    PcapNg,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Iface {
    linktype: u32,
    /// ns per timestamp unit numerator/denominator: ts_ns = units * mul / div.
    mul: u64,
    div: u64,
}

/// Most runs of equal interface descriptions one pcapng section may hold.
const MAX_IFACE_RUNS: usize = 1 << 16;

/// A section's interfaces, as runs of equal descriptions: a section that
/// repeats one description a billion times costs one entry, and one with more
/// than `MAX_IFACE_RUNS` runs is refused rather than held.
#[derive(Default)]
struct Ifaces {
    /// (first interface id of the run, its description)
    runs: Vec<(u64, Iface)>,
    len: u64,
}

impl Ifaces {
    fn clear(&mut self) {
        self.runs.clear();
        self.len = 0;
    }

    /// Adds the next interface; false if that would exceed `MAX_IFACE_RUNS`.
    fn push(&mut self, iface: Iface) -> bool {
        if self.runs.last().is_none_or(|r| r.1 != iface) {
            if self.runs.len() == MAX_IFACE_RUNS {
                return false;
            }
            self.runs.push((self.len, iface));
        }
        self.len += 1;
        true
    }

    fn get(&self, id: usize) -> Option<Iface> {
        let id = id as u64;
        if id >= self.len {
            return None;
        }
        let k = self.runs.partition_point(|r| r.0 <= id);
        Some(self.runs[k - 1].1)
    }

    fn first(&self) -> Option<Iface> {
        self.runs.first().map(|r| r.1)
    }

    fn len(&self) -> u64 {
        self.len
    }
}

/// Streaming reader over any `Read` (wrap files in a `BufReader`).
pub struct CaptureReader<R: Read> {
    r: R,
    format: Format,
    big_endian: bool,
    /// pcap: file link type and timestamp resolution.
    pcap_iface: Iface,
    /// pcapng: interfaces of the current section.
    ifaces: Ifaces,
    buf: Vec<u8>,
    /// The file ended inside a record (a cut-off last packet).
    pub truncated_tail: bool,
    /// A record header was corrupt (absurd length, bad block): reading
    /// stopped there. The message names the offset and the rule.
    pub corrupt: Option<String>,
    /// Records read.
    pub records: u64,
    /// Byte offset of the next record (for messages).
    offset: u64,
    last_ts: u64,
}

fn read_full<R: Read>(r: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

impl<R: Read> CaptureReader<R> {
    /// Reads the file header. `name` is used in the error message.
    pub fn new(mut r: R, name: &str) -> Result<Self, CaptureError> {
        let mut hdr = [0u8; 24];
        let n = read_full(&mut r, &mut hdr)?;
        let magic_le = u32::from_le_bytes([hdr[0], hdr[1], hdr[2], hdr[3]]);
        let not = |why: &str| CaptureError::NotACapture(format!("{name}: not a capture: {why}"));
        if n < 4 {
            return Err(not(&format!(
                "file is {n} bytes, shorter than a pcap magic number"
            )));
        }
        let mut me = CaptureReader {
            r,
            format: Format::Pcap,
            big_endian: false,
            pcap_iface: Iface {
                linktype: 0,
                mul: 1000,
                div: 1,
            },
            ifaces: Ifaces::default(),
            buf: vec![0u8; 65536],
            truncated_tail: false,
            corrupt: None,
            records: 0,
            offset: 24,
            last_ts: 0,
        };
        match magic_le {
            0xa1b2_c3d4 | 0xa1b2_3c4d | 0xd4c3_b2a1 | 0x4d3c_b2a1 => {
                if n < 24 {
                    return Err(not(&format!("pcap file header is 24 bytes, file has {n}")));
                }
                me.big_endian = matches!(magic_le, 0xd4c3_b2a1 | 0x4d3c_b2a1);
                let nano = matches!(magic_le, 0xa1b2_3c4d | 0x4d3c_b2a1);
                let lt = me.u32_at(&hdr, 20) & 0x0fff_ffff; // upper bits: FCS info
                me.pcap_iface = Iface {
                    linktype: lt,
                    mul: if nano { 1 } else { 1000 },
                    div: 1,
                };
            }
            0x0a0d_0d0a => {
                me.format = Format::PcapNg;
                if n < 12 {
                    return Err(not("pcapng section header block shorter than 12 bytes"));
                }
                let bom = u32::from_le_bytes([hdr[8], hdr[9], hdr[10], hdr[11]]);
                me.big_endian = match bom {
                    0x1a2b_3c4d => false,
                    0x4d3c_2b1a => true,
                    _ => return Err(not("pcapng byte-order magic is not 0x1a2b3c4d")),
                };
                let blen = me.u32_at(&hdr, 4) as usize;
                if !(28..=MAX_RECORD).contains(&blen) || !blen.is_multiple_of(4) {
                    return Err(not(&format!(
                        "pcapng section header length {blen} is not a multiple of 4 in 28..{MAX_RECORD}"
                    )));
                }
                // Skip the rest of the SHB (we read min(n, 24) bytes of it).
                if !me.skip((blen - n.min(24)) as u64)? {
                    me.truncated_tail = true;
                }
                me.offset = blen as u64;
            }
            _ => {
                return Err(not(&format!(
                "magic 0x{magic_le:08x} is neither pcap (a1b2c3d4/a1b23c4d) nor pcapng (0a0d0d0a)"
            )))
            }
        }
        Ok(me)
    }

    #[inline]
    fn u32_at(&self, b: &[u8], i: usize) -> u32 {
        let a = [b[i], b[i + 1], b[i + 2], b[i + 3]];
        if self.big_endian {
            u32::from_be_bytes(a)
        } else {
            u32::from_le_bytes(a)
        }
    }

    #[inline]
    fn u16_at(&self, b: &[u8], i: usize) -> u16 {
        let a = [b[i], b[i + 1]];
        if self.big_endian {
            u16::from_be_bytes(a)
        } else {
            u16::from_le_bytes(a)
        }
    }

    /// Skips `n` bytes; false if the file ended first.
    fn skip(&mut self, n: u64) -> io::Result<bool> {
        let got = io::copy(&mut (&mut self.r).take(n), &mut io::sink())?;
        Ok(got == n)
    }

    /// Reads exactly `len` bytes into the buffer; false if the file ended.
    fn fill(&mut self, len: usize) -> io::Result<bool> {
        if self.buf.len() < len {
            self.buf.resize(len, 0);
        }
        let got = read_full(&mut self.r, &mut self.buf[..len])?;
        Ok(got == len)
    }

    fn corrupt(&mut self, msg: String) -> Option<Record<'_>> {
        self.corrupt = Some(format!("record at byte {}: {msg}", self.offset));
        None
    }

    /// The next packet, or `None` at the end of the file (or at a cut-off or
    /// corrupt record, see `truncated_tail` / `corrupt`).
    pub fn next_record(&mut self) -> io::Result<Option<Record<'_>>> {
        if self.truncated_tail || self.corrupt.is_some() {
            return Ok(None);
        }
        match self.format {
            Format::Pcap => self.next_pcap(),
            Format::PcapNg => self.next_pcapng(),
        }
    }

    fn next_pcap(&mut self) -> io::Result<Option<Record<'_>>> {
        let mut h = [0u8; 16];
        let n = read_full(&mut self.r, &mut h)?;
        if n == 0 {
            return Ok(None);
        }
        if n < 16 {
            self.truncated_tail = true;
            return Ok(None);
        }
        let sec = u64::from(self.u32_at(&h, 0));
        let frac = u64::from(self.u32_at(&h, 4));
        let incl = self.u32_at(&h, 8) as usize;
        let orig = self.u32_at(&h, 12);
        if incl > MAX_RECORD {
            return Ok(self.corrupt(format!(
                "captured length {incl} exceeds the {MAX_RECORD}-byte limit"
            )));
        }
        if !self.fill(incl)? {
            self.truncated_tail = true;
            return Ok(None);
        }
        self.offset += 16 + incl as u64;
        self.records += 1;
        let ts = sec * 1_000_000_000 + frac * self.pcap_iface.mul;
        Ok(Some(Record {
            ts_ns: ts,
            linktype: self.pcap_iface.linktype,
            orig_len: orig.max(incl as u32),
            data: &self.buf[..incl],
        }))
    }

    fn next_pcapng(&mut self) -> io::Result<Option<Record<'_>>> {
        loop {
            let mut h = [0u8; 8];
            let n = read_full(&mut self.r, &mut h)?;
            if n == 0 {
                return Ok(None);
            }
            if n < 8 {
                self.truncated_tail = true;
                return Ok(None);
            }
            let btype = self.u32_at(&h, 0);
            let mut blen = self.u32_at(&h, 4) as usize;
            if btype == 0x0a0d_0d0a {
                // A new section: its byte order may differ.
                let mut bom = [0u8; 4];
                if read_full(&mut self.r, &mut bom)? < 4 {
                    self.truncated_tail = true;
                    return Ok(None);
                }
                self.big_endian = match u32::from_le_bytes(bom) {
                    0x1a2b_3c4d => false,
                    0x4d3c_2b1a => true,
                    _ => {
                        return Ok(self.corrupt(
                            "pcapng section header byte-order magic is not 0x1a2b3c4d".into(),
                        ))
                    }
                };
                blen = self.u32_at(&h, 4) as usize;
                if !(28..=MAX_RECORD).contains(&blen) || !blen.is_multiple_of(4) {
                    return Ok(self.corrupt(format!(
                        "pcapng block length {blen} is not a multiple of 4 in 12..{MAX_RECORD}"
                    )));
                }
                self.ifaces.clear();
                if !self.skip((blen - 12) as u64)? {
                    self.truncated_tail = true;
                    return Ok(None);
                }
                self.offset += blen as u64;
                continue;
            }
            if !(12..=MAX_RECORD).contains(&blen) || !blen.is_multiple_of(4) {
                return Ok(self.corrupt(format!(
                    "pcapng block length {blen} is not a multiple of 4 in 12..{MAX_RECORD}"
                )));
            }
            let body = blen - 8; // includes the trailing length copy
            if !self.fill(body)? {
                self.truncated_tail = true;
                return Ok(None);
            }
            let at = self.offset;
            self.offset += blen as u64;
            let b = &self.buf[..body - 4];
            match btype {
                // Interface Description Block
                1 => {
                    if b.len() < 8 {
                        return Ok(self.corrupt("pcapng interface block shorter than 20".into()));
                    }
                    let lt = u32::from(self.u16_at(b, 0));
                    let (mut mul, mut div) = (1000u64, 1u64); // default 10^-6 s
                                                              // Options: code(2) len(2) value padded to 4.
                    let mut i = 8;
                    while i + 4 <= b.len() {
                        let code = self.u16_at(b, i);
                        let olen = self.u16_at(b, i + 2) as usize;
                        if code == 0 || i + 4 + olen > b.len() {
                            break;
                        }
                        if code == 9 && olen >= 1 {
                            // if_tsresol: 10^-v (msb 0) or 2^-v (msb 1) s per unit
                            let v = b[i + 4];
                            if v & 0x80 == 0 {
                                let e = u32::from(v & 0x7f);
                                if e <= 9 {
                                    mul = 10u64.pow(9 - e);
                                    div = 1;
                                } else if e <= 18 {
                                    mul = 1;
                                    div = 10u64.pow(e - 9);
                                }
                            } else {
                                let e = u32::from(v & 0x7f);
                                if e < 63 {
                                    mul = 1_000_000_000;
                                    div = 1u64 << e;
                                }
                            }
                        }
                        i += 4 + olen.div_ceil(4) * 4;
                    }
                    if !self.ifaces.push(Iface {
                        linktype: lt,
                        mul,
                        div,
                    }) {
                        return Ok(self.corrupt(format!(
                            "pcapng section describes more than {MAX_IFACE_RUNS} interfaces \
                             that differ from the one before"
                        )));
                    }
                }
                // Enhanced Packet Block / obsolete Packet Block
                6 | 2 => {
                    if b.len() < 20 {
                        self.offset = at;
                        return Ok(self.corrupt("pcapng packet block shorter than 32".into()));
                    }
                    let ifid = if btype == 6 {
                        self.u32_at(b, 0) as usize
                    } else {
                        usize::from(self.u16_at(b, 0))
                    };
                    let hi = u64::from(self.u32_at(b, 4));
                    let lo = u64::from(self.u32_at(b, 8));
                    let cap = self.u32_at(b, 12) as usize;
                    let orig = self.u32_at(b, 16);
                    if 20 + cap > b.len() {
                        self.offset = at;
                        return Ok(self.corrupt(format!(
                            "pcapng captured length {cap} runs past its block ({} bytes)",
                            b.len() + 12
                        )));
                    }
                    let Some(iface) = self.ifaces.get(ifid) else {
                        self.offset = at;
                        return Ok(self.corrupt(format!(
                            "pcapng packet names interface {ifid}, the section has {}",
                            self.ifaces.len()
                        )));
                    };
                    let units = (hi << 32) | lo;
                    let ts = if iface.div == 1 {
                        units.saturating_mul(iface.mul)
                    } else {
                        ((u128::from(units) * u128::from(iface.mul)) / u128::from(iface.div)) as u64
                    };
                    self.last_ts = ts;
                    self.records += 1;
                    return Ok(Some(Record {
                        ts_ns: ts,
                        linktype: iface.linktype,
                        orig_len: orig.max(cap as u32),
                        data: &self.buf[20..20 + cap],
                    }));
                }
                // Simple Packet Block: interface 0, no timestamp.
                3 => {
                    if b.len() < 4 {
                        return Ok(
                            self.corrupt("pcapng simple packet block shorter than 16".into())
                        );
                    }
                    let Some(iface) = self.ifaces.first() else {
                        return Ok(self.corrupt(
                            "pcapng simple packet block before any interface block".into(),
                        ));
                    };
                    let orig = self.u32_at(b, 0);
                    let cap = (orig as usize).min(b.len() - 4);
                    self.records += 1;
                    return Ok(Some(Record {
                        ts_ns: self.last_ts,
                        linktype: iface.linktype,
                        orig_len: orig.max(cap as u32),
                        data: &self.buf[4..4 + cap],
                    }));
                }
                _ => {} // statistics, name resolution, custom...: skipped
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pcap(nano: bool, be: bool, lt: u32, recs: &[(u64, &[u8])]) -> Vec<u8> {
        let w32 = |v: u32| if be { v.to_be_bytes() } else { v.to_le_bytes() };
        let w16 = |v: u16| if be { v.to_be_bytes() } else { v.to_le_bytes() };
        let mut f = Vec::new();
        f.extend(w32(if nano { 0xa1b2_3c4d } else { 0xa1b2_c3d4 }));
        f.extend(w16(2));
        f.extend(w16(4));
        f.extend([0; 8]);
        f.extend(w32(65535));
        f.extend(w32(lt));
        for (t, d) in recs {
            let (s, frac) = (t / 1_000_000_000, t % 1_000_000_000);
            f.extend(w32(s as u32));
            f.extend(w32(if nano { frac } else { frac / 1000 } as u32));
            f.extend(w32(d.len() as u32));
            f.extend(w32(d.len() as u32 + 10));
            f.extend(*d);
        }
        f
    }

    #[test]
    fn pcap_both_byte_orders_and_resolutions() {
        for (nano, be) in [(false, false), (true, false), (false, true), (true, true)] {
            let f = pcap(
                nano,
                be,
                1,
                &[(1_500_000_000, b"abc"), (2_000_001_000, b"")],
            );
            let mut r = CaptureReader::new(&f[..], "x").unwrap();
            let a = r.next_record().unwrap().unwrap();
            assert_eq!(
                (a.ts_ns, a.linktype, a.data, a.orig_len),
                (1_500_000_000, 1, &b"abc"[..], 13)
            );
            let b = r.next_record().unwrap().unwrap();
            assert_eq!(b.ts_ns, 2_000_001_000);
            assert!(r.next_record().unwrap().is_none());
            assert!(!r.truncated_tail);
        }
    }

    #[test]
    fn cut_off_last_record_is_reported() {
        let f = pcap(true, false, 101, &[(1, b"abcdef"), (2, b"ghijkl")]);
        for cut in 1..22 {
            let g = &f[..f.len() - cut];
            let mut r = CaptureReader::new(g, "x").unwrap();
            assert!(r.next_record().unwrap().is_some());
            assert!(r.next_record().unwrap().is_none());
            assert!(r.truncated_tail, "cut {cut}");
        }
    }

    #[test]
    fn not_a_capture() {
        for bad in [
            &b""[..],
            b"hello world, this is text, not a capture file",
            b"\xa1\xb2",
        ] {
            let e = CaptureReader::new(bad, "f.txt").err().unwrap();
            let m = e.to_string();
            assert!(m.starts_with("f.txt: not a capture:"), "{m}");
        }
    }

    #[test]
    fn absurd_length_is_corrupt_not_oom() {
        let mut f = pcap(true, false, 101, &[(1, b"abcdef")]);
        f[24 + 8..24 + 12].copy_from_slice(&0xffff_fff0u32.to_le_bytes());
        let mut r = CaptureReader::new(&f[..], "x").unwrap();
        assert!(r.next_record().unwrap().is_none());
        assert!(r.corrupt.as_deref().unwrap().contains("exceeds"));
    }

    pub(crate) fn pcapng(recs: &[(u64, &[u8])]) -> Vec<u8> {
        let mut f = Vec::new();
        // SHB
        f.extend(0x0a0d_0d0au32.to_le_bytes());
        f.extend(28u32.to_le_bytes());
        f.extend(0x1a2b_3c4du32.to_le_bytes());
        f.extend(1u16.to_le_bytes());
        f.extend(0u16.to_le_bytes());
        f.extend((-1i64).to_le_bytes());
        f.extend(28u32.to_le_bytes());
        // IDB with if_tsresol = 9 (ns)
        f.extend(1u32.to_le_bytes());
        f.extend(32u32.to_le_bytes());
        f.extend(101u16.to_le_bytes());
        f.extend(0u16.to_le_bytes());
        f.extend(0u32.to_le_bytes());
        f.extend(9u16.to_le_bytes());
        f.extend(1u16.to_le_bytes());
        f.extend([9, 0, 0, 0]);
        f.extend([0u8; 4]); // opt_endofopt
        f.extend(32u32.to_le_bytes());
        // an unknown block (name resolution), skipped
        f.extend(4u32.to_le_bytes());
        f.extend(16u32.to_le_bytes());
        f.extend([0u8; 4]);
        f.extend(16u32.to_le_bytes());
        for (t, d) in recs {
            let pad = d.len().div_ceil(4) * 4;
            let blen = (32 + pad) as u32;
            f.extend(6u32.to_le_bytes());
            f.extend(blen.to_le_bytes());
            f.extend(0u32.to_le_bytes());
            f.extend(((t >> 32) as u32).to_le_bytes());
            f.extend((*t as u32).to_le_bytes());
            f.extend((d.len() as u32).to_le_bytes());
            f.extend((d.len() as u32).to_le_bytes());
            f.extend(*d);
            f.extend(vec![0u8; pad - d.len()]);
            f.extend(blen.to_le_bytes());
        }
        f
    }

    /// A pcapng file whose section describes `n` interfaces (linktype
    /// `lt(k)` for the k-th) before the packets of `pcapng(recs)`, the last
    /// packet on interface `n - 1`.
    fn many_interfaces(n: u32, lt: impl Fn(u32) -> u16) -> Vec<u8> {
        let base = pcapng(&[(1, b"x"), (2, b"y")]);
        // SHB (28) + IDB (32) + NRB (16), then the two EPBs (36 each)
        let (head, epbs) = base.split_at(28 + 32 + 16);
        let mut f = head.to_vec();
        for k in 1..n {
            f.extend(1u32.to_le_bytes());
            f.extend(20u32.to_le_bytes());
            f.extend(lt(k).to_le_bytes());
            f.extend([0u8; 6]);
            f.extend(20u32.to_le_bytes());
        }
        f.extend(&epbs[..36]);
        let mut last = epbs[36..].to_vec();
        last[8..12].copy_from_slice(&(n - 1).to_le_bytes());
        f.extend(last);
        f
    }

    #[test]
    fn repeated_interface_descriptions_cost_one_entry() {
        let n = 200_000;
        let f = many_interfaces(n, |_| 101);
        let mut r = CaptureReader::new(&f[..], "x").unwrap();
        assert_eq!(r.next_record().unwrap().unwrap().data, b"x");
        let b = r.next_record().unwrap().unwrap();
        // µs resolution (no if_tsresol) on interface n - 1
        assert_eq!((b.data, b.ts_ns, b.linktype), (&b"y"[..], 2_000, 101));
        assert_eq!((r.ifaces.runs.len(), r.ifaces.len()), (2, u64::from(n)));
        assert!(r.corrupt.is_none());
        // Alternating descriptions: each is a run, and too many are refused.
        let f = many_interfaces(MAX_IFACE_RUNS as u32 + 10, |k| 101 + (k % 2) as u16);
        let mut r = CaptureReader::new(&f[..], "x").unwrap();
        assert!(r.next_record().unwrap().is_none());
        let msg = r.corrupt.as_deref().unwrap();
        assert!(msg.contains("more than 65536 interfaces"), "{msg}");
    }

    #[test]
    fn pcapng_reads_epb_with_ns_resolution() {
        let f = pcapng(&[(5_000_000_123, b"hello"), (6_000_000_000, b"")]);
        let mut r = CaptureReader::new(&f[..], "x").unwrap();
        let a = r.next_record().unwrap().unwrap();
        assert_eq!(
            (a.ts_ns, a.linktype, a.data),
            (5_000_000_123, 101, &b"hello"[..])
        );
        let b = r.next_record().unwrap().unwrap();
        assert_eq!(b.ts_ns, 6_000_000_000);
        assert!(r.next_record().unwrap().is_none());
        assert!(!r.truncated_tail && r.corrupt.is_none());
        let cut = &f[..f.len() - 3];
        let mut r = CaptureReader::new(cut, "x").unwrap();
        assert!(r.next_record().unwrap().is_some());
        assert!(r.next_record().unwrap().is_none());
        assert!(r.truncated_tail);
    }
}
