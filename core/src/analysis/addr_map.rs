//! The backward walk's maps from address to block or segment: sorted arrays while small, a
//! B-tree once large.
//!
//! The walk asks, for nearly every entry, for the block or segment at, before or after an
//! address. Over sorted keys in one contiguous `Vec<u64>` that is one binary search; a
//! `BTreeMap` range query descends the tree for both of its ends (the B-tree walk was most of
//! a replay's backward pass). Values stay put in a slab, so an insert or remove shifts only
//! keys and slot numbers (12 bytes an entry). Past [`SPILL`] entries even that would move too
//! much, so the map becomes a `BTreeMap`, and arrays again below [`UNSPILL`]. Both forms hold
//! the same entries in the same order, so which one is in use never changes a result.

use std::collections::BTreeMap;
use std::ops::Bound;

/// Size above which the arrays become a B-tree.
const SPILL: usize = 4096;
/// Size below which a B-tree becomes arrays again (well below [`SPILL`], so that a map hovering
/// near one size does not convert back and forth).
const UNSPILL: usize = 1024;

/// An entry found by a query: its key and value.
pub(crate) type Entry<'a, V> = Option<(u64, &'a V)>;

#[derive(Debug, Clone)]
pub(crate) enum AddrMap<V> {
    Small(Sorted<V>),
    Large(BTreeMap<u64, V>),
}

/// Keys ascending; the value of `keys[i]` is `slab[slots[i]]`; `free` lists the empty slots.
#[derive(Debug, Clone)]
pub(crate) struct Sorted<V> {
    keys: Vec<u64>,
    slots: Vec<u32>,
    slab: Vec<Option<V>>,
    free: Vec<u32>,
}

