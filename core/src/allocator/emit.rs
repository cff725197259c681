//! The model's state as a `Snapshot` (`DeviceCachingAllocator::snapshot` + the trace), so that
//! every view and the writer handle a simulation like a real file.

use std::sync::Arc;

use crate::snapshot::{
    Action, AllocatorSettings, Block as SnapBlock, BlockState, Segment, SegmentType, Snapshot,
    TraceEntry, Value,
};

use super::backing::Backing;
use super::config::{Config, ROUNDUP_INTERVALS};
use super::model::Allocator;

impl<B: Backing> Allocator<B> {
    /// Segments sorted by address, one per cudaMalloc or per contiguous mapped expandable range.
    pub fn segments(&self) -> Vec<Segment> {
        self.segment_heads()
            .into_iter()
            .map(|head| {
                let h = &self.blocks[head];
                let pool = &self.pools[h.pool];
                let mut seg = Segment {
                    device: Some(self.device),
                    address: h.addr,
                    stream: Some(h.stream),
                    segment_type: Some(if pool.is_small {
                        SegmentType::Small
                    } else {
                        SegmentType::Large
                    }),
                    segment_pool_id: Some(pool.owner.unwrap_or((0, 0))),
                    is_expandable: Some(h.expandable.is_some()),
                    frames: h.segment_frames,
                    ..Segment::default()
                };
                let (mut total, mut allocated, mut active, mut requested) = (0, 0, 0, 0);
                for id in self.segment_chain(head) {
                    let b = &self.blocks[id];
                    let state = if b.allocated {
                        BlockState::ActiveAllocated
                    } else if b.event_count > 0 || !b.stream_uses.is_empty() {
                        BlockState::ActivePendingFree
                    } else {
                        BlockState::Inactive
                    };
                    total += b.size;
                    if b.allocated {
                        allocated += b.size;
                    }
                    if state.is_active() {
                        active += b.size;
                        requested += b.requested;
                    }
                    seg.blocks.push(SnapBlock {
                        address: Some(b.addr),
                        size: b.size,
                        requested_size: Some(b.requested),
                        state,
                        frames: b.frames,
                        history: None,
                        extra: Vec::new(),
                    });
                }
                seg.total_size = total;
                seg.allocated_size = Some(allocated);
                seg.active_size = Some(active);
                seg.requested_size = Some(requested);
                seg
            })
            .collect()
    }

    /// A full snapshot: segments, this device's trace (with a closing `snapshot` entry, as
    /// PyTorch records one when it takes the snapshot), settings and the stack table.
    pub fn snapshot(&self) -> Snapshot {
        let segments = self.segments();
        let total_active: u64 = segments.iter().filter_map(|s| s.active_size).sum();
        let mut trace = self.trace.to_vec();
        if self.trace.enabled() {
            let mut e = TraceEntry::new(Action::Snapshot, 0, total_active);
            e.set_stream(Some(0));
            e.set_time_us(trace.last().and_then(|t| t.time_us()));
            trace.push(e);
        }
        let device = self.device.max(0) as usize;
        let mut device_traces = vec![Vec::new(); device + 1];
        device_traces[device] = trace;
        Snapshot {
            segments,
            device_traces: Some(device_traces),
            allocator_settings: Some(settings_of(&self.config)),
            stacks: self.stacks.clone(),
            ..Snapshot::default()
        }
    }
}

/// The `allocator_settings` dict PyTorch writes for this configuration.
pub fn settings_of(c: &Config) -> AllocatorSettings {
    let s = |k: &str| Arc::<str>::from(k);
    let mut entries = vec![
        (
            s("PYTORCH_CUDA_ALLOC_CONF"),
            Value::Str(Arc::from(c.to_conf_string().as_str())),
        ),
        (
            s("max_split_size"),
            Value::Int(if c.max_split_size_limited() {
                c.max_split_size as i64
            } else {
                -1
            }),
        ),
        (
            s("garbage_collection_threshold"),
            Value::Float(c.garbage_collection_threshold),
        ),
        (s("expandable_segments"), Value::Bool(c.expandable_segments)),
        (
            s("pinned_num_register_threads"),
            Value::Int(c.pinned_num_register_threads as i64),
        ),
        (
            s("release_lock_on_cudamalloc"),
            Value::Bool(c.release_lock_on_cudamalloc),
        ),
        (
            s("pinned_use_cuda_host_register"),
            Value::Bool(c.pinned_use_cuda_host_register),
        ),
    ];
    let div: Vec<(Value, Value)> = (0..ROUNDUP_INTERVALS)
        .map(|i| {
            (
                Value::Str(Arc::from((1u64 << i).to_string().as_str())),
                Value::Int(c.roundup_power2_divisions[i] as i64),
            )
        })
        .collect();
    entries.push((s("roundup_power2_divisions"), Value::Dict(Arc::new(div))));
    if c.max_non_split_rounding_size != Config::default().max_non_split_rounding_size {
        entries.push((
            s("max_non_split_rounding_size"),
            Value::Int(c.max_non_split_rounding_size as i64),
        ));
    }
    AllocatorSettings { entries }
}
