//! Is this a trace of PyTorch's CUDA caching allocator? Other allocators write the same file
//! format with other rules (torch_npu's Ascend allocator pads every block by 32 bytes before
//! rounding, and sizes segments to match), and replaying them under CUDA's policy would report
//! false mismatches. These checks look for sizes CUDA's policy cannot produce.

use crate::allocator::rounding::{get_allocation_size, round_size, MIN_BLOCK_SIZE, SMALL_BUFFER};
use crate::allocator::Config;
use crate::snapshot::{Action, BlockState, SegmentType, Snapshot};

/// Evidence (up to 5 examples) and how many sizes were checked / impossible under CUDA's policy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicyCheck {
    pub checked: usize,
    pub impossible: usize,
    pub examples: Vec<String>,
}

impl PolicyCheck {
    pub fn is_cuda(&self) -> bool {
        self.impossible == 0
    }

    fn flag(&mut self, msg: String) {
        self.impossible += 1;
        if self.examples.len() < 5 {
            self.examples.push(msg);
        }
    }
}

pub fn check_cuda_policy(snapshot: &Snapshot, device: i64, config: &Config) -> PolicyCheck {
    let mut pc = PolicyCheck::default();
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
            pc.flag(format!(
                "small segment 0x{:x} of {} bytes (CUDA's are 2 MiB)",
                seg.address, seg.total_size
            ));
        }
        for b in &seg.blocks {
            pc.checked += 1;
            if b.size % MIN_BLOCK_SIZE != 0 {
                pc.flag(format!(
                    "block of {} bytes is not a multiple of 512",
                    b.size
                ));
                continue;
            }
            let (Some(req), BlockState::ActiveAllocated) = (b.requested_size, b.state) else {
                continue;
            };
            let r = round_size(req, config);
            if b.size < r || ((small || expandable) && b.size != r) {
                pc.flag(format!(
                    "block 0x{:x}: {} bytes for a request of {req} (CUDA's policy gives {r})",
                    b.address.unwrap_or(0),
                    b.size
                ));
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
        let want = get_allocation_size(round_size(req, config));
        if ss != want {
            pc.flag(format!(
                "entry {i}: segment_alloc of {ss} bytes for an alloc of {req} at its start (CUDA's policy allocates {want})"
            ));
        }
    }
    pc
}
