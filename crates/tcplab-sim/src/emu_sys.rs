//! The emulator's real-time loop on Linux: two TUN devices, one thread,
//! `epoll` on both devices, a stop fd and a `timerfd` armed (absolute,
//! CLOCK_MONOTONIC) at the next event of `emu::Emu`.
//!
//! The caller creates the devices, moves them into their namespaces and
//! hands over the fds (`tcplab.emu` in Python). The loop ends when the stop
//! fd becomes readable (the caller writes to a pipe), or when a tcplab
//! client endpoint's transfer is over (`Emu::endpoint_done`).
//!
//! Real-time set-up unless `rt_priority` is 0, as cyclictest (rt-tests)
//! prepares its measuring threads: SCHED_FIFO, timer slack 1 ns, the thread
//! pinned to the CPU it starts on, the buffers every packet touches locked
//! (so faulted in before the first packet), and a `/dev/cpu_dma_latency`
//! request of 0 µs held while the loop runs (idle CPUs poll instead of
//! halting, so a timer wakes the thread in microseconds). The timer fires
//! `timer_lead_ns` before a deadline and the thread waits the rest on the
//! clock, within a budget (`spin_share` of one CPU per 10 ms window; past it
//! the thread sleeps until each deadline), so the spin never takes more than
//! that share of a CPU from the rest of the machine (and a busy emulator
//! stays clear of the kernel's real-time throttling, 95 % of a CPU by
//! default, which would stop it for 50 ms). What was achieved goes to `emulator.scheduling`.

use std::io;

use tcplab_tcp::Time;

use crate::config::SimConfig;
use crate::emu::{Emu, EmuOptions, Wire};
use crate::engine::Dir;

fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer to a timespec; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn realtime_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: as above.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn check(r: libc::c_int, what: &str) -> Result<libc::c_int, String> {
    if r < 0 {
        Err(format!("{what}: {}", io::Error::last_os_error()))
    } else {
        Ok(r)
    }
}

/// The two devices and the clock.
struct Tuns {
    /// [server side, client side].
    fds: [libc::c_int; 2],
    t0: u64,
    /// How long each TUN write took: the write runs the receiving Linux
    /// stack (softirq) in this thread, so a long one delays every release
    /// behind it.
    writes: Stalls,
}

impl Wire for Tuns {
    #[inline]
    fn send(&mut self, dir: Dir, bytes: &[u8]) -> bool {
        // Fwd packets came from the server side and go to the client side.
        let fd = self.fds[match dir {
            Dir::Fwd => 1,
            Dir::Rev => 0,
        }];
        let from = mono_ns();
        // SAFETY: fd is an open TUN device; bytes is a valid slice.
        let n = unsafe { libc::write(fd, bytes.as_ptr() as *const libc::c_void, bytes.len()) };
        self.writes.add(mono_ns() - from);
        n == bytes.len() as isize
    }

    #[inline]
    fn clock(&mut self) -> Time {
        mono_ns() - self.t0
    }
}

/// Closes the fds it owns on every exit path (also a panic).
struct Fd(libc::c_int);
impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: we own this fd.
        unsafe { libc::close(self.0) };
    }
}

const TOKEN_SERVER: u64 = 0;
const TOKEN_CLIENT: u64 = 1;
const TOKEN_STOP: u64 = 2;
const TOKEN_TIMER: u64 = 3;
/// Packets read from one device before the other gets its turn.
const BATCH: usize = 64;
/// The spin budget's window.
const SPIN_WINDOW_NS: u64 = 10_000_000;
/// The clock wait is cut into slices this long, the devices polled between.
const SPIN_SLICE_NS: u64 = 10_000;

