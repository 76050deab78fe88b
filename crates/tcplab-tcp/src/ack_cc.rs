//! ACK congestion control at the receiver (RFC 3449 §4.3): the receiver
//! varies its delayed-ACK factor `d` (ACK every `d` full segments) with the
//! congestion of the reverse path — multiplicative increase on congestion,
//! linear decrease otherwise — so fewer ACKs compete for a thin uplink.
//!
//! Congestion signal. RFC 3449 §4.3 (and RFC 5690's ACK Ratio) learns of
//! reverse-path congestion from ECN marks / lost ACKs relayed by the sender.
//! Here the receiving host is the one that feeds the slow uplink, so it reads
//! the congestion of its own interface queue directly (the local knowledge
//! RFC 3449 §4.8 "backpressure" relies on): after sending an ACK the driver
//! reports how many packets wait ahead of it in the uplink queue. At least
//! `queue_threshold` waiting = congestion.
//!
//! Bounds: `d` never falls below the configured ACK policy's `every_n` and
//! never exceeds `max_ratio` (default: half the receive window in segments,
//! so a window still gets at least two ACKs — RFC 3449 §4.3 warns that the
//! sender's window must keep receiving ACKs; the bound is tcplab's choice).

/// Receiver-side ACK congestion control settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckCcConfig {
    /// Packets waiting ahead of a just-sent ACK in the local uplink queue
    /// that count as congestion (≥ 1).
    pub queue_threshold: u32,
    /// Largest ACK ratio (0 = half the receive window in segments).
    pub max_ratio: u32,
}

#[derive(Debug)]
pub struct AckRatioController {
    d: u32,
    d_min: u32,
    d_max: u32,
    threshold: u32,
    /// ACKs sent since `d` last changed.
    acks_since_change: u32,
    congested_since_change: bool,
    /// `d` has changed at least once.
    changed: bool,
    /// Receive window in segments (to count "a window's worth" of ACKs).
    window_segs: u32,
}

impl AckRatioController {
    pub fn new(cfg: AckCcConfig, every_n: u32, rcv_buf: u64, mss: u32) -> Self {
        let window_segs = ((rcv_buf / mss as u64) as u32).max(1);
        let d_max = if cfg.max_ratio > 0 {
            cfg.max_ratio
        } else {
            window_segs / 2
        }
        .max(every_n);
        AckRatioController {
            d: every_n,
            d_min: every_n,
            d_max,
            threshold: cfg.queue_threshold.max(1),
            acks_since_change: 0,
            congested_since_change: false,
            changed: false,
            window_segs,
        }
    }

    pub fn ratio(&self) -> u32 {
        self.d
    }

    pub fn max_ratio(&self) -> u32 {
        self.d_max
    }

    /// ACKs per window at the current ratio: the period over which `d` may
    /// change once (RFC 3449 §4.3 adapts `d` about once per window).
    fn acks_per_window(&self) -> u32 {
        self.window_segs.div_ceil(self.d).max(1)
    }

    /// An ACK was sent and found `queued_ahead` packets ahead of it in the
    /// uplink queue. Returns the ACK ratio to use from now on.
    pub fn on_ack_sent(&mut self, queued_ahead: u32) -> u32 {
        self.acks_since_change += 1;
        if queued_ahead >= self.threshold {
            self.congested_since_change = true;
            // RFC 3449 §4.3: multiplicative increase of d on congestion —
            // at once on the first signal, then at most once per window of
            // ACKs (the ACKs sent before the change still occupy the queue).
            if self.d < self.d_max
                && (!self.changed || self.acks_since_change >= self.acks_per_window())
            {
                self.d = (self.d * 2).min(self.d_max);
                self.changed = true;
                self.acks_since_change = 0;
                self.congested_since_change = false;
            }
        } else if self.acks_since_change >= self.acks_per_window() {
            // RFC 3449 §4.3: linear decrease of d (by one per window of ACKs
            // without congestion).
            if !self.congested_since_change && self.d > self.d_min {
                self.d -= 1;
                self.changed = true;
            }
            self.acks_since_change = 0;
            self.congested_since_change = false;
        }
        self.d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mimd_bounds() {
        let cfg = AckCcConfig {
            queue_threshold: 2,
            max_ratio: 0,
        };
        // 24 segments of window: d in [2, 12]
        let mut c = AckRatioController::new(cfg, 2, 24 * 1460, 1460);
        assert_eq!(c.max_ratio(), 12);
        assert_eq!(c.on_ack_sent(3), 4, "congestion doubles d");
        // within the same window no second doubling
        assert_eq!(c.on_ack_sent(3), 4);
        for _ in 0..10 {
            c.on_ack_sent(5);
        }
        assert_eq!(c.ratio(), 12, "capped at half the window");
        // a quiet uplink brings d down by one per window of ACKs
        let mut n = 0;
        while c.ratio() > 2 {
            c.on_ack_sent(0);
            n += 1;
            assert!(n < 1000);
        }
        assert_eq!(c.ratio(), 2, "never below every_n");
        assert!(n > 10, "decrease is linear and slow ({n} ACKs)");
    }
}
