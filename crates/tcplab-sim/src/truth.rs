//! Ground truth still to decide for one connection (design.md §6).
//!
//! A timeout at sequence offset `seq` and time `at` is spurious if a copy of
//! that byte sent before `at` reaches the receiver; a fast retransmit is
//! decided by the first copy to arrive. The engine notes each retransmission
//! it cannot decide at once (`note`) and hands every data segment that
//! reaches the receiver to `arrive`.
//!
//! Two rules keep this bounded by what is live, not by the length of the run:
//!
//! - Entries are kept by sequence offset, so an arrival looks only at the
//!   entries its bytes cover (O(log n) plus what it decides), not at all of
//!   them.
//! - The connection's data segments in the network are counted by send-time
//!   epoch: a new epoch starts at each noted retransmission. Once every
//!   segment sent before an entry's time has left the network (reached the
//!   receiver, been dropped, or been absorbed by a middlebox), no copy can
//!   ever make the entry spurious: it is genuine and is forgotten
//!   (`expire`). A genuine timeout therefore costs memory only while older
//!   copies are still on their way.

use std::collections::{BTreeMap, VecDeque};
use tcplab_tcp::Time;

/// A timeout or fast retransmit waiting for its ground truth.
#[derive(Clone, Copy, Debug)]
struct Pending {
    at: Time,
    row: usize,
    /// A fast retransmit, not a timeout.
    fr: bool,
}

