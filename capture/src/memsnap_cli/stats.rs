//! `memsnap stats FILE [--json]`: counts and byte totals, per device and overall.


use memsnap_core::analysis::pools::{is_private, pool_totals, PoolTotals};
use memsnap_core::analysis::summary::{DeviceSummary, HostSummary, Summary};
use memsnap_core::snapshot::Snapshot;

use super::format::size_exact;
use super::output::print;
use super::input::{load_without_frames, CliError};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Snapshot file (pickle or gzipped pickle); `-` reads stdin.
    pub file: String,
    /// Print the whole-file summary as one JSON object instead (with `pools`: per device and
    /// pool id, segments, reserved and allocated bytes).
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<(), CliError> {
    // The counts and totals need no stack, and most of a large file is its frame lists.
    let snapshot = load_without_frames(&args.file)?;
    let text = render(&args, &snapshot);
    print(&text)
}

/// What the command prints for a snapshot already read.
pub fn render(args: &Args, snapshot: &Snapshot) -> String {
    let summary = Summary::of(snapshot);
    let pools = pool_totals(snapshot);
    if args.json {
        let mut j = json(&summary);
        j["pools"] = pools_json(&pools);
        j["host"] = HostSummary::of(snapshot).map_or(serde_json::Value::Null, |h| host_json(&h));
        j.to_string() + "\n"
    } else {
        human(&args.file, snapshot, &summary) + &pools_human(&pools)
    }
}

/// The JSON form: exactly the fields of [`Summary`].
pub fn json(s: &Summary) -> serde_json::Value {
    serde_json::json!({
        "segments": s.segments,
        "blocks": s.blocks,
        "devices": s.devices,
        "trace_entries": s.trace_entries,
        "actions": s.actions,
        "reserved_bytes": s.reserved_bytes,
        "allocated_bytes": s.allocated_bytes,
        "active_bytes": s.active_bytes,
        "requested_bytes": s.requested_bytes,
        "largest_free_block_bytes": s.largest_free_block_bytes,
        "total_free_bytes": s.total_free_bytes,
        "distinct_alloc_sizes": s.distinct_alloc_sizes,
    })
}

/// Pinned host memory, apart from the device totals (`null` when the file has none).
pub fn host_json(h: &HostSummary) -> serde_json::Value {
    serde_json::json!({
        "segments": h.segments,
        "blocks": h.blocks,
        "trace_entries": h.trace_entries,
        "actions": h.actions,
        "reserved_bytes": h.reserved_bytes,
        "allocated_bytes": h.allocated_bytes,
        "active_bytes": h.active_bytes,
        "requested_bytes": h.requested_bytes,
        "largest_free_block_bytes": h.largest_free_block_bytes,
        "total_free_bytes": h.total_free_bytes,
    })
}

/// One object per device and pool (`pool_id` as `[a, b]`; (0, 0) = the default pools).
pub fn pools_json(pools: &[PoolTotals]) -> serde_json::Value {
    pools
        .iter()
        .map(|p| {
            serde_json::json!({
                "device": p.device,
                "pool_id": [p.pool_id.0, p.pool_id.1],
                "segments": p.segments,
                "reserved_bytes": p.reserved_bytes,
                "allocated_bytes": p.allocated_bytes,
            })
        })
        .collect()
}

/// Private pools (CUDA graphs, MemPools) only: the default pools are the device rows above.
fn pools_human(pools: &[PoolTotals]) -> String {
    let mut out = String::new();
    for p in pools.iter().filter(|p| is_private(p.pool_id)) {
        out.push_str(&format!(
            "device {} private pool ({}, {}): {} segments\n",
            p.device, p.pool_id.0, p.pool_id.1, p.segments
        ));
        bytes_lines(
            &mut out,
            &[
                ("reserved", p.reserved_bytes),
                ("allocated", p.allocated_bytes),
                ("free (cached)", p.free_bytes),
            ],
        );
    }
    out
}

/// The byte rows printed for a device and for the total.
type Rows = [(&'static str, u64); 6];

fn device_rows(d: &DeviceSummary) -> Rows {
    [
        ("reserved", d.reserved_bytes),
        ("allocated", d.allocated_bytes),
        ("active", d.active_bytes),
        ("requested", d.requested_bytes),
        ("free (cached)", d.total_free_bytes),
        ("largest free block", d.largest_free_block_bytes),
    ]
}

fn total_rows(s: &Summary) -> Rows {
    [
        ("reserved", s.reserved_bytes),
        ("allocated", s.allocated_bytes),
        ("active", s.active_bytes),
        ("requested", s.requested_bytes),
        ("free (cached)", s.total_free_bytes),
        ("largest free block", s.largest_free_block_bytes),
    ]
}

fn bytes_lines(out: &mut String, rows: &[(&str, u64)]) {
    for &(name, v) in rows {
        out.push_str(&format!("  {name:<20}{}\n", size_exact(v)));
    }
}

fn human(file: &str, snapshot: &Snapshot, s: &Summary) -> String {
    let mut out = format!("{file}\n");
    for d in DeviceSummary::per_device(snapshot) {
        out.push_str(&format!(
            "device {}: {} segments, {} blocks, {} trace entries\n",
            d.device, d.segments, d.blocks, d.trace_entries
        ));
        bytes_lines(&mut out, &device_rows(&d));
    }
    out.push_str(&format!(
        "total: {} segments, {} blocks, {} trace entries, {} devices\n",
        s.segments,
        s.blocks,
        s.trace_entries.iter().sum::<u64>(),
        s.devices.len()
    ));
    bytes_lines(&mut out, &total_rows(s));
    if !s.actions.is_empty() {
        let actions: Vec<String> = s.actions.iter().map(|(a, n)| format!("{a} {n}")).collect();
        out.push_str(&format!("actions: {}\n", actions.join(", ")));
    }
    out.push_str(&format!(
        "distinct alloc sizes: {}\n",
        s.distinct_alloc_sizes
    ));
    if let Some(h) = HostSummary::of(snapshot) {
        // Not in the total above: pinned host memory is not device memory.
        out.push_str(&format!(
            "host (pinned, not in the total): {} segments, {} blocks, {} trace entries\n",
            h.segments, h.blocks, h.trace_entries
        ));
        bytes_lines(
            &mut out,
            &[
                ("reserved", h.reserved_bytes),
                ("allocated", h.allocated_bytes),
                ("active", h.active_bytes),
                ("requested", h.requested_bytes),
                ("free (cached)", h.total_free_bytes),
                ("largest free block", h.largest_free_block_bytes),
            ],
        );
    }
    out
}
