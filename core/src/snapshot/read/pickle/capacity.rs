//! Room for the reader's big vectors, reserved by the rate the input fills them.
//!
//! A large snapshot is mostly one trace list of similar entries, so how fast each vector grew
//! over the last stretch of input predicts how much more the rest will need. At every progress
//! checkpoint (each [`PROGRESS_STEP`](super::PROGRESS_STEP) bytes, or an eighth of a smaller
//! input, `checkpoint_step`), a vector that could fill within the next two stretches gets room
//! for the rest of the input at its last stretch's rate, plus 1/8, plus two stretches' growth
//! but never more than that rest, in one allocation (at most doubling it). Growing by doubling
//! instead left up to half of each vector unused at the end and, where realloc must copy
//! (wasm, usually), needed the old and the new vector at once: memory a native process never
//! touches but a wasm instance holds for good (the page measured 3.5× a 100 MB file, a 1 GB
//! file reached the 4 GiB ceiling). An
//! underestimate is corrected at a later checkpoint; an overestimate is bounded by the 1/8 in a
//! trace's steady stretch, by doubling before it, and given back where the schema takes the
//! vectors.

use super::checkpoint::Checkpoint;
use super::machine::Machine;

impl Machine<'_> {
    /// Reserves ahead for every big vector as the module comment says; call at a checkpoint.
    pub(super) fn reserve_ahead(&mut self) {
        let last = self.checkpoint;
        let window = self.pos - last.pos;
        if window < self.step / 2 {
            return;
        }
        let rest = self.total - self.pos;
        ahead(&mut self.nodes, last.nodes, window, rest);
        ahead(&mut self.at, last.at, window, rest);
        ahead(&mut self.items, last.items, window, rest);
        ahead(&mut self.memo_dense, last.memo, window, rest);
        let sink = self.traces.len().saturating_sub(1);
        let entries = match self.traces.last_mut() {
            Some(t) => {
                let before = if sink == last.sink { last.entries } else { 0 };
                ahead(&mut t.entries, before, window, rest);
                ahead(&mut t.has_action, before, window, rest);
                t.entries.len()
            }
            None => 0,
        };
        self.checkpoint = Checkpoint {
            pos: self.pos,
            nodes: self.nodes.len(),
            at: self.at.len(),
            items: self.items.len(),
            memo: self.memo_dense.len(),
            sink,
            entries,
        };
    }
}

/// Makes room in `v` for the rest of the input at the rate it grew over the last `window`
/// bytes (from length `before`), if it could fill within two more such windows.
fn ahead<T>(v: &mut Vec<T>, before: usize, window: usize, rest: usize) {
    let grew = v.len().saturating_sub(before);
    if grew == 0 || v.capacity() - v.len() >= 2 * grew {
        return;
    }
    // u64: grew × rest overflows a wasm32 usize on large inputs.
    let expected = grew as u64 * rest as u64 / window as u64;
    // Two more windows' growth as a margin against a denser stretch, but never more than the
    // rest itself: near an input's end (and a small input's windows are an eighth of it) two
    // windows are most of what is left.
    let want = expected + expected / 8 + (2 * grew as u64).min(expected);
    // Never more than doubling: an early stretch (frames defined before they are referenced,
    // a trace list's room moved to the pool's end) can be far denser than the rest.
    let want = want.min(v.len().max(2 * grew) as u64);
    v.reserve_exact(want as usize);
}

#[cfg(test)]
mod tests {
    use super::ahead;

    #[test]
    fn reserves_the_rest_at_the_last_rate() {
        let mut v: Vec<u8> = vec![0; 10_000];
        // 1000 items over the last 1000 bytes, 4000 bytes to go: 4000 + 500 + 2000 more.
        ahead(&mut v, 9000, 1000, 4000);
        assert!(v.capacity() >= 10_000 + 6500, "{}", v.capacity());
        assert!(v.capacity() < 10_000 + 2 * 6500);
    }

    /// Near the end the margin is the rest, not two windows: 500 bytes to go at 1 item a byte
    /// reserved 2,562 more (the memsnapdump files' trace entries ended with room for 1.4 times
    /// their number, and their worker held 0.85 MB more in the page).
    #[test]
    fn the_margin_never_exceeds_the_rest() {
        let mut v: Vec<u8> = vec![0; 10_000];
        ahead(&mut v, 9000, 1000, 500);
        assert!(v.capacity() >= 10_000 + 1062, "{}", v.capacity());
        assert!(v.capacity() < 10_000 + 2000, "{}", v.capacity());
    }

    #[test]
    fn never_more_than_doubling() {
        let mut v: Vec<u8> = vec![0; 1000];
        ahead(&mut v, 0, 1000, 1 << 30);
        assert!(v.capacity() >= 2000, "{}", v.capacity());
        assert!(v.capacity() < 4000, "{}", v.capacity());
    }

    #[test]
    fn leaves_room_that_is_enough_and_idle_vectors() {
        let mut v: Vec<u8> = Vec::with_capacity(5000);
        v.resize(1000, 0);
        ahead(&mut v, 0, 1000, 1 << 30);
        assert_eq!(v.capacity(), 5000, "room for two more windows: untouched");
        let mut w: Vec<u8> = vec![0; 10];
        let cap = w.capacity();
        ahead(&mut w, 10, 1000, 1 << 30);
        assert_eq!(w.capacity(), cap, "no growth in the window: untouched");
    }
}
