//! Replaying a file's trace through the allocator model, and what-if replays under other
//! settings.
//!
//! Fidelity replay: start the model from the state at the trace's first entry (see
//! [`super::state_at`]), replay every request under the file's settings, and compare each
//! decision with the real allocator's: the address each alloc got, and each
//! segment_alloc/free/map/unmap (address and size). cudaMalloc's addresses cannot be predicted,
//! so the replay backing hands out the ones the real run got; what is checked is the decision to
//! call it and its size. At the end the model's segments are compared with the dump's.
//!
//! What-if replay: the same requests (sizes, streams, frees, frames) from a clean or
//! reconstructed start, under changed settings, on a simulated device.

mod backing;
mod requests;

use foldhash::HashMap as FastMap;

use crate::allocator::{Allocator, Backing, Config, SimBacking, Stats};
use crate::snapshot::{Action, BlockState, Segment, Snapshot, TraceEntry};

pub use super::policy::{check_policy, DeviceConfig, PolicyCheck, RulesChoice, RulesSource};
pub use backing::{ReplayBacking, SegKind, SegOp, WindowScore};
pub use requests::{empty_cache_by_runs, requests_of, requests_of_paced, Request, Traced};

use requests::completes_at;
pub use requests::pool_of;

use super::pace::{self, Pace, CHUNK};
use super::state_at::start_state_paced;

use crate::allocator::seed::PENDING_STREAM;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// Trace index of the entry where the model and the run first differ.
    pub entry: usize,
    pub what: String,
}

/// Peak figures of a run (real or modelled).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Figures {
    pub peak_reserved: u64,
    pub peak_allocated: u64,
    pub final_reserved: u64,
    pub final_allocated: u64,
    /// Largest reserved-but-unallocated bytes (fragmentation and cache) at any point.
    pub peak_cached: u64,
    pub ooms: u64,
    pub segment_allocs: u64,
    pub segment_frees: u64,
}

