//! Sequence-number arithmetic.
//!
//! On the wire sequence numbers are 32-bit and wrap (RFC 9293 §3.4). Inside
//! the endpoint every sequence number is a 64-bit offset from the initial
//! sequence number, so comparisons are plain integer comparisons. Incoming
//! 32-bit values are unwrapped against a nearby 64-bit reference, which is
//! valid while the two are within 2^31 of each other (always true for a
//! window ≤ 2^30, RFC 7323 §2.3).

/// Wire value of the 64-bit offset `rel` for initial sequence number `isn`.
#[inline]
pub fn to_wire(isn: u32, rel: u64) -> u32 {
    isn.wrapping_add(rel as u32)
}

/// Unwrap the wire value `v` to the 64-bit offset nearest `reference`.
#[inline]
pub fn unwrap(isn: u32, v: u32, reference: u64) -> u64 {
    let ref_wire = to_wire(isn, reference);
    let delta = v.wrapping_sub(ref_wire) as i32 as i64;
    let r = reference as i64 + delta;
    if r < 0 {
        0
    } else {
        r as u64
    }
}

/// `a` is before `b` in 32-bit sequence space (RFC 9293 §3.4).
#[inline]
pub fn before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwrap_across_the_wrap() {
        let isn = u32::MAX - 10;
        let rel = 100u64;
        let w = to_wire(isn, rel);
        assert_eq!(w, 89);
        assert_eq!(unwrap(isn, w, 50), 100);
        assert_eq!(unwrap(isn, w, 1 << 20), 100);
        // far beyond 2^32 offsets
        let big = (1u64 << 33) + 5;
        assert_eq!(unwrap(isn, to_wire(isn, big), big - 1000), big);
        assert_eq!(unwrap(isn, to_wire(isn, big - 3000), big), big - 3000);
    }

    #[test]
    fn before_wraps() {
        assert!(before(u32::MAX, 0));
        assert!(!before(0, u32::MAX));
        assert!(before(1, 2));
    }
}
