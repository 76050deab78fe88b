//! The emulator's real-time loop on Linux: two TUN devices, one thread,
//! `epoll` on both devices, a stop fd and a `timerfd` armed (absolute,
//! CLOCK_MONOTONIC) at the next event of `emu::Emu`.
//!
//! The caller creates the devices, moves them into their namespaces and
//! hands over the fds (`tcplab.emu` in Python). The loop ends when the stop
//! fd becomes readable (the caller writes to a pipe). The thread runs under
//! SCHED_FIFO when it may (timer slack 0 then); `emulator.realtime` in the
//! summary says whether it did.

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
}

impl Wire for Tuns {
    #[inline]
    fn send(&mut self, dir: Dir, bytes: &[u8]) -> bool {
        // Fwd packets came from the server side and go to the client side.
        let fd = self.fds[match dir {
            Dir::Fwd => 1,
            Dir::Rev => 0,
        }];
        // SAFETY: fd is an open TUN device; bytes is a valid slice.
        let n = unsafe { libc::write(fd, bytes.as_ptr() as *const libc::c_void, bytes.len()) };
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

/// Run the emulator between `fd_server` and `fd_client` (TUN fds, IFF_TUN |
/// IFF_NO_PI) until `stop_fd` is readable; returns the summary as JSON.
pub fn run(
    config_json: &str,
    options_json: &str,
    fd_server: i32,
    fd_client: i32,
    stop_fd: i32,
) -> Result<String, String> {
    let cfg: SimConfig = serde_json::from_str(config_json).map_err(|e| format!("config: {e}"))?;
    let opts: EmuOptions =
        serde_json::from_str(options_json).map_err(|e| format!("options: {e}"))?;
    let mut emu = Emu::new(cfg, &opts)?;
    let realtime = set_realtime(opts.rt_priority);

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
        };
        let mut armed: Option<Time> = None;
        let mut buf = vec![0u8; 65536];
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; 8];
        emu.set_epoch(epoch);
        let lead = opts.timer_lead_ns;
        'outer: loop {
            let mut now = wire.clock();
            emu.run_due(now, &mut wire);
            let next = emu.next_deadline();
            // A deadline closer than the timer's wake-up latency: poll the
            // devices, then wait the rest on the clock (at most `lead` ns).
            let close = next.is_some_and(|at| at <= now + lead);
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
                    while now < at {
                        std::hint::spin_loop();
                        now = wire.clock();
                    }
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
    }
    let mut out = emu.finish()?;
    out["emulator"]["realtime"] = serde_json::Value::Bool(realtime);
    Ok(out.to_string())
}

/// SCHED_FIFO for this thread (timer slack is then 0); false if refused.
fn set_realtime(priority: i32) -> bool {
    if priority <= 0 {
        return false;
    }
    let p = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: plain syscalls on the calling thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
        libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) == 0
    }
}
