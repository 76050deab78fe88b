//! Thin PyO3 bindings: JSON configuration in, columns as raw little-endian
//! buffers out (NumPy wraps them with `frombuffer`; pyarrow writes Parquet).
//! No simulation logic lives here.

use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

#[cfg(not(target_endian = "little"))]
compile_error!("tcplab-py hands columns to NumPy as little-endian buffers");

fn raw<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: T is a plain integer/float type; the byte view covers exactly
    // the slice's memory and lives no longer than the slice.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

fn col<'py, T: Copy>(
    py: Python<'py>,
    d: &Bound<'py, PyDict>,
    name: &str,
    dtype: &str,
    v: &[T],
) -> PyResult<()> {
    let t = PyTuple::new(
        py,
        [
            dtype.into_pyobject(py)?.into_any(),
            PyBytes::new(py, raw(v)).into_any(),
        ],
    )?;
    d.set_item(name, t)
}

/// [`col`] over one field of each row.
fn col_by<'py, R, T: Copy>(
    py: Python<'py>,
    d: &Bound<'py, PyDict>,
    name: &str,
    dtype: &str,
    rows: &[R],
    field: impl Fn(&R) -> T,
) -> PyResult<()> {
    col(
        py,
        d,
        name,
        dtype,
        &rows.iter().map(field).collect::<Vec<_>>(),
    )
}

/// A run's error as a Python exception: a failure to write an output file
/// (a full disk) is an `OSError` naming the file, anything else is about the
/// configuration (`ValueError`).
fn run_error(e: String) -> PyErr {
    if e.starts_with(tcplab_sim::component::OUTPUT_ERROR) {
        PyOSError::new_err(e)
    } else {
        PyValueError::new_err(e)
    }
}

