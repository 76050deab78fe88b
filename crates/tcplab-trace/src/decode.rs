//! Link layer → IPv4/IPv6 → TCP header, without copying.
//!
//! The TCP header itself is decoded by `tcplab_tcp::wire::decode_tcp_header`
//! (the same code that round-trips the simulator's pcap writer). The TCP
//! payload length comes from the IP length fields, not from the captured
//! bytes, so snaplen-limited captures (`tcpdump -s 96`) analyse fully.

use tcplab_tcp::segment::Segment;
use tcplab_tcp::wire::{decode_tcp_header, WireError, IPPROTO_TCP, TCP_HEADER_MIN};

use crate::capture::linktype as lt;

/// An IPv4 or IPv6 address (IPv4 in the first 4 bytes, `v6` false).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub struct Addr {
    pub v6: bool,
    pub b: [u8; 16],
}

impl std::fmt::Display for Addr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.v6 {
            write!(f, "{}", std::net::Ipv6Addr::from(self.b))
        } else {
            write!(
                f,
                "{}",
                std::net::Ipv4Addr::new(self.b[0], self.b[1], self.b[2], self.b[3])
            )
        }
    }
}

/// A decoded TCP packet.
#[derive(Clone, Debug)]
pub struct TcpPacket {
    pub src: Addr,
    pub dst: Addr,
    pub seg: Segment,
    /// IPv4 identification (0 for IPv6), to tell network duplicates from
    /// retransmissions.
    pub ip_id: u16,
}

/// Why a packet was not analysed (each is counted).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Skip {
    /// Not IP (ARP, LLDP, ...) or a link type the decoder does not know.
    NotIp,
    /// IP, but not TCP (UDP, ICMP, ...).
    NotTcp,
    /// A non-first IP fragment, or a first fragment (TCP is not reassembled).
    Fragment,
    /// The snaplen or the file cut the packet inside a header.
    Truncated,
    /// IP header inconsistent (version, header length, total length).
    BadIp,
    /// TCP header inconsistent (data offset, options).
    BadTcp,
}

impl Skip {
    pub const ALL: [Skip; 6] = [
        Skip::NotIp,
        Skip::NotTcp,
        Skip::Fragment,
        Skip::Truncated,
        Skip::BadIp,
        Skip::BadTcp,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Skip::NotIp => "not_ip",
            Skip::NotTcp => "not_tcp",
            Skip::Fragment => "ip_fragment",
            Skip::Truncated => "truncated_header",
            Skip::BadIp => "corrupt_ip_header",
            Skip::BadTcp => "corrupt_tcp_header",
        }
    }
}

const ETH_IPV4: u16 = 0x0800;
const ETH_IPV6: u16 = 0x86dd;
const ETH_VLAN: u16 = 0x8100;
const ETH_QINQ: u16 = 0x88a8;
const ETH_QINQ_OLD: u16 = 0x9100;

#[inline]
fn be16(b: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([b[i], b[i + 1]])
}

/// Strips the link layer: the IP datagram (or `Skip`).
fn link(linktype: u32, d: &[u8]) -> Result<&[u8], Skip> {
    match linktype {
        lt::ETHERNET => {
            if d.len() < 14 {
                return Err(Skip::Truncated);
            }
            let mut et = be16(d, 12);
            let mut at = 14;
            // 802.1Q / 802.1ad tags (any depth)
            while matches!(et, ETH_VLAN | ETH_QINQ | ETH_QINQ_OLD) {
                if d.len() < at + 4 {
                    return Err(Skip::Truncated);
                }
                et = be16(d, at + 2);
                at += 4;
            }
            match et {
                ETH_IPV4 | ETH_IPV6 => Ok(&d[at..]),
                _ => Err(Skip::NotIp),
            }
        }
        lt::RAW | lt::RAW_OPENBSD | lt::IPV4 | lt::IPV6 => Ok(d),
        lt::NULL | lt::LOOP => {
            // 4-byte address family in host (NULL) or network (LOOP) order;
            // the IP version nibble decides, as the family values differ by OS.
            if d.len() < 4 {
                return Err(Skip::Truncated);
            }
            Ok(&d[4..])
        }
        lt::LINUX_SLL => {
            if d.len() < 16 {
                return Err(Skip::Truncated);
            }
            match be16(d, 14) {
                ETH_IPV4 | ETH_IPV6 => Ok(&d[16..]),
                _ => Err(Skip::NotIp),
            }
        }
        lt::LINUX_SLL2 => {
            if d.len() < 20 {
                return Err(Skip::Truncated);
            }
            match be16(d, 0) {
                ETH_IPV4 | ETH_IPV6 => Ok(&d[20..]),
                _ => Err(Skip::NotIp),
            }
        }
        _ => Err(Skip::NotIp),
    }
}

