//! `memsnap segments FILE`: one line per segment, then one per block, in file order (the
//! text counterpart of `python -m torch.cuda._memory_viz segments`).

use std::io::Write;

use memsnap_core::snapshot::{Segment, Snapshot, StackId};

use super::format::size_exact;
use super::input::{load, CliError};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Snapshot file (pickle or gzipped pickle); `-` reads stdin.
    pub file: String,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let snapshot = load(&args.file)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for seg in &snapshot.segments {
        out.write_all(segment_text(&snapshot, seg).as_bytes())
            .map_err(CliError::stdout)?;
    }
    out.flush().map_err(CliError::stdout)
}

fn top_frame(s: &Snapshot, stack: Option<StackId>) -> String {
    match stack.and_then(|id| s.stacks.frames_of(id).next()) {
        Some(f) => format!("{}:{}:{}", f.filename, f.line, f.name),
        None => "<no frames>".into(),
    }
}

/// The segment's line and its blocks' lines.
pub fn segment_text(s: &Snapshot, seg: &Segment) -> String {
    let mut out = format!(
        "segment 0x{:x} {} device {} stream {}",
        seg.address,
        size_exact(seg.total_size),
        seg.device.unwrap_or(0),
        seg.stream.unwrap_or(0)
    );
    if let Some(t) = seg.segment_type {
        out.push_str(&format!(" {}", t.as_str()));
    }
    if let Some((a, b)) = seg.segment_pool_id.filter(|p| *p != (0, 0)) {
        out.push_str(&format!(" pool ({a}, {b})"));
    }
    if seg.is_expandable == Some(true) {
        out.push_str(" expandable");
    }
    out.push_str(&format!(
        ", {} blocks; {}\n",
        seg.blocks.len(),
        top_frame(s, seg.frames)
    ));
    // Older files have no block addresses: blocks are contiguous from the segment base.
    let mut offset = 0u64;
    for b in &seg.blocks {
        if let Some(a) = b.address {
            offset = a.wrapping_sub(seg.address);
        }
        let requested = b
            .requested_size
            .map_or_else(|| "?".to_string(), |r| r.to_string());
        out.push_str(&format!(
            "  +0x{offset:x} {} {} requested {requested}; {}\n",
            size_exact(b.size),
            b.state.as_str(),
            top_frame(s, b.frames)
        ));
        offset = offset.wrapping_add(b.size);
    }
    out
}