/// Run a normalized configuration (JSON). `progress(fraction)` is called
/// now and then; Ctrl-C interrupts the run.
#[pyfunction]
#[pyo3(signature = (config_json, progress=None))]
fn run<'py>(
    py: Python<'py>,
    config_json: &str,
    progress: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let mut interrupted: Option<PyErr> = None;
    let mut cb = |frac: f64| -> bool {
        if let Err(e) = py.check_signals() {
            interrupted = Some(e);
            return false;
        }
        if let Some(p) = &progress {
            if let Err(e) = p.call1((frac,)) {
                interrupted = Some(e);
                return false;
            }
        }
        true
    };
    let result = tcplab_sim::run_json(config_json, Some(&mut cb));
    if let Some(e) = interrupted {
        return Err(e);
    }
    let out = match result {
        Ok(o) => o,
        Err(e) if e == "interrupted" => return Err(PyKeyboardInterrupt::new_err("interrupted")),
        Err(e) => return Err(run_error(e)),
    };
    let d = PyDict::new(py);
    let summary = out
        .summary
        .as_ref()
        .map(|s| s.to_json())
        .unwrap_or_default();
    d.set_item("summary", summary)?;
    let ts = PyDict::new(py);
    col(py, &ts, "flow", "<u4", &out.ts_flow)?;
    col(py, &ts, "conn", "<u4", &out.ts_conn)?;
    col(py, &ts, "t_ns", "<i8", &out.ts_t)?;
    col(py, &ts, "cwnd", "<u8", &out.ts_cwnd)?;
    col(py, &ts, "ssthresh", "<u8", &out.ts_ssthresh)?;
    col(py, &ts, "srtt_ns", "<i8", &out.ts_srtt)?;
    col(py, &ts, "rttvar_ns", "<i8", &out.ts_rttvar)?;
    col(py, &ts, "rto_ns", "<i8", &out.ts_rto)?;
    col(py, &ts, "inflight", "<u8", &out.ts_inflight)?;
    col(py, &ts, "delivered", "<u8", &out.ts_delivered)?;
    if out.ts_rates {
        col(py, &ts, "pacing_rate_bps", "<u8", &out.ts_pacing_rate)?;
        col(py, &ts, "delivery_rate_bps", "<u8", &out.ts_delivery_rate)?;
    }
    d.set_item("timeseries", ts)?;
    let ev = PyDict::new(py);
    col(py, &ev, "t_ns", "<i8", &out.ev_t)?;
    col(py, &ev, "flow", "<u4", &out.ev_flow)?;
    col(py, &ev, "conn", "<u4", &out.ev_conn)?;
    col(py, &ev, "kind", "<u1", &out.ev_kind)?;
    col(py, &ev, "seq", "<u8", &out.ev_seq)?;
    col(py, &ev, "len", "<u4", &out.ev_len)?;
    col(py, &ev, "reason", "<u1", &out.ev_reason)?;
    col(py, &ev, "spurious", "<i1", &out.ev_spurious)?;
    col(py, &ev, "detected", "<i1", &out.ev_detected)?;
    col(py, &ev, "value", "<f8", &out.ev_value)?;
    d.set_item("events", ev)?;
    // Rows spilled to files before the ones above (`Record::spill_dir`).
    let spilled = PyDict::new(py);
    for (name, s) in out.spilled() {
        spilled.set_item(name, (s.path, s.rows))?;
    }
    d.set_item("spilled", spilled)?;
    // The segment trace and queue samples (empty unless the config sets `trace`).
    let seg = PyDict::new(py);
    col(py, &seg, "t_ns", "<i8", &out.seg_t)?;
    col(py, &seg, "flow", "<u4", &out.seg_flow)?;
    col(py, &seg, "conn", "<u4", &out.seg_conn)?;
    col(py, &seg, "kind", "<u1", &out.seg_kind)?;
    col(py, &seg, "seq", "<u8", &out.seg_seq)?;
    col(py, &seg, "len", "<u4", &out.seg_len)?;
    col(py, &seg, "sent_ns", "<i8", &out.seg_sent)?;
    d.set_item("segments", seg)?;
    let q = PyDict::new(py);
    col(py, &q, "t_ns", "<i8", &out.q_t)?;
    col(py, &q, "hop", "<u4", &out.q_hop)?;
    col(py, &q, "dir", "<u1", &out.q_dir)?;
    col(py, &q, "packets", "<u8", &out.q_packets)?;
    if out.q_managed {
        col(py, &q, "delay_ns", "<i8", &out.q_delay)?;
    }
    d.set_item("queues", q)?;
    d.set_item(
        "segment_kinds",
        PyList::new(py, tcplab_sim::SEGMENT_KIND_NAMES)?,
    )?;
    d.set_item(
        "event_kinds",
        PyList::new(py, tcplab_sim::EVENT_KIND_NAMES)?,
    )?;
    d.set_item("reasons", PyList::new(py, tcplab_tcp::RtxReason::NAMES)?)?;
    Ok(d)
}

/// Validate a normalized configuration (JSON) as a run would, without
/// running it: raises ValueError with the validator's one-line message.
#[pyfunction]
fn validate(config_json: &str) -> PyResult<()> {
    tcplab_sim::check_json(config_json)
        .map(drop)
        .map_err(PyValueError::new_err)
}

