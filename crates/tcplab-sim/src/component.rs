//! Path components ("hops"): links, radio bearers, middleboxes, shared media.
//!
//! Every hop implements `Component`. The engine hands it each packet that
//! reaches it (`on_packet`) and each timer it set (`on_timer`), together with
//! a `Ctx` through which it forwards packets to the next hop of their route,
//! drops them, sets timers, taps them into pcap files, or injects new packets
//! (a PEP's pseudo-ACKs). A hop never sees the endpoints or other hops.

use crate::config::PcapConfig;
use crate::engine::{Dir, Engine, Ev, Packet};
use crate::pcap::PcapWriter;
use std::path::{Path, PathBuf};
use tcplab_tcp::Time;

/// Why a component discarded a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropKind {
    /// Tail drop at a full queue.
    Queue,
    /// Lost on the wire / radio (error model).
    Loss,
}

/// The engine's side of a component call.
pub struct Ctx<'a> {
    pub now: Time,
    /// This component's index.
    pub hop: usize,
    pub(crate) eng: &'a mut Engine,
}

impl Ctx<'_> {
    /// The packet leaves this hop and reaches the next hop of its route at `at`.
    #[inline]
    pub fn forward(&mut self, mut p: Packet, at: Time) {
        p.hop += 1;
        let i = self.eng.slab.put(p);
        self.eng.q.push(at, Ev::Arrive(i));
    }

    /// The packet leaves this hop and reaches the next hop now, after the
    /// current event (FIFO among such immediate arrivals). Components that
    /// keep their own time-ordered pipe use this from `on_timer`, which keeps
    /// the engine's event heap small.
    #[inline]
    pub fn forward_now(&mut self, mut p: Packet) {
        p.hop += 1;
        let i = self.eng.slab.put(p);
        self.eng.immediate.push(i);
    }

    /// Park a packet in the engine's slab; a component that holds packets in
    /// a FIFO keeps the returned handle (4 bytes) instead of the packet
    /// (128 bytes), and hands it back with `forward_parked_now`.
    #[inline]
    pub(crate) fn park(&mut self, p: Packet) -> Parked {
        Parked(self.eng.slab.put(p))
    }

    /// `forward_now` for a parked packet: it is not copied on the way.
    #[inline]
    pub(crate) fn forward_parked_now(&mut self, h: Parked) {
        self.eng.slab.get_mut(h.0).hop += 1;
        self.eng.immediate.push(h.0);
    }

    /// Take a parked packet back out of the slab (a queue discarding it).
    #[inline]
    pub(crate) fn unpark(&mut self, h: Parked) -> Packet {
        self.eng.slab.take(h.0)
    }

    /// A parked packet, to change in place (a queue marking it CE).
    #[inline]
    pub(crate) fn parked_mut(&mut self, h: &Parked) -> &mut Packet {
        self.eng.slab.get_mut(h.0)
    }

    /// Discard a packet (it is counted and logged).
    #[inline]
    pub fn drop(&mut self, p: Packet, kind: DropKind) {
        self.eng.drops.push((p, kind));
    }

    /// The component keeps the packet's content and ends its life as a
    /// packet (a PEP acknowledging data it will resend itself). `p` is
    /// the packet absorbed.
    pub fn absorb(&mut self, p: &Packet) {
        self.eng.absorbed += 1;
        if self.eng.track_absorbed && p.dir == Dir::Fwd && !p.udp && p.seg.payload_len > 0 {
            self.eng.absorbed_data.push((p.flow, p.conn, p.sent_at));
        }
    }

    /// Call `on_timer(token)` on this component at `at`.
    #[inline]
    pub fn timer(&mut self, at: Time, token: u64) {
        let hop = self.hop as u32;
        self.eng.q.push(at, Ev::HopTimer { hop, token });
    }

    /// A fresh packet id for a packet the component creates.
    pub fn new_uid(&mut self) -> u64 {
        let u = self.eng.uid;
        self.eng.uid += 1;
        u
    }

    /// Send a packet the component created (uid from `new_uid`) from this
    /// hop in the direction `p.dir`: it reaches the next hop of its flow's
    /// route in that direction at `at` (`at == now`: after the current event).
    /// `p.hop` is set by the engine. A PEP uses it for pseudo-ACKs toward the
    /// sender (`Dir::Rev`) and for its own segments toward the receiver.
    pub fn emit(&mut self, p: Packet, at: Time) {
        self.eng.emitted.push((p, at));
    }

    /// Do packets carry real bytes (real-time emulation)? A component that
    /// creates data segments must then supply their payload
    /// (`emit_payload`).
    pub fn real_bytes(&self) -> bool {
        self.eng.real_bytes
    }

    /// The TCP payload of the packet being handled (real time and
    /// `Component::wants_bytes` only; empty otherwise).
    pub fn payload(&self) -> &[u8] {
        &self.eng.payload_in
    }

    /// Real time: the payload of a packet this call emits (`a` then `b`,
    /// e.g. the two halves of a ring buffer); `uid` is the packet's.
    pub fn emit_payload(&mut self, uid: u64, a: &[u8], b: &[u8]) {
        let start = self.eng.payload_out.len() as u32;
        self.eng.payload_out.extend_from_slice(a);
        self.eng.payload_out.extend_from_slice(b);
        self.eng
            .payload_spans
            .push((uid, start, (a.len() + b.len()) as u32));
    }

    /// Record `p` in this hop's pcap tap (if any) as leaving at `t`.
    #[inline]
    pub fn tap(&mut self, p: &Packet, t: Time) {
        // Runs without pcap (nearly all) skip the call.
        if !self.eng.taps.writers.is_empty() {
            self.eng.taps.record(self.hop, p, t, self.now);
        }
    }
}

