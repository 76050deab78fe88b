//! Explicit Congestion Notification for TCP (RFC 3168 §6.1), as Linux runs
//! it (`net/ipv4/tcp_input.c`, `tcp_output.c`, `include/net/tcp.h`):
//!
//! - negotiation: an ECN-setup SYN carries ECE and CWR, the SYN-ACK that
//!   accepts it ECE alone (RFC 3168 §6.1.1; `tcp_ecn_send_syn`,
//!   `tcp_ecn_make_synack`, `tcp_ecn_rcv_synack`, `tcp_ecn_create_request`);
//! - the sender marks new data ECT(0), never retransmissions, SYNs or pure
//!   ACKs (§6.1.5; `tcp_ecn_send`);
//! - the receiver, after a CE-marked data segment, sets ECE on every ACK
//!   until a data segment with CWR arrives (§6.1.3; `tcp_ecn_check_ce`,
//!   `tcp_ecn_accept_cwr`), and acknowledges the first CE at once
//!   (`tcp_enter_quickack_mode`);
//! - the sender answers ECE at most once per window: it enters CWR
//!   (`tcp_enter_cwr`: ssthresh from the congestion control, PRR from the
//!   prior cwnd until everything sent before is acknowledged,
//!   `tcp_cwnd_reduction`, `tcp_end_cwnd_reduction`) and sets CWR on the
//!   next new data segment (`tcp_ecn_queue_cwr`). A loss recovery or
//!   timeout queues CWR too; a recovery that starts during CWR keeps its
//!   ssthresh (`tcp_enter_recovery` reduces only outside a reduction).
//!
//! `Connection` calls these at the steps named; the cwnd arithmetic of CWR
//! runs in `connection.rs` beside loss recovery's (`enter_cwr`, `cwr_step`).

use crate::recovery::{Prr, PrrBound};
use crate::segment::{Flags, Segment};

/// IP ECN codepoints (RFC 3168 §5).
pub const NOT_ECT: u8 = 0;
pub const ECT1: u8 = 1;
pub const ECT0: u8 = 2;
pub const CE: u8 = 3;

/// Whether the endpoint uses ECN (Linux's `net.ipv4.tcp_ecn`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EcnMode {
    /// Never (tcp_ecn = 0).
    #[default]
    Off,
    /// Request it on connections it opens and accept it (tcp_ecn = 1).
    On,
    /// Accept it when the peer asks, never request it (tcp_ecn = 2, Linux's
    /// default).
    Passive,
}

impl EcnMode {
    pub const NAMES: [&'static str; 3] = ["off", "on", "passive"];
    pub fn parse(s: &str) -> Option<EcnMode> {
        match s {
            "off" => Some(EcnMode::Off),
            "on" => Some(EcnMode::On),
            "passive" => Some(EcnMode::Passive),
            _ => None,
        }
    }
}

/// One endpoint's ECN state.
#[derive(Clone, Debug, Default)]
pub struct Ecn {
    mode: EcnMode,
    /// Negotiated (TCP_ECN_OK).
    ok: bool,
    /// The peer's SYN asked for ECN (server side).
    peer_asked: bool,
    /// Receiver: echo ECE until CWR arrives (TCP_ECN_DEMAND_CWR).
    demand_cwr: bool,
    /// Sender: set CWR on the next new data segment (TCP_ECN_QUEUE_CWR).
    queue_cwr: bool,
    /// Sender: in the CWR state, until snd_una passes `high_seq`.
    cwr: Option<Cwr>,
    /// A scalable congestion control (DCTCP): data is ECT(1), and the
    /// receiver echoes each segment's CE state instead of latching ECE
    /// until CWR (RFC 8257 §3.2, `dctcp_ece_ack_update()`).
    scalable: bool,
    /// Receiver, scalable: the CE state of the latest data segment.
    ce_state: bool,
    pub stats: EcnStats,
}

#[derive(Clone, Copy, Debug)]
pub struct Cwr {
    pub high_seq: u64,
    pub prr: Prr,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EcnStats {
    /// CE-marked data segments received.
    pub ce_received: u64,
    /// ACKs with ECE received (sender).
    pub ece_received: u64,
    /// cwnd reductions for ECE (CWR entered).
    pub cwr_reductions: u64,
}

impl Ecn {
    pub fn new(mode: EcnMode) -> Ecn {
        Ecn {
            mode,
            ..Default::default()
        }
    }