/// Load a capacity trace as the simulator does (`format`: "mahimahi" or
/// "csv"): for opportunities, a dict of `t` and `bytes` columns (u4: the
/// distinct timestamps in ticks and the bytes of their opportunities),
/// `tick_ns` and `packet_overhead`; for the csv rate form, `starts_ns` and
/// `rates` columns (u8: each rate's start and bit/s) and `period_ns` (the
/// last row's time, as a repeating hop reads it). Raises ValueError naming
/// the file and line.
#[pyfunction]
fn trace_load<'py>(py: Python<'py>, path: &str, format: &str) -> PyResult<Bound<'py, PyDict>> {
    use tcplab_sim::config::TraceFormat;
    use tcplab_sim::hops::trace::{load_capacity, Capacity};
    let f = match format {
        "mahimahi" => TraceFormat::Mahimahi,
        "csv" => TraceFormat::Csv,
        _ => {
            return Err(PyValueError::new_err(format!(
                "format: must be mahimahi or csv (got {format:?})"
            )))
        }
    };
    let t = match py
        .allow_threads(|| load_capacity(path, f, true))
        .map_err(PyValueError::new_err)?
    {
        Capacity::Opps(t) => t,
        Capacity::Rates(r) => {
            let d = PyDict::new(py);
            col(py, &d, "starts_ns", "<u8", &r.starts)?;
            col(py, &d, "rates", "<u8", &r.rates)?;
            d.set_item("period_ns", r.period)?;
            return Ok(d);
        }
    };
    let d = PyDict::new(py);
    col_by(py, &d, "t", "<u4", &t.opps, |o| o.t)?;
    col_by(py, &d, "bytes", "<u4", &t.opps, |o| o.bytes)?;
    d.set_item("tick_ns", t.tick_ns)?;
    d.set_item("packet_overhead", t.packet_overhead)?;
    Ok(d)
}

/// The registries (congestion controls with their parameter rules, spurious
/// detectors and responses, RTO profiles, ACK timers, hop kinds) as JSON.
/// The first `n` slots of a LEO preset as the hop at index `idx` of a run
/// seeded with `seed` draws them (`hops::leo`): a list of (start ns, base
/// RTT ns, downlink bit/s, uplink bit/s), for a run that starts
/// `start_second` past the minute.
#[pyfunction]
#[pyo3(signature = (preset, seed, idx, n, start_second=0))]
fn leo_slots(
    preset: &str,
    seed: u64,
    idx: usize,
    n: u64,
    start_second: u32,
) -> PyResult<Vec<(u64, u64, u64, u64)>> {
    use tcplab_sim::hops::leo;
    let p = leo::preset(preset)
        .ok_or_else(|| PyValueError::new_err(format!("unknown LEO preset {preset:?}")))?;
    let first = leo::first_reassignment(start_second);
    Ok((0..n)
        .map(|k| {
            let s = p.slot(seed, idx, k);
            (leo::slot_start(first, k), s.rtt_ns, s.down_bps, s.up_bps)
        })
        .collect())
}

#[pyfunction]
fn registry() -> String {
    tcplab_sim::registry_json()
}

/// Run the real-time emulator between two TUN fds until `stop_fd` is
/// readable (`tcplab.emu`); returns the summary as JSON. The GIL is released
/// for the whole run, so Python calls it from a thread of its own.
#[cfg(target_os = "linux")]
#[pyfunction]
fn emu_run(
    py: Python<'_>,
    config_json: &str,
    options_json: &str,
    fd_server: i32,
    fd_client: i32,
    stop_fd: i32,
) -> PyResult<String> {
    py.allow_threads(|| {
        tcplab_sim::emu_sys::run(config_json, options_json, fd_server, fd_client, stop_fd)
    })
    .map_err(run_error)
}

