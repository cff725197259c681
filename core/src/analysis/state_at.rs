//! The allocator state at any trace entry, rebuilt by walking the trace backwards from the
//! dump's segments (undoing alloc, free_requested, free_completed, segment_alloc/free/map/unmap),
//! as MemoryViz.js's "Allocator State History" does. Most real traces begin after segments
//! existed (recording started late, or the ring buffer dropped the start), so the dump is the
//! only fixed point.
//!
//! Free space is not recorded: the allocator always merges adjacent free blocks of a segment,
//! so the free blocks are exactly the gaps between active blocks. A block freed inside the
//! trace has only its requested size in the entry; its block size is the rounded size, widened
//! to the gap's end when the rest (<= 1 MiB in a large segment) could not have been split off.
//!
//! [`StateHistory`] keeps a checkpoint every [`CHECKPOINT_EVERY`] entries (more apart when states
//! are large, to bound memory) so that a slider over a million-entry trace rebuilds any state
//! from at most that many undo steps.

use crate::allocator::rounding::{
    round_size, MIN_BLOCK_SIZE, ROUND_LARGE, SMALL_BUFFER, SMALL_SIZE,
};
use crate::allocator::Config;
use crate::snapshot::{
    Action, Block, BlockState, Segment, SegmentType, Snapshot, StackId, TraceEntry,
};

use super::addr_map::AddrMap;
use super::pace::{self, Pace};

/// Fewest entries between checkpoints.
pub const CHECKPOINT_EVERY: usize = 1024;
/// Block and segment records all checkpoints together may hold (bounds memory for traces with
/// many live blocks: the interval grows instead).
const CHECKPOINT_BUDGET: usize = 16 << 20;

#[derive(Debug, Clone, PartialEq)]
struct SegRec {
    size: u64,
    stream: i64,
    small: bool,
    pool_id: Option<(i64, i64)>,
    expandable: bool,
    frames: Option<StackId>,
}

#[derive(Debug, Clone, PartialEq)]
struct BlkRec {
    size: u64,
    requested: u64,
    state: BlockState,
    frames: Option<StackId>,
    /// Size inferred from a requested size (blocks freed inside the trace), not read from the dump.
    inferred: bool,
}

#[derive(Debug, Clone, Default, PartialEq)]
struct State {
    segments: AddrMap<SegRec>,
    blocks: AddrMap<BlkRec>,
}

/// A place where the trace and the later state disagree (the file is inconsistent there, or the
/// trace comes from an allocator with other rules).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inconsistency {
    pub entry: usize,
    pub message: String,
}

/// Reconstructs states of one device's trace.
#[derive(Debug, Clone)]
pub struct StateHistory {
    device: i64,
    len: usize,
    /// (entry index, state before that entry), ascending; the last is the dump (index = len).
    checkpoints: Vec<(usize, State)>,
    entries: Vec<TraceEntry>,
    config: Config,
    inconsistencies: Vec<Inconsistency>,
}