#[cfg(test)]
thread_local! {
    /// The most entries plus epochs any `Truth` of this thread held at once.
    pub(crate) static PEAK: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[derive(Debug)]
pub(crate) struct Truth {
    /// Undecided entries by (sequence offset, serial number).
    pending: BTreeMap<(u64, u64), Pending>,
    /// Every entry not yet expired, in the order noted: (time, key).
    order: VecDeque<(Time, (u64, u64))>,
    serial: u64,
    /// Data segments of this connection in the network, by send-time epoch:
    /// `(start, count)`; epoch `j` holds segments sent in
    /// `[start_j, start_{j+1})`. Never empty; the first starts at 0.
    epochs: VecDeque<(Time, u64)>,
    /// Segments sent at the newest send time, counted in the last epoch
    /// and still in the network: `(time, count)`. The engine transmits a
    /// retransmission before it notes it, so `note` moves these into the
    /// epoch it opens at that same time.
    newest: (Time, u64),
    /// Scratch for `arrive` (no allocation once warm).
    hits: Vec<(u64, u64)>,
    /// The driver reports every data segment's entry to and exit from the
    /// network (`sent`, `gone`), so entries expire. Without it (the
    /// emulator's host, which sees only what reaches it) an entry waits
    /// for the copy that decides it.
    expires: bool,
}

impl Default for Truth {
    fn default() -> Self {
        let mut epochs = VecDeque::new();
        epochs.push_back((0, 0));
        Truth {
            pending: BTreeMap::new(),
            order: VecDeque::new(),
            serial: 0,
            epochs,
            newest: (0, 0),
            hits: Vec::new(),
            expires: true,
        }
    }
}

impl Truth {
    /// Bookkeeping for a driver that does not report segments entering and
    /// leaving the network: entries are kept until a copy decides them.
    pub(crate) fn never_expiring() -> Self {
        Truth {
            expires: false,
            ..Truth::default()
        }
    }

    /// No entry is waiting for its truth.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// Entries still undecided.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.pending.len()
    }

    /// Epochs kept (tests and the memory bound).
    #[cfg(test)]
    fn epochs(&self) -> usize {
        self.epochs.len()
    }

    #[inline]
    fn epoch_of(&self, sent_at: Time) -> usize {
        // Nearly always one epoch, or the newest: test that first.
        let last = self.epochs.len() - 1;
        if sent_at >= self.epochs[last].0 {
            return last;
        }
        self.epochs.partition_point(|e| e.0 <= sent_at).max(1) - 1
    }

    /// A data segment of this connection sent at `sent_at` entered the network.
    #[inline]
    pub(crate) fn sent(&mut self, sent_at: Time) {
        if !self.expires {
            return;
        }
        let j = self.epoch_of(sent_at);
        self.epochs[j].1 += 1;
        if j == self.epochs.len() - 1 {
            if self.newest.0 == sent_at {
                self.newest.1 += 1;
            } else if self.newest.0 < sent_at {
                self.newest = (sent_at, 1);
            }
        }
    }

    /// A data segment sent at `sent_at` left the network (it reached the
    /// receiver, was dropped, or a middlebox absorbed it).
    #[inline]
    pub(crate) fn gone(&mut self, sent_at: Time) {
        if !self.expires {
            return;
        }
        let j = self.epoch_of(sent_at);
        if j == self.epochs.len() - 1 && self.newest.0 == sent_at {
            self.newest.1 = self.newest.1.saturating_sub(1);
        }
        let e = &mut self.epochs[j];
        debug_assert!(e.1 > 0, "a data segment left the network twice");
        e.1 = e.1.saturating_sub(1);
        if j == 0 && e.1 == 0 && self.epochs.len() > 1 {
            self.expire();
        }
    }

    /// Forget the entries no copy can decide any more: every segment sent
    /// before them has left the network.
    fn expire(&mut self) {
        while self.epochs.len() > 1 && self.epochs[0].1 == 0 {
            self.epochs.pop_front();
        }
        let oldest = self.epochs[0].0;
        while let Some(&(at, key)) = self.order.front() {
            if at > oldest {
                break;
            }
            self.order.pop_front();
            // Absent when a copy already decided it.
            self.pending.remove(&key);
        }
    }

    /// A retransmission of the byte at offset `seq` at time `at` (logged at
    /// event row `row`) that the receiver does not hold yet.
    pub(crate) fn note(&mut self, seq: u64, at: Time, row: usize, fr: bool) {
        if !self.expires {
            let key = (seq, self.serial);
            self.serial += 1;
            self.pending.insert(key, Pending { at, row, fr });
            return;
        }
        let last = self.epochs.len() - 1;
        if self.epochs[last].0 < at {
            // Copies sent at `at` itself (the retransmission) belong to the
            // new epoch: they were not sent before it.
            let moved = if self.newest.0 == at {
                self.newest.1
            } else {
                0
            };
            self.epochs[last].1 -= moved;
            self.epochs.push_back((at, moved));
        }
        let key = (seq, self.serial);
        self.serial += 1;
        self.pending.insert(key, Pending { at, row, fr });
        self.order.push_back((at, key));
        // Genuine at once when no older copy is in the network.
        self.expire();
        #[cfg(test)]
        PEAK.with(|p| p.set(p.get().max(self.order.len() + self.epochs.len())));
    }

    /// A data segment covering offsets `[off, off + len)`, sent at `sent_at`,
    /// reached the receiver. A pending timeout it covers is spurious if the
    /// copy was sent before the timeout; a pending fast retransmit is decided
    /// by this copy either way (spurious if sent before it, genuine
    /// otherwise). Calls `spurious(row, fr)` for each spurious verdict.
    #[inline]
    pub(crate) fn arrive(
        &mut self,
        off: u64,
        len: u64,
        sent_at: Time,
        mut spurious: impl FnMut(usize, bool),
    ) {
        if self.pending.is_empty() {
            return;
        }
        self.hits.clear();
        for (&key, t) in self.pending.range((off, 0)..(off + len, 0)) {
            if sent_at < t.at {
                spurious(t.row, t.fr);
                self.hits.push(key);
            } else if t.fr {
                self.hits.push(key);
            }
        }
        for key in &self.hits {
            self.pending.remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdicts(t: &mut Truth, off: u64, len: u64, sent_at: Time) -> Vec<usize> {
        let mut v = Vec::new();
        t.arrive(off, len, sent_at, |row, _| v.push(row));
        v
    }

    #[test]
    fn an_older_copy_makes_a_timeout_spurious() {
        let mut t = Truth::default();
        t.sent(10); // the original, still in flight
        t.note(1000, 50, 7, false);
        assert_eq!(t.len(), 1);
        t.sent(50); // the retransmission
                    // The retransmission arrives first: not a verdict, and the original
                    // may still come.
        assert!(verdicts(&mut t, 1000, 100, 50).is_empty());
        t.gone(50);
        assert_eq!(t.len(), 1);
        // The original arrives: spurious.
        assert_eq!(verdicts(&mut t, 1000, 100, 10), vec![7]);
        t.gone(10);
        assert_eq!(t.len(), 0);
    }

    #[test]
    fn a_genuine_timeout_is_forgotten_once_older_copies_are_gone() {
        let mut t = Truth::default();
        t.sent(10);
        t.sent(20);
        t.note(5000, 30, 1, false);
        t.sent(30);
        // The original at 10 is dropped, the copy sent at 20 (other bytes) arrives.
        t.gone(10);
        assert_eq!(t.len(), 1);
        assert!(verdicts(&mut t, 9000, 100, 20).is_empty());
        t.gone(20);
        // Nothing sent before 30 is left: genuine, forgotten.
        assert_eq!(t.len(), 0);
        assert_eq!(t.epochs(), 1);
    }

    #[test]
    fn nothing_older_in_flight_means_genuine_at_once() {
        let mut t = Truth::default();
        for k in 0..10_000u64 {
            // Each original is lost before its timeout: no entry survives.
            t.sent(k * 10);
            t.gone(k * 10);
            t.note(k, k * 10 + 5, k as usize, false);
        }
        assert_eq!(t.len(), 0);
        assert_eq!(t.epochs(), 1);
    }

    #[test]
    fn a_retransmission_sent_before_it_is_noted_is_not_older() {
        // The engine transmits the retransmission, then logs the timeout.
        let mut t = Truth::default();
        t.sent(10); // the original
        t.gone(10); // lost
        t.sent(40); // the retransmission at the timeout
        t.note(0, 40, 2, false);
        // Nothing sent before 40 is in the network: genuine at once.
        assert_eq!(t.len(), 0);
        t.gone(40);
        assert_eq!(t.epochs(), 1);
    }

    #[test]
    fn a_fast_retransmit_is_decided_by_the_first_copy() {
        let mut t = Truth::default();
        t.sent(1);
        t.note(100, 5, 3, true);
        t.sent(5);
        // The fast retransmission arrives first: genuine, decided.
        assert!(verdicts(&mut t, 100, 10, 5).is_empty());
        assert_eq!(t.len(), 0);
    }

    #[test]
    fn without_sent_and_gone_an_entry_waits_for_its_copy() {
        let mut t = Truth::never_expiring();
        // No copy reported in flight: an expiring `Truth` would call this
        // genuine at once; this one keeps it until a copy decides it.
        t.note(1000, 50, 4, false);
        t.gone(10); // ignored, not an underflow
        assert_eq!(t.len(), 1);
        assert!(verdicts(&mut t, 1000, 100, 60).is_empty());
        assert_eq!(t.len(), 1);
        assert_eq!(verdicts(&mut t, 1000, 100, 10), vec![4]);
        assert!(t.is_empty());
    }

    #[test]
    fn an_arrival_looks_only_at_the_bytes_it_covers() {
        let mut t = Truth::default();
        t.sent(0);
        for k in 0..100u64 {
            t.note(k * 1000, 1 + k, k as usize, false);
        }
        assert_eq!(verdicts(&mut t, 5000, 2000, 0), vec![5, 6]);
        assert_eq!(t.len(), 98);
    }
}
