//! `memsnap oom FILE [--json]`: why the file's out-of-memory errors happened, one per device
//! that has one (`memsnap_core::analysis::oom`, the function the page's OOM panel calls).


use memsnap_core::allocator::Rules;
use memsnap_core::analysis::oom::{explain_ooms, OomExplanation};
use memsnap_core::snapshot::Snapshot;

use super::allocator;
use super::format::{size, size_exact};
use super::input::{load, CliError};
use super::output::print;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Snapshot file (pickle or gzipped pickle); `-` reads stdin.
    pub file: String,
    /// Whose caching allocator to model: `cuda` or `npu` (torch_npu). Default: the one the
    /// file's sizes fit, per device.
    #[arg(long, value_name = "NAME", value_parser = Rules::parse)]
    pub allocator: Option<Rules>,
    /// Print the explanations as a JSON array (the core result's fields) instead.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let snapshot = load(&args.file)?;
    let text = render(&args, &snapshot)?;
    print(&text)
}

/// What the command prints for a snapshot already read.
pub fn render(args: &Args, snapshot: &Snapshot) -> Result<String, CliError> {
    let snapshot = &*allocator::under(snapshot, args.allocator);
    let ooms = explain_ooms(snapshot).map_err(|e| CliError::new(&args.file, e))?;
    let text = if args.json {
        serde_json::to_string(&ooms).map_err(|e| CliError::new(&args.file, e))? + "\n"
    } else if ooms.is_empty() {
        format!(
            "{}: no out-of-memory error in the trace ({} devices)\n",
            args.file,
            snapshot.devices().len()
        )
    } else {
        ooms.iter().map(human).collect::<Vec<_>>().join("\n")
    };
    Ok(text)
}

fn human(o: &OomExplanation) -> String {
    let mut out = format!(
        "{}:{} ran out of memory at trace entry {} ({} OOM{} on this device)\n  rules: {}\n",
        o.allocator,
        o.device,
        o.entry,
        o.ooms_on_device,
        if o.ooms_on_device == 1 { "" } else { "s" },
        o.allocator_note
    );
    let pool = o
        .pool_id
        .map(|(a, b)| format!(", private pool ({a}, {b})"))
        .unwrap_or_default();
    out.push_str(&format!(
        "  request         {} (rounded) on stream {}{pool}; a new segment would be {}\n",
        size_exact(o.requested),
        o.stream,
        size(o.segment_size)
    ));
    out.push_str(&format!(
        "  device free     {}\n",
        o.device_free
            .map(size_exact)
            .unwrap_or_else(|| "not recorded".into())
    ));
    out.push_str(&format!("  reserved        {}\n", size_exact(o.reserved)));
    out.push_str(&format!("  allocated       {}\n", size_exact(o.allocated)));
    out.push_str(&format!(
        "  releasable      {} in segments with nothing live (released and retried first)\n",
        size_exact(o.releasable)
    ));
    out.push_str("  free blocks by pool and stream (largest, why it could not serve):\n");
    if o.pools.is_empty() {
        out.push_str("    none: no segments\n");
    }
    for p in &o.pools {
        let id = p
            .pool_id
            .map(|(a, b)| format!(" pool ({a}, {b})"))
            .unwrap_or_default();
        out.push_str(&format!(
            "    {}{id} stream {}: {} segments, {} free in {} blocks, largest {}: {}\n",
            p.pool,
            p.stream,
            p.segments,
            size(p.free_bytes),
            p.free_blocks,
            size(p.largest_free),
            p.unfit.as_str()
        ));
    }
    out.push_str(&format!(
        "  live at the failure: {} by frame\n",
        size(o.live_bytes)
    ));
    for l in &o.live {
        out.push_str(&format!(
            "    {:>10}  {:>5} blocks  {}\n",
            size(l.bytes),
            l.blocks,
            l.frame
        ));
    }
    if let Some(f) = o.frames.first() {
        out.push_str(&format!("  failing request: {f}\n"));
    }
    out.push_str(&format!(
        "  replayed to the failure on {} (reserved + device free):\n",
        size(o.capacity)
    ));
    for v in &o.verdicts {
        let outcome = match (v.avoided, v.failed_before) {
            (true, _) => "served: avoids this OOM".to_string(),
            (false, 0) => "fails here too".to_string(),
            (false, n) => format!("fails earlier ({n} requests)"),
        };
        out.push_str(&format!(
            "    {:<36} {outcome}; reserved {}, peak {}\n",
            v.change,
            size(v.reserved),
            size(v.peak_reserved)
        ));
    }
    out.push_str(&format!(
        "  planned arena: {} (peak live {}), {} the {} available\n",
        size_exact(o.planned_arena),
        size(o.planned_peak_live),
        if o.planned_arena <= o.capacity {
            "fits in"
        } else {
            "exceeds"
        },
        size(o.capacity)
    ));
    out
}