/// A packet parked in the engine's slab (`Ctx::park`). Each handle is used
/// once: `forward_parked_now` releases it. A queue discipline holds the
/// raw index (`queue::QPkt::id`) and rebuilds the handle with `from_raw`.
#[derive(Debug)]
pub(crate) struct Parked(u32);

impl Parked {
    #[inline]
    pub(crate) fn raw(&self) -> u32 {
        self.0
    }
    #[inline]
    pub(crate) fn from_raw(i: u32) -> Parked {
        Parked(i)
    }
}

pub trait Component {
    /// A packet reached this hop (direction in `p.dir`).
    fn on_packet(&mut self, p: Packet, ctx: &mut Ctx);

    /// A timer set with `ctx.timer` fired.
    fn on_timer(&mut self, _token: u64, _ctx: &mut Ctx) {}

    /// Per-direction rows for the run summary (`name`, `dir` and counters).
    fn stats(&self, name: &str) -> Vec<serde_json::Value>;

    /// Does the component read packets' payload (`Ctx::payload`)? The
    /// real-time driver copies it only for those that do.
    fn wants_bytes(&self) -> bool {
        false
    }

    /// Packets the component holds at the end of the run (queued, buffered).
    fn held(&self) -> u64 {
        0
    }

    /// Total packets transmitted by the component (for the `packets` count).
    fn tx_packets(&self) -> u64;

    /// Invariant violations the component detected (checked at the end of
    /// every run, added to the run's `violations`).
    fn violations(&self) -> Vec<String> {
        Vec::new()
    }

    /// Why bytes the component took on were not delivered (a PEP whose own
    /// connection toward the receiver gave up), added to the run's notes.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }

    /// Packets waiting or in service in direction `dir` at `now`, for
    /// components with a queue an endpoint host can observe (the local
    /// interface queue; used by receiver ACK congestion control).
    fn backlog(&mut self, _dir: Dir, _now: Time) -> Option<u64> {
        None
    }

    /// Packets queued or in service in direction `dir` at `now`, for the
    /// queue samples of a traced run (`SimConfig::trace`); `None` where the
    /// component has no queue to report. Must not change what the component
    /// does next.
    fn queue_len(&mut self, dir: Dir, now: Time) -> Option<u64> {
        self.backlog(dir, now)
    }

    /// The queueing delay of a managed queue (`aqm`) in direction `dir`:
    /// the sojourn of the latest packet to leave it, ns; `None` for queues
    /// without a discipline. Must not change what the component does next.
    fn queue_delay(&mut self, _dir: Dir, _now: Time) -> Option<Time> {
        None
    }
}

