//! tcplab-tcp: one sans-IO TCP endpoint, configured per scenario.
//!
//! The endpoint (`Connection`) is a pure state machine in the style of
//! quinn-proto: the driver hands it segments (`handle_segment`) and the time
//! (`handle_timeout`), and pulls segments to send (`poll_transmit`), the next
//! timer deadline (`poll_timeout`) and events (`poll_event`). It never reads a
//! clock, owns a socket or sleeps.
//!
//! Each mechanism lives in one module behind a small interface: RTO estimation
//! (`rto`), congestion control (`cc`), the sender scoreboard used by NewReno
//! and SACK recovery (`scoreboard`), receive reassembly and SACK/DSACK
//! generation (`reasm`), the receiver's ACK policy (`ack_policy`) and
//! advertised window (`rcv_window`), and spurious-timeout detection
//! (`spurious`).

pub mod ack_cc;
pub mod ack_policy;
pub mod cc;
pub mod config;
pub mod connection;
pub mod ecn;
pub mod events;
pub mod give_up;
pub mod jiffies;
pub mod pacing;
pub mod rate;
pub mod rcv_window;
pub mod reasm;
pub mod recovery;
pub mod rto;
pub mod scoreboard;
pub mod segment;
pub mod seq;
pub mod sndbuf;
pub mod spurious;
pub mod tso;
pub mod wire;

pub use config::{AckPolicyConfig, CcKind, Config, RtoProfile, RttEstimatorKind};
pub use connection::{Connection, State, Stats};
pub use events::{Event, RtxReason};
pub use give_up::{GiveUp, GiveUpKind};
pub use segment::{Flags, SackBlock, Segment, TcpOptions};
pub use spurious::{DetectorKind, FrResponseKind, MissCause, ResponseKind};

/// Simulated or real time in integer nanoseconds.
pub type Time = u64;

pub const NS_PER_MS: u64 = 1_000_000;
pub const NS_PER_S: u64 = 1_000_000_000;
/// The longest time any setting may take: 10⁶ hours (3.6·10¹⁸ ns, about
/// 114 years). With every configured time at most this and a run at most
/// this long, a time plus a few such settings still fits a `Time`; the few
/// places that accumulate (a link's busy-until, backoffs) saturate instead.
pub const MAX_TIME_NS: Time = 1_000_000 * 3_600 * NS_PER_S;