/// Run the emulator between `fd_server` and `fd_client` (TUN fds, IFF_TUN |
/// IFF_NO_PI) until `stop_fd` is readable; returns the summary as JSON.
pub fn run(
    config_json: &str,
    options_json: &str,
    fd_server: i32,
    fd_client: i32,
    stop_fd: i32,
) -> Result<String, String> {
    let mut value: serde_json::Value =
        serde_json::from_str(config_json).map_err(|e| format!("config: {e}"))?;
    crate::config::resolve_base_dir(&mut value)?;
    let cfg: SimConfig = serde_json::from_value(value).map_err(|e| format!("config: {e}"))?;
    let opts: EmuOptions =
        serde_json::from_str(options_json).map_err(|e| format!("options: {e}"))?;
    let mut emu = Emu::new(cfg, &opts)?;
    let rt = (opts.rt_priority > 0).then(|| Rt::enter(opts.rt_priority, opts.pin_cpu));
    let fifo = rt.as_ref().is_some_and(|r| r.refused.is_none());
    // Only a SCHED_FIFO emulator asks more of the machine.
    let qos = if fifo { cpu_latency_request() } else { None };
    let hot = emu.hot_regions();
    let locked = if fifo { lock_regions(&hot) } else { 0 };
    let spin_budget = (SPIN_WINDOW_NS as f64 * opts.spin_share) as u64;
    let mut spin = Spin::default();
    // Where release lateness comes from, measured in the loop: the thread
    // woken late by its timer, and the CPU taken from it while it spun.
    let mut wake = Stalls::default();
    let mut spin_gaps = Stalls::default();
    let writes;
    // A device that cannot be read any more (deleted under the emulator,
    // its namespace removed): the run ends with this error instead of
    // polling a device that reports readiness and fails every read.
    let mut device_error: Option<String> = None;
    let usage;
    let clock_t0;

    // SAFETY: plain syscalls on fds we create or were given; every pointer
    // passed points to a live local.
    unsafe {
        for fd in [fd_server, fd_client] {
            let fl = check(libc::fcntl(fd, libc::F_GETFL), "fcntl")?;
            check(
                libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK),
                "fcntl",
            )?;
        }
        let ep = Fd(check(
            libc::epoll_create1(libc::EPOLL_CLOEXEC),
            "epoll_create1",
        )?);
        let tfd = Fd(check(
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            ),
            "timerfd_create",
        )?);
        for (fd, token) in [
            (fd_server, TOKEN_SERVER),
            (fd_client, TOKEN_CLIENT),
            (stop_fd, TOKEN_STOP),
            (tfd.0, TOKEN_TIMER),
        ] {
            let mut ev = libc::epoll_event {
                events: libc::EPOLLIN as u32,
                u64: token,
            };
            check(
                libc::epoll_ctl(ep.0, libc::EPOLL_CTL_ADD, fd, &mut ev),
                "epoll_ctl",
            )?;
        }
        let epoch = realtime_ns();
        let mut wire = Tuns {
            fds: [fd_server, fd_client],
            t0: mono_ns(),
            writes: Stalls::default(),
        };
        let mut armed: Option<Time> = None;
        // When the armed timer fires (model time, `lead` before `armed`).
        let mut fires_at: Time = 0;
        let mut buf = vec![0u8; 65536];
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; 8];
        emu.set_epoch(epoch);
        let usage0 = ThreadUsage::now();
        'outer: loop {
            let mut now = wire.clock();
            emu.run_due(now, &mut wire);
            if emu.endpoint_done() {
                // A tcplab client's transfer is over and off the path.
                break 'outer;
            }
            let next = emu.next_deadline();
            let lead = spin.lead(now, spin_budget, opts.timer_lead_ns);
            // A deadline closer than the thread's wake-up latency: poll the
            // devices, then wait on the clock (at most `lead` ns).
            let close = next.is_some_and(|at| at <= now + lead);
            if !close && next.is_some_and(|at| at <= now + opts.timer_lead_ns) {
                spin.lead_cut += 1;
            }
            if !close && next != armed {
                // Wake `lead` early; the spin below covers the rest.
                let at = next.map_or(0, |t| wire.t0 + t.saturating_sub(lead).max(1));
                let spec = libc::itimerspec {
                    it_interval: libc::timespec {
                        tv_sec: 0,
                        tv_nsec: 0,
                    },
                    // An all-zero it_value disarms; a deadline already past
                    // fires at once.
                    it_value: libc::timespec {
                        tv_sec: (at / 1_000_000_000) as libc::time_t,
                        tv_nsec: (at % 1_000_000_000) as libc::c_long,
                    },
                };
                check(
                    libc::timerfd_settime(
                        tfd.0,
                        libc::TFD_TIMER_ABSTIME,
                        &spec,
                        std::ptr::null_mut(),
                    ),
                    "timerfd_settime",
                )?;
                armed = next;
                fires_at = at.saturating_sub(wire.t0);
            }
            let timeout = if close { 0 } else { -1 };
            let n = libc::epoll_wait(ep.0, events.as_mut_ptr(), events.len() as i32, timeout);
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(format!("epoll_wait: {e}"));
            }
            if n == 0 {
                if let Some(at) = next.filter(|_| close) {
                    // In slices: the devices are polled between them, so
                    // a packet that arrives meanwhile enters on time.
                    let from = now;
                    let until = at.min(now + SPIN_SLICE_NS);
                    while now < until {
                        std::hint::spin_loop();
                        let t = wire.clock();
                        spin_gaps.add_gap(t - now);
                        now = t;
                    }
                    spin.spun(now - from);
                }
                continue;
            }
            for ev in &events[..n as usize] {
                match ev.u64 {
                    TOKEN_STOP => break 'outer,
                    TOKEN_TIMER => {
                        let mut x = 0u64;
                        libc::read(tfd.0, &mut x as *mut u64 as *mut libc::c_void, 8);
                        // The deadline passed: the timer is spent.
                        if armed.is_some() {
                            wake.add(wire.clock().saturating_sub(fires_at));
                        }
                        armed = None;
                    }
                    tok => {
                        let (fd, dir) = if tok == TOKEN_SERVER {
                            (fd_server, Dir::Fwd)
                        } else {
                            (fd_client, Dir::Rev)
                        };
                        for _ in 0..BATCH {
                            let r =
                                libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len());
                            if r < 0 {
                                let e = io::Error::last_os_error();
                                if !matches!(
                                    e.kind(),
                                    io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                                ) {
                                    let side = if tok == TOKEN_SERVER {
                                        "server"
                                    } else {
                                        "client"
                                    };
                                    device_error =
                                        Some(format!("reading the {side} side's TUN device: {e}"));
                                    break 'outer;
                                }
                            }
                            if r <= 0 {
                                break;
                            }
                            let t = wire.clock();
                            emu.inject(dir, &buf[..r as usize], t, &mut wire);
                        }
                    }
                }
            }
        }
        let now = wire.clock();
        emu.run_due(now, &mut wire);
        usage = ThreadUsage::now().since(&usage0);
        writes = wire.writes;
        clock_t0 = wire.t0;
    }
    if locked > 0 {
        for &(at, len) in &hot {
            // SAFETY: unlocking what lock_regions locked (a pool that grew
            // has left that allocation; unlocking it then is harmless).
            unsafe { libc::munlock(at as *const libc::c_void, len) };
        }
    }
    let qos_held = qos.is_some();
    drop(qos);
    let (main_cpu, refused) = match &rt {
        Some(r) => (r.cpu, r.refused.clone()),
        None => (None, None),
    };
    drop(rt);
    if let Some(e) = device_error {
        return Err(e);
    }
    let mut out = emu.finish()?;
    out["emulator"]["realtime"] = serde_json::Value::Bool(fifo);
    // Model time 0 on CLOCK_MONOTONIC: lays `late_releases` on the end
    // hosts' clocks.
    out["emulator"]["clock_t0_ns"] = clock_t0.into();
    out["emulator"]["scheduling"] = serde_json::json!({
        "policy": if fifo { "SCHED_FIFO" } else { "SCHED_OTHER" },
        "priority": if fifo { opts.rt_priority } else { 0 },
        "refused": refused,
        "cpu": main_cpu.filter(|_| fifo),
        "cpu_dma_latency_us": qos_held.then_some(0),
        "locked_bytes": locked,
        "timer_lead_us": opts.timer_lead_ns as f64 / 1000.0,
        "spin_share": opts.spin_share,
        "spin_s": spin.total as f64 * 1e-9,
        "lead_cut": spin.lead_cut,
        "thread": usage.to_json(),
    });
    out["emulator"]["stalls"] = serde_json::json!({
        "timer_wakeup": wake.to_json(),
        "spin_gap": spin_gaps.to_json(),
        "tun_write": writes.to_json(),
    });
    Ok(out.to_string())
}

