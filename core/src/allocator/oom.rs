//! Out of memory: the `oom` trace entry and PyTorch's error message.

use crate::snapshot::{Action, StackId, TraceEntry};

use super::backing::{Backing, StreamId};
use super::model::Allocator;

pub use super::oom_error::{format_size, Oom};

impl<B: Backing> Allocator<B> {
    pub(crate) fn out_of_memory(
        &mut self,
        size: u64,
        alloc_size: u64,
        stream: StreamId,
        frames: Option<StackId>,
    ) -> Oom {
        let (free, total) = self.backing.mem_info();
        self.stats.num_ooms += 1;
        if self.trace.enabled() {
            let mut e = TraceEntry::new(Action::Oom, 0, size);
            e.set_addr(None);
            e.set_device_free(Some(free));
            e.set_stream(Some(stream));
            e.set_time_us(Some(self.backing.now_us()));
            e.set_frames(frames);
            self.trace.push_entry(e);
        }
        Oom {
            size,
            alloc_size,
            device: self.device,
            device_free: free,
            device_total: total,
            allowed: self.allowed_max,
            allocated: self.stats.allocated,
            reserved: self.stats.reserved,
        }
    }
}