    /// The endpoint of a scalable congestion control (DCTCP): it always
    /// asks for and accepts ECN (`TCP_CONG_NEEDS_ECN`), sends ECT(1) and
    /// echoes CE per segment.
    pub fn scalable() -> Ecn {
        Ecn {
            mode: EcnMode::On,
            scalable: true,
            ..Default::default()
        }
    }

    pub fn ok(&self) -> bool {
        self.ok
    }

    /// tcp_ecn_send_syn(): an ECN-setup SYN carries ECE | CWR;
    /// tcp_ecn_make_synack(): a SYN-ACK accepting it, ECE.
    pub fn on_send_syn(&mut self, seg: &mut Segment, synack: bool) {
        if synack {
            if self.peer_asked && self.mode != EcnMode::Off {
                seg.flags |= Flags::ECE;
                self.ok = true;
            }
        } else if self.mode == EcnMode::On {
            seg.flags |= Flags::ECE | Flags::CWR;
        }
    }

    /// A SYN (server: tcp_ecn_create_request) or SYN-ACK (client:
    /// tcp_ecn_rcv_synack) arrived.
    pub fn on_rcv_syn(&mut self, seg: &Segment) {
        let (ece, cwr) = (
            seg.flags.contains(Flags::ECE),
            seg.flags.contains(Flags::CWR),
        );
        if seg.flags.ack() {
            // The SYN-ACK accepts ECN with ECE and without CWR.
            self.ok = self.mode == EcnMode::On && ece && !cwr;
        } else {
            self.peer_asked = ece && cwr;
        }
    }

    /// tcp_ecn_send(): a new data segment is ECT(0) and carries a queued CWR.
    pub fn on_send_new_data(&mut self, seg: &mut Segment) {
        if !self.ok {
            return;
        }
        seg.ecn = if self.scalable { ECT1 } else { ECT0 };
        if self.queue_cwr {
            self.queue_cwr = false;
            seg.flags |= Flags::CWR;
        }
    }

    /// tcp_ecn_send() for ACKs: ECE while the receiver demands CWR.
    pub fn on_send_ack(&self, seg: &mut Segment) {
        if self.ok && self.demand_cwr && !seg.flags.syn() {
            seg.flags |= Flags::ECE;
        }
    }

    /// A data segment arrived (tcp_ecn_accept_cwr, then tcp_ecn_check_ce).
    /// Returns true when it should be acknowledged at once (the first CE).
    pub fn on_rcv_data(&mut self, seg: &Segment) -> bool {
        if !self.ok {
            return false;
        }
        if self.scalable {
            // RFC 8257 §3.2, dctcp_ece_ack_update(): ECE mirrors the CE state
            // of the latest data segment; a change is acknowledged at once
            // (a delayed ACK still held goes first with the prior state:
            // the connection's `prior_state_ack`).
            let ce = seg.ecn == CE;
            self.stats.ce_received += ce as u64;
            let changed = ce != self.ce_state;
            self.ce_state = ce;
            self.demand_cwr = ce;
            return changed;
        }
        if seg.flags.contains(Flags::CWR) {
            self.demand_cwr = false;
        }
        if seg.ecn == CE {
            self.stats.ce_received += 1;
            if !self.demand_cwr {
                // "Better not delay acks, sender can have a very low cwnd."
                self.demand_cwr = true;
                return true;
            }
        }
        false
    }

    /// dctcp_ece_ack_update(): if `seg` changes a scalable receiver's CE
    /// state, the state before it.
    pub fn scalable_ce_change(&self, seg: &Segment) -> Option<bool> {
        (self.ok && self.scalable && (seg.ecn == CE) != self.ce_state).then_some(self.ce_state)
    }

