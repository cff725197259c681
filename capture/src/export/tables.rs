//! The eight tables of one rank, built from its snapshot and its [`RankSummary`]. Columns and
//! their meaning are listed in docs/parquet-schema.md; the rank itself is not a column of any
//! file but the `rank=<R>` directory (Hive partitioning), which DuckDB and Spark turn into a
//! `rank` column.

use memsnap_core::analysis::frames::{kind, top_user_frame, FrameKind};
use memsnap_core::analysis::intervals::{allocations, block_addresses};
use memsnap_core::analysis::phases::{phases as find_phases, PhaseFigures};
use memsnap_core::analysis::rank_summary::RankSummary;
use memsnap_core::analysis::timeline::Timeline;
use memsnap_core::snapshot::{Snapshot, StackId};

use super::error::ExportError;
use super::table::{int, ints, opt_ints, Table};

fn stack_id(s: Option<StackId>) -> Option<i64> {
    s.map(|s| i64::from(s.0))
}

/// One row per device of the summary.
pub fn ranks(r: &RankSummary) -> Result<Table, ExportError> {
    let d = &r.devices;
    let col = |f: fn(&memsnap_core::analysis::rank_summary::DeviceRankSummary) -> u64,
               name: &str| ints(d.iter().map(f), name);
    Ok(Table::new("ranks")
        .str("file", &vec![r.file.as_str(); d.len()])
        .int(
            "file_bytes",
            vec![int(r.file_bytes, "file_bytes")?; d.len()],
        )
        .int("device", d.iter().map(|d| d.device).collect())
        .int("segments", col(|d| d.segments, "segments")?)
        .int("blocks", col(|d| d.blocks, "blocks")?)
        .int("trace_entries", col(|d| d.trace_entries, "trace_entries")?)
        .int(
            "reserved_bytes",
            col(|d| d.reserved_bytes, "reserved_bytes")?,
        )
        .int(
            "allocated_bytes",
            col(|d| d.allocated_bytes, "allocated_bytes")?,
        )
        .int("active_bytes", col(|d| d.active_bytes, "active_bytes")?)
        .int(
            "requested_bytes",
            col(|d| d.requested_bytes, "requested_bytes")?,
        )
        .int(
            "largest_free_block_bytes",
            col(|d| d.largest_free_block_bytes, "largest_free_block_bytes")?,
        )
        .int(
            "total_free_bytes",
            col(|d| d.total_free_bytes, "total_free_bytes")?,
        )
        .int(
            "peak_allocated_bytes",
            col(|d| d.peak_allocated_bytes, "peak_allocated_bytes")?,
        )
        .opt_int(
            "peak_allocated_entry",
            opt_ints(
                d.iter().map(|d| d.peak_allocated_entry),
                "peak_allocated_entry",
            )?,
        )
        .int(
            "peak_reserved_bytes",
            col(|d| d.peak_reserved_bytes, "peak_reserved_bytes")?,
        )
        .opt_int(
            "peak_reserved_entry",
            opt_ints(
                d.iter().map(|d| d.peak_reserved_entry),
                "peak_reserved_entry",
            )?,
        )
        .int("ooms", d.iter().map(|d| d.ooms.len() as i64).collect())
        .opt_str(
            "top_frame",
            &d.iter()
                .map(|d| d.top_frames.first().map(|f| f.frame.as_str()))
                .collect::<Vec<_>>(),
        )
        .opt_str(
            "peak_phase",
            &d.iter()
                .map(|d| d.peak_phase.as_deref())
                .collect::<Vec<_>>(),
        ))
}

pub fn segments(s: &Snapshot) -> Result<Table, ExportError> {
    let g = &s.segments;
    Ok(Table::new("segments")
        .int("segment", (0..g.len() as i64).collect())
        .int("device", g.iter().map(|g| g.device.unwrap_or(0)).collect())
        .int("address", ints(g.iter().map(|g| g.address), "address")?)
        .int(
            "total_size",
            ints(g.iter().map(|g| g.total_size), "total_size")?,
        )
        .opt_int(
            "allocated_size",
            opt_ints(g.iter().map(|g| g.allocated_size), "allocated_size")?,
        )
        .opt_int(
            "active_size",
            opt_ints(g.iter().map(|g| g.active_size), "active_size")?,
        )
        .opt_int(
            "requested_size",
            opt_ints(g.iter().map(|g| g.requested_size), "requested_size")?,
        )
        .opt_int("stream", g.iter().map(|g| g.stream).collect())
        .opt_str(
            "segment_type",
            &g.iter()
                .map(|g| g.segment_type.map(|t| t.as_str()))
                .collect::<Vec<_>>(),
        )
        .opt_int(
            "segment_pool_id_0",
            g.iter().map(|g| g.segment_pool_id.map(|p| p.0)).collect(),
        )
        .opt_int(
            "segment_pool_id_1",
            g.iter().map(|g| g.segment_pool_id.map(|p| p.1)).collect(),
        )
        .opt_bool("is_expandable", g.iter().map(|g| g.is_expandable).collect())
        .opt_int("stack_id", g.iter().map(|g| stack_id(g.frames)).collect())
        .int("blocks", g.iter().map(|g| g.blocks.len() as i64).collect()))
}