impl Figures {
    fn of(stats: &Stats) -> Figures {
        Figures {
            peak_reserved: stats.peak_reserved,
            peak_allocated: stats.peak_allocated,
            final_reserved: stats.reserved,
            final_allocated: stats.allocated,
            peak_cached: stats.peak_cached,
            ooms: stats.num_ooms,
            segment_allocs: stats.num_device_alloc,
            segment_frees: stats.num_device_free,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayReport {
    pub device: i64,
    pub entries: usize,
    /// No segment existed before the first entry: the trace is the whole history.
    pub complete_trace: bool,
    /// Why the replay was not attempted (the sizes fit no allocator's policy).
    pub not_replayed: Option<String>,
    /// Whose allocator's rules the device was replayed under, and why.
    pub rules: RulesChoice,
    pub decisions: u64,
    pub decisions_matched: u64,
    pub first_mismatch: Option<Mismatch>,
    pub segments_match: bool,
    /// First difference between the model's final segments and the dump's.
    pub segments_difference: Option<String>,
    pub figures: Figures,
    /// Trace entries the backward walk could not explain (file inconsistencies), count.
    pub inconsistencies: usize,
    pub first_inconsistency: Option<String>,
    pub settings: String,
    /// Trace indices where the run called empty_cache (releases not caused by a request).
    pub empty_cache_at: Vec<usize>,
}

impl ReplayReport {
    /// Keeps the first mismatch; `what` is written only for it (on a trace the model does not
    /// follow, formatting every one cost more than the replay).
    fn mismatch(&mut self, entry: usize, what: impl FnOnce() -> String) {
        if self.first_mismatch.is_none() {
            self.first_mismatch = Some(Mismatch {
                entry,
                what: what(),
            });
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayError(pub String);

impl std::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ReplayError {}

/// The file's settings as a model configuration (defaults when the file has none), under
/// CUDA's rules unless the settings name another allocator: [`device_config`] is what a device
/// is modelled under.
pub fn file_config(snapshot: &Snapshot) -> Result<Config, ReplayError> {
    super::policy::settings_config(snapshot).map_err(settings_error)
}

/// The configuration `device` is modelled under: the file's settings, the allocator whose rules
/// its sizes fit, and expandable segments where its segments show them.
pub fn device_config(snapshot: &Snapshot, device: i64) -> Result<DeviceConfig, ReplayError> {
    super::policy::device_config(snapshot, device).map_err(settings_error)
}

/// A settings error as a replay's.
pub(crate) fn settings_error(e: crate::allocator::ConfigError) -> ReplayError {
    ReplayError(format!("allocator_settings: {e}"))
}

/// Devices that have a trace (a trace of `snapshot` markers only, as torch 2.0 dumps write,
/// has nothing to replay).
pub fn traced_devices(snapshot: &Snapshot) -> Vec<i64> {
    snapshot
        .device_traces
        .iter()
        .flatten()
        .enumerate()
        .filter(|&(i, _)| snapshot.has_trace(i))
        .map(|(i, _)| i as i64)
        .collect()
}

/// How a replay feeds requests to an allocator: real addresses to the model's.
#[derive(Default)]
struct Driver {
    /// Real address -> model address of each live allocation.
    addr_map: FastMap<u64, u64>,
    /// Real addresses freed with pending stream uses.
    pending: FastMap<u64, u64>,
}

impl Driver {
    fn free_requested<B: Backing>(
        &mut self,
        a: &mut Allocator<B>,
        real: u64,
        deferred: bool,
    ) -> Result<(), String> {
        let model = self.addr_map.remove(&real).unwrap_or(real);
        if deferred {
            // The run recorded another stream's use: the block waits for an event.
            a.record_stream(model, PENDING_STREAM)
                .map_err(|e| e.to_string())?;
            self.pending.insert(real, model);
        }
        a.free(model).map_err(|e| format!("free_requested: {e}"))
    }

    /// The run got `real` where the model chose `model`. Only differing addresses are kept
    /// (a free looks up `real` and defaults to it), so a matching replay touches no map.
    fn note_alloc(&mut self, real: u64, model: u64) {
        if real != model {
            self.addr_map.insert(real, model);
        } else if !self.addr_map.is_empty() {
            self.addr_map.remove(&real);
        }
    }

    fn free_completed<B: Backing>(&mut self, a: &mut Allocator<B>, real: u64) {
        // Blocks already pending when the trace began are not in `pending`: same address.
        let model = self.pending.remove(&real).unwrap_or(real);
        a.complete_pending_free(model);
    }
}

/// Fidelity replay of `device`'s trace.
pub fn replay(snapshot: &Snapshot, device: i64) -> Result<ReplayReport, ReplayError> {
    replay_with(snapshot, device, device_config(snapshot, device)?)
}

/// [`replay`] under a configuration the caller already chose for the device
/// ([`device_config`]), so that a caller that needs it too weighs the device's sizes once.
pub fn replay_with(
    snapshot: &Snapshot,
    device: i64,
    dc: DeviceConfig,
) -> Result<ReplayReport, ReplayError> {
    pace::finish(replay_with_paced(snapshot, device, dc, &mut Pace::never()))
}

/// [`replay_with`], giving way through `pace`.
pub async fn replay_with_paced(
    snapshot: &Snapshot,
    device: i64,
    dc: DeviceConfig,
    pace: &mut Pace<'_>,
) -> Result<ReplayReport, ReplayError> {
    let DeviceConfig {
        config,
        choice: rules,
        ..
    } = dc;
    let entries = snapshot.trace(device.max(0) as usize);
    let (start, inconsistencies) = start_state_paced(snapshot, device, &config, pace).await;
    let mut report = ReplayReport {
        device,
        entries: entries.len(),
        complete_trace: start.is_empty(),
        not_replayed: rules.not_replayable(),
        rules,
        decisions: 0,
        decisions_matched: 0,
        first_mismatch: None,
        segments_match: false,
        segments_difference: None,
        figures: Figures::default(),
        inconsistencies: inconsistencies.len(),
        first_inconsistency: inconsistencies
            .first()
            .map(|c| format!("entry {}: {}", c.entry, c.message)),
        settings: config.to_conf_string(),
        empty_cache_at: Vec::new(),
    };
    if report.not_replayed.is_some() {
        return Ok(report);
    }
    let capacity = 1u64 << 50;
    let mut a = Allocator::new(ReplayBacking::new(capacity), config).with_device(device);
    // Decisions are compared as they are made: the model's own trace, and the stack table its
    // snapshot would carry, are not needed (copying and dropping the table was 14% of a replay
    // of a real file).
    a.trace_mut().set_enabled(false);
    a.seed_segments_with_hints(&start, &va_hints(&start, entries))
        .map_err(|e| ReplayError(format!("start state: {e}")))?;
    pace.check().await;
    let mut d = Driver::default();
    let mut i = 0;
    while i < entries.len() {
        pace.tick().await;
        let e = &entries[i];
        match e.action() {
            Action::SegmentAlloc
            | Action::SegmentFree
            | Action::SegmentMap
            | Action::SegmentUnmap => {
                let mut j = i;
                let mut ops = Vec::new();
                // free_completed entries between releases are the pending frees a release
                // waited for (synchronize_and_free_events): part of the same step.
                let mut synced = Vec::new();
                loop {
                    if let Some(s) = entries.get(j).and_then(|s| seg_op(s, j)) {
                        ops.push(s);
                        j += 1;
                        continue;
                    }
                    let k = (j..entries.len())
                        .find(|&k| entries[k].action() != Action::FreeCompleted)
                        .unwrap_or(entries.len());
                    if k > j && entries.get(k).and_then(|s| seg_op(s, k)).is_some() {
                        synced.extend(j..k);
                        j = k;
                        continue;
                    }
                    break;
                }
                let next = entries.get(j);
                let next_alloc = next.is_some_and(|n| n.action() == Action::Alloc);
                let next_oom = next.is_some_and(|n| n.action() == Action::Oom);
                let grows = |o: &SegOp| matches!(o.kind, SegKind::Alloc | SegKind::Map);
                let first_grow = ops.iter().position(grows).unwrap_or(ops.len());
                // Releases before any growth: an empty_cache, unless they are the retry of a
                // request that found no cached block (then the model releases them itself).
                if first_grow > 0 && !next_oom {
                    let request_misses_cache = next_alloc
                        && first_grow < ops.len()
                        && next.is_some_and(|n| {
                            !a.would_reuse_cached(n.size().unwrap_or(0), n.stream().unwrap_or(0))
                        });
                    if !request_misses_cache {
                        a.backing_mut()
                            .open_window(ops.drain(..first_grow).collect(), false);
                        a.empty_cache();
                        report.empty_cache_at.push(i);
                        settle(&mut a, &mut report, i);
                    }
                }
                if next_alloc || next_oom {
                    a.backing_mut().open_window(ops, next_oom);
                    continue_request(&mut a, &mut d, &entries[j], &mut report, j);
                } else if !ops.is_empty() {
                    a.backing_mut().open_window(ops, false);
                    settle(&mut a, &mut report, i);
                }
                for k in synced {
                    d.free_completed(&mut a, entries[k].addr().unwrap_or(0));
                }
                i = if next_alloc || next_oom { j + 1 } else { j };
                continue;
            }
            Action::Alloc | Action::Oom => {
                a.backing_mut()
                    .open_window(Vec::new(), e.action() == Action::Oom);
                continue_request(&mut a, &mut d, e, &mut report, i);
            }
            Action::FreeRequested => {
                let real = e.addr().unwrap_or(0);
                let deferred = !completes_at(entries, i + 1, real);
                if let Err(m) = d.free_requested(&mut a, real, deferred) {
                    report.mismatch(i, || m);
                }
            }
            Action::FreeCompleted => d.free_completed(&mut a, e.addr().unwrap_or(0)),
            _ => {}
        }
        i += 1;
    }
    report.figures = Figures::of(a.stats());
    let want: Vec<&Segment> = snapshot
        .segments
        .iter()
        .filter(|s| s.device.unwrap_or(0) == device)
        .collect();
    let got = a.segments();
    report.segments_difference = compare_segments(&got, &want);
    report.segments_match = report.segments_difference.is_none();
    Ok(report)
}

/// Replays the request at entry `i` (alloc or oom) inside the open window and scores it.
fn continue_request(
    a: &mut Allocator<ReplayBacking>,
    d: &mut Driver,
    e: &TraceEntry,
    report: &mut ReplayReport,
    i: usize,
) {
    let size = e.size().unwrap_or(0);
    let stream = e.stream().unwrap_or(0);
    report.decisions += 1;
    match (
        e.action() == Action::Oom,
        a.malloc_in_pool(size, stream, e.frames(), pool_of(e)),
    ) {
        (false, Ok(p)) => {
            let real = e.addr().unwrap_or(0);
            if p == real {
                report.decisions_matched += 1;
            } else {
                report.mismatch(i, || {
                    format!("alloc of {size} bytes: model chose 0x{p:x}, the run got 0x{real:x}")
                });
            }
            d.note_alloc(real, p);
        }
        (false, Err(_)) => report.mismatch(i, || {
            format!("alloc of {size} bytes: model ran out of memory, the run did not")
        }),
        (true, Err(_)) => report.decisions_matched += 1,
        (true, Ok(p)) => {
            report.mismatch(i, || {
                format!("oom for {size} bytes: the model found memory at 0x{p:x}")
            });
            let _ = a.free(p);
        }
    }
    settle(a, report, i);
}

/// Scores the window's segment actions: each real one the model made too is a matched decision.
fn settle(a: &mut Allocator<ReplayBacking>, report: &mut ReplayReport, i: usize) {
    let w = a.backing_mut().close_window();
    report.decisions += (w.matched + w.missed + w.extra) as u64;
    report.decisions_matched += w.matched as u64;
    if let Some(m) = w.first_missed {
        report.mismatch(m.entry.unwrap_or(i), || {
            format!(
                "the run did {} 0x{:x} ({} bytes); the model did not",
                m.kind.as_str(),
                m.addr,
                m.size
            )
        });
    }
    if let Some(x) = w.first_extra {
        report.mismatch(i, || {
            format!(
                "the model did {} of {} bytes; the run did not",
                x.kind.as_str(),
                x.size
            )
        });
    }
}

/// (stream, address) of every map and unmap: addresses inside expandable ranges. Only seeding
/// expandable segments of the start state uses them, so without such segments the pass over
/// the trace is skipped.
fn va_hints(start: &[Segment], entries: &[TraceEntry]) -> Vec<(i64, u64)> {
    if !start.iter().any(|s| s.is_expandable == Some(true)) {
        return Vec::new();
    }
    entries
        .iter()
        .filter(|e| matches!(e.action(), Action::SegmentMap | Action::SegmentUnmap))
        .filter_map(|e| Some((e.stream().unwrap_or(0), e.addr()?)))
        .collect()
}

fn seg_op(e: &TraceEntry, i: usize) -> Option<SegOp> {
    let kind = match e.action() {
        Action::SegmentAlloc => SegKind::Alloc,
        Action::SegmentFree => SegKind::Free,
        Action::SegmentMap => SegKind::Map,
        Action::SegmentUnmap => SegKind::Unmap,
        _ => return None,
    };
    Some(SegOp {
        kind,
        addr: e.addr().unwrap_or(0),
        size: e.size().unwrap_or(0),
        entry: Some(i),
    })
}

/// Layout comparison: addresses, sizes, block offsets/sizes/states (pending == allocated for
/// this purpose only when the dump says pending: both are active).
fn compare_segments(got: &[Segment], want: &[&Segment]) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!(
            "model has {} segments, the dump {}",
            got.len(),
            want.len()
        ));
    }
    for (g, w) in got.iter().zip(want) {
        if g.address != w.address || g.total_size != w.total_size {
            return Some(format!(
                "segment 0x{:x} ({} bytes) in the model, 0x{:x} ({} bytes) in the dump",
                g.address, g.total_size, w.address, w.total_size
            ));
        }
        let layout = |s: &Segment| -> Vec<(u64, u64, BlockState)> {
            let mut at = s.address;
            s.blocks
                .iter()
                .map(|b| {
                    let addr = b.address.unwrap_or(at);
                    at = addr + b.size;
                    (addr - s.address, b.size, b.state)
                })
                .collect()
        };
        let (gl, wl) = (layout(g), layout(w));
        if gl != wl {
            let k = gl
                .iter()
                .zip(&wl)
                .position(|(x, y)| x != y)
                .unwrap_or(gl.len().min(wl.len()));
            return Some(format!(
                "segment 0x{:x}: block {k} is {:?} in the model, {:?} in the dump",
                g.address,
                gl.get(k),
                wl.get(k)
            ));
        }
    }
    None
}

/// Where a what-if replay starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Start {
    /// No segments: only the trace's own requests (blocks alive before it are ignored).
    Clean,
    /// The reconstructed state at the first entry, as the fidelity replay uses: the segments
    /// made before recording stay as the run made them, whatever the settings replayed.
    Reconstructed,
    /// No segments, and the blocks live at the first entry allocated first (in address order,
    /// under the settings replayed): as if the settings had been in force from the start.
    Cold,
}

impl Start {
    pub fn as_str(self) -> &'static str {
        match self {
            Start::Clean => "clean",
            Start::Reconstructed => "reconstructed",
            Start::Cold => "cold",
        }
    }
}

/// What-if result: the model's figures under `config`, and the same requests' real figures.
#[derive(Debug, Clone, PartialEq)]
pub struct WhatIf {
    pub settings: String,
    pub figures: Figures,
    /// Reserved minus allocated at the model's reserved peak.
    pub requests: u64,
    pub failed_requests: u64,
}

/// Replays `device`'s requests under `config` on a simulated device of `capacity` bytes
/// (None = unlimited), from a clean or reconstructed start.
pub fn what_if(
    snapshot: &Snapshot,
    device: i64,
    config: Config,
    start: Start,
    capacity: Option<u64>,
) -> Result<WhatIf, ReplayError> {
    what_if_snapshot(snapshot, device, config, start, capacity).map(|(w, _)| w)
}

/// [`what_if`], also returning the model's final state and trace as a snapshot.
pub fn what_if_snapshot(
    snapshot: &Snapshot,
    device: i64,
    config: Config,
    start: Start,
    capacity: Option<u64>,
) -> Result<(WhatIf, Snapshot), ReplayError> {
    let settings = config.to_conf_string();
    let reqs = requests(snapshot, device);
    let run = run_requests(snapshot, device, config, start, capacity, None, &reqs)?;
    let w = WhatIf {
        settings,
        figures: Figures::of(run.alloc.stats()),
        requests: run.requests,
        failed_requests: run.failed,
    };
    Ok((w, run.alloc.snapshot()))
}

/// A what-if model after running some requests.
pub(crate) struct RequestRun {
    pub alloc: Allocator<SimBacking>,
    pub requests: u64,
    pub failed: u64,
    /// Trace index of the request after which reserved memory last reached its peak.
    pub peak_at: Option<usize>,
    /// For each alloc request in order, the creation ordinal of the segment it landed in
    /// ([`SimBacking::segment_of`]; `u32::MAX` when it failed or landed in seeded memory).
    pub landed: Vec<u32>,
    /// The last request was an alloc that failed.
    pub failed_last: bool,
}

/// Runs `reqs` (of `device`'s trace) through a model under `config` on a simulated device of
/// `capacity` bytes (None = unlimited), from a clean or reconstructed start. `allowed` is a
/// memory-fraction cap in bytes (`set_per_process_memory_fraction`; garbage collection works
/// only under one). The model records its trace and carries the file's stacks, for
/// [`what_if_snapshot`]'s snapshot.
pub(crate) fn run_requests(
    snapshot: &Snapshot,
    device: i64,
    config: Config,
    start: Start,
    capacity: Option<u64>,
    allowed: Option<u64>,
    reqs: &[Traced],
) -> Result<RequestRun, ReplayError> {
    pace::finish(run_requests_paced(
        snapshot,
        device,
        config,
        start,
        capacity,
        allowed,
        reqs,
        None,
        true,
        &mut Pace::never(),
    ))
}

/// [`run_requests`], giving way through `pace` between chunks of requests; `recorded`: the
/// model keeps its trace and the file's stacks, which only a snapshot of it needs (a verdict's
/// replay does not: at a million entries its trace's growth alone held the replay 8–9 ms at a
/// time, twice a replay).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn run_requests_paced(
    snapshot: &Snapshot,
    device: i64,
    config: Config,
    start: Start,
    capacity: Option<u64>,
    allowed: Option<u64>,
    reqs: &[Traced],
    seed: Option<&[Segment]>,
    recorded: bool,
    pace: &mut Pace<'_>,
) -> Result<RequestRun, ReplayError> {
    pace.check().await;
    let entries = snapshot.trace(device.max(0) as usize);
    let mut sim = SimBacking::new(capacity.unwrap_or(1u64 << 50));
    sim.hold_stream(PENDING_STREAM);
    let mut a = Allocator::new(sim, config).with_device(device);
    if let Some(bytes) = allowed {
        a.set_capacity(bytes);
    }
    if recorded {
        a.set_stacks(snapshot.stacks.clone());
    } else {
        a.trace_mut().set_enabled(false);
    }
    let mut live_seeded = std::collections::HashSet::new();
    let mut d = Driver::default();
    let (mut n_requests, mut failed) = (0u64, 0u64);
    // The state before the first entry (under the file's settings, whatever `config` is),
    // unless the caller walked back to it already.
    let walked;
    let seed = match (start, seed) {
        (Start::Clean, _) => &[][..],
        (_, Some(s)) => s,
        (_, None) => {
            // Sizes are all the walk rounds: the quick choice (as the state history's) serves.
            let cfg = super::policy::device_config_quick(snapshot, device)
                .map_err(settings_error)?
                .config;
            walked = start_state_paced(snapshot, device, &cfg, pace).await.0;
            &walked[..]
        }
    };
    if start == Start::Cold {
        for s in seed {
            let mut at = s.address;
            for b in &s.blocks {
                let addr = b.address.unwrap_or(at);
                at = addr + b.size;
                if !b.state.is_active() {
                    continue;
                }
                let size = b.requested_size.unwrap_or(b.size);
                let pool = s.segment_pool_id.unwrap_or((0, 0));
                n_requests += 1;
                match a.malloc_in_pool(size, s.stream.unwrap_or(0), b.frames, pool) {
                    Ok(p) => {
                        d.addr_map.insert(addr, p);
                        if b.state == BlockState::ActivePendingFree {
                            // Freed before the trace, waiting on another stream's event.
                            let _ = d.free_requested(&mut a, addr, true);
                        } else {
                            live_seeded.insert(addr);
                        }
                    }
                    Err(_) => failed += 1,
                }
            }
        }
    }
    if start == Start::Reconstructed {
        let st = seed;
        for s in st.iter().filter(|s| s.is_expandable != Some(true)) {
            a.backing_mut().claim(s.address, s.total_size);
        }
        for b in st.iter().flat_map(|s| s.blocks.iter()) {
            if b.state == BlockState::ActiveAllocated {
                live_seeded.insert(b.address.unwrap_or(0));
            }
        }
        a.seed_segments_with_hints(st, &va_hints(st, entries))
            .map_err(|e| ReplayError(format!("start state: {e}")))?;
    }
    pace.check().await;
    let mut failed_addrs = std::collections::HashSet::new();
    let mut landed = Vec::new();
    let mut peak = a.stats().peak_reserved;
    let mut peak_at = None;
    let mut failed_last = false;
    for chunk in reqs.chunks(CHUNK) {
        pace.check().await;
        for t in chunk {
            match t.request {
                Request::Alloc {
                    addr,
                    size,
                    stream,
                    frames,
                    pool,
                } => {
                    n_requests += 1;
                    let got = a.malloc_in_pool(size, stream, frames, pool);
                    failed_last = got.is_err();
                    match got {
                        Ok(p) => {
                            d.addr_map.insert(addr, p);
                            landed.push(a.backing().segment_of(p).unwrap_or(u32::MAX));
                        }
                        Err(_) => {
                            failed += 1;
                            failed_addrs.insert(addr);
                            landed.push(u32::MAX);
                        }
                    }
                    if a.stats().peak_reserved > peak {
                        peak = a.stats().peak_reserved;
                        peak_at = Some(t.entry);
                    }
                }
                Request::Free { addr, deferred } => {
                    if failed_addrs.remove(&addr) {
                        continue;
                    }
                    let known = d.addr_map.contains_key(&addr) || live_seeded.remove(&addr);
                    if known {
                        let _ = d.free_requested(&mut a, addr, deferred);
                    }
                }
                Request::Complete { addr } => d.free_completed(&mut a, addr),
                Request::EmptyCache => a.empty_cache(),
            }
        }
    }
    Ok(RequestRun {
        alloc: a,
        requests: n_requests,
        failed,
        peak_at,
        landed,
        failed_last,
    })
}