/// The clock-wait accounting of the loop.
#[derive(Default)]
struct Spin {
    window_start: Time,
    /// ns spun in the current window.
    in_window: u64,
    total: u64,
    /// Deadlines within the lead that the thread slept for instead of
    /// waiting on the clock (the window's budget was spent).
    lead_cut: u64,
}

impl Spin {
    /// The lead for a wait that starts at `now`: `lead` while the window's
    /// spin budget lasts, then 0 (the timer alone: a close deadline costs a
    /// wake-up, not the rest of the machine's CPU).
    fn lead(&mut self, now: Time, budget: u64, lead: u64) -> u64 {
        if now >= self.window_start + SPIN_WINDOW_NS {
            self.window_start = now;
            self.in_window = 0;
        }
        if self.in_window < budget {
            lead
        } else {
            0
        }
    }

    fn spun(&mut self, ns: u64) {
        self.in_window += ns;
        self.total += ns;
    }
}

/// Durations of one kind of pause in the loop: how many, how many over
/// 200 µs and over 1 ms, the longest and their total.
#[derive(Default, Clone, Copy)]
struct Stalls {
    count: u64,
    over_200us: u64,
    over_1ms: u64,
    max_ns: u64,
    total_ns: u64,
}

impl Stalls {
    #[inline]
    fn add(&mut self, ns: u64) {
        self.count += 1;
        self.over_200us += u64::from(ns > 200_000);
        self.over_1ms += u64::from(ns > 1_000_000);
        self.max_ns = self.max_ns.max(ns);
        self.total_ns += ns;
    }