pub fn blocks(s: &Snapshot) -> Result<Table, ExportError> {
    let (mut segment, mut device, mut address, mut size) = (vec![], vec![], vec![], vec![]);
    let (mut requested, mut state, mut stack) = (vec![], vec![], vec![]);
    for (i, g) in s.segments.iter().enumerate() {
        for (b, addr) in g.blocks.iter().zip(block_addresses(g)) {
            segment.push(i as i64);
            device.push(g.device.unwrap_or(0));
            address.push(int(addr, "address")?);
            size.push(int(b.size, "size")?);
            requested.push(
                b.requested_size
                    .map(|r| int(r, "requested_size"))
                    .transpose()?,
            );
            state.push(b.state.as_str());
            stack.push(stack_id(b.frames));
        }
    }
    Ok(Table::new("blocks")
        .int("segment", segment)
        .int("device", device)
        .int("address", address)
        .int("size", size)
        .opt_int("requested_size", requested)
        .str("state", &state)
        .opt_int("stack_id", stack))
}

/// Every trace entry of every device, in trace order.
pub fn trace(s: &Snapshot) -> Result<Table, ExportError> {
    let (mut device, mut entry, mut action, mut addr, mut size) =
        (vec![], vec![], vec![], vec![], vec![]);
    let (mut stream, mut time, mut stack, mut free, mut context) =
        (vec![], vec![], vec![], vec![], vec![]);
    for (d, t) in s.device_traces.iter().flatten().enumerate() {
        for (i, e) in t.iter().enumerate() {
            device.push(d as i64);
            entry.push(i as i64);
            action.push(e.action_name());
            addr.push(e.addr().map(|a| int(a, "addr")).transpose()?);
            size.push(e.size().map(|a| int(a, "size")).transpose()?);
            stream.push(e.stream());
            time.push(e.time_us());
            stack.push(stack_id(e.frames()));
            free.push(e.device_free().map(|a| int(a, "device_free")).transpose()?);
            context.push(e.compile_context().map(|c| &**c));
        }
    }
    Ok(Table::new("trace")
        .int("device", device)
        .int("entry", entry)
        .str("action", &action)
        .opt_int("addr", addr)
        .opt_int("size", size)
        .opt_int("stream", stream)
        .opt_int("time_us", time)
        .opt_int("stack_id", stack)
        .opt_int("device_free", free)
        .opt_str("compile_context", &context))
}

/// Every allocation of every device's trace ([`allocations`]: the lifetimes the timeline sums).
pub fn allocation_rows(s: &Snapshot) -> Result<Table, ExportError> {
    let (mut device, mut addr, mut size, mut requested, mut exact) =
        (vec![], vec![], vec![], vec![], vec![]);
    let (mut stream, mut alloc, mut alloc_time, mut free_req) = (vec![], vec![], vec![], vec![]);
    let (mut free, mut free_time, mut live_until, mut stack) = (vec![], vec![], vec![], vec![]);
    for d in s.devices() {
        let Ok(di) = usize::try_from(d) else { continue };
        let t = s.trace(di);
        let time = |i: Option<usize>| i.and_then(|i| t.get(i)).and_then(|e| e.time_us());
        for a in allocations(s, di).list {
            device.push(d);
            addr.push(int(a.addr, "addr")?);
            size.push(int(a.size, "size")?);
            requested.push(int(a.requested, "requested")?);
            exact.push(a.size_exact);
            stream.push(a.stream);
            alloc.push(a.alloc_index.map(|i| i as i64));
            alloc_time.push(time(a.alloc_index));
            free_req.push(a.free_requested.map(|i| i as i64));
            free.push(a.free_completed.map(|i| i as i64));
            free_time.push(time(a.free_completed));
            live_until.push(a.end as i64);
            stack.push(stack_id(a.stack));
        }
    }
    Ok(Table::new("allocations")
        .int("device", device)
        .int("addr", addr)
        .int("size", size)
        .int("requested", requested)
        .bool("size_exact", exact)
        .opt_int("stream", stream)
        .opt_int("alloc_entry", alloc)
        .opt_int("alloc_time_us", alloc_time)
        .opt_int("free_requested_entry", free_req)
        .opt_int("free_entry", free)
        .opt_int("free_time_us", free_time)
        .int("live_until_entry", live_until)
        .opt_int("stack_id", stack))
}