/// pcap taps: hop × direction → writer.
#[derive(Default)]
pub struct Taps {
    /// hop → direction → the captures that see it (several may overlap).
    pub(crate) map: Vec<[Vec<usize>; 2]>,
    pub(crate) writers: Vec<PcapWriter>,
    /// Each capture's file name (where it is renamed to when complete).
    pub(crate) paths: Vec<String>,
    /// Where each capture is written meanwhile (`part_path`).
    parts: Vec<PathBuf>,
    /// The first write error (`finish` returns it, naming the file).
    pub(crate) errors: Vec<String>,
    /// `finish` renamed the files into place.
    finished: bool,
    pub(crate) ip_id: u16,
    /// Real-time emulation (`emu`): packets carry real bytes, so a tap only
    /// notes (writer, packet id, time) here and the driver writes the bytes.
    pub(crate) deferred: Option<Vec<(usize, u64, Time)>>,
}

/// Addresses for pcap: flow f's sender is 10.1.x.y, its receiver 10.2.x.y;
/// cross traffic 10.3.x.y → 10.4.x.y (x.y = index + 1).
pub fn addr(net: u8, idx: u32) -> [u8; 4] {
    let v = idx + 1;
    [10, net, (v >> 8) as u8, v as u8]
}

/// Errors writing an output file start with this (and name the file): the
/// bindings raise them as `OSError` (exit status 1), not as bad input.
pub const OUTPUT_ERROR: &str = "cannot write ";

/// Where a capture is written until the run completes: `.NAME.part` beside
/// `NAME`, so that a run killed meanwhile leaves no file that looks complete.
pub fn part_path(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{}.part", name.unwrap_or_default()))
}

impl Taps {
    /// The writers of the run's `[[pcap]]` captures on a path of `hops` hops
    /// (a two-direction capture writes its records in time order). Each is
    /// written to its `part_path` and renamed into place by `finish`.
    pub(crate) fn open(pcap: &[PcapConfig], hops: usize) -> Result<Taps, String> {
        let mut taps = Taps::default();
        taps.map = vec![[Vec::new(), Vec::new()]; hops];
        for (i, p) in pcap.iter().enumerate() {
            let part = part_path(Path::new(&p.path));
            let mut w = PcapWriter::create(&part, p.payload_snaplen)
                .map_err(|e| format!("pcap[{i}].file: cannot create {:?}: {e}", p.path))?;
            if p.dir == "both" {
                w = w.ordered();
            }
            let idx = taps.writers.len();
            taps.writers.push(w);
            taps.paths.push(p.path.clone());
            taps.parts.push(part);
            let m = &mut taps.map[p.hop];
            match p.dir.as_str() {
                "fwd" => m[0].push(idx),
                "rev" => m[1].push(idx),
                _ => {
                    m[0].push(idx);
                    m[1].push(idx);
                }
            }
        }
        Ok(taps)
    }

    /// Record `p`, leaving hop `hop` at `t` (≥ `now`: no packet tapped
    /// later leaves before `now`), in every capture of its direction there.
    #[inline]
    fn record(&mut self, hop: usize, p: &Packet, t: Time, now: Time) {
        let Some(m) = self.map.get(hop) else {
            return;
        };
        if m[p.dir as usize].is_empty() {
            return;
        }
        if let Some(d) = self.deferred.as_mut() {
            d.extend(m[p.dir as usize].iter().map(|&w| (w, p.uid, t)));
            return;
        }
        self.ip_id = self.ip_id.wrapping_add(1);
        let ttl = 64u8.saturating_sub(p.hop as u8);
        for k in 0..self.map[hop][p.dir as usize].len() {
            let w = self.map[hop][p.dir as usize][k];
            if let Err(e) = self.record_one(w, p, t, ttl, now) {
                self.failed(w, e);
                self.map[hop] = [Vec::new(), Vec::new()];
                return;
            }
        }
    }

