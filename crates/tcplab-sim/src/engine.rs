//! The engine's types: packets and their direction, the events of the
//! discrete-event loop, the event queue, the slab that holds packets in
//! flight, and `Engine`, the part of the engine state a component call may
//! touch (through `component::Ctx`). A component is read with this module
//! and `component.rs`; `sim.rs` runs the world (endpoints, flows, cross
//! traffic, samplers) and `emu.rs` drives the same types in real time.
//!
//! Determinism: time is integer ns; events at the same instant run in the
//! order they were scheduled (a global sequence number breaks ties).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use tcplab_tcp::{Segment, Time};

use crate::component::{DropKind, Taps};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Dir {
    Fwd = 0,
    Rev = 1,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Sender,
    Receiver,
}

/// A packet in the network. `seg` is the wire header; the rest is simulator
/// metadata that never reaches an endpoint.
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub uid: u64,
    /// Flow index (TCP) or cross-traffic index (UDP).
    pub flow: u32,
    pub conn: u32,
    pub dir: Dir,
    /// Index of the next hop to traverse.
    pub hop: u16,
    pub udp: bool,
    /// IP datagram length.
    pub size: u32,
    /// When the endpoint emitted it (ground truth for spurious timeouts).
    pub sent_at: Time,
    pub seg: Segment,
    /// Transit-time feedback a receiving host attached to an ACK
    /// (simulator-side metadata, `host::HostHop`; never on the wire).
    pub feedback: Option<tcplab_tcp::cc::TransitFeedback>,
}

#[derive(Clone, Copy)]
pub(crate) enum Ev {
    /// A packet (index into the packet slab) reaches its next hop or endpoint.
    Arrive(u32),
    Timer {
        flow: u32,
        conn: u32,
        side: Side,
        gen: u32,
    },
    OpenConn {
        flow: u32,
    },
    Sample,
    Cbr {
        cross: u32,
    },
    HopTimer {
        // u32 keeps `Ev` at 16 bytes (heap entries at 32).
        hop: u32,
        token: u64,
    },
    Ping {
        idx: u32,
    },
}

// Heap entries are moved on every push and pop: keep them at 32 bytes.
const _: () = assert!(std::mem::size_of::<Ev>() == 16);

pub(crate) struct Entry {
    /// (time << 64) | sequence number: the heap compares one u128 instead
    /// of two u64s in turn (same order: earliest first, FIFO on ties).
    key: u128,
    pub(crate) ev: Ev,
}

impl Entry {
    #[inline]
    pub(crate) fn at(&self) -> Time {
        (self.key >> 64) as Time
    }
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        // BinaryHeap is a max-heap: invert for earliest-first, FIFO on ties.
        o.key.cmp(&self.key)
    }
}

/// Packets in flight live in a slab so heap entries stay small.
#[derive(Default)]
pub(crate) struct Slab {
    items: Vec<Packet>,
    free: Vec<u32>,
}

impl Slab {
    #[inline]
    pub(crate) fn put(&mut self, p: Packet) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.items[i as usize] = p;
                i
            }
            None => {
                self.items.push(p);
                (self.items.len() - 1) as u32
            }
        }
    }
    #[inline]
    pub(crate) fn take(&mut self, i: u32) -> Packet {
        self.free.push(i);
        self.items[i as usize]
    }
    /// Read a packet in place (no copy).
    #[inline]
    pub(crate) fn get(&self, i: u32) -> &Packet {
        &self.items[i as usize]
    }
    /// Free slot `i` without reading it.
    #[inline]
    pub(crate) fn release(&mut self, i: u32) {
        self.free.push(i);
    }
    #[inline]
    pub(crate) fn get_mut(&mut self, i: u32) -> &mut Packet {
        &mut self.items[i as usize]
    }
}

/// The events to come, earliest first (FIFO on ties: every key is unique).
///
/// Most events schedule one new event while they run (a link releasing a
/// packet re-arms its timer for the next). `take_due` therefore hands out
/// the earliest entry without removing it: the next `push` overwrites it in
/// place and sifts it down once (`BinaryHeap::peek_mut`), instead of a pop
/// (sift to the bottom and back up) followed by a push (sift up). The keys
/// are unique, so the entries, and the order they come out in, are the
/// same as with a pop and a push.
#[derive(Default)]
pub(crate) struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
    /// The top entry was handed out by `take_due` and is no longer pending.
    spent: bool,
}

impl EventQueue {
    #[inline]
    pub(crate) fn push(&mut self, at: Time, ev: Ev) {
        self.seq += 1;
        let e = Entry {
            key: ((at as u128) << 64) | self.seq as u128,
            ev,
        };
        if self.spent {
            self.spent = false;
            if let Some(mut top) = self.heap.peek_mut() {
                *top = e;
                return;
            }
        }
        self.heap.push(e);
    }

    /// Remove the entry `take_due` handed out, if it is still there.
    #[inline]
    fn settle(&mut self) {
        if self.spent {
            self.spent = false;
            self.heap.pop();
        }
    }

    /// When the earliest event is due (a real-time driver sleeps until then).
    #[inline]
    pub(crate) fn next_at(&self) -> Option<Time> {
        let h = self.heap.as_slice();
        if !self.spent {
            return h.first().map(|e| e.at());
        }
        // The top was handed out: the earliest left is one of its children.
        h[1.min(h.len())..3.min(h.len())]
            .iter()
            .map(|e| e.key)
            .min()
            .map(|k| (k >> 64) as Time)
    }

    /// Take the earliest event if it is due at or before `until`.
    #[inline]
    pub(crate) fn pop_due(&mut self, until: Time) -> Option<(Time, Ev)> {
        let e = self.take_due(until);
        self.settle();
        e
    }

