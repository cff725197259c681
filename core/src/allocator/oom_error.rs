//! A failed `malloc` and PyTorch's "CUDA out of memory" message for it.

/// A failed `malloc`, with the figures PyTorch's "CUDA out of memory" message gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Oom {
    /// Rounded request.
    pub size: u64,
    /// Segment size the allocator tried to create.
    pub alloc_size: u64,
    pub device: i64,
    pub device_free: u64,
    pub device_total: u64,
    pub allowed: Option<u64>,
    pub allocated: u64,
    pub reserved: u64,
}

impl std::fmt::Display for Oom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "CUDA out of memory. Tried to allocate {}. GPU {} has a total capacity of {} of which {} is free. ",
            format_size(self.alloc_size),
            self.device,
            format_size(self.device_total),
            format_size(self.device_free)
        )?;
        if let Some(a) = self.allowed {
            write!(f, "{} allowed; ", format_size(a))?;
        }
        write!(
            f,
            "Of the allocated memory {} is allocated by PyTorch, and {} is reserved by PyTorch but unallocated. \
             If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.",
            format_size(self.allocated),
            format_size(self.reserved.saturating_sub(self.allocated))
        )
    }
}

impl std::error::Error for Oom {}

/// PyTorch's `format_size`: B, KiB, MiB, GiB with two decimals.
pub fn format_size(size: u64) -> String {
    let s = size as f64;
    if size <= 1024 {
        format!("{size} bytes")
    } else if size <= 1048576 {
        format!("{:.2} KiB", s / 1024.0)
    } else if size <= 1073741824 {
        format!("{:.2} MiB", s / 1048576.0)
    } else {
        format!("{:.2} GiB", s / 1073741824.0)
    }
}
