//! The timeline of an entry range at a pixel size: LOD series (one min/max point per column),
//! the band layout for that zoom, and the peak inside the range with what it is made of.

use memsnap_core::analysis::bands::layout;
use memsnap_core::analysis::lod::Bucket;
use memsnap_core::analysis::range::{clamp, min_bytes_for_count, peak_index_in};
use memsnap_core::snapshot::Snapshot;

use super::cache::Analyses;
use crate::protocol::analysis::{EntryRange, SeriesPoint, TimelineRequest, TimelineView};

/// At most about this many allocations get bands; smaller ones are summarised.
const MAX_BANDS: usize = 1500;
/// Bands may be as thin as 1/this of a pixel (they show as fine stripes, as in MemoryViz).
const SUBPIXEL_BANDS: u64 = 8;
/// Pixels per band column.
const BAND_COLUMN_PX: usize = 2;
/// Caps on the requested drawing size, so a bad request cannot ask for gigabytes.
const MAX_WIDTH: u32 = 8192;
const MAX_HEIGHT: u32 = 4096;

pub fn timeline_view(snap: &Snapshot, cache: &mut Analyses, req: &TimelineRequest) -> TimelineView {
    let device = req.device;
    let tl = cache.timeline(snap, device);
    let (a, b) = clamp(tl, to_usize(req.range.start), to_usize(req.range.end));
    let width = req.width.clamp(1, MAX_WIDTH) as usize;
    let height = req.height.clamp(1, MAX_HEIGHT) as u64;
    let points = |bs: Vec<Bucket>| -> Vec<SeriesPoint> {
        bs.into_iter()
            .map(|b| SeriesPoint {
                start: b.start as u64,
                end: b.end as u64,
                min: b.min,
                max: b.max,
            })
            .collect()
    };
    let allocated = points(tl.allocated.buckets(a, b, width));
    let reserved = points(tl.reserved.buckets(a, b, width));
    let y_max = allocated
        .iter()
        .chain(&reserved)
        .map(|p| p.max)
        .max()
        .unwrap_or(0);
    // The largest allocations get bands, as long as they are not slivers.
    let floor = y_max / (height * SUBPIXEL_BANDS).max(1);
    let min_bytes = min_bytes_for_count(tl, a, b, MAX_BANDS, floor);
    // Band columns are two pixels wide: twice the bands for the same message and drawing cost.
    let bands = layout(tl, a, b, width.div_ceil(BAND_COLUMN_PX), min_bytes);
    let time = |i: usize| tl.time_us.get(i).copied().flatten();
    let (start_time_us, end_time_us) = if a < b {
        (time(a), time(b - 1))
    } else {
        (None, None)
    };
    let entries = tl.len() as u64;
    let peak_index = peak_index_in(tl, a, b);
    let peak = peak_index.map(|i| cache.peak_at(snap, device, i));
    TimelineView {
        device,
        entries,
        range: EntryRange {
            start: a as u64,
            end: b as u64,
        },
        start_time_us,
        end_time_us,
        y_max,
        allocated,
        reserved,
        bands,
        peak,
    }
}

pub fn to_usize(v: u64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}