/// One row per frame of every stack, innermost first.
pub fn stacks(s: &Snapshot) -> Table {
    let (mut stack, mut position, mut frame, mut top) = (vec![], vec![], vec![], vec![]);
    for (i, st) in s.stacks.all_stacks().iter().enumerate() {
        let top_at = top_user_frame(&s.stacks, StackId(i as u32));
        for (k, f) in st.iter().enumerate() {
            stack.push(i as i64);
            position.push(k as i64);
            frame.push(i64::from(f.0));
            top.push(top_at == Some(k));
        }
    }
    Table::new("stacks")
        .int("stack_id", stack)
        .int("position", position)
        .int("frame_id", frame)
        .bool("is_top_user_frame", top)
}

fn kind_name(k: FrameKind) -> &'static str {
    match k {
        FrameKind::User => "user",
        FrameKind::Library => "library",
        FrameKind::Torch => "torch",
        FrameKind::Stdlib => "stdlib",
        FrameKind::Native => "native",
    }
}

pub fn frames(s: &Snapshot) -> Table {
    let f = s.stacks.all_frames();
    Table::new("frames")
        .int("frame_id", (0..f.len() as i64).collect())
        .str(
            "filename",
            &f.iter().map(|f| &*f.filename).collect::<Vec<_>>(),
        )
        .int("line", f.iter().map(|f| f.line).collect())
        .str("name", &f.iter().map(|f| &*f.name).collect::<Vec<_>>())
        .str(
            "kind",
            &f.iter().map(|f| kind_name(kind(f))).collect::<Vec<_>>(),
        )
}

/// One row per phase of the program (`analysis::phases`), per device; none for a device
/// whose file has no annotations or whose trace has no times.
pub fn phases(s: &Snapshot) -> Result<Table, ExportError> {
    let (mut device, mut phase, mut name, mut path) = (vec![], vec![], vec![], vec![]);
    let (mut parent, mut depth, mut first, mut end) = (vec![], vec![], vec![], vec![]);
    let (mut start_us, mut end_us, mut compile) = (vec![], vec![], vec![]);
    let (mut peak_alloc, mut peak_entry, mut peak_resv) = (vec![], vec![], vec![]);
    let (mut allocs, mut allocated, mut requested) = (vec![], vec![], vec![]);
    let (mut frees, mut freed, mut net) = (vec![], vec![], vec![]);
    for d in s.devices() {
        let Ok(index) = usize::try_from(d) else {
            continue;
        };
        let Ok(found) = find_phases(s, index) else {
            continue;
        };
        let tl = Timeline::build(s, index);
        let figures = PhaseFigures::new(s, &tl);
        for (i, p) in found.phases.iter().enumerate() {
            let st = figures.of(p);
            device.push(d);
            phase.push(i as i64);
            name.push(p.name.clone());
            path.push(found.path(i));
            parent.push(p.parent.map(|x| x as i64));
            depth.push(p.depth as i64);
            first.push(p.first as i64);
            end.push(p.end as i64);
            start_us.push(p.start_us);
            end_us.push(p.end_us);
            compile.push(p.compile);
            peak_alloc.push(int(st.peak_allocated, "peak_allocated_bytes")?);
            peak_entry.push(st.peak_index.map(|x| x as i64));
            peak_resv.push(int(st.peak_reserved, "peak_reserved_bytes")?);
            allocs.push(st.allocs as i64);
            allocated.push(int(st.allocated_bytes, "allocated_bytes")?);
            requested.push(int(st.requested_bytes, "requested_bytes")?);
            frees.push(st.frees as i64);
            freed.push(int(st.freed_bytes, "freed_bytes")?);
            net.push(st.net_bytes);
        }
    }
    Ok(Table::new("phases")
        .int("device", device)
        .int("phase", phase)
        .str("name", &name)
        .str("path", &path)
        .opt_int("parent", parent)
        .int("depth", depth)
        .int("first_entry", first)
        .int("end_entry", end)
        .opt_int("start_us", start_us)
        .opt_int("end_us", end_us)
        .bool("compile", compile)
        .int("peak_allocated_bytes", peak_alloc)
        .opt_int("peak_allocated_entry", peak_entry)
        .int("peak_reserved_bytes", peak_resv)
        .int("allocs", allocs)
        .int("allocated_bytes", allocated)
        .int("requested_bytes", requested)
        .int("frees", frees)
        .int("freed_bytes", freed)
        .int("net_bytes", net))
}