    /// An ACK arrived (tcp_ecn_rcv_ecn_echo): does it echo congestion
    /// (FLAG_ECE)? The connection decides what that does, in
    /// tcp_fastretrans_alert()'s order: a running reduction ends first when
    /// the ACK is above its `high_seq`, then an ECE in the Open state
    /// starts one (`tcp_try_to_open()` → `tcp_enter_cwr()`), so at most one
    /// per window.
    pub fn on_ack_ece(&mut self, seg: &Segment) -> bool {
        if !(self.ok && seg.flags.contains(Flags::ECE) && !seg.flags.syn()) {
            return false;
        }
        self.stats.ece_received += 1;
        true
    }

    /// tcp_enter_cwr() / tcp_init_cwnd_reduction(): the reduction runs until
    /// everything sent so far (`snd_max`) is acknowledged; PRR from the
    /// prior cwnd, with the flow's reduction bound (`tcp_cwnd_reduction`
    /// serves both CWR and loss recovery).
    pub fn start_cwr(&mut self, snd_max: u64, prior_cwnd: u64, bound: PrrBound) {
        self.cwr = Some(Cwr {
            high_seq: snd_max,
            prr: Prr::start(bound, prior_cwnd),
        });
        self.stats.cwr_reductions += 1;
        self.queue_cwr();
    }

    pub fn in_cwr(&self) -> bool {
        self.cwr.is_some()
    }

    pub fn cwr_mut(&mut self) -> Option<&mut Cwr> {
        self.cwr.as_mut()
    }

    /// Leave CWR (tcp_end_cwnd_reduction, or a recovery or timeout taking
    /// over); returns whether it was on.
    pub fn end_cwr(&mut self) -> bool {
        self.cwr.take().is_some()
    }

