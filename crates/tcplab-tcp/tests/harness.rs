//! A two-endpoint test harness: a fixed-rate, fixed-delay pipe each way and
//! a programmable dropper. Not a simulator; just enough to drive the
//! endpoint through hand-worked cases.

#![allow(dead_code)]

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use tcplab_tcp::seq::unwrap;
use tcplab_tcp::{Config, Connection, Event, Segment, Time, NS_PER_MS};

pub struct Pipe {
    pub rate_bps: u64,
    pub delay: Time,
    next_free: Time,
}

impl Pipe {
    fn arrival(&mut self, now: Time, bytes: usize) -> Time {
        let tx = (bytes as u64 * 8 * 1_000_000_000).div_ceil(self.rate_bps);
        let start = self.next_free.max(now);
        self.next_free = start + tx;
        self.next_free + self.delay
    }
}

/// A sent segment as the harness saw it: data offset (sender side), length.
#[derive(Clone, Copy, Debug)]
pub struct Sent {
    pub t: Time,
    pub a_to_b: bool,
    pub off: u64,
    pub len: u32,
    pub seg: Segment,
    pub dropped: bool,
}

pub type Dropper = Box<dyn FnMut(&Sent, usize) -> bool>;
/// Extra delay (ns) added to a segment on top of its pipe arrival time; a
/// segment so delayed is overtaken by later ones (reordering).
pub type Delayer = Box<dyn FnMut(&Sent, usize) -> Time>;

pub struct Net {
    pub a: Connection,
    pub b: Connection,
    pub now: Time,
    q: BinaryHeap<(Reverse<Time>, Reverse<u64>, bool, usize)>,
    segs: Vec<Segment>,
    n: u64,
    pub ab: Pipe,
    pub ba: Pipe,
    pub sent: Vec<Sent>,
    pub events_a: Vec<(Time, Event)>,
    pub events_b: Vec<(Time, Event)>,
    /// Called for every segment; return true to drop it. The second
    /// argument counts earlier transmissions of the same data offset.
    pub drop: Dropper,
    /// Called for every segment that is not dropped: extra delay to add.
    pub extra_delay: Delayer,
    iss_a: u32,
}

pub fn cfg() -> Config {
    Config {
        mss: 1000,
        initial_window: 10_000,
        ..Config::default()
    }
}

impl Net {
    /// A (client, data sender) ↔ B (server), 10 Mb/s each way, 20 ms one way.
    pub fn new(ca: Config, cb: Config) -> Net {
        let iss_a = 0xFFFF_F000; // wraps early: exercises 32-bit unwrapping
        Net {
            a: Connection::client(ca, 40000, 5001, iss_a, 7),
            b: Connection::server(cb, 5001, 40000, 12345, 99),
            now: 0,
            q: BinaryHeap::new(),
            segs: Vec::new(),
            n: 0,
            ab: Pipe {
                rate_bps: 10_000_000,
                delay: 20 * NS_PER_MS,
                next_free: 0,
            },
            ba: Pipe {
                rate_bps: 10_000_000,
                delay: 20 * NS_PER_MS,
                next_free: 0,
            },
            sent: Vec::new(),
            events_a: Vec::new(),
            events_b: Vec::new(),
            drop: Box::new(|_, _| false),
            extra_delay: Box::new(|_, _| 0),
            iss_a,
        }
    }

    fn flush(&mut self) {
        // B's application closes once it has read A's FIN.
        if self.b.peer_finished()
            && self.b.state() == tcplab_tcp::State::CloseWait
            && self.b.unread() == 0
        {
            self.b.close();
        }
        for side in [true, false] {
            loop {
                let (conn, pipe) = if side {
                    (&mut self.a, &mut self.ab)
                } else {
                    (&mut self.b, &mut self.ba)
                };
                let Some(seg) = conn.poll_transmit(self.now) else {
                    break;
                };
                let off = if side {
                    unwrap(self.iss_a, seg.seq, conn.snd_una())
                } else {
                    0
                };
                let mut s = Sent {
                    t: self.now,
                    a_to_b: side,
                    off,
                    len: seg.payload_len,
                    seg,
                    dropped: false,
                };
                let prior = self
                    .sent
                    .iter()
                    .filter(|x| x.a_to_b == side && x.off == off && x.len == s.len && s.len > 0)
                    .count();
                s.dropped = (self.drop)(&s, prior);
                let mut at = pipe.arrival(self.now, seg.ip_len());
                if !s.dropped {
                    at += (self.extra_delay)(&s, prior);
                    self.n += 1;
                    self.segs.push(seg);
                    self.q
                        .push((Reverse(at), Reverse(self.n), side, self.segs.len() - 1));
                }
                self.sent.push(s);
            }
            let (conn, evs) = if side {
                (&mut self.a, &mut self.events_a)
            } else {
                (&mut self.b, &mut self.events_b)
            };
            while let Some(e) = conn.poll_event() {
                evs.push((self.now, e));
            }
        }
    }

    /// Run until `until` or nothing is left to do.
    pub fn run_until(&mut self, until: Time) {
        self.flush();
        loop {
            let tq = self.q.peek().map(|x| x.0 .0);
            let ta = self.a.poll_timeout();
            let tb = self.b.poll_timeout();
            let next = [tq, ta, tb].into_iter().flatten().min();
            let Some(t) = next else { break };
            if t > until {
                break;
            }
            self.now = t;
            if tq == Some(t) {
                let (_, _, to_b, k) = self.q.pop().unwrap();
                let seg = self.segs[k];
                if to_b {
                    self.b.handle_segment(&seg, t);
                } else {
                    self.a.handle_segment(&seg, t);
                }
            } else if ta == Some(t) {
                self.a.handle_timeout(t);
            } else {
                self.b.handle_timeout(t);
            }
            self.flush();
        }
        self.now = until.max(self.now);
    }

    pub fn data_sent(&self) -> impl Iterator<Item = &Sent> {
        self.sent.iter().filter(|s| s.a_to_b && s.len > 0)
    }

    pub fn count_a<F: Fn(&Event) -> bool>(&self, f: F) -> usize {
        self.events_a.iter().filter(|(_, e)| f(e)).count()
    }
}