/// Decodes one captured frame. `orig_len` is the on-wire length of the
/// frame (used only when an IPv6 jumbogram leaves the length to the link).
pub fn decode(linktype: u32, frame: &[u8]) -> Result<TcpPacket, Skip> {
    let ip = link(linktype, frame)?;
    if ip.is_empty() {
        return Err(Skip::Truncated);
    }
    let (src, dst, ip_id, l4, l4_len) = match ip[0] >> 4 {
        4 => {
            if ip.len() < 20 {
                return Err(Skip::Truncated);
            }
            let ihl = usize::from(ip[0] & 0x0f) * 4;
            let total = usize::from(be16(ip, 2));
            if ihl < 20 || total < ihl {
                return Err(Skip::BadIp);
            }
            if ip[9] != IPPROTO_TCP {
                return Err(Skip::NotTcp);
            }
            let frag = be16(ip, 6);
            if frag & 0x3fff != 0 {
                // MF set or offset ≠ 0
                return Err(Skip::Fragment);
            }
            if ip.len() < ihl {
                return Err(Skip::Truncated);
            }
            let mut s = Addr::default();
            let mut t = Addr::default();
            s.b[..4].copy_from_slice(&ip[12..16]);
            t.b[..4].copy_from_slice(&ip[16..20]);
            (s, t, be16(ip, 4), &ip[ihl..], total - ihl)
        }
        6 => {
            if ip.len() < 40 {
                return Err(Skip::Truncated);
            }
            let plen = usize::from(be16(ip, 4));
            let mut next = ip[6];
            let mut at = 40;
            let mut left = plen;
            // Extension headers (RFC 8200 §4): hop-by-hop, routing,
            // destination options, fragment.
            loop {
                match next {
                    IPPROTO_TCP => break,
                    0 | 43 | 60 => {
                        if ip.len() < at + 2 {
                            return Err(Skip::Truncated);
                        }
                        let hl = (usize::from(ip[at + 1]) + 1) * 8;
                        if hl > left {
                            return Err(Skip::BadIp);
                        }
                        next = ip[at];
                        at += hl;
                        left -= hl;
                    }
                    44 => return Err(Skip::Fragment),
                    _ => return Err(Skip::NotTcp),
                }
            }
            if ip.len() < at {
                return Err(Skip::Truncated);
            }
            let s = Addr {
                v6: true,
                b: ip[8..24].try_into().expect("16 bytes"),
            };
            let t = Addr {
                v6: true,
                b: ip[24..40].try_into().expect("16 bytes"),
            };
            (s, t, 0, &ip[at..], left)
        }
        _ => return Err(Skip::BadIp),
    };
    if l4_len < TCP_HEADER_MIN {
        return Err(Skip::BadTcp);
    }
    if l4.len() < TCP_HEADER_MIN {
        return Err(Skip::Truncated);
    }
    let hlen = usize::from(l4[12] >> 4) * 4;
    if hlen < TCP_HEADER_MIN || hlen > l4_len {
        return Err(Skip::BadTcp);
    }
    if l4.len() < hlen {
        return Err(Skip::Truncated);
    }
    // Decode the header only; the payload length comes from the IP length.
    let (mut seg, _) = decode_tcp_header(&l4[..hlen]).map_err(|e| match e {
        WireError::Truncated { .. } => Skip::Truncated,
        _ => Skip::BadTcp,
    })?;
    seg.payload_len = (l4_len - hlen) as u32;
    Ok(TcpPacket {
        src,
        dst,
        seg,
        ip_id,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use tcplab_tcp::segment::{Flags, TcpOptions};
    use tcplab_tcp::wire::encode_tcp_header;

    /// An IPv4 datagram carrying `seg` (payload zeros).
    pub fn ipv4(src: [u8; 4], dst: [u8; 4], id: u16, seg: &Segment) -> Vec<u8> {
        crate::synth::ipv4_tcp(src, dst, id, seg, true)
    }

    pub fn ipv6(src: [u8; 16], dst: [u8; 16], seg: &Segment, ext: bool) -> Vec<u8> {
        let mut tcp = [0u8; 60];
        let h = encode_tcp_header(seg, &mut tcp);
        let extlen = if ext { 8 } else { 0 };
        let plen = extlen + h + seg.payload_len as usize;
        let mut p = vec![0x60, 0, 0, 0, (plen >> 8) as u8, plen as u8];
        p.push(if ext { 0 } else { 6 });
        p.push(64);
        p.extend(src);
        p.extend(dst);
        if ext {
            p.extend([6, 0, 1, 4, 0, 0, 0, 0]); // hop-by-hop, PadN
        }
        p.extend(&tcp[..h]);
        p.resize(40 + plen, 0);
        p
    }

    fn seg() -> Segment {
        Segment {
            src_port: 1234,
            dst_port: 80,
            seq: 1000,
            ack: 2000,
            flags: Flags::ACK,
            window: 100,
            options: TcpOptions {
                timestamps: Some((7, 8)),
                ..Default::default()
            },
            payload_len: 100,
            ecn: 0,
        }
    }

    #[test]
    fn every_link_type() {
        let ip = ipv4([10, 0, 0, 1], [10, 0, 0, 2], 9, &seg());
        let mut eth = vec![0u8; 12];
        eth.extend([0x81, 0x00, 0, 5, 0x08, 0x00]); // one VLAN tag
        eth.extend(&ip);
        let mut qinq = vec![0u8; 12];
        qinq.extend([0x88, 0xa8, 0, 1, 0x81, 0x00, 0, 5, 0x08, 0x00]);
        qinq.extend(&ip);
        let mut sll = vec![0u8; 14];
        sll.extend([0x08, 0x00]);
        sll.extend(&ip);
        let mut sll2 = vec![0x08, 0x00];
        sll2.extend([0u8; 18]);
        sll2.extend(&ip);
        let mut null = vec![2, 0, 0, 0];
        null.extend(&ip);
        for (lt, f) in [
            (lt::RAW, ip.clone()),
            (lt::IPV4, ip.clone()),
            (lt::ETHERNET, eth),
            (lt::ETHERNET, qinq),
            (lt::LINUX_SLL, sll),
            (lt::LINUX_SLL2, sll2),
            (lt::NULL, null.clone()),
            (lt::LOOP, null),
        ] {
            let p = decode(lt, &f).unwrap_or_else(|e| panic!("linktype {lt}: {e:?}"));
            assert_eq!(p.seg, seg(), "linktype {lt}");
            assert_eq!(p.ip_id, 9);
            assert_eq!(p.src.to_string(), "10.0.0.1");
        }
    }

    #[test]
    fn ipv6_with_extension_header() {
        let mut a = [0u8; 16];
        a[0] = 0x20;
        a[1] = 0x01;
        a[15] = 1;
        for ext in [false, true] {
            let p = decode(lt::RAW, &ipv6(a, [0; 16], &seg(), ext)).unwrap();
            assert_eq!(p.seg, seg());
            assert_eq!(p.src.to_string(), "2001::1");
        }
    }

    #[test]
    fn snaplen_cut_payload_still_counts_its_length() {
        let ip = ipv4([10, 0, 0, 1], [10, 0, 0, 2], 9, &seg());
        let p = decode(lt::RAW, &ip[..52]).unwrap(); // headers only
        assert_eq!(p.seg.payload_len, 100);
        assert_eq!(decode(lt::RAW, &ip[..40]).err(), Some(Skip::Truncated));
    }

    #[test]
    fn corrupt_and_foreign_packets_are_classified() {
        let ip = ipv4([10, 0, 0, 1], [10, 0, 0, 2], 9, &seg());
        let mut bad = ip.clone();
        bad[0] = 0x43; // IHL 3
        assert_eq!(decode(lt::RAW, &bad).err(), Some(Skip::BadIp));
        let mut bad = ip.clone();
        bad[0] = 0x75; // version 7
        assert_eq!(decode(lt::RAW, &bad).err(), Some(Skip::BadIp));
        let mut bad = ip.clone();
        bad[20 + 12] = 0x30; // data offset 3
        assert_eq!(decode(lt::RAW, &bad).err(), Some(Skip::BadTcp));
        let mut bad = ip.clone();
        bad[20 + 20..20 + 24].copy_from_slice(&[8, 10, 0, 0]); // TS option runs off
        bad[20 + 24..20 + 32].fill(0xff);
        bad[20 + 20] = 2; // MSS, length 10: wrong for its kind
        assert_eq!(decode(lt::RAW, &bad).err(), Some(Skip::BadTcp));
        let mut udp = ip.clone();
        udp[9] = 17;
        assert_eq!(decode(lt::RAW, &udp).err(), Some(Skip::NotTcp));
        let mut frag = ip.clone();
        frag[6] = 0x20; // MF
        assert_eq!(decode(lt::RAW, &frag).err(), Some(Skip::Fragment));
        let mut arp = vec![0u8; 12];
        arp.extend([0x08, 0x06]);
        arp.extend([0u8; 28]);
        assert_eq!(decode(lt::ETHERNET, &arp).err(), Some(Skip::NotIp));
        assert_eq!(decode(999, &ip).err(), Some(Skip::NotIp));
        let mut short_total = ip.clone();
        short_total[2..4].copy_from_slice(&30u16.to_be_bytes()); // total < IP + TCP headers
        assert_eq!(decode(lt::RAW, &short_total).err(), Some(Skip::BadTcp));
    }
}
