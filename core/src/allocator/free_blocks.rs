//! A pool's free blocks in `(stream, size, address, id)` order, bucketed by size class.
//!
//! Best fit asks for the first block on a stream at or above a size; a free or a split then
//! removes and inserts a few. In a `BTreeSet` each of those is a descent through nodes of
//! 4-field keys (the pools were a quarter of a replay). Here each stream has a bucket per size
//! class (four classes per power of two, so classes are ordered as sizes are), each bucket a
//! short sorted `Vec`, and a bitmap of the non-empty ones: an insert or remove is a search in
//! one bucket of a few blocks, and best fit looks in the request's bucket and then jumps to the
//! next non-empty one. The order is exactly `(stream, size, address, id)`, as before.

use super::backing::StreamId;
use super::block::BlockId;

/// A free block as the pool orders it: (stream, size, address, id).
pub type FreeKey = (StreamId, u64, u64, BlockId);

const CLASSES: usize = 256;

/// Size class: 4 × log2(size) plus the two bits below the top one. Never decreases as the size
/// grows, so buckets in class order list blocks in size order.
fn class(size: u64) -> usize {
    if size == 0 {
        return 0;
    }
    let log = 63 - size.leading_zeros() as usize;
    let sub = if log >= 2 {
        (size >> (log - 2)) & 3
    } else {
        (size << (2 - log)) & 3
    };
    log * 4 + sub as usize
}

/// One stream's blocks: (size, address, id) sorted within each class's bucket.
#[derive(Debug, Clone)]
struct Stream {
    id: StreamId,
    buckets: Vec<Vec<(u64, u64, BlockId)>>,
    /// Bit `c` set when bucket `c` is not empty.
    nonempty: [u64; CLASSES / 64],
}

impl Stream {
    fn new(id: StreamId) -> Stream {
        Stream {
            id,
            buckets: vec![Vec::new(); CLASSES],
            nonempty: [0; CLASSES / 64],
        }
    }

    /// The first non-empty class `>= c`.
    fn next_class(&self, c: usize) -> Option<usize> {
        let mut w = c / 64;
        if w >= self.nonempty.len() {
            return None;
        }
        let mut bits = self.nonempty[w] & (!0u64 << (c % 64));
        loop {
            if bits != 0 {
                return Some(w * 64 + bits.trailing_zeros() as usize);
            }
            w += 1;
            bits = *self.nonempty.get(w)?;
        }
    }

    /// The last non-empty class `< c`.
    fn prev_class(&self, c: usize) -> Option<usize> {
        if c == 0 {
            return None;
        }
        let c = c - 1;
        let mut w = c / 64;
        let mut bits = self.nonempty[w] & (!0u64 >> (63 - c % 64));
        loop {
            if bits != 0 {
                return Some(w * 64 + 63 - bits.leading_zeros() as usize);
            }
            w = w.checked_sub(1)?;
            bits = self.nonempty[w];
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct FreeBlocks {
    /// Sorted by stream id (a pool sees few streams).
    streams: Vec<Stream>,
    len: usize,
}

impl FreeBlocks {
    pub fn new() -> FreeBlocks {
        FreeBlocks::default()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn stream(&self, id: StreamId) -> Option<&Stream> {
        let i = self.streams.binary_search_by_key(&id, |s| s.id).ok()?;
        Some(&self.streams[i])
    }

    /// Adds `k`; false if it was already there.
    pub fn insert(&mut self, k: FreeKey) -> bool {
        let (stream, size, addr, id) = k;
        let si = match self.streams.binary_search_by_key(&stream, |s| s.id) {
            Ok(i) => i,
            Err(i) => {
                self.streams.insert(i, Stream::new(stream));
                i
            }
        };
        let s = &mut self.streams[si];
        let c = class(size);
        let b = &mut s.buckets[c];
        let Err(pos) = b.binary_search(&(size, addr, id)) else {
            return false;
        };
        b.insert(pos, (size, addr, id));
        s.nonempty[c / 64] |= 1 << (c % 64);
        self.len += 1;
        true
    }

    /// Removes `k`; false if it was not there.
    pub fn remove(&mut self, k: &FreeKey) -> bool {
        let &(stream, size, addr, id) = k;
        let Ok(si) = self.streams.binary_search_by_key(&stream, |s| s.id) else {
            return false;
        };
        let s = &mut self.streams[si];
        let c = class(size);
        let b = &mut s.buckets[c];
        let Ok(pos) = b.binary_search(&(size, addr, id)) else {
            return false;
        };
        b.remove(pos);
        if b.is_empty() {
            s.nonempty[c / 64] &= !(1 << (c % 64));
        }
        self.len -= 1;
        true
    }

    /// Blocks on `stream` of at least `size` bytes, ascending: the keys `>= (stream, size, 0, 0)`
    /// that are on `stream`.
    pub fn at_least(&self, stream: StreamId, size: u64) -> impl Iterator<Item = FreeKey> + '_ {
        let s = self.stream(stream);
        let c = class(size);
        let first = s.map_or(&[][..], |s| {
            let b = &s.buckets[c];
            &b[b.partition_point(|x| x.0 < size)..]
        });
        Ascending {
            stream: s,
            cur: first.iter(),
            next: c + 1,
        }
        .map(move |&(size, addr, id)| (stream, size, addr, id))
    }

    /// Blocks on `stream` of less than `size` bytes, descending: the keys
    /// `< (stream, size, 0, 0)` that are on `stream`, largest first.
    pub fn below(&self, stream: StreamId, size: u64) -> impl Iterator<Item = FreeKey> + '_ {
        let s = self.stream(stream);
        let c = class(size);
        let first = s.map_or(&[][..], |s| {
            let b = &s.buckets[c];
            &b[..b.partition_point(|x| x.0 < size)]
        });
        Descending {
            stream: s,
            cur: first.iter(),
            before: c,
        }
        .map(move |&(size, addr, id)| (stream, size, addr, id))
    }

    /// Every block, in (stream, size, address, id) order.
    pub fn iter(&self) -> impl Iterator<Item = FreeKey> + '_ {
        self.streams.iter().flat_map(|s| {
            s.buckets
                .iter()
                .flatten()
                .map(move |&(size, addr, id)| (s.id, size, addr, id))
        })
    }
}

struct Ascending<'a> {
    stream: Option<&'a Stream>,
    cur: std::slice::Iter<'a, (u64, u64, BlockId)>,
    /// The class to look in after `cur`.
    next: usize,
}