    /// tcp_ecn_queue_cwr(): after any cwnd reduction.
    pub fn queue_cwr(&mut self) {
        if self.ok {
            self.queue_cwr = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn syn() -> Segment {
        Segment {
            flags: Flags::SYN,
            ..Default::default()
        }
    }

    #[test]
    fn negotiation_follows_rfc3168_6_1_1() {
        for (client, server, ok) in [
            (EcnMode::On, EcnMode::On, true),
            (EcnMode::On, EcnMode::Passive, true),
            (EcnMode::On, EcnMode::Off, false),
            (EcnMode::Passive, EcnMode::On, false),
            (EcnMode::Off, EcnMode::Passive, false),
        ] {
            let (mut c, mut s) = (Ecn::new(client), Ecn::new(server));
            let mut a = syn();
            c.on_send_syn(&mut a, false);
            s.on_rcv_syn(&a);
            let mut b = Segment {
                flags: Flags::SYN | Flags::ACK,
                ..Default::default()
            };
            s.on_send_syn(&mut b, true);
            c.on_rcv_syn(&b);
            assert_eq!((c.ok(), s.ok()), (ok, ok), "{client:?} → {server:?}");
            if ok {
                assert!(a.flags.contains(Flags::ECE | Flags::CWR));
                assert!(b.flags.contains(Flags::ECE) && !b.flags.contains(Flags::CWR));
            }
        }
        // A SYN-ACK echoing both ECE and CWR (a reflecting middlebox) is not
        // an acceptance.
        let mut c = Ecn::new(EcnMode::On);
        c.on_rcv_syn(&Segment {
            flags: Flags::SYN | Flags::ACK | Flags::ECE | Flags::CWR,
            ..Default::default()
        });
        assert!(!c.ok());
    }

    fn negotiated() -> Ecn {
        let mut e = Ecn::new(EcnMode::On);
        e.ok = true;
        e
    }

    /// A 1000-byte data segment with the IP ECN field `ecn`.
    fn data(ecn: u8, flags: Flags) -> Segment {
        Segment {
            ecn,
            flags,
            payload_len: 1000,
            ..Default::default()
        }
    }

    /// Whether the receiver's next ACK carries ECE.
    fn echoes(r: &Ecn) -> bool {
        let mut a = Segment {
            flags: Flags::ACK,
            ..Default::default()
        };
        r.on_send_ack(&mut a);
        a.flags.contains(Flags::ECE)
    }

    #[test]
    fn receiver_echoes_ece_from_ce_until_cwr() {
        let mut r = negotiated();
        assert!(!r.on_rcv_data(&data(ECT0, Flags::ACK)));
        assert!(!echoes(&r));
        assert!(r.on_rcv_data(&data(CE, Flags::ACK)), "first CE: ACK now");
        assert!(echoes(&r));
        assert!(!r.on_rcv_data(&data(CE, Flags::ACK)), "already echoing");
        assert!(!r.on_rcv_data(&data(ECT0, Flags::ACK)));
        assert!(echoes(&r), "until CWR");
        r.on_rcv_data(&data(ECT0, Flags::ACK | Flags::CWR));
        assert!(!echoes(&r));
        // CWR and CE together: the CE starts a new echo.
        r.on_rcv_data(&data(CE, Flags::ACK | Flags::CWR));
        assert!(echoes(&r));
        assert_eq!(r.stats.ce_received, 3);
    }

    #[test]
    fn sender_sees_ece_and_sends_cwr_on_new_data_only() {
        let mut s = negotiated();
        let ece = Segment {
            flags: Flags::ACK | Flags::ECE,
            ..Default::default()
        };
        assert!(s.on_ack_ece(&ece));
        assert!(!s.on_ack_ece(&Segment {
            flags: Flags::ACK,
            ..Default::default()
        }));
        s.start_cwr(100_000, 50_000, PrrBound::Ssrb);
        assert!(s.in_cwr());
        // (Once per window is the connection's: it starts no reduction while
        // one runs; tests/ecn.rs.)
        let mut d = Segment::default();
        s.on_send_new_data(&mut d);
        assert_eq!(d.ecn, ECT0);
        assert!(d.flags.contains(Flags::CWR));
        let mut d2 = Segment::default();
        s.on_send_new_data(&mut d2);
        assert!(!d2.flags.contains(Flags::CWR));
        assert!(s.end_cwr());
        assert!(!s.in_cwr());
        assert_eq!(s.stats.ece_received, 1);
        assert_eq!(s.stats.cwr_reductions, 1);
        // Without negotiation nothing is ECT and ECE means nothing.
        let mut off = Ecn::new(EcnMode::Passive);
        let mut d = Segment::default();
        off.on_send_new_data(&mut d);
        assert_eq!(d.ecn, NOT_ECT);
        assert!(!off.on_ack_ece(&ece));
    }

    /// RFC 8257 §3.2 (dctcp_ece_ack_update()): a scalable endpoint sends
    /// ECT(1), and its receiver's ECE follows the CE state of the latest
    /// data segment, with an immediate ACK at each change; CWR plays no
    /// part.
    #[test]
    fn a_scalable_receiver_echoes_each_segments_ce_state() {
        let mut r = Ecn::scalable();
        r.ok = true;
        let mut d = Segment::default();
        r.on_send_new_data(&mut d);
        assert_eq!(d.ecn, ECT1);
        assert!(!r.on_rcv_data(&data(ECT1, Flags::ACK)));
        assert!(!echoes(&r));
        assert!(r.on_rcv_data(&data(CE, Flags::ACK)), "0 → 1: ACK now");
        assert!(echoes(&r));
        assert!(
            !r.on_rcv_data(&data(CE, Flags::ACK | Flags::CWR)),
            "no change"
        );
        assert!(echoes(&r), "CWR does not end the echo");
        assert!(r.on_rcv_data(&data(ECT1, Flags::ACK)), "1 → 0: ACK now");
        assert!(!echoes(&r), "no latching");
        assert_eq!(r.stats.ce_received, 2);
    }
}
