//! The caching allocator's size rules as the analyses use them to estimate block sizes. The
//! rules themselves live once, in [`crate::allocator::rounding`] and [`crate::allocator::Config`];
//! this is a thin view built from a file's `allocator_settings`.

use crate::allocator::rounding::round_size;
use crate::allocator::Config;
use crate::snapshot::{AllocatorSettings, Snapshot};

pub use crate::allocator::rounding::{
    LARGE_BUFFER, MIN_BLOCK_SIZE, MIN_LARGE_ALLOC, ROUND_LARGE, SMALL_BUFFER, SMALL_SIZE,
};

/// Rounding under one file's settings.
#[derive(Debug, Clone, Default)]
pub struct Rounding {
    pub config: Config,
    /// The settings could not be read as a configuration: defaults are used instead.
    pub settings_error: Option<String>,
}

impl Rounding {
    pub fn from_settings(settings: Option<&AllocatorSettings>) -> Rounding {
        match settings.map(Config::from_settings) {
            None => Rounding::default(),
            Some(Ok(config)) => Rounding {
                config,
                settings_error: None,
            },
            Some(Err(e)) => Rounding {
                config: Config::default(),
                settings_error: Some(format!("{e:?}")),
            },
        }
    }

    /// Rounding as `device` is modelled: the file's settings under the rules of the allocator
    /// its sizes fit ([`super::policy::device_config`]).
    pub fn for_device(snap: &Snapshot, device: usize) -> Rounding {
        match super::policy::device_config_quick(snap, device as i64) {
            Ok(d) => Rounding {
                config: d.config,
                settings_error: None,
            },
            Err(e) => Rounding {
                config: Config::default(),
                settings_error: Some(format!("{e:?}")),
            },
        }
    }

    /// `round_size`: at least 512 B, a multiple of 512 B, or the next power-of-two division.
    pub fn round(&self, size: u64) -> u64 {
        round_size(size, &self.config)
    }

    /// `max_split_size` when one is set.
    pub fn max_split_size(&self) -> Option<u64> {
        self.config
            .max_split_size_limited()
            .then_some(self.config.max_split_size)
    }
}

/// `should_split` without max_split_size and expandable segments: a large-pool block is split
/// when more than 1 MiB remains, a small-pool block when 512 B remain.
pub fn splits(block: u64, rounded: u64) -> bool {
    let rest = block.saturating_sub(rounded);
    if rounded <= SMALL_SIZE {
        rest >= MIN_BLOCK_SIZE
    } else {
        rest > SMALL_SIZE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_like_the_allocator() {
        let r = Rounding::default();
        assert_eq!(r.round(1), 512);
        assert_eq!(r.round(512), 512);
        assert_eq!(r.round(513), 1024);
        assert_eq!(r.round(3 << 20), 3 << 20);
        let four = Rounding {
            config: Config::parse("roundup_power2_divisions:4").expect("config"),
            settings_error: None,
        };
        // 1200 B is below 512*4, so plain 512 rounding.
        assert_eq!(four.round(1200), 1536);
        // 5 MiB + 1 with 4 divisions of [4, 8) MiB: steps of 1 MiB -> 6 MiB.
        assert_eq!(four.round((5 << 20) + 1), 6 << 20);
        assert_eq!(four.round(4 << 20), 4 << 20);
        assert_eq!(four.max_split_size(), None);
    }

    #[test]
    fn segment_sizes() {
        assert!(!splits(12 << 20, 11 << 20));
        assert!(splits(12 << 20, (10 << 20) + 512));
        assert!(splits(2 << 20, 1 << 20));
    }
}
