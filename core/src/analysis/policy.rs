//! Whose allocator made a device's trace (PyTorch's CUDA one or torch_npu's), checked from the
//! sizes it holds, and the model configuration each device is replayed under.

mod check;
mod choice;

pub use check::{check_policy, check_policy_paced, check_sizes, PolicyCheck};
pub use choice::{
    device_config, device_config_paced, device_config_quick, device_config_quick_paced,
    settings_config, DeviceConfig, RulesChoice, RulesSource,
};
