//! Could this device's sizes come from the allocator `config.rules` names? PyTorch's CUDA
//! allocator and torch_npu's write the same file format with other rules (torch_npu pads every
//! request by 32 bytes before rounding, and sizes segments to match), and replaying one under the
//! other's policy would report false mismatches. These checks look for sizes the policy cannot
//! produce, in the dump and in the trace (each device on its own: a device whose dump shows
//! nothing can still be told by the address steps between neighbouring blocks in its trace).

use std::collections::{BTreeMap, HashSet};

use super::super::pace::{self, Pace, CHUNK};

use crate::allocator::rounding::{
    get_allocation_size, is_small, round_size, MIN_BLOCK_SIZE, SMALL_BUFFER,
};
use crate::allocator::{Config, Rules};
use crate::snapshot::{Action, BlockState, SegmentType, Snapshot};

/// Evidence (up to 5 examples) and how many sizes were checked / impossible under one policy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicyCheck {
    /// The allocator whose policy was checked.
    pub rules: Rules,
    pub checked: usize,
    pub impossible: usize,
    pub examples: Vec<String>,
}

impl PolicyCheck {
    /// No size contradicts the policy.
    pub fn fits(&self) -> bool {
        self.impossible == 0
    }

    /// One impossible size; `msg` is only written for the first few (on a trace that fits
    /// neither policy, formatting every one was most of the check).
    fn flag(&mut self, msg: impl FnOnce() -> String) {
        self.impossible += 1;
        if self.examples.len() < 5 {
            self.examples.push(msg());
        }
    }
}

/// Sizes of `device` that the policy of `config.rules` (under `config`) cannot produce: the
/// dump's blocks, new segments, and the steps between neighbouring blocks in the trace.
pub fn check_policy(snapshot: &Snapshot, device: i64, config: &Config) -> PolicyCheck {
    pace::finish(check_policy_paced(
        snapshot,
        device,
        config,
        &mut Pace::never(),
    ))
}

/// [`check_policy`], giving way through `pace` (82 ms in one piece on a 1M-entry trace).
pub async fn check_policy_paced(
    snapshot: &Snapshot,
    device: i64,
    config: &Config,
    pace: &mut Pace<'_>,
) -> PolicyCheck {
    let mut pc = check_sizes(snapshot, device, config);
    pace.check().await;
    neighbour_steps(snapshot, device, config, &mut pc, pace).await;
    pc
}

/// The dump's blocks and the trace's new segments only: one pass, no map of the trace's
/// blocks (2 ms against [`check_policy`]'s 82 ms on a 1M-entry trace), which the analyses that
/// only round sizes choose rules by.
pub fn check_sizes(snapshot: &Snapshot, device: i64, config: &Config) -> PolicyCheck {
    let who = config.rules.short();
    let mut pc = PolicyCheck {
        rules: config.rules,
        ..PolicyCheck::default()
    };
    // 1. Dump blocks: a block is the rounded request, split off whenever the rest can be (always
    //    in small and expandable segments; in large ones only rests > 1 MiB).
    for seg in snapshot
        .segments
        .iter()
        .filter(|s| s.device.unwrap_or(0) == device)
    {
        let small = seg
            .segment_type
            .map_or(seg.total_size == SMALL_BUFFER, |t| t == SegmentType::Small);
        let expandable = seg.is_expandable == Some(true);
        if !expandable && small && seg.total_size != SMALL_BUFFER {
            pc.flag(move || {
                format!(
                    "small segment 0x{:x} of {} bytes ({who}'s are 2 MiB)",
                    seg.address, seg.total_size
                )
            });
        }
        for b in &seg.blocks {
            pc.checked += 1;
            if b.size % MIN_BLOCK_SIZE != 0 {
                pc.flag(move || format!("block of {} bytes is not a multiple of 512", b.size));
                continue;
            }
            let (Some(req), BlockState::ActiveAllocated) = (b.requested_size, b.state) else {
                continue;
            };
            let r = round_size(req, config);
            if b.size < r || ((small || expandable) && b.size != r) {
                pc.flag(move || {
                    format!(
                        "block 0x{:x}: {} bytes for a request of {req} ({who}'s policy gives {r})",
                        b.address.unwrap_or(0),
                        b.size
                    )
                });
            }
        }
    }
    // 2. A new segment whose first block is the request that created it: its size is
    //    get_allocation_size(round_size(request)).
    let trace = snapshot.trace(device.max(0) as usize);
    for (i, w) in trace.windows(2).enumerate() {
        let (s, a) = (&w[0], &w[1]);
        if s.action() != Action::SegmentAlloc || a.action() != Action::Alloc || s.addr() != a.addr()
        {
            continue;
        }
        let (Some(ss), Some(req)) = (s.size(), a.size()) else {
            continue;
        };
        pc.checked += 1;
        let want = get_allocation_size(round_size(req, config), config);
        if ss != want {
            pc.flag(move || format!(
                "entry {i}: segment_alloc of {ss} bytes for an alloc of {req} at its start ({who}'s policy allocates {want})"
            ));
        }
    }
    pc
}