/// Analyse a pcap/pcapng capture (`tcplab analyze`). Returns the summary
/// JSON (as `--json` prints it) and, with `collect`, the retransmission,
/// RTT-sample and (with `packets`) packet tables as columns.
#[pyfunction]
#[pyo3(signature = (path, side="auto", rto="rfc6298", filter=None, collect=false, packets=false))]
fn analyze<'py>(
    py: Python<'py>,
    path: &str,
    side: &str,
    rto: &str,
    filter: Option<&str>,
    collect: bool,
    packets: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let side = tcplab_trace::Side::parse(side).ok_or_else(|| {
        PyValueError::new_err(format!(
            "--side: must be sender, receiver or auto (got {side:?})"
        ))
    })?;
    let rto_model = tcplab_trace::RtoModel::parse(rto).ok_or_else(|| {
        PyValueError::new_err(format!("--rto: must be rfc6298 or linux (got {rto:?})"))
    })?;
    let filter = filter
        .map(tcplab_trace::Filter::parse)
        .transpose()
        .map_err(PyValueError::new_err)?;
    let opts = tcplab_trace::Options {
        side,
        rto: rto_model,
        collect: collect || packets,
        collect_packets: packets,
        filter: filter.clone(),
    };
    let path_buf = std::path::PathBuf::from(path);
    // The analysis runs without the GIL; now and then it takes it back to
    // let Python see a pending Ctrl-C (SIGINT), and stops if there is one.
    let mut interrupted: Option<PyErr> = None;
    let result = py.allow_threads(|| {
        let mut stop = || {
            Python::with_gil(|py| match py.check_signals() {
                Ok(()) => false,
                Err(e) => {
                    interrupted = Some(e);
                    true
                }
            })
        };
        tcplab_trace::analyze_file_until(&path_buf, opts, &mut stop)
    });
    if let Some(e) = interrupted {
        return Err(e);
    }
    let rep = result.map_err(PyValueError::new_err)?;
    let d = PyDict::new(py);
    // The analysis applied the filter: its rows and results are of the
    // connections that pass.
    d.set_item("summary", rep.to_json_string(None))?;
    let an = &rep.analyzer;
    let rx = &an.rtx;
    let t = PyDict::new(py);
    col_by(py, &t, "conn", "<u4", rx, |r| r.conn)?;
    col_by(py, &t, "dir", "<u1", rx, |r| r.dir)?;
    col_by(py, &t, "t_ns", "<u8", rx, |r| r.t_ns)?;
    col_by(py, &t, "seq", "<u8", rx, |r| r.seq)?;
    col_by(py, &t, "len", "<u4", rx, |r| r.len)?;
    col_by(py, &t, "class", "<u1", rx, |r| r.class as u8)?;
    col_by(py, &t, "spurious", "<i1", rx, |r| r.spurious)?;
    col_by(py, &t, "evidence", "<u1", rx, |r| r.evidence as u8)?;
    col_by(py, &t, "backoff", "<u4", rx, |r| r.backoff)?;
    d.set_item("retransmissions", t)?;
    let rt = &an.rtt;
    let t = PyDict::new(py);
    col_by(py, &t, "conn", "<u4", rt, |r| r.conn)?;
    col_by(py, &t, "dir", "<u1", rt, |r| r.dir)?;
    col_by(py, &t, "t_ns", "<u8", rt, |r| r.t_ns)?;
    col_by(py, &t, "rtt_ns", "<u8", rt, |r| r.rtt_ns)?;
    col_by(py, &t, "source", "<u1", rt, |r| r.source)?;
    col_by(py, &t, "srtt_ns", "<u8", rt, |r| r.srtt_ns)?;
    col_by(py, &t, "rto_ns", "<u8", rt, |r| r.rto_ns)?;
    d.set_item("rtt_samples", t)?;
    let pk = &an.pkts;
    let t = PyDict::new(py);
    col_by(py, &t, "conn", "<u4", pk, |r| r.conn)?;
    col_by(py, &t, "dir", "<u1", pk, |r| r.dir)?;
    col_by(py, &t, "t_ns", "<u8", pk, |r| r.t_ns)?;
    col_by(py, &t, "kind", "<u1", pk, |r| r.kind)?;
    col_by(py, &t, "seq", "<u8", pk, |r| r.seq)?;
    col_by(py, &t, "end", "<u8", pk, |r| r.end)?;
    d.set_item("packets", t)?;
    d.set_item("classes", PyList::new(py, tcplab_trace::RtxClass::NAMES)?)?;
    d.set_item("evidence", PyList::new(py, tcplab_trace::Evidence::NAMES)?)?;
    Ok(d)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    #[cfg(target_os = "linux")]
    m.add_function(wrap_pyfunction!(emu_run, m)?)?;
    m.add_function(wrap_pyfunction!(analyze, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(registry, m)?)?;
    m.add_function(wrap_pyfunction!(trace_load, m)?)?;
    m.add_function(wrap_pyfunction!(leo_slots, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // build.rs: the git commit of the source it was built from
    m.add("__build_commit__", env!("TCPLAB_BUILD_COMMIT"))?;
    Ok(())
}
