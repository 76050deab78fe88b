//! An interval set of byte offsets, used by the invariant checker as an
//! independent record of what reached a receiver (it shares no code with
//! the TCP reassembly it checks).

#[derive(Debug, Default, Clone)]
pub struct Coverage {
    /// [0, prefix) is fully covered.
    prefix: u64,
    /// Sorted, disjoint ranges above `prefix`.
    above: Vec<(u64, u64)>,
}

impl Coverage {
    pub fn prefix(&self) -> u64 {
        self.prefix
    }

    pub fn insert(&mut self, lo: u64, hi: u64) {
        if hi <= self.prefix || hi <= lo {
            return;
        }
        let lo = lo.max(self.prefix);
        if lo == self.prefix && self.above.first().is_none_or(|&(l, _)| l > hi) {
            // in-order arrival: the common case, no list work
            self.prefix = hi;
            return;
        }
        // insert and merge
        let mut i = 0;
        while i < self.above.len() && self.above[i].1 < lo {
            i += 1;
        }
        let (mut nlo, mut nhi) = (lo, hi);
        let mut j = i;
        while j < self.above.len() && self.above[j].0 <= nhi {
            nlo = nlo.min(self.above[j].0);
            nhi = nhi.max(self.above[j].1);
            j += 1;
        }
        self.above.splice(i..j, std::iter::once((nlo, nhi)));
        if let Some(&(l, h)) = self.above.first() {
            if l <= self.prefix {
                self.prefix = self.prefix.max(h);
                self.above.remove(0);
            }
        }
    }

    /// Every offset in [lo, hi) is covered.
    pub fn covers(&self, lo: u64, hi: u64) -> bool {
        hi <= self.prefix
            || self
                .above
                .iter()
                .any(|&(l, h)| l <= lo.max(self.prefix) && hi <= h)
    }

    pub fn contains(&self, x: u64) -> bool {
        x < self.prefix || self.above.iter().any(|&(l, h)| l <= x && x < h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge() {
        let mut c = Coverage::default();
        c.insert(10, 20);
        assert_eq!(c.prefix(), 0);
        c.insert(0, 5);
        assert_eq!(c.prefix(), 5);
        c.insert(5, 10);
        assert_eq!(c.prefix(), 20);
        c.insert(30, 40);
        c.insert(25, 31);
        assert!(c.contains(26) && !c.contains(22));
        assert!(c.covers(25, 40) && c.covers(3, 19) && !c.covers(19, 26) && !c.covers(28, 41));
        c.insert(20, 25);
        assert_eq!(c.prefix(), 40);
    }
}
