//! Which detail worker holds which rank's full snapshot: a few slots, least recently used
//! first to go. The fleet keeps only summaries; a rank the user looks at is parsed again from
//! its `File` into one of these slots, and looking at it again while it is still held costs
//! nothing.

/// How many ranks keep a full snapshot at once (the shown rank and the last few looked at).
pub const DETAIL_SLOTS: usize = 3;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankLru {
    /// The rank (index into the set) each slot holds or is opening, with when it was last used.
    slots: Vec<Option<(usize, u64)>>,
    clock: u64,
}

/// Where a rank goes: the slot, and whether that slot already holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    pub slot: usize,
    pub held: bool,
}

impl RankLru {
    pub fn new(capacity: usize) -> RankLru {
        RankLru {
            slots: vec![None; capacity.max(1)],
            clock: 0,
        }
    }

    /// The slot for `rank`, marked as used now: the one holding it, else an empty one, else
    /// the least recently used other than `keep` (whose rank is given up).
    pub fn place(&mut self, rank: usize, keep: Option<usize>) -> Placement {
        self.clock += 1;
        let now = self.clock;
        if let Some(slot) = self.slot_of(rank) {
            self.slots[slot] = Some((rank, now));
            return Placement { slot, held: true };
        }
        let slot = self
            .slots
            .iter()
            .position(Option::is_none)
            .or_else(|| {
                (0..self.slots.len())
                    .filter(|&i| Some(i) != keep || self.slots.len() == 1)
                    .min_by_key(|&i| self.slots[i].map_or(0, |(_, used)| used))
            })
            .unwrap_or(0);
        self.slots[slot] = Some((rank, now));
        Placement { slot, held: false }
    }

    /// The slot holding `rank`, if any.
    pub fn slot_of(&self, rank: usize) -> Option<usize> {
        self.slots
            .iter()
            .position(|s| s.is_some_and(|(r, _)| r == rank))
    }

    /// The rank held in `slot`.
    pub fn rank_in(&self, slot: usize) -> Option<usize> {
        self.slots.get(slot).copied().flatten().map(|(r, _)| r)
    }

    /// Forgets `slot`'s rank (its open failed).
    pub fn clear(&mut self, slot: usize) {
        if let Some(s) = self.slots.get_mut(slot) {
            *s = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_empty_slots_then_evicts_the_least_recently_used() {
        let mut lru = RankLru::new(2);
        assert_eq!(
            lru.place(10, None),
            Placement {
                slot: 0,
                held: false
            }
        );
        assert_eq!(
            lru.place(11, None),
            Placement {
                slot: 1,
                held: false
            }
        );
        // 10 used again: 11 is now the oldest and goes.
        assert_eq!(
            lru.place(10, None),
            Placement {
                slot: 0,
                held: true
            }
        );
        assert_eq!(
            lru.place(12, None),
            Placement {
                slot: 1,
                held: false
            }
        );
        assert_eq!(lru.rank_in(1), Some(12));
        assert_eq!(lru.slot_of(11), None);
        assert_eq!(
            lru.place(11, None),
            Placement {
                slot: 0,
                held: false
            }
        );
        assert_eq!(lru.slot_of(10), None);
    }

    #[test]
    fn never_evicts_the_kept_slot() {
        let mut lru = RankLru::new(2);
        lru.place(0, None);
        lru.place(1, None);
        // Slot 0 is the oldest and not kept: it goes.
        lru.place(2, Some(1));
        assert_eq!((lru.rank_in(0), lru.rank_in(1)), (Some(2), Some(1)));
        // Slot 1 is now the oldest, slot 0 kept.
        lru.place(3, Some(0));
        assert_eq!((lru.rank_in(0), lru.rank_in(1)), (Some(2), Some(3)));
        // Slot 0 is the oldest but kept: slot 1 goes, though used later.
        lru.place(4, Some(0));
        assert_eq!((lru.rank_in(0), lru.rank_in(1)), (Some(2), Some(4)));
        // One slot: nothing else to evict.
        let mut one = RankLru::new(1);
        one.place(0, None);
        assert_eq!(
            one.place(1, Some(0)),
            Placement {
                slot: 0,
                held: false
            }
        );
    }

    #[test]
    fn a_cleared_slot_is_reused_first() {
        let mut lru = RankLru::new(3);
        for r in 0..3 {
            lru.place(r, None);
        }
        lru.clear(1);
        assert_eq!(lru.rank_in(1), None);
        assert_eq!(
            lru.place(7, None),
            Placement {
                slot: 1,
                held: false
            }
        );
        assert_eq!(RankLru::new(0).place(4, None).slot, 0, "at least one slot");
    }
}