/// Trace indices where the program called empty_cache: as the fidelity replay tells them apart
/// from the allocator's own releases, or, for a trace it cannot replay (another allocator's),
/// by [`empty_cache_by_runs`].
pub fn empty_cache_calls(snapshot: &Snapshot, device: i64) -> Vec<usize> {
    match device_config(snapshot, device) {
        Ok(dc) => pace::finish(empty_cache_calls_paced(
            snapshot,
            device,
            dc,
            &mut Pace::never(),
        )),
        Err(_) => empty_cache_by_runs(snapshot.trace(device.max(0) as usize)),
    }
}

/// [`empty_cache_calls`] under the configuration the caller chose for the device
/// ([`device_config`]), giving way through `pace` (it is a whole fidelity replay).
pub async fn empty_cache_calls_paced(
    snapshot: &Snapshot,
    device: i64,
    dc: DeviceConfig,
    pace: &mut Pace<'_>,
) -> Vec<usize> {
    let trace = snapshot.trace(device.max(0) as usize);
    match replay_with_paced(snapshot, device, dc, pace).await {
        Ok(r) => empty_cache_calls_of(&r, trace),
        Err(_) => empty_cache_by_runs(trace),
    }
}

/// [`empty_cache_calls`] read off a fidelity replay the caller already ran of `trace` (by
/// [`empty_cache_by_runs`] where that replay could not run the trace), so that a command that
/// reports the replay does not run it again for its what-if.
pub fn empty_cache_calls_of(report: &ReplayReport, trace: &[TraceEntry]) -> Vec<usize> {
    match report.not_replayed {
        None => report.empty_cache_at.clone(),
        Some(_) => empty_cache_by_runs(trace),
    }
}

/// The requests of `device`'s trace (see [`Request`]): what what-if replays and
/// `capture --replay` run.
pub fn requests(snapshot: &Snapshot, device: i64) -> Vec<Traced> {
    let entries = snapshot.trace(device.max(0) as usize);
    requests_of(entries, &empty_cache_calls(snapshot, device))
}