impl StateHistory {
    /// Prepares `device`'s history; `config` gives the rounding used to size freed blocks.
    pub fn new(snapshot: &Snapshot, device: i64, config: &Config) -> StateHistory {
        let entries: Vec<TraceEntry> = snapshot.trace(device.max(0) as usize).to_vec();
        let mut state = dump_state(snapshot, device);
        let len = entries.len();
        let mut checkpoints = vec![(len, state.clone())];
        let mut inconsistencies = Vec::new();
        let records = state.blocks.len() + state.segments.len() + 1;
        let every = CHECKPOINT_EVERY.max((len.saturating_mul(records)).div_ceil(CHECKPOINT_BUDGET));
        for i in (0..len).rev() {
            undo(&mut state, &entries[i], i, config, &mut inconsistencies);
            if i % every == 0 {
                checkpoints.push((i, state.clone()));
            }
        }
        checkpoints.reverse();
        StateHistory {
            device,
            len,
            checkpoints,
            entries,
            config: config.clone(),
            inconsistencies,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// What the backward walk could not explain, oldest first.
    pub fn inconsistencies(&self) -> &[Inconsistency] {
        &self.inconsistencies
    }

    /// Segments as they were before trace entry `n` (`n` = trace length: the dump's state;
    /// 0: the state when recording began). `n` beyond the end is clamped.
    pub fn state_before(&self, n: usize) -> Vec<Segment> {
        let n = n.min(self.len);
        let pos = self.checkpoints.partition_point(|(i, _)| *i < n);
        let (mut at, mut state) = match self.checkpoints.get(pos) {
            Some((i, s)) => (*i, s.clone()),
            None => (self.len, State::default()),
        };
        let mut sink = Vec::new();
        while at > n {
            at -= 1;
            undo(&mut state, &self.entries[at], at, &self.config, &mut sink);
        }
        to_segments(&state, self.device)
    }

    /// Segments right after entry `n` has been applied.
    pub fn state_after(&self, n: usize) -> Vec<Segment> {
        self.state_before(n.saturating_add(1))
    }

    /// True when no segment existed before the first entry: the trace holds the whole history.
    pub fn starts_empty(&self) -> bool {
        self.checkpoints
            .first()
            .is_some_and(|(i, s)| *i == 0 && s.segments.is_empty())
    }
}

/// The segments before the first entry and what the backward walk could not explain: the
/// start of a replay, without the checkpoints and trace copy a [`StateHistory`] keeps.
pub fn start_state(
    snapshot: &Snapshot,
    device: i64,
    config: &Config,
) -> (Vec<Segment>, Vec<Inconsistency>) {
    pace::finish(start_state_paced(
        snapshot,
        device,
        config,
        &mut Pace::never(),
    ))
}

/// [`start_state`], giving way through `pace` during the backward walk (a million-entry trace
/// walks for tens of milliseconds).
pub async fn start_state_paced(
    snapshot: &Snapshot,
    device: i64,
    config: &Config,
    pace: &mut Pace<'_>,
) -> (Vec<Segment>, Vec<Inconsistency>) {
    let (state, inconsistencies) = walk_back(snapshot, device, config, 0, pace).await;
    (to_segments(&state, device), inconsistencies)
}

/// [`StateHistory::state_before`] for one `n`, walked back from the dump without the
/// checkpoints and trace copy a history keeps, giving way through `pace`.
pub async fn state_before_paced(
    snapshot: &Snapshot,
    device: i64,
    config: &Config,
    n: usize,
    pace: &mut Pace<'_>,
) -> Vec<Segment> {
    let (state, _) = walk_back(snapshot, device, config, n, pace).await;
    to_segments(&state, device)
}

/// The state before entry `n`, undoing the trace from the dump back to it.
async fn walk_back(
    snapshot: &Snapshot,
    device: i64,
    config: &Config,
    n: usize,
    pace: &mut Pace<'_>,
) -> (State, Vec<Inconsistency>) {
    let entries = snapshot.trace(device.max(0) as usize);
    let mut state = dump_state(snapshot, device);
    let mut inconsistencies = Vec::new();
    for (i, e) in entries.iter().enumerate().skip(n).rev() {
        pace.tick().await;
        undo(&mut state, e, i, config, &mut inconsistencies);
    }
    (state, inconsistencies)
}

/// One-shot form of [`StateHistory::state_before`] (builds the history each call), under the
/// configuration the device is modelled under.
pub fn state_at(snapshot: &Snapshot, device: i64, n: usize) -> Vec<Segment> {
    let config = super::policy::device_config_quick(snapshot, device)
        .map(|d| d.config)
        .unwrap_or_default();
    StateHistory::new(snapshot, device, &config).state_before(n)
}

fn dump_state(snapshot: &Snapshot, device: i64) -> State {
    let mut st = State::default();
    for seg in snapshot
        .segments
        .iter()
        .filter(|s| s.device.unwrap_or(0) == device)
    {
        st.segments.insert(
            seg.address,
            SegRec {
                size: seg.total_size,
                stream: seg.stream.unwrap_or(0),
                small: seg
                    .segment_type
                    .map_or(seg.total_size == SMALL_BUFFER, |t| t == SegmentType::Small),
                pool_id: seg.segment_pool_id,
                expandable: seg.is_expandable == Some(true),
                frames: seg.frames,
            },
        );
        let mut at = seg.address;
        for b in &seg.blocks {
            let addr = b.address.unwrap_or(at);
            if b.state.is_active() {
                st.blocks.insert(
                    addr,
                    BlkRec {
                        size: b.size,
                        requested: b.requested_size.unwrap_or(0),
                        state: b.state,
                        frames: b.frames,
                        inferred: false,
                    },
                );
            }
            at = addr + b.size;
        }
    }
    st
}

fn containing_segment(st: &State, addr: u64) -> Option<(u64, &SegRec)> {
    st.segments
        .at_or_before(addr)
        .filter(|(a, s)| addr < *a + s.size)
}

fn note(sink: &mut Vec<Inconsistency>, entry: usize, message: String) {
    if sink.len() < 1000 {
        sink.push(Inconsistency { entry, message });
    }
}

/// Reverses one entry: `st` is the state after entry `i`; afterwards, the state before it.
fn undo(st: &mut State, e: &TraceEntry, i: usize, config: &Config, sink: &mut Vec<Inconsistency>) {
    let addr = e.addr().unwrap_or(0);
    let size = e.size().unwrap_or(0);
    match e.action() {
        Action::Alloc => {
            let (removed, before) = st.blocks.remove_and_before(addr);
            let before = before.map(|(a, b)| (a, b.size, b.inferred));
            if removed.is_none() {
                note(
                    sink,
                    i,
                    format!("alloc at 0x{addr:x}: no such block afterwards"),
                );
            }
            widen_block_before(st, addr, before, i, sink);
        }
        Action::FreeRequested => match st.blocks.get_mut(addr) {
            Some(b) => b.state = BlockState::ActiveAllocated,
            None => note(
                sink,
                i,
                format!("free_requested at 0x{addr:x}: no block afterwards"),
            ),
        },
        Action::FreeCompleted => {
            // One search gives the block at `addr` (there must be none), the one before and the
            // one after.
            let (at_or_before, after) = st.blocks.around(addr);
            let at_or_before = at_or_before.map(|(a, b)| (a, b.size, b.inferred));
            let after = after.map(|(a, _)| a);
            if at_or_before.is_some_and(|(a, _, _)| a == addr) {
                note(
                    sink,
                    i,
                    format!("free_completed at 0x{addr:x}: the block is still active afterwards"),
                );
                return;
            }
            let Some((seg_addr, seg)) = containing_segment(st, addr) else {
                note(
                    sink,
                    i,
                    format!("free_completed at 0x{addr:x}: outside every segment"),
                );
                return;
            };
            let seg_end = seg_addr + seg.size;
            let (small, expandable) = (seg.small, seg.expandable);
            let before = at_or_before.filter(|(a, _, _)| *a >= seg_addr);
            let gap_start = before.map_or(seg_addr, |(a, size, _)| a + size);
            if gap_start > addr {
                note(
                    sink,
                    i,
                    format!("free_completed at 0x{addr:x}: inside an active block"),
                );
                return;
            }
            let gap_end = after.filter(|a| *a < seg_end).unwrap_or(seg_end);
            let mut bsize = round_size(size, config);
            let rest = gap_end.saturating_sub(addr + bsize);
            // The allocator leaves an unsplittable rest inside the block.
            // Oversize blocks (>= max_split_size) are never split: they took a whole cached
            // block within max_non_split_rounding of the request, or a whole new segment.
            let unsplit = if small || expandable {
                rest < MIN_BLOCK_SIZE
            } else if bsize >= config.max_split_size {
                rest < config.max_non_split_rounding_size.max(ROUND_LARGE)
            } else {
                rest <= SMALL_SIZE
            };
            if unsplit || addr + bsize > gap_end {
                if addr + bsize > gap_end {
                    note(sink, i, format!("free_completed at 0x{addr:x}: block of {bsize} bytes overruns the free space"));
                }
                bsize = gap_end - addr;
            }
            st.blocks.insert(
                addr,
                BlkRec {
                    size: bsize,
                    requested: size,
                    state: BlockState::ActivePendingFree,
                    frames: e.frames(),
                    inferred: true,
                },
            );
            // In a large segment no free block is 1 MiB or smaller: a rest that small before
            // this block belongs to the block before it.
            if !small && !expandable && gap_start < addr && addr - gap_start <= SMALL_SIZE {
                // The segment and the block before `addr` are as found above.
                widen_prev(st, addr, before, i, sink);
            }
        }
        Action::SegmentAlloc => {
            if st.segments.remove(addr).is_none() {
                note(
                    sink,
                    i,
                    format!("segment_alloc at 0x{addr:x}: no such segment afterwards"),
                );
            }
            if st.blocks.range(addr, addr + size).next().is_some() {
                note(
                    sink,
                    i,
                    format!("segment_alloc at 0x{addr:x}: blocks before the segment existed"),
                );
            }
        }
        Action::SegmentFree => {
            st.segments.insert(
                addr,
                SegRec {
                    size,
                    stream: e.stream().unwrap_or(0),
                    small: size == SMALL_BUFFER,
                    pool_id: Some((0, 0)),
                    expandable: false,
                    frames: e.frames(),
                },
            );
        }
        Action::SegmentMap => unmap_range(st, addr, size, i, sink),
        Action::SegmentUnmap => map_range(st, addr, size, e),
        _ => {}
    }
}

/// An allocation always takes the start of a free block, and free neighbours are always merged,
/// so right before `addr` lies an active block (or the segment's start). When the block there
/// was sized from its request, it really reaches `addr`: the rest was too small to split off.
/// `before`: the block with the largest address below `addr`, `(address, size, inferred)`.
fn widen_block_before(
    st: &mut State,
    addr: u64,
    before: Option<(u64, u64, bool)>,
    i: usize,
    sink: &mut Vec<Inconsistency>,
) {
    let Some((seg_addr, seg)) = containing_segment(st, addr) else {
        return;
    };
    if seg_addr == addr || seg.expandable {
        return;
    }
    let before = before.filter(|(a, _, _)| *a >= seg_addr);
    widen_prev(st, addr, before, i, sink);
}

/// [`widen_block_before`] once the block before `addr` in its segment is known:
/// `(address, size, inferred)`.
fn widen_prev(
    st: &mut State,
    addr: u64,
    before: Option<(u64, u64, bool)>,
    i: usize,
    sink: &mut Vec<Inconsistency>,
) {
    let Some((prev_addr, prev_size, prev_inferred)) = before else {
        note(
            sink,
            i,
            format!("alloc at 0x{addr:x}: free space before it in its segment"),
        );
        return;
    };
    let end = prev_addr + prev_size;
    if end >= addr {
        return;
    }
    if prev_inferred && addr - end <= SMALL_SIZE {
        if let Some(p) = st.blocks.get_mut(prev_addr) {
            p.size = addr - prev_addr;
        }
    } else {
        note(
            sink,
            i,
            format!(
                "alloc at 0x{addr:x}: {} free bytes before it in its segment",
                addr - end
            ),
        );
    }
}

/// Undo of a map: `[addr, addr+size)` leaves the mapped range that holds it.
fn unmap_range(st: &mut State, addr: u64, size: u64, i: usize, sink: &mut Vec<Inconsistency>) {
    let Some((seg_addr, seg)) = containing_segment(st, addr).map(|(a, s)| (a, s.clone())) else {
        note(
            sink,
            i,
            format!("segment_map at 0x{addr:x}: not mapped afterwards"),
        );
        return;
    };
    st.segments.remove(seg_addr);
    if addr > seg_addr {
        st.segments.insert(
            seg_addr,
            SegRec {
                size: addr - seg_addr,
                ..seg.clone()
            },
        );
    }
    let end = addr + size;
    let seg_end = seg_addr + seg.size;
    if seg_end > end {
        st.segments.insert(
            end,
            SegRec {
                size: seg_end - end,
                frames: None,
                ..seg
            },
        );
    }
}

/// Undo of an unmap: `[addr, addr+size)` is mapped again, joining adjacent mapped ranges.
fn map_range(st: &mut State, addr: u64, size: u64, e: &TraceEntry) {
    let stream = e.stream().unwrap_or(0);
    let mut start = addr;
    let mut total = size;
    let mut rec = SegRec {
        size,
        stream,
        small: !size.is_multiple_of(20 << 20),
        pool_id: Some((0, 0)),
        expandable: true,
        frames: e.frames(),
    };
    if let Some((a, s)) = st.segments.before(addr).map(|(a, s)| (a, s.clone())) {
        if a + s.size == addr && s.expandable && s.stream == stream {
            st.segments.remove(a);
            start = a;
            total += s.size;
            rec = s;
        }
    }
    if let Some(s) = st.segments.get(addr + size).cloned() {
        if s.expandable && s.stream == stream {
            st.segments.remove(addr + size);
            total += s.size;
            rec.small = s.small;
        }
    }
    rec.size = total;
    st.segments.insert(start, rec);
}

fn to_segments(st: &State, device: i64) -> Vec<Segment> {
    st.segments
        .iter()
        .map(|(addr, s)| {
            let end = addr + s.size;
            let mut blocks = Vec::new();
            let mut at = addr;
            let (mut allocated, mut active, mut requested) = (0, 0, 0);
            for (ba, b) in st.blocks.range(addr, end) {
                if ba > at {
                    blocks.push(free_block(at, ba - at));
                }
                let size = b.size.min(end - ba);
                if b.state == BlockState::ActiveAllocated {
                    allocated += size;
                }
                active += size;
                requested += b.requested;
                blocks.push(Block {
                    address: Some(ba),
                    size,
                    requested_size: Some(b.requested),
                    state: b.state,
                    frames: b.frames,
                    history: None,
                    extra: Vec::new(),
                });
                at = ba + size;
            }
            if at < end {
                blocks.push(free_block(at, end - at));
            }
            Segment {
                device: Some(device),
                address: addr,
                total_size: s.size,
                allocated_size: Some(allocated),
                active_size: Some(active),
                requested_size: Some(requested),
                stream: Some(s.stream),
                segment_type: Some(if s.small {
                    SegmentType::Small
                } else {
                    SegmentType::Large
                }),
                segment_pool_id: s.pool_id,
                is_expandable: Some(s.expandable),
                frames: s.frames,
                blocks,
                extra: Vec::new(),
            }
        })
        .collect()
}

fn free_block(addr: u64, size: u64) -> Block {
    Block {
        address: Some(addr),
        size,
        requested_size: Some(0),
        state: BlockState::Inactive,
        frames: None,
        history: None,
        extra: Vec::new(),
    }
}
