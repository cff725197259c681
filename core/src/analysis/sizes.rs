//! The caching allocator's size rules that the analyses need to estimate block sizes
//! (CUDACachingAllocator.cpp constants and `round_size`). The allocator model has its own,
//! richer copy; this one only rounds, so analyses stay usable without running the model.

use crate::snapshot::AllocatorSettings;

pub const MIN_BLOCK_SIZE: u64 = 512;
pub const SMALL_SIZE: u64 = 1 << 20;
pub const SMALL_BUFFER: u64 = 2 << 20;
pub const LARGE_BUFFER: u64 = 20 << 20;
pub const MIN_LARGE_ALLOC: u64 = 10 << 20;
pub const ROUND_LARGE: u64 = 2 << 20;

/// `roundup_power2_divisions` per power-of-two interval starting at 1 MiB (16 entries, 0 = off).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rounding {
    pub divisions: [u64; 16],
}

impl Rounding {
    /// Reads `roundup_power2_divisions` from the file's settings: either a dict of MB interval
    /// start -> divisions (as torch writes it) or a single int for all intervals.
    pub fn from_settings(settings: Option<&AllocatorSettings>) -> Rounding {
        let mut r = Rounding::default();
        let Some(v) = settings.and_then(|s| s.get("roundup_power2_divisions")) else {
            return r;
        };
        if let Some(all) = v.as_i64() {
            r.divisions = [all.max(0) as u64; 16];
        } else if let Some(d) = v.as_dict() {
            for (k, val) in d {
                let mb = k
                    .as_str()
                    .and_then(|s| s.parse::<u64>().ok())
                    .or_else(|| k.as_i64().map(|i| i.max(0) as u64));
                if let (Some(mb), Some(div)) = (mb, val.as_i64()) {
                    if mb.is_power_of_two() {
                        let idx = (mb.trailing_zeros() as usize).min(15);
                        r.divisions[idx] = div.max(0) as u64;
                    }
                }
            }
        }
        r
    }

    fn divisions_for(&self, size: u64) -> u64 {
        let log2 = 63 - size.max(1).leading_zeros() as i64;
        let idx = (log2 - 20).clamp(0, 15) as usize;
        self.divisions[idx]
    }

    /// `round_size`: at least 512 B, a multiple of 512 B, or the next power-of-two division.
    pub fn round(&self, size: u64) -> u64 {
        if size < MIN_BLOCK_SIZE {
            return MIN_BLOCK_SIZE;
        }
        let div = self.divisions_for(size);
        if div > 1 && size > MIN_BLOCK_SIZE * div {
            return next_division(size, div);
        }
        size.div_ceil(MIN_BLOCK_SIZE) * MIN_BLOCK_SIZE
    }
}

fn next_division(size: u64, div: u64) -> u64 {
    if size.is_power_of_two() {
        return size;
    }
    let floor = 1u64 << (63 - size.leading_zeros());
    let step = floor >> div.trailing_zeros();
    if step == 0 {
        return floor * 2;
    }
    let r = size & !(step - 1);
    if r == size {
        size
    } else {
        r + step
    }
}

/// `get_allocation_size`: the cudaMalloc size for a rounded request.
pub fn segment_size_for(rounded: u64) -> u64 {
    if rounded <= SMALL_SIZE {
        SMALL_BUFFER
    } else if rounded < MIN_LARGE_ALLOC {
        LARGE_BUFFER
    } else {
        rounded.div_ceil(ROUND_LARGE) * ROUND_LARGE
    }
}

/// Whether a large-pool block of `block` bytes serving `rounded` bytes is split
/// (the remainder must exceed 1 MiB); small-pool blocks split when 512 B remain.
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
        let four = Rounding { divisions: [4; 16] };
        // 1200 B is below 512*4, so plain 512 rounding.
        assert_eq!(four.round(1200), 1536);
        // 5 MiB + 1 with 4 divisions of [4, 8) MiB: steps of 1 MiB -> 6 MiB.
        assert_eq!(four.round((5 << 20) + 1), 6 << 20);
        assert_eq!(four.round(4 << 20), 4 << 20);
    }

    #[test]
    fn segment_sizes() {
        assert_eq!(segment_size_for(512), SMALL_BUFFER);
        assert_eq!(segment_size_for(2 << 20), LARGE_BUFFER);
        assert_eq!(segment_size_for((10 << 20) + 512), 12 << 20);
        assert!(!splits(12 << 20, 11 << 20));
        assert!(splits(12 << 20, (10 << 20) + 512));
        assert!(splits(2 << 20, 1 << 20));
    }
}