    /// Note the first write error of capture `w` (the run ends with it).
    pub(crate) fn failed(&mut self, w: usize, e: std::io::Error) {
        if self.errors.is_empty() {
            self.errors
                .push(format!("{OUTPUT_ERROR}{}: {e}", self.paths[w]));
        }
    }

    /// A write failed: the run stops and reports it.
    pub(crate) fn has_failed(&self) -> bool {
        !self.errors.is_empty()
    }

    /// End of a complete run: write what is held, flush, and rename each
    /// capture from its `part_path` to its name. The first write error of
    /// the run (or of this) is returned as `cannot write FILE: reason`.
    pub(crate) fn finish(&mut self) -> Result<(), String> {
        if let Some(e) = self.errors.first() {
            return Err(e.clone());
        }
        for w in 0..self.writers.len() {
            if let Err(e) = self.writers[w].flush() {
                self.failed(w, e);
                return Err(self.errors[0].clone());
            }
        }
        for (part, path) in self.parts.iter().zip(&self.paths) {
            std::fs::rename(part, path).map_err(|e| format!("{OUTPUT_ERROR}{path}: {e}"))?;
        }
        self.finished = true;
        Ok(())
    }

    fn record_one(
        &mut self,
        w: usize,
        p: &Packet,
        t: Time,
        ttl: u8,
        now: Time,
    ) -> std::io::Result<()> {
        let res = if p.udp {
            self.writers[w].write_udp(
                t,
                addr(3, p.flow),
                addr(4, p.flow),
                self.ip_id,
                ttl,
                50000,
                50001,
                p.size.saturating_sub(28),
            )
        } else {
            let (s, d) = match p.dir {
                Dir::Fwd => (addr(1, p.flow), addr(2, p.flow)),
                Dir::Rev => (addr(2, p.flow), addr(1, p.flow)),
            };
            self.writers[w].write_tcp(t, s, d, self.ip_id, ttl, &p.seg)
        };
        res?;
        self.writers[w].release_until(now)
    }
}

impl Drop for Taps {
    /// A run that did not complete (interrupted, failed) keeps what its
    /// captures hold as `NAME.incomplete`, never under `NAME`.
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        for w in &mut self.writers {
            let _ = w.flush();
        }
        for (part, path) in self.parts.iter().zip(&self.paths) {
            let _ = std::fs::rename(part, format!("{path}.incomplete"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capture(dir: &Path, name: &str) -> PcapConfig {
        serde_json::from_value(serde_json::json!({
            "hop": 0, "dir": "both", "path": dir.join(name).to_string_lossy(),
        }))
        .unwrap()
    }

    fn fresh_dir(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tcplab-taps-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_capture_gets_its_name_only_when_the_run_completes() {
        let dir = fresh_dir("ok");
        let mut taps = Taps::open(&[capture(&dir, "a.pcap")], 1).unwrap();
        assert!(!dir.join("a.pcap").exists());
        assert!(dir.join(".a.pcap.part").exists());
        taps.finish().unwrap();
        drop(taps);
        assert!(dir.join("a.pcap").exists());
        assert!(!dir.join(".a.pcap.part").exists());
        assert!(!dir.join("a.pcap.incomplete").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_unfinished_capture_is_kept_as_incomplete() {
        let dir = fresh_dir("drop");
        drop(Taps::open(&[capture(&dir, "a.pcap")], 1).unwrap());
        assert!(!dir.join("a.pcap").exists());
        assert!(!dir.join(".a.pcap.part").exists());
        assert_eq!(
            std::fs::read(dir.join("a.pcap.incomplete")).unwrap().len(),
            24
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_write_error_fails_the_run_naming_the_file() {
        let dir = fresh_dir("err");
        let mut taps = Taps::open(&[capture(&dir, "a.pcap")], 1).unwrap();
        let full = || std::io::Error::from_raw_os_error(28);
        taps.failed(0, full());
        taps.failed(0, std::io::Error::other("later"));
        assert!(taps.has_failed());
        let e = taps.finish().unwrap_err();
        let path = dir.join("a.pcap");
        assert_eq!(
            e,
            format!("{OUTPUT_ERROR}{}: {}", path.display(), full()),
            "the first error, with the file"
        );
        drop(taps);
        assert!(!path.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
