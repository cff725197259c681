//! Size rounding: `round_size`, power-of-two divisions, and the cudaMalloc size of a new segment
//! (CUDACachingAllocator.cpp `round_size`, `roundup_power2_next_division`, `get_allocation_size`).

use super::config::{Config, NPU_1G_PAGE};
use super::rules::Rules;

pub use super::sizes::{
    LARGE_BUFFER, MIN_BLOCK_SIZE, MIN_LARGE_ALLOC, ROUND_LARGE, SMALL_BUFFER, SMALL_SIZE,
};

/// The size a request of `size` bytes occupies in a block.
pub fn round_size(size: u64, config: &Config) -> u64 {
    let size = size.saturating_add(config.rules.request_padding());
    if size < MIN_BLOCK_SIZE {
        return MIN_BLOCK_SIZE;
    }
    let divisions = config.roundup_power2_divisions_for(size);
    if divisions > 1 && size > MIN_BLOCK_SIZE * divisions {
        roundup_power2_next_division(size, divisions)
    } else {
        size.div_ceil(MIN_BLOCK_SIZE) * MIN_BLOCK_SIZE
    }
}

/// Rounds up to the next of `divisions` equal steps between two powers of two
/// (1200 with 4 divisions: steps 1024, 1280, 1536, 1792 -> 1280).
pub fn roundup_power2_next_division(size: u64, divisions: u64) -> u64 {
    if size.is_power_of_two() {
        return size;
    }
    let floor = 1u64 << (63 - size.leading_zeros());
    // divisions is a power of two (the config enforces it); a step is floor / divisions.
    let step = floor >> (63 - divisions.max(1).leading_zeros());
    if step == 0 {
        return floor << 1;
    }
    let rounded_down = size & !(step - 1);
    if rounded_down == size {
        size
    } else {
        rounded_down + step
    }
}

/// Whether a rounded size goes to the small pool.
pub fn is_small(rounded: u64) -> bool {
    rounded <= SMALL_SIZE
}

/// The cudaMalloc size of the segment created for a rounded request (non-expandable mode).
/// torch_npu sizes 1-10 MiB requests' segments by `large_segment_size_mb` and, with
/// `page_size:1g`, every large-pool segment in whole GiB.
pub fn get_allocation_size(rounded: u64, config: &Config) -> u64 {
    let npu = config.rules == Rules::Npu;
    if rounded <= SMALL_SIZE {
        SMALL_BUFFER
    } else if npu && config.page_1g {
        rounded.div_ceil(NPU_1G_PAGE) * NPU_1G_PAGE
    } else if rounded < MIN_LARGE_ALLOC {
        if npu {
            config.large_segment
        } else {
            LARGE_BUFFER
        }
    } else {
        rounded.div_ceil(ROUND_LARGE) * ROUND_LARGE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_div(div: &str) -> Config {
        Config::parse(&format!("roundup_power2_divisions:{div}")).unwrap()
    }

    #[test]
    fn min_block_and_512_multiples() {
        let c = Config::default();
        assert_eq!(round_size(0, &c), 512);
        assert_eq!(round_size(1, &c), 512);
        assert_eq!(round_size(511, &c), 512);
        assert_eq!(round_size(512, &c), 512);
        assert_eq!(round_size(513, &c), 1024);
        assert_eq!(round_size(1200, &c), 1536);
        assert_eq!(round_size((1 << 20) + 1, &c), (1 << 20) + 512);
    }

    #[test]
    fn power2_divisions_table() {
        // The example of the PyTorch source comment.
        assert_eq!(roundup_power2_next_division(1200, 4), 1280);
        assert_eq!(roundup_power2_next_division(1024, 4), 1024);
        assert_eq!(roundup_power2_next_division(1280, 4), 1280);
        assert_eq!(roundup_power2_next_division(1281, 4), 1536);
        assert_eq!(roundup_power2_next_division(1793, 4), 2048);
        // step would be 0: round to the next power of two.
        assert_eq!(roundup_power2_next_division(3, 8), 4);
        // round_size only uses divisions above 512 * divisions.
        let c = with_div("4");
        assert_eq!(
            round_size(1200, &c),
            1536,
            "1200 <= 512*4: plain 512 rounding"
        );
        assert_eq!(round_size(2049, &c), 2560);
        assert_eq!(round_size(3 * (1 << 20) + 1, &c), 3_670_016); // 3.5 MiB step
        assert_eq!(round_size(1200 << 20, &c), 1280 << 20);
        let c1 = with_div("1");
        assert_eq!(round_size(1200 << 20, &c1), 1200 << 20, "1 division = off");
    }

    #[test]
    fn per_interval_divisions() {
        let c = with_div("[256:2,512:8,1024:4]");
        // 300 MiB lies in [256, 512) MiB: 2 divisions -> 384 MiB.
        assert_eq!(round_size(300 << 20, &c), 384 << 20);
        // 600 MiB in [512, 1024): 8 divisions of 512 MiB -> 640 MiB.
        assert_eq!(round_size(600 << 20, &c), 640 << 20);
        // the first key also covers everything below it.
        assert_eq!(round_size(3 << 20 | 1, &c), 4 << 20);
        // intervals after the last key keep 0: plain rounding.
        assert_eq!(round_size((3000 << 20) + 1, &c), (3000 << 20) + 512);
        // `>` refills the last key's interval too (PyTorch's parser): 512 MB gets 1, not 8.
        let c = with_div("[256:2,512:8,>:1]");
        assert_eq!(round_size(600 << 20, &c), 600 << 20);
    }

    #[test]
    fn allocation_sizes_at_boundaries() {
        let c = Config::default();
        assert_eq!(get_allocation_size(512, &c), SMALL_BUFFER);
        assert_eq!(get_allocation_size(SMALL_SIZE, &c), SMALL_BUFFER);
        assert_eq!(get_allocation_size(SMALL_SIZE + 512, &c), LARGE_BUFFER);
        assert_eq!(get_allocation_size(MIN_LARGE_ALLOC - 512, &c), LARGE_BUFFER);
        assert_eq!(get_allocation_size(MIN_LARGE_ALLOC, &c), MIN_LARGE_ALLOC);
        assert_eq!(
            get_allocation_size(MIN_LARGE_ALLOC + 512, &c),
            MIN_LARGE_ALLOC + ROUND_LARGE
        );
        assert!(is_small(SMALL_SIZE));
        assert!(!is_small(SMALL_SIZE + 512));
    }
}
