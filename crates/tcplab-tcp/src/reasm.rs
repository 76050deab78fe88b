//! Receive-side reassembly and SACK/DSACK block generation.
//!
//! Payload bytes are not carried, so reassembly tracks byte ranges: the
//! in-order point `rcv_nxt` and the out-of-order ranges held above it.

/// A half-open range of 64-bit sequence offsets.
pub type Range = (u64, u64);

/// Max out-of-order ranges remembered for SACK reporting order.
const RECENT: usize = 8;

#[derive(Debug)]
pub struct Reassembly {
    pub rcv_nxt: u64,
    /// Disjoint, sorted out-of-order ranges above rcv_nxt.
    ooo: Vec<Range>,
    /// Starting points of ranges in the order they were last touched,
    /// most recent first (RFC 2018 §4 block ordering).
    recent: [u64; RECENT],
    n_recent: usize,
    /// Pending DSACK report (RFC 2883 §4).
    dsack: Option<Range>,
    /// Bytes held out of order.
    ooo_bytes: u64,
}

/// What one arriving segment did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RxOutcome {
    /// Bytes that became deliverable in order.
    pub delivered: u64,
    /// The segment arrived above a hole (out of order).
    pub out_of_order: bool,
    /// The segment filled (part of) a hole below out-of-order data.
    pub filled_hole: bool,
    /// Every byte of it had been received before.
    pub duplicate: bool,
}

impl Reassembly {
    pub fn new(rcv_nxt: u64) -> Self {
        Reassembly {
            rcv_nxt,
            ooo: Vec::with_capacity(8),
            recent: [0; RECENT],
            n_recent: 0,
            dsack: None,
            ooo_bytes: 0,
        }
    }

    pub fn has_ooo(&self) -> bool {
        !self.ooo.is_empty()
    }

    pub fn ooo_bytes(&self) -> u64 {
        self.ooo_bytes
    }

    /// One past the highest byte held out of order, if any.
    pub fn ooo_end(&self) -> Option<u64> {
        self.ooo.last().map(|&(_, r)| r)
    }

    /// Has byte `seq` been received (in order or out of order)?
    pub fn has_byte(&self, seq: u64) -> bool {
        seq < self.rcv_nxt || self.ooo.iter().any(|&(l, r)| l <= seq && seq < r)
    }

    fn touch(&mut self, start: u64) {
        // move `start` to the front of the recency list
        let pos = self.recent[..self.n_recent]
            .iter()
            .position(|&s| s == start);
        let end = match pos {
            Some(p) => p,
            None => {
                if self.n_recent < RECENT {
                    self.n_recent += 1;
                }
                self.n_recent - 1
            }
        };
        for k in (0..end).rev() {
            self.recent[k + 1] = self.recent[k];
        }
        self.recent[0] = start;
    }

    /// Accept the payload range [start, end). `dsack` enables DSACK
    /// generation for duplicates (RFC 2883).
    pub fn on_data(&mut self, mut start: u64, end: u64, dsack: bool) -> RxOutcome {
        let mut out = RxOutcome::default();
        if end <= start {
            return out;
        }
        // Duplicate detection: the part below rcv_nxt, or parts already held.
        if end <= self.rcv_nxt {
            out.duplicate = true;
            if dsack {
                // RFC 2883 §4.1: report the duplicate as the first block.
                self.dsack = Some((start, end));
            }
            return out;
        }
        if start < self.rcv_nxt {
            if dsack {
                self.dsack = Some((start, self.rcv_nxt));
            }
            start = self.rcv_nxt;
        }
        if start == self.rcv_nxt {
            let had_ooo = !self.ooo.is_empty();
            self.rcv_nxt = end;
            // absorb out-of-order ranges now contiguous
            let mut k = 0;
            while k < self.ooo.len() {
                let (l, r) = self.ooo[k];
                if l <= self.rcv_nxt {
                    if r > self.rcv_nxt {
                        self.rcv_nxt = r;
                    }
                    self.ooo_bytes -= r - l;
                    if dsack && l < end {
                        // RFC 2883 §4.1: part of this segment was already held.
                        self.dsack = Some((l, r.min(end)));
                    }
                    self.forget(l);
                    self.ooo.remove(k);
                } else {
                    k += 1;
                }
            }
            out.delivered = self.rcv_nxt - start;
            out.filled_hole = had_ooo;
            return out;
        }
        // Out of order: merge into the range list.
        out.out_of_order = true;
        let i = self.ooo.partition_point(|&(_, r)| r < start);
        let mut lo = start;
        let mut hi = end;
        let mut j = i;
        let mut dup_bytes = 0u64;
        let mut dup_range: Option<Range> = None;
        while j < self.ooo.len() && self.ooo[j].0 <= hi {
            let (l, r) = self.ooo[j];
            let ol = l.max(start);
            let or = r.min(end);
            if or > ol {
                dup_bytes += or - ol;
                dup_range = Some((ol, or));
            }
            lo = lo.min(l);
            hi = hi.max(r);
            self.ooo_bytes -= r - l;
            j += 1;
        }
        for k in i..j {
            let s = self.ooo[k].0;
            if s != lo {
                self.forget(s);
            }
        }
        self.ooo.drain(i..j);
        self.ooo.insert(i, (lo, hi));
        self.ooo_bytes += hi - lo;
        self.touch(lo);
        if dup_bytes == end - start {
            out.duplicate = true;
        }
        if dsack {
            if let Some(d) = dup_range {
                self.dsack = Some(d);
            }
        }
        out
    }

