//! The generated replay workload, shared by the replay bench and the replay-rate examples
//! (native and wasm), so that every figure is measured on the same trace.

use memsnap_core::allocator::{Allocator, Config, SimBacking};
use memsnap_core::snapshot::Snapshot;

/// About `n` trace entries from a deterministic random workload on a 80 GiB simulated device:
/// up to 2000 live blocks of 512 B to 1 GiB on two streams.
pub fn generated(n: usize) -> Snapshot {
    let mut a = Allocator::new(SimBacking::new(80 << 30), Config::default());
    let mut live: Vec<u64> = Vec::new();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    while a.trace().len() < n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let size = match x % 10 {
            0..=5 => 512 + (x >> 8) % (1 << 20),
            6..=8 => (1 << 20) + (x >> 8) % (64 << 20),
            _ => (64 << 20) + (x >> 8) % (1 << 30),
        };
        if live.len() > 2000 || (x >> 40).is_multiple_of(2) && !live.is_empty() {
            // In u64, so that wasm32 (32-bit usize) makes the same trace.
            let i = ((x >> 20) % live.len() as u64) as usize;
            let p = live.swap_remove(i);
            let _ = a.free(p);
        } else if let Ok(p) = a.malloc(size, ((x >> 50) % 2) as i64, None) {
            live.push(p);
        }
    }
    a.snapshot()
}