impl<V> Default for Sorted<V> {
    fn default() -> Self {
        Sorted {
            keys: Vec::new(),
            slots: Vec::new(),
            slab: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<V> Sorted<V> {
    fn val(&self, i: usize) -> &V {
        match &self.slab[self.slots[i] as usize] {
            Some(v) => v,
            None => unreachable!("a listed slot holds a value"),
        }
    }

    fn entry(&self, i: usize) -> (u64, &V) {
        (self.keys[i], self.val(i))
    }

    fn val_mut(&mut self, i: usize) -> &mut V {
        match &mut self.slab[self.slots[i] as usize] {
            Some(v) => v,
            None => unreachable!("a listed slot holds a value"),
        }
    }

    fn insert_at(&mut self, i: usize, k: u64, v: V) {
        let slot = match self.free.pop() {
            Some(s) => {
                self.slab[s as usize] = Some(v);
                s
            }
            None => {
                self.slab.push(Some(v));
                self.slab.len() as u32 - 1
            }
        };
        self.keys.insert(i, k);
        self.slots.insert(i, slot);
    }

    fn remove_at(&mut self, i: usize) -> V {
        self.keys.remove(i);
        let slot = self.slots.remove(i);
        self.free.push(slot);
        match self.slab[slot as usize].take() {
            Some(v) => v,
            None => unreachable!("a listed slot holds a value"),
        }
    }

    fn into_entries(mut self) -> impl Iterator<Item = (u64, V)> {
        let slots = std::mem::take(&mut self.slots);
        self.keys
            .into_iter()
            .zip(slots)
            .filter_map(move |(k, s)| Some((k, self.slab[s as usize].take()?)))
    }
}

impl<V> Default for AddrMap<V> {
    fn default() -> Self {
        AddrMap::Small(Sorted::default())
    }
}

impl<V: PartialEq> PartialEq for AddrMap<V> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl<V> AddrMap<V> {
    pub fn len(&self) -> usize {
        match self {
            AddrMap::Small(s) => s.keys.len(),
            AddrMap::Large(t) => t.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, k: u64) -> Option<&V> {
        match self {
            AddrMap::Small(s) => s.keys.binary_search(&k).ok().map(|i| s.val(i)),
            AddrMap::Large(t) => t.get(&k),
        }
    }

    pub fn get_mut(&mut self, k: u64) -> Option<&mut V> {
        match self {
            AddrMap::Small(s) => match s.keys.binary_search(&k) {
                Ok(i) => Some(s.val_mut(i)),
                Err(_) => None,
            },
            AddrMap::Large(t) => t.get_mut(&k),
        }
    }

    /// Sets the value at `k`, returning the one it replaced.
    pub fn insert(&mut self, k: u64, v: V) -> Option<V> {
        match self {
            AddrMap::Small(s) => match s.keys.binary_search(&k) {
                Ok(i) => Some(std::mem::replace(s.val_mut(i), v)),
                Err(i) => {
                    s.insert_at(i, k, v);
                    if s.keys.len() > SPILL {
                        let t = std::mem::take(s).into_entries().collect();
                        *self = AddrMap::Large(t);
                    }
                    None
                }
            },
            AddrMap::Large(t) => t.insert(k, v),
        }
    }

    pub fn remove(&mut self, k: u64) -> Option<V> {
        match self {
            AddrMap::Small(s) => {
                let i = s.keys.binary_search(&k).ok()?;
                Some(s.remove_at(i))
            }
            AddrMap::Large(t) => {
                let v = t.remove(&k);
                if t.len() < UNSPILL {
                    let mut s = Sorted::default();
                    for (k, v) in std::mem::take(t) {
                        s.insert_at(s.keys.len(), k, v);
                    }
                    *self = AddrMap::Small(s);
                }
                v
            }
        }
    }

    /// Removes the entry at `k` and returns it with the entry now before `k` (largest key
    /// `< k`): one search in the array form.
    pub fn remove_and_before(&mut self, k: u64) -> (Option<V>, Entry<'_, V>) {
        match self {
            AddrMap::Small(s) => {
                let (removed, i) = match s.keys.binary_search(&k) {
                    Ok(i) => (Some(s.remove_at(i)), i),
                    Err(i) => (None, i),
                };
                (removed, i.checked_sub(1).map(|j| s.entry(j)))
            }
            AddrMap::Large(_) => {
                let removed = self.remove(k);
                (removed, self.before(k))
            }
        }
    }

    /// The entries with the largest key `<= k` and the smallest key `> k`: one search in the
    /// array form.
    pub fn around(&self, k: u64) -> (Entry<'_, V>, Entry<'_, V>) {
        match self {
            AddrMap::Small(s) => {
                let i = s.keys.partition_point(|x| *x <= k);
                let at = i.checked_sub(1).map(|j| s.entry(j));
                (at, (i < s.keys.len()).then(|| s.entry(i)))
            }
            AddrMap::Large(_) => (self.at_or_before(k), self.after(k)),
        }
    }

    /// The entry with the largest key `< k`.
    pub fn before(&self, k: u64) -> Option<(u64, &V)> {
        match self {
            AddrMap::Small(s) => {
                let i = s.keys.partition_point(|x| *x < k).checked_sub(1)?;
                Some(s.entry(i))
            }
            AddrMap::Large(t) => t.range(..k).next_back().map(|(a, v)| (*a, v)),
        }
    }

    /// The entry with the largest key `<= k`.
    pub fn at_or_before(&self, k: u64) -> Option<(u64, &V)> {
        match self {
            AddrMap::Small(s) => {
                let i = s.keys.partition_point(|x| *x <= k).checked_sub(1)?;
                Some(s.entry(i))
            }
            AddrMap::Large(t) => t.range(..=k).next_back().map(|(a, v)| (*a, v)),
        }
    }

    /// The entry with the smallest key `> k`.
    pub fn after(&self, k: u64) -> Option<(u64, &V)> {
        match self {
            AddrMap::Small(s) => {
                let i = s.keys.partition_point(|x| *x <= k);
                (i < s.keys.len()).then(|| s.entry(i))
            }
            AddrMap::Large(t) => t
                .range((Bound::Excluded(k), Bound::Unbounded))
                .next()
                .map(|(a, v)| (*a, v)),
        }
    }

    /// Entries with `start <= key < end`, ascending (none when `end <= start`).
    pub fn range(&self, start: u64, end: u64) -> impl Iterator<Item = (u64, &V)> {
        let end = end.max(start);
        let (small, large) = match self {
            AddrMap::Small(s) => {
                let a = s.keys.partition_point(|x| *x < start);
                let b = s.keys.partition_point(|x| *x < end);
                (Some((a..b).map(|i| s.entry(i))), None)
            }
            AddrMap::Large(t) => (None, Some(t.range(start..end).map(|(a, v)| (*a, v)))),
        };
        small
            .into_iter()
            .flatten()
            .chain(large.into_iter().flatten())
    }

    /// Every entry, ascending.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &V)> {
        self.range(0, u64::MAX)
            .chain(self.get(u64::MAX).map(|v| (u64::MAX, v)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random inserts and removes across both forms, every query checked against a BTreeMap.
    #[test]
    fn agrees_with_btreemap_through_spills() {
        let mut ours = AddrMap::default();
        let mut want = BTreeMap::new();
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut spilled = false;
        for step in 0..60_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Grow for a while, then shrink, twice: crosses SPILL and UNSPILL both ways.
            let grow = (step / 15_000) % 2 == 0;
            let k = (x % 40_000) * 512;
            if grow != x.is_multiple_of(4) {
                assert_eq!(ours.insert(k, step), want.insert(k, step));
            } else {
                let k = want.keys().nth((x % 97) as usize).copied().unwrap_or(k);
                assert_eq!(ours.remove(k), want.remove(&k));
            }
            spilled |= matches!(ours, AddrMap::Large(_));
            assert_eq!(ours.len(), want.len());
            let p = (x >> 16) % (40_000 * 512);
            let pair = |e: Option<(&u64, &u64)>| e.map(|(a, v)| (*a, *v));
            let mine = |e: Option<(u64, &u64)>| e.map(|(a, v)| (a, *v));
            assert_eq!(mine(ours.before(p)), pair(want.range(..p).next_back()));
            assert_eq!(
                mine(ours.at_or_before(p)),
                pair(want.range(..=p).next_back())
            );
            assert_eq!(mine(ours.after(p)), pair(want.range(p + 1..).next()));
            assert_eq!(ours.get(p), want.get(&p));
            let (at, after) = ours.around(p);
            assert_eq!(
                (mine(at), mine(after)),
                (
                    pair(want.range(..=p).next_back()),
                    pair(want.range(p + 1..).next())
                )
            );
            if step % 11 == 0 {
                let k = want.keys().nth((x % 50) as usize).copied().unwrap_or(p);
                let (gone, before) = ours.remove_and_before(k);
                let before = mine(before);
                assert_eq!(
                    (gone, before),
                    (want.remove(&k), pair(want.range(..k).next_back()))
                );
            }
            let q = p + (x >> 40) % (64 * 512);
            assert!(ours
                .range(p, q)
                .map(|(a, v)| (a, *v))
                .eq(want.range(p..q).map(|(a, v)| (*a, *v))));
        }
        assert!(spilled, "the test never reached the B-tree form");
        assert!(
            matches!(ours, AddrMap::Small(_)),
            "the test never came back to arrays"
        );
        assert!(ours
            .iter()
            .map(|(a, v)| (a, *v))
            .eq(want.iter().map(|(a, v)| (*a, *v))));
        ours.insert(u64::MAX, 1);
        assert_eq!(ours.iter().last(), Some((u64::MAX, &1)));
        assert!(ours.range(9, 3).next().is_none());
    }
}
