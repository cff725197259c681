//! Which caching allocator's rules the model follows. torch_npu's (Ascend) allocator is a port
//! of PyTorch's CUDA one and writes the same snapshots; where its rules differ (docs/npu-allocator.md)
//! the model asks this.

use std::fmt;

/// The allocator whose decisions the model reproduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Rules {
    /// PyTorch's c10/cuda/CUDACachingAllocator.cpp.
    #[default]
    Cuda,
    /// torch_npu's torch_npu/csrc/core/npu/NPUCachingAllocator.cpp.
    Npu,
}

impl Rules {
    /// The name the command line and the JSON use: `cuda` or `npu`.
    pub fn name(self) -> &'static str {
        match self {
            Rules::Cuda => "cuda",
            Rules::Npu => "npu",
        }
    }

    /// The allocator's short name in sentences: `CUDA` or `torch_npu`.
    pub fn short(self) -> &'static str {
        match self {
            Rules::Cuda => "CUDA",
            Rules::Npu => "torch_npu",
        }
    }

    /// Whose allocator, in words.
    pub fn label(self) -> &'static str {
        match self {
            Rules::Cuda => "PyTorch's CUDA caching allocator",
            Rules::Npu => "torch_npu's caching allocator",
        }
    }

    pub fn parse(s: &str) -> Result<Rules, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "cuda" => Ok(Rules::Cuda),
            "npu" | "torch_npu" => Ok(Rules::Npu),
            other => Err(format!(
                "unknown allocator `{other}` (expected cuda or npu)"
            )),
        }
    }

    /// The environment variable its settings are read from.
    pub fn conf_var(self) -> &'static str {
        match self {
            Rules::Cuda => "PYTORCH_CUDA_ALLOC_CONF",
            Rules::Npu => "PYTORCH_NPU_ALLOC_CONF",
        }
    }

    /// The Python module of its device calls (`empty_cache`, `set_per_process_memory_fraction`).
    pub fn module(self) -> &'static str {
        match self {
            Rules::Cuda => "torch.cuda",
            Rules::Npu => "torch.npu",
        }
    }

    /// Bytes added to every request before it is rounded: torch_npu's `round_size` adds 32.
    pub fn request_padding(self) -> u64 {
        match self {
            Rules::Cuda => 0,
            Rules::Npu => 32,
        }
    }
}

impl fmt::Display for Rules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