/// 3. Address steps between neighbouring blocks. A small-pool block is exactly the rounded
///    request (remainders of 512 B or more are always split off), and free space between
///    blocks of a segment always merges. So an allocation at `a` whose nearest live block below
///    it in the same segment is a small-pool block `[p, p + round(req))` must start exactly at
///    `p + round(req)`: further up, the free gap would have merged with the block at `a`;
///    lower, it would overlap. torch_npu pads every block by 32 bytes before rounding, so its
///    steps are 512 bytes longer for many sizes.
async fn neighbour_steps(
    snapshot: &Snapshot,
    device: i64,
    config: &Config,
    pc: &mut PolicyCheck,
    pace: &mut Pace<'_>,
) {
    let trace = snapshot.trace(device.max(0) as usize);
    // Segment ranges as they are at each entry, start -> end: those that existed when the trace
    // began (the dump's that the trace does not create, and those it frees before creating),
    // then created, mapped, freed and unmapped in order (addresses are reused).
    let mut ranges: BTreeMap<u64, u64> = BTreeMap::new();
    let (mut created, mut allocs) = (HashSet::new(), 0);
    for chunk in trace.chunks(CHUNK) {
        pace.check().await;
        for e in chunk {
            match e.action() {
                Action::SegmentAlloc | Action::SegmentMap => created.extend(e.addr()),
                Action::Alloc => allocs += 1,
                _ => {}
            }
        }
    }
    // Live block starts -> the block's end when it is a small-pool block allocated in the trace
    // (`None`: live from before the trace, or a size this check cannot vouch for).
    let mut live: BTreeMap<u64, Option<u64>> = BTreeMap::new();
    for seg in (snapshot.segments.iter()).filter(|s| s.device.unwrap_or(0) == device) {
        if !created.contains(&seg.address) {
            ranges.insert(seg.address, seg.address.saturating_add(seg.total_size));
        }
        let mut at = seg.address;
        for b in &seg.blocks {
            let addr = b.address.unwrap_or(at);
            at = addr.saturating_add(b.size);
            if b.state.is_active() {
                live.insert(addr, None);
            }
        }
    }
    // Sized up front: growing it by rehashing held a 1M-entry check 4–9 ms at a time.
    let (mut allocated, mut seen) = (HashSet::with_capacity(allocs), HashSet::new());
    for chunk in trace.chunks(CHUNK) {
        pace.check().await;
        for e in chunk {
            let addr = e.addr().unwrap_or(0);
            match e.action() {
                Action::SegmentAlloc | Action::SegmentMap => {
                    seen.insert(addr);
                }
                // Freed before being created: alive when the trace began.
                Action::SegmentFree | Action::SegmentUnmap if seen.insert(addr) => {
                    ranges.insert(addr, addr.saturating_add(e.size().unwrap_or(0)));
                }
                Action::Alloc => {
                    allocated.insert(addr);
                }
                // Freed before any alloc of it: live when the trace began.
                Action::FreeRequested | Action::FreeCompleted if !allocated.contains(&addr) => {
                    live.insert(addr, None);
                }
                _ => {}
            }
        }
    }
    for (c, chunk) in trace.chunks(CHUNK).enumerate() {
        pace.check().await;
        for (k, e) in chunk.iter().enumerate() {
            let i = c * CHUNK + k;
            let a = e.addr().unwrap_or(0);
            match e.action() {
                Action::SegmentAlloc | Action::SegmentMap => {
                    ranges.insert(a, a.saturating_add(e.size().unwrap_or(0)));
                }
                Action::SegmentFree | Action::SegmentUnmap => {
                    ranges.remove(&a);
                }
                Action::Alloc => {
                    let r = round_size(e.size().unwrap_or(0), config);
                    if let Some((&p, &Some(end))) = live.range(..a).next_back() {
                        pc.checked += 1;
                        let same_segment = (ranges.range(..=p).next_back())
                            .is_some_and(|(_, &seg_end)| p < seg_end && a < seg_end);
                        if a != end && same_segment {
                            pc.flag(move || format!(
                                "entry {i}: alloc at 0x{a:x}, {} bytes above the live block at 0x{p:x} that ends at 0x{end:x} ({}'s blocks abut: the free gap would have merged)",
                                a - p,
                                config.rules.short()
                            ));
                        }
                    }
                    live.insert(a, is_small(r).then_some(a + r));
                }
                Action::FreeCompleted => {
                    live.remove(&a);
                }
                Action::Other(ref name) if &**name == "free" => {
                    live.remove(&a);
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::TraceEntry;

    const S: u64 = 0x7f00_0000_0000;

    fn trace(second_at: u64) -> Snapshot {
        let t = vec![
            TraceEntry::new(Action::SegmentAlloc, S, SMALL_BUFFER),
            TraceEntry::new(Action::Alloc, S, 1000),
            TraceEntry::new(Action::Alloc, second_at, 1000),
        ];
        Snapshot {
            device_traces: Some(vec![t]),
            ..Snapshot::default()
        }
    }

    #[test]
    fn neighbouring_blocks_abut_under_cuda() {
        // CUDA rounds 1000 B to 1024: the next block starts right there.
        let cuda = check_policy(&trace(S + 1024), 0, &Config::default());
        assert!(cuda.fits(), "{:?}", cuda.examples);
        // torch_npu pads by 32 before rounding: 1536 bytes on.
        let npu = check_policy(&trace(S + 1536), 0, &Config::default());
        assert!(!npu.fits());
        assert!(
            npu.examples[0].contains("1536 bytes above"),
            "{:?}",
            npu.examples
        );
        // Under torch_npu's rules the same steps read the other way round.
        let npu_rules = Config {
            rules: Rules::Npu,
            ..Config::default()
        };
        assert!(check_policy(&trace(S + 1536), 0, &npu_rules).fits());
        let cuda_step = check_policy(&trace(S + 1024), 0, &npu_rules);
        assert!(!cuda_step.fits());
        assert!(
            cuda_step.examples[0].contains("torch_npu's blocks abut"),
            "{:?}",
            cuda_step.examples
        );
        // Below the end of a live block: overlap.
        assert!(!check_policy(&trace(S + 512), 0, &Config::default()).fits());
    }
}