    /// A gap between two clock reads of the spin: only gaps over 20 µs
    /// count (the CPU was taken from the thread; shorter ones are the loop).
    #[inline]
    fn add_gap(&mut self, ns: u64) {
        if ns > 20_000 {
            self.add(ns);
        }
    }

    fn to_json(self) -> serde_json::Value {
        serde_json::json!({
            "count": self.count,
            "over_200us": self.over_200us,
            "over_1ms": self.over_1ms,
            "max_us": self.max_ns as f64 / 1e3,
            "total_ms": self.total_ns as f64 / 1e6,
        })
    }
}

/// The loop thread's counters (getrusage(RUSAGE_THREAD)).
#[derive(Default, Clone, Copy)]
struct ThreadUsage {
    cpu_ns: u64,
    minor_faults: i64,
    major_faults: i64,
    voluntary: i64,
    involuntary: i64,
}

impl ThreadUsage {
    fn now() -> ThreadUsage {
        // SAFETY: an all-zero rusage is valid; getrusage fills it.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: valid pointer to a live rusage.
        unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) };
        let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
        ThreadUsage {
            cpu_ns: tv(ru.ru_utime) + tv(ru.ru_stime),
            minor_faults: ru.ru_minflt,
            major_faults: ru.ru_majflt,
            voluntary: ru.ru_nvcsw,
            involuntary: ru.ru_nivcsw,
        }
    }

    fn since(&self, start: &ThreadUsage) -> ThreadUsage {
        ThreadUsage {
            cpu_ns: self.cpu_ns.saturating_sub(start.cpu_ns),
            minor_faults: self.minor_faults - start.minor_faults,
            major_faults: self.major_faults - start.major_faults,
            voluntary: self.voluntary - start.voluntary,
            involuntary: self.involuntary - start.involuntary,
        }
    }

    fn to_json(self) -> serde_json::Value {
        serde_json::json!({
            "cpu_s": self.cpu_ns as f64 * 1e-9,
            "minor_faults": self.minor_faults,
            "major_faults": self.major_faults,
            "voluntary_switches": self.voluntary,
            "involuntary_switches": self.involuntary,
        })
    }
}

/// The real-time set-up of the calling thread; undone when dropped (the
/// thread may be a caller's).
struct Rt {
    slack: libc::c_int,
    policy: libc::c_int,
    param: libc::sched_param,
    mask: Option<libc::cpu_set_t>,
    /// The CPU the thread is pinned to.
    cpu: Option<usize>,
    /// Why SCHED_FIFO was refused (EPERM without CAP_SYS_NICE, or a cgroup
    /// with no real-time runtime).
    refused: Option<String>,
}

