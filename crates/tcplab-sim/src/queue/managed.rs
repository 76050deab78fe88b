//! A queue discipline inside a path component: the packets wait parked in
//! the engine's slab while the discipline holds their handles, the owner's
//! transmitter asks for the next one when it is free (as a device asks its
//! qdisc, `qdisc_restart()` → `dequeue_skb()`), and the summary columns and
//! sojourn histogram every managed queue reports. The link directions, the
//! `rlc` buffers and the `wlan` AP and station queues each hold one of
//! these; what "free" means is theirs (the end of a serialisation, the start
//! of a radio transmission, the head of the 802.11 MAC's queue).

use crate::component::{Ctx, DropKind, Parked};
use crate::engine::Packet;
use crate::rng::Rng;
use tcplab_tcp::Time;

use super::{AqmConfig, Limit, QDrop, QOut, QPkt, Qdisc, Sojourn};

pub(crate) struct Managed {
    pub(crate) q: Box<dyn Qdisc + Send>,
    out: QOut,
    /// A packet taken from the discipline is in service (the owner clears
    /// it when the transmitter is free again).
    pub(crate) busy: bool,
    sojourn: Sojourn,
    /// Sojourn of the latest packet to leave the queue, ns.
    pub(crate) last_sojourn: Time,
}

/// The flow key a flow-queueing discipline hashes: the packet's
/// connection (its address and port pair) and protocol.
#[inline]
fn flow_key(p: &Packet) -> u64 {
    ((p.udp as u64) << 63) | ((p.flow as u64) << 32) | p.conn as u64
}

impl Managed {
    /// The discipline `cfg` with hard limit `limit` in front of a line of
    /// `rate_bps`, drawing from `rng` (the queue's own stream).
    pub(crate) fn new(cfg: &AqmConfig, limit: Limit, rate_bps: u64, rng: Rng) -> Managed {
        Managed {
            q: super::build(cfg, limit, rate_bps, rng),
            out: QOut::default(),
            busy: false,
            sojourn: Sojourn::default(),
            last_sojourn: 0,
        }
    }

    /// Packets waiting or in service.
    pub(crate) fn backlog(&self) -> u64 {
        self.q.len() as u64 + self.busy as u64
    }

    /// Offer `p` at `ctx.now`: it is parked and the discipline takes it (or
    /// discards it or others). Each discarded packet goes to `dropped` (the
    /// owner's counters) and then to the engine as a queue drop.
    #[inline]
    pub(crate) fn enqueue(&mut self, p: Packet, ctx: &mut Ctx, dropped: impl FnMut(&Packet)) {
        let qp = QPkt {
            id: 0,
            bytes: p.size,
            flow: flow_key(&p),
            ecn: p.seg.ecn,
            enq: ctx.now,
        };
        let h = ctx.park(p);
        self.q
            .enqueue(QPkt { id: h.raw(), ..qp }, ctx.now, &mut self.out);
        self.drop_discarded(ctx, dropped);
    }

    /// The next packet for the transmitter at `ctx.now` (the discipline may
    /// drop or mark on the way): its sojourn is recorded and a CE mark is
    /// written into the parked packet. `busy` says whether one came out.
    #[inline]
    pub(crate) fn dequeue(
        &mut self,
        ctx: &mut Ctx,
        dropped: impl FnMut(&Packet),
    ) -> Option<Parked> {
        let next = self.q.dequeue(ctx.now, &mut self.out);
        self.drop_discarded(ctx, dropped);
        let Some(qp) = next else {
            self.busy = false;
            return None;
        };
        self.busy = true;
        self.last_sojourn = ctx.now - qp.enq;
        self.sojourn.record(self.last_sojourn);
        let h = Parked::from_raw(qp.id);
        if qp.ecn != ctx.parked_mut(&h).seg.ecn {
            ctx.parked_mut(&h).seg.ecn = qp.ecn;
        }
        Some(h)
    }

    /// Hand the discipline's discarded packets to the engine.
    fn drop_discarded(&mut self, ctx: &mut Ctx, mut dropped: impl FnMut(&Packet)) {
        for (qp, why) in self.out.dropped.drain(..) {
            let p = ctx.unpark(Parked::from_raw(qp.id));
            // Both are drops at the queue (`drop_queue` events); the summary
            // row counts them apart (`drops_queue`, `drops_aqm`).
            let _: QDrop = why;
            dropped(&p);
            ctx.drop(p, DropKind::Queue);
        }
    }

    /// The summary columns of a managed queue.
    pub(crate) fn stats_into(&self, v: &mut serde_json::Value) {
        let s = self.q.stats();
        v["aqm"] = self.q.name().into();
        v["drops_queue"] = s.drops_limit.into();
        v["drops_aqm"] = s.drops_aqm.into();
        v["ecn_marks"] = s.ecn_marks.into();
        v["sojourn_p50_ms"] = self.sojourn.quantile_ms(0.5).into();
        v["sojourn_p99_ms"] = self.sojourn.quantile_ms(0.99).into();
    }
}
