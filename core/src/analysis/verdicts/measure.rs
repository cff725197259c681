//! One replay of a device's requests under a [`Change`], from a given start: the figures a fix
//! is ranked by and the costs it has. `memsnap replay` with the same arguments calls this too,
//! so a fix's "saves" is the figure that command prints.

use crate::allocator::Config;
use crate::analysis::pace::{self, Pace};
use crate::analysis::replay::{run_requests_paced, ReplayError, Start, Traced};
use crate::snapshot::{Segment, Snapshot};

use super::change::Change;

/// What one replay measured.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Outcome {
    pub settings: String,
    pub peak_reserved: u64,
    pub peak_allocated: u64,
    pub final_reserved: u64,
    pub requests: u64,
    /// Requests the model could not serve (out of memory).
    pub failed_requests: u64,
    /// The last request replayed failed (after an OOM: the one that failed in the run).
    pub failed_last: bool,
    /// Segments created: cudaMalloc calls, or expandable segments' cuMemMap calls.
    pub segment_creations: u64,
    /// Bytes cudaMalloc'd or mapped, and cudaFree'd or unmapped, over the replay.
    pub bytes_mapped: u64,
    pub bytes_unmapped: u64,
    /// Trace index of the request after which reserved memory last reached its peak.
    pub peak_at: Option<usize>,
    /// For each alloc request, the creation ordinal of the segment it landed in.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub landed: Vec<u32>,
}

impl Outcome {
    /// Allocations that landed in another segment than in `base` (segments named by the order
    /// each run created them; seeded memory and failed requests count as no segment).
    pub fn moved_from(&self, base: &Outcome) -> u64 {
        self.landed
            .iter()
            .zip(&base.landed)
            .filter(|(a, b)| a != b)
            .count() as u64
    }
}

/// What a replay runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Device {
    pub device: i64,
    pub start: Start,
    /// The simulated device's memory (None = unlimited).
    pub capacity: Option<u64>,
}

/// Replays `reqs` (the device's requests) under `base` with `change` applied.
pub fn measure(
    snapshot: &Snapshot,
    on: Device,
    base: &Config,
    reqs: &[Traced],
    change: &Change,
) -> Result<Outcome, ReplayError> {
    pace::finish(measure_paced(
        snapshot,
        on,
        base,
        reqs,
        change,
        &mut Pace::never(),
    ))
}

/// [`measure`], giving way through `pace`.
pub async fn measure_paced(
    snapshot: &Snapshot,
    on: Device,
    base: &Config,
    reqs: &[Traced],
    change: &Change,
    pace: &mut Pace<'_>,
) -> Result<Outcome, ReplayError> {
    measure_seeded(snapshot, on, base, reqs, change, None, pace).await
}

/// [`measure_paced`] from `seed`, the device's state before the first entry (as
/// [`start_state`](crate::analysis::state_at::start_state) gives it), so that many replays of
/// one trace walk back to it once.
pub async fn measure_seeded(
    snapshot: &Snapshot,
    on: Device,
    base: &Config,
    reqs: &[Traced],
    change: &Change,
    seed: Option<&[Segment]>,
    pace: &mut Pace<'_>,
) -> Result<Outcome, ReplayError> {
    let config = change
        .config(base)
        .map_err(|e| ReplayError(e.to_string()))?;
    let settings = config.to_conf_string();
    let edited;
    let reqs = if change.empty_cache_at.is_empty() && change.pad.is_empty() {
        reqs
    } else {
        edited = change.requests_paced(reqs, base, pace).await;
        &edited
    };
    let run = run_requests_paced(
        snapshot,
        on.device,
        config,
        on.start,
        on.capacity,
        change.memory_cap,
        reqs,
        seed,
        false,
        pace,
    )
    .await?;
    let stats = run.alloc.stats();
    let usage = run.alloc.backing().usage();
    Ok(Outcome {
        settings,
        peak_reserved: stats.peak_reserved,
        peak_allocated: stats.peak_allocated,
        final_reserved: stats.reserved,
        requests: run.requests,
        failed_requests: run.failed,
        failed_last: run.failed_last,
        segment_creations: usage.mallocs + usage.maps,
        bytes_mapped: usage.malloc_bytes + usage.mapped_bytes,
        bytes_unmapped: usage.free_bytes + usage.unmapped_bytes,
        peak_at: run.peak_at,
        landed: run.landed,
    })
}