    fn forget(&mut self, start: u64) {
        if let Some(p) = self.recent[..self.n_recent]
            .iter()
            .position(|&s| s == start)
        {
            for k in p..self.n_recent - 1 {
                self.recent[k] = self.recent[k + 1];
            }
            self.n_recent -= 1;
        }
    }

    /// Fill `out` with SACK blocks (RFC 2018 §4): a pending DSACK block first
    /// (RFC 2883 §4), then the block holding the most recent segment, then
    /// others by recency. Returns the number written. The DSACK report is
    /// consumed.
    pub fn sack_blocks(&mut self, out: &mut [Range]) -> usize {
        let mut n = 0;
        if out.is_empty() {
            return 0;
        }
        if let Some(d) = self.dsack.take() {
            out[0] = d;
            n = 1;
            // RFC 2883 §4 (2): if the duplicate lies inside a held block,
            // that block follows as the second block.
            if let Some(&(l, r)) = self.ooo.iter().find(|&&(l, r)| l <= d.0 && d.1 <= r) {
                if n < out.len() {
                    out[n] = (l, r);
                    n += 1;
                }
            }
        }
        for k in 0..self.n_recent {
            if n >= out.len() {
                break;
            }
            let s = self.recent[k];
            if let Some(&(l, r)) = self.ooo.iter().find(|&&(l, _)| l == s) {
                if out[..n].iter().skip(1).any(|&b| b == (l, r)) {
                    continue;
                }
                out[n] = (l, r);
                n += 1;
            }
        }
        n
    }

    pub fn pending_dsack(&self) -> bool {
        self.dsack.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order_and_holes() {
        let mut r = Reassembly::new(1);
        assert_eq!(r.on_data(1, 1001, true).delivered, 1000);
        let o = r.on_data(2001, 3001, true);
        assert!(o.out_of_order && o.delivered == 0);
        r.on_data(4001, 5001, true);
        let mut b = [(0, 0); 4];
        let n = r.sack_blocks(&mut b);
        // most recent block first (RFC 2018 §4)
        assert_eq!(&b[..n], &[(4001, 5001), (2001, 3001)]);
        let o = r.on_data(1001, 2001, true);
        assert!(o.filled_hole);
        assert_eq!(o.delivered, 2000);
        assert_eq!(r.rcv_nxt, 3001);
        let n = r.sack_blocks(&mut b);
        assert_eq!(&b[..n], &[(4001, 5001)]);
        r.on_data(3001, 4001, true);
        assert_eq!(r.rcv_nxt, 5001);
        assert!(!r.has_ooo());
        assert_eq!(r.ooo_bytes(), 0);
    }

    #[test]
    fn dsack_below_rcv_nxt_and_inside_ooo() {
        let mut r = Reassembly::new(1);
        r.on_data(1, 1001, true);
        let o = r.on_data(1, 1001, true);
        assert!(o.duplicate);
        let mut b = [(0, 0); 4];
        let n = r.sack_blocks(&mut b);
        assert_eq!(&b[..n], &[(1, 1001)]); // RFC 2883 §4.1 example: D-SACK below ack
        assert_eq!(r.sack_blocks(&mut b), 0); // consumed
        r.on_data(2001, 3001, true);
        r.on_data(3001, 4001, true);
        let o = r.on_data(2001, 3001, true);
        assert!(o.duplicate);
        let n = r.sack_blocks(&mut b);
        // D-SACK block, then the containing block (RFC 2883 §4.2)
        assert_eq!(&b[..n], &[(2001, 3001), (2001, 4001)]);
    }

    #[test]
    fn merge_ranges() {
        let mut r = Reassembly::new(1);
        r.on_data(3001, 4001, false);
        r.on_data(5001, 6001, false);
        r.on_data(4001, 5001, false);
        let mut b = [(0, 0); 4];
        let n = r.sack_blocks(&mut b);
        assert_eq!(&b[..n], &[(3001, 6001)]);
        assert_eq!(r.ooo_bytes(), 3000);
        assert!(r.has_byte(5500));
        assert!(!r.has_byte(2000));
    }
}