    /// `pop_due` for the simulator's loop: the entry is left in place for
    /// the next `push` to overwrite (see the type's comment).
    #[inline]
    pub(crate) fn take_due(&mut self, until: Time) -> Option<(Time, Ev)> {
        self.settle();
        let top = self.heap.peek()?;
        if top.at() > until {
            return None;
        }
        self.spent = true;
        Some((top.at(), top.ev))
    }

    /// The events still pending, in no particular order (the entry handed
    /// out last is no longer one of them).
    pub(crate) fn pending(&self) -> impl Iterator<Item = &Entry> {
        // The heap's first slot is its top, the entry `take_due` hands out.
        self.heap.as_slice()[self.spent as usize..].iter()
    }
}

/// The engine state a component call may touch (one pointer in `Ctx`
/// instead of one per field: a `Ctx` is built twice per packet per hop).
#[derive(Default)]
pub(crate) struct Engine {
    pub(crate) q: EventQueue,
    pub(crate) slab: Slab,
    /// Slab indices of the packets that arrive now, after the current event,
    /// in FIFO order. The engine drains it after every event by walking it
    /// front to back (arrivals may append more) and then clearing it, so a
    /// Vec does what a VecDeque did, with cheaper pushes and reads.
    pub(crate) immediate: Vec<u32>,
    /// Drops are logged after the call (the log needs the flow tables).
    pub(crate) drops: Vec<(Packet, DropKind)>,
    pub(crate) absorbed: u64,
    /// Data segments (toward the receiver) a component absorbed: (flow,
    /// connection, send time), for the simulator's ground truth
    /// (`truth.rs`). Only the simulator drains it (`track_absorbed`).
    pub(crate) absorbed_data: Vec<(u32, u32, Time)>,
    pub(crate) track_absorbed: bool,
    pub(crate) taps: Taps,
    /// Packet ids handed out so far.
    pub(crate) uid: u64,
    /// Packets the component created, each leaving this hop in its `dir`
    /// (the engine resolves the route position after the call).
    pub(crate) emitted: Vec<(Packet, Time)>,
    /// Real-time emulation (`emu`): packets carry real bytes.
    pub(crate) real_bytes: bool,
    /// Real time: the TCP payload of the packet being handed to a hop that
    /// asked for bytes (`Component::wants_bytes`); empty in simulation.
    pub(crate) payload_in: Vec<u8>,
    /// Real time: payloads of emitted packets, (uid, start, len) into
    /// `payload_out` (the driver builds the packets' bytes after the call).
    pub(crate) payload_out: Vec<u8>,
    pub(crate) payload_spans: Vec<(u64, u32, u32)>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    /// The queue hands events out in (time, scheduling order), whatever the
    /// mix of pushes during an event (which overwrite the entry handed out)
    /// and events that push nothing: checked against a plain sorted list.
    #[test]
    fn events_come_out_earliest_first_and_fifo_on_ties() {
        let mut rng = Rng::stream(3, "engine/queue");
        for round in 0..200 {
            let mut q = EventQueue::default();
            // The reference: (time, scheduling number), sorted on each take.
            let mut want: Vec<(Time, u32)> = Vec::new();
            let mut n = 0u32;
            let mut now: Time = 0;
            let push = |q: &mut EventQueue, want: &mut Vec<(Time, u32)>, n: &mut u32, at: Time| {
                q.push(at, Ev::Arrive(*n));
                want.push((at, *n));
                *n += 1;
            };
            let mut below = |k: u64| rng.next_u64() % k;
            for _ in 0..(1 + round % 7) {
                let at = below(20);
                push(&mut q, &mut want, &mut n, at);
            }
            let mut taken = 0;
            while let Some((at, ev)) = q.take_due(1_000) {
                want.sort();
                let (w_at, w_n) = want.remove(0);
                let Ev::Arrive(i) = ev else { unreachable!() };
                assert_eq!((at, i), (w_at, w_n), "round {round}, event {taken}");
                assert!(at >= now);
                now = at;
                taken += 1;
                // What is pending is the reference, without the event taken.
                let mut pending: Vec<u32> = q
                    .pending()
                    .map(|e| match e.ev {
                        Ev::Arrive(i) => i,
                        _ => unreachable!(),
                    })
                    .collect();
                pending.sort();
                let mut rest: Vec<u32> = want.iter().map(|w| w.1).collect();
                rest.sort();
                assert_eq!(pending, rest);
                assert_eq!(q.next_at(), want.iter().map(|w| w.0).min());
                // The event schedules 0, 1 or 2 more, often at `now` (ties).
                if n < 60 {
                    for _ in 0..below(3) {
                        let at = now + below(3) * below(4);
                        push(&mut q, &mut want, &mut n, at);
                    }
                }
            }
            assert!(want.is_empty() || want.iter().all(|w| w.0 > 1_000));
            assert!(taken > 0);
        }
    }

    /// `pop_due` (the real-time driver's) removes what it hands out.
    #[test]
    fn pop_due_removes_the_event() {
        let mut q = EventQueue::default();
        q.push(5, Ev::Sample);
        q.push(3, Ev::Arrive(1));
        assert!(q.pop_due(2).is_none());
        assert!(matches!(q.pop_due(10), Some((3, Ev::Arrive(1)))));
        assert_eq!(q.pending().count(), 1);
        assert_eq!(q.next_at(), Some(5));
        assert!(matches!(q.pop_due(10), Some((5, Ev::Sample))));
        assert!(q.pop_due(10).is_none());
        assert_eq!(q.next_at(), None);
    }
}