impl Rt {
    /// SCHED_FIFO at `priority`, timer slack 1 ns and, with `pin`, pinned to
    /// the CPU the thread runs on (so the kernel does not move it between the
    /// CPUs a packet's path runs on; the TUN write runs the receiver's stack
    /// here).
    fn enter(priority: i32, pin: bool) -> Rt {
        // SAFETY: plain syscalls on the calling thread with live locals.
        unsafe {
            let mut rt = Rt {
                slack: libc::prctl(libc::PR_GET_TIMERSLACK),
                policy: libc::sched_getscheduler(0),
                param: std::mem::zeroed(),
                mask: None,
                cpu: None,
                refused: None,
            };
            libc::sched_getparam(0, &mut rt.param);
            let size = std::mem::size_of::<libc::cpu_set_t>();
            let here = libc::sched_getcpu();
            let mut old: libc::cpu_set_t = std::mem::zeroed();
            if pin && here >= 0 && libc::sched_getaffinity(0, size, &mut old) == 0 {
                let mut one: libc::cpu_set_t = std::mem::zeroed();
                libc::CPU_SET(here as usize, &mut one);
                if libc::sched_setaffinity(0, size, &one) == 0 {
                    rt.mask = Some(old);
                    rt.cpu = Some(here as usize);
                }
            }
            libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
            let p = libc::sched_param {
                sched_priority: priority,
            };
            if libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) != 0 {
                rt.refused = Some(format!(
                    "sched_setscheduler(SCHED_FIFO, {priority}): {}",
                    io::Error::last_os_error()
                ));
                // The fallback is an ordinary thread: not pinned either.
                if let Some(mask) = rt.mask.take() {
                    libc::sched_setaffinity(0, size, &mask);
                }
                rt.cpu = None;
            }
            rt
        }
    }
}

impl Drop for Rt {
    fn drop(&mut self) {
        // SAFETY: restoring the calling thread's own settings.
        unsafe {
            libc::sched_setscheduler(0, self.policy, &self.param);
            if self.slack > 0 {
                libc::prctl(libc::PR_SET_TIMERSLACK, self.slack as libc::c_ulong);
            }
            if let Some(mask) = &self.mask {
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), mask);
            }
        }
    }
}

/// Hold a PM QoS CPU latency request of 0 µs while the returned fd is open
/// (Documentation/power/pm_qos_interface.rst; cyclictest's
/// `set_latency_target`): idle CPUs poll instead of entering an idle state
/// whose exit would delay the timer's wake-up. The kernel drops the request
/// when the fd closes, also when the process dies.
fn cpu_latency_request() -> Option<Fd> {
    let path = c"/dev/cpu_dma_latency";
    // SAFETY: a NUL-terminated path; a 4-byte write of a live i32.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return None;
        }
        let fd = Fd(fd);
        let zero: i32 = 0;
        (libc::write(fd.0, &zero as *const i32 as *const libc::c_void, 4) == 4).then_some(fd)
    }
}

/// mlock `regions` (address, length), which also faults them in now rather
/// than on the packet path; the bytes locked. (Not mlockall: that would
/// lock the whole Python process, its heap and every library's mappings.)
fn lock_regions(regions: &[(usize, usize)]) -> usize {
    let mut locked = 0;
    for &(at, len) in regions {
        // SAFETY: each region is a live allocation of the emulator.
        if len > 0 && unsafe { libc::mlock(at as *const libc::c_void, len) } == 0 {
            locked += len;
        }
    }
    locked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stalls_count_thresholds_max_and_total() {
        let mut s = Stalls::default();
        for ns in [5_000, 150_000, 250_000, 1_000_000, 1_500_000] {
            s.add(ns);
        }
        s.add_gap(19_000); // the loop's own pace: not a stall
        s.add_gap(30_000);
        let j = s.to_json();
        assert_eq!(j["count"], 6);
        assert_eq!(j["over_200us"], 3);
        assert_eq!(j["over_1ms"], 1);
        assert_eq!(j["max_us"], 1500.0);
        assert_eq!(j["total_ms"], 2.935);
    }

    #[test]
    fn the_spin_budget_caps_the_lead_per_window() {
        let mut s = Spin::default();
        let budget = SPIN_WINDOW_NS / 2;
        assert_eq!(s.lead(0, budget, 100_000), 100_000);
        s.spun(budget - 1);
        assert_eq!(s.lead(1_000_000, budget, 100_000), 100_000);
        s.spun(1);
        // Spent: the timer alone for the rest of the window.
        assert_eq!(s.lead(9_999_999, budget, 100_000), 0);
        // A new window, a new budget; the total keeps counting.
        assert_eq!(s.lead(SPIN_WINDOW_NS, budget, 100_000), 100_000);
        assert_eq!(s.total, budget);
        // spin_share 0: never spin.
        assert_eq!(Spin::default().lead(0, 0, 100_000), 0);
    }
}