impl<'a> Iterator for Ascending<'a> {
    type Item = &'a (u64, u64, BlockId);
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(x) = self.cur.next() {
                return Some(x);
            }
            let s = self.stream?;
            let c = s.next_class(self.next)?;
            self.cur = s.buckets[c].iter();
            self.next = c + 1;
        }
    }
}

struct Descending<'a> {
    stream: Option<&'a Stream>,
    cur: std::slice::Iter<'a, (u64, u64, BlockId)>,
    /// Classes below this one are still to come.
    before: usize,
}

impl<'a> Iterator for Descending<'a> {
    type Item = &'a (u64, u64, BlockId);
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(x) = self.cur.next_back() {
                return Some(x);
            }
            let s = self.stream?;
            let c = s.prev_class(self.before)?;
            self.cur = s.buckets[c].iter();
            self.before = c;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn classes_never_decrease() {
        let mut sizes: Vec<u64> = (0..5000).collect();
        sizes.extend((0..64).flat_map(|b| [1u64 << b, (1u64 << b) - 1, (1u64 << b) + 1]));
        sizes.push(u64::MAX);
        sizes.sort_unstable();
        assert!(sizes.windows(2).all(|w| class(w[0]) <= class(w[1])));
        assert!(class(u64::MAX) < CLASSES);
    }

    /// Random inserts and removes, every query checked against a BTreeSet of the same keys.
    #[test]
    fn agrees_with_btreeset() {
        let mut ours = FreeBlocks::new();
        let mut want: BTreeSet<FreeKey> = BTreeSet::new();
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let size_of = |r: u64| match r % 4 {
            0 => 512 * ((r >> 8) % (1 << 11)),
            1 => (r >> 8) % (64 << 20),
            2 => (r >> 8) % (1 << 34),
            _ => (r >> 8) % 4096,
        };
        for step in 0..20_000u32 {
            let r = next();
            let k = (
                (r % 3) as i64 - 1,
                size_of(r),
                (r >> 32) % 4096 * 512,
                BlockId(step % 7),
            );
            if r % 5 < 3 || want.is_empty() {
                assert_eq!(ours.insert(k), want.insert(k));
            } else {
                let k = want
                    .iter()
                    .nth((r >> 40) as usize % want.len())
                    .copied()
                    .unwrap_or(k);
                assert_eq!(ours.remove(&k), want.remove(&k));
                assert!(!ours.remove(&k));
            }
            assert_eq!(ours.len(), want.len());
            let q = next();
            let (stream, size) = ((q % 4) as i64 - 1, size_of(q >> 3));
            let lo = (stream, size, 0, BlockId(0));
            assert!(ours
                .at_least(stream, size)
                .eq(want.range(lo..).take_while(|k| k.0 == stream).copied()));
            assert!(ours.below(stream, size).eq(want
                .range(..lo)
                .rev()
                .take_while(|k| k.0 == stream)
                .copied()));
        }
        assert!(ours.iter().eq(want.iter().copied()));
    }
}
