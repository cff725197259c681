//! The stacked-band layout of live allocations (MemoryViz's Active Memory Timeline), at a zoom.
//!
//! Allocations are stacked in allocation order, each as tall as its size. At a given range and
//! pixel width, only allocations of at least `min_bytes` (about one pixel of height) get a band;
//! the others are summed into one summary band on top whose per-column min and max are exact
//! over every entry of the column, so nothing vanishes when zoomed out (MemoryViz instead keeps
//! the N largest and samples). In a column an allocation is present when it is live after any
//! entry of the column, so short-lived large allocations still show.

use super::overlap::passed_budget;
use super::timeline::Timeline;

/// About how many allocations get bands (the viewer asks for about this many): how far the
/// size order may look before a scan by start is cheaper (see `overlap`).
const MAX_VISIBLE_HINT: usize = 2048;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Cell {
    /// Index into `Timeline::allocations.list`.
    pub alloc: usize,
    pub y0: u64,
    pub y1: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Column {
    pub start: usize,
    pub end: usize,
    /// Bands present in the column, bottom to top.
    pub cells: Vec<Cell>,
    /// Top of the last cell: where the summary band starts.
    pub top: u64,
    /// Bytes of allocations below `min_bytes`, min and max over the column's entries.
    pub summary_min: u64,
    pub summary_max: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct BandLayout {
    pub min_bytes: u64,
    pub columns: Vec<Column>,
    /// The allocations that have a band in some column, in list order.
    pub banded: Vec<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Hit {
    Allocation(usize),
    Summary,
    Nothing,
}

/// One pixel of height when `[a, b)` is drawn `height_px` tall (scaled to the range's peak).
pub fn min_bytes_for(tl: &Timeline, a: usize, b: usize, height_px: u64) -> u64 {
    let max = tl.allocated.min_max(a, b).map(|m| m.1).unwrap_or(0);
    (max / height_px.max(1)).max(1)
}

pub fn layout(tl: &Timeline, a: usize, b: usize, width: usize, min_bytes: u64) -> BandLayout {
    let b = b.min(tl.len());
    if a >= b || width == 0 {
        return BandLayout {
            min_bytes,
            columns: Vec::new(),
            banded: Vec::new(),
        };
    }
    let list = &tl.allocations.list;
    let visible = tl
        .overlap
        .live_at_least(list, a, b, min_bytes, passed_budget(MAX_VISIBLE_HINT));
    // What the bands leave ("small" allocations) at each entry, folded straight into each
    // column's min and max: a sweep with the banded allocations' clamped starts and ends as
    // events, reading the allocated series' min/max pyramid between them. Those are few (about
    // MAX_BANDS); the range can be the whole trace, so nothing here is sized by it (a
    // difference array per entry, then a walk over every entry, were most of a wide zoom step).
    let n = b - a;
    let ups: Vec<(usize, u64)> = visible
        .iter()
        .map(|&k| (list[k].start.max(a), list[k].size))
        .collect();
    let mut downs: Vec<(usize, u64)> = visible
        .iter()
        .map(|&k| (list[k].end.min(b), list[k].size))
        .collect();
    downs.sort_unstable_by_key(|d| d.0);
    let (mut up, mut down, mut live) = (0, 0, 0i128);
    let w = width.min(n);
    let mut columns = Vec::with_capacity(w);
    let mut next = 0;
    let mut active: Vec<usize> = Vec::new();
    for j in 0..w {
        let s = a + j * n / w;
        let e = a + (j + 1) * n / w;
        while next < visible.len() && list[visible[next]].start < e {
            active.push(visible[next]);
            next += 1;
        }
        active.retain(|&k| list[k].end > s);
        let mut y = 0;
        let cells: Vec<Cell> = active
            .iter()
            .map(|&k| {
                let c = Cell {
                    alloc: k,
                    y0: y,
                    y1: y + list[k].size,
                };
                y = c.y1;
                c
            })
            .collect();
        let (mut small_min, mut small_max) = (u64::MAX, 0);
        // Between two events the banded bytes are constant, so the smallest and largest
        // "small" bytes of a piece are the allocated series' min and max there, less them.
        let mut i = s;
        while i < e {
            // `ups` is in start order: `visible` is in list order, and the list by start.
            while up < ups.len() && ups[up].0 <= i {
                live += ups[up].1 as i128;
                up += 1;
            }
            while down < downs.len() && downs[down].0 <= i {
                live -= downs[down].1 as i128;
                down += 1;
            }
            let next_up = ups.get(up).map_or(e, |u| u.0);
            let next_down = downs.get(down).map_or(e, |d| d.0);
            let j = next_up.min(next_down).min(e);
            if let Some((lo, hi)) = tl.allocated.min_max(i, j) {
                small_min = small_min.min((lo as i128 - live).max(0) as u64);
                small_max = small_max.max((hi as i128 - live).max(0) as u64);
            }
            i = j;
        }
        columns.push(Column {
            start: s,
            end: e,
            cells,
            top: y,
            summary_min: if s < e { small_min } else { 0 },
            summary_max: small_max,
        });
    }
    BandLayout {
        min_bytes,
        columns,
        banded: visible,
    }
}

/// One allocation's band across consecutive columns, for drawing as one polygon.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Band {
    pub alloc: usize,
    pub first_column: usize,
    /// Bottom of the band in each column from `first_column` on (height is the size).
    pub y0: Vec<u64>,
}

impl BandLayout {
    /// The cells regrouped per allocation into runs of consecutive columns.
    pub fn bands(&self) -> Vec<Band> {
        let mut open: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
        let mut out: Vec<Band> = Vec::new();
        for (j, col) in self.columns.iter().enumerate() {
            for cell in &col.cells {
                match open.get(&cell.alloc) {
                    Some(&b) if out[b].first_column + out[b].y0.len() == j => {
                        out[b].y0.push(cell.y0)
                    }
                    _ => {
                        open.insert(cell.alloc, out.len());
                        out.push(Band {
                            alloc: cell.alloc,
                            first_column: j,
                            y0: vec![cell.y0],
                        });
                    }
                }
            }
        }
        out
    }

    /// What is drawn at entry `index`, height `bytes`.
    pub fn hit(&self, index: usize, bytes: u64) -> Hit {
        let c = self.columns.partition_point(|c| c.end <= index);
        let Some(col) = self.columns.get(c).filter(|c| c.start <= index) else {
            return Hit::Nothing;
        };
        let k = col.cells.partition_point(|cell| cell.y1 <= bytes);
        match col.cells.get(k) {
            Some(cell) if cell.y0 <= bytes => Hit::Allocation(cell.alloc),
            _ if bytes >= col.top && bytes < col.top + col.summary_max => Hit::Summary,
            _ => Hit::Nothing,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::testutil::*;
    use crate::snapshot::Action;

    fn tl() -> Timeline {
        let t = vec![
            entry(Action::Alloc, 0x10000000, 4 * MB),         // 0: A
            entry(Action::Alloc, 0x20000000, 512),            // 1: small
            entry(Action::Alloc, 0x30000000, 2 * MB),         // 2: B
            entry(Action::FreeRequested, 0x10000000, 4 * MB), // 3: A freed, B slides down
            entry(Action::FreeRequested, 0x20000000, 512),    // 4
            entry(Action::FreeRequested, 0x30000000, 2 * MB), // 5
        ];
        Timeline::build(&snapshot(vec![], t), 0)
    }

    #[test]
    fn full_resolution_is_exact() {
        let tl = tl();
        let l = layout(&tl, 0, 6, 100, MB);
        assert_eq!(l.columns.len(), 6);
        let ys: Vec<Vec<(u64, u64)>> = l
            .columns
            .iter()
            .map(|c| c.cells.iter().map(|x| (x.y0, x.y1)).collect())
            .collect();
        assert_eq!(ys[0], vec![(0, 4 * MB)]);
        assert_eq!(ys[2], vec![(0, 4 * MB), (4 * MB, 6 * MB)]);
        assert_eq!(ys[3], vec![(0, 2 * MB)]);
        assert!(ys[5].is_empty());
        assert_eq!(
            l.columns.iter().map(|c| c.summary_max).collect::<Vec<_>>(),
            vec![0, 512, 512, 512, 0, 0]
        );
        assert_eq!(l.hit(2, 5 * MB), Hit::Allocation(2));
        assert_eq!(l.hit(2, MB), Hit::Allocation(0));
        assert_eq!(l.hit(2, 6 * MB + 100), Hit::Summary);
        assert_eq!(l.hit(2, 7 * MB), Hit::Nothing);
        assert_eq!(l.hit(9, 0), Hit::Nothing);
        let bands: Vec<(usize, usize, Vec<u64>)> = l
            .bands()
            .into_iter()
            .map(|b| (b.alloc, b.first_column, b.y0))
            .collect();
        assert_eq!(
            bands,
            vec![(0, 0, vec![0, 0, 0]), (2, 2, vec![4 * MB, 0, 0]),]
        );
    }

    #[test]
    fn zoomed_out_keeps_short_allocations() {
        let tl = tl();
        let l = layout(&tl, 0, 6, 2, MB);
        assert_eq!(l.columns.len(), 2);
        // Column 0 is entries 0..3: A and B both present.
        assert_eq!(l.columns[0].cells.len(), 2);
        assert_eq!(l.columns[0].summary_min, 0);
        assert_eq!(l.columns[0].summary_max, 512);
        // Column 1 is entries 3..6: B only (A freed at 3).
        assert_eq!(l.columns[1].cells.len(), 1);
        assert_eq!(min_bytes_for(&tl, 0, 6, 6), MB + 512 / 6);
    }

    /// Every column against a direct count, on a random trace of allocs and frees.
    #[test]
    fn columns_match_a_direct_count() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rand = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let (mut t, mut live): (Vec<_>, Vec<(u64, u64)>) = (Vec::new(), Vec::new());
        for i in 0..400u64 {
            if live.is_empty() || rand(3) > 0 {
                let (addr, size) = (0x1000_0000 + i * 0x100_0000, (1 + rand(64)) * MB / 8);
                t.push(entry(Action::Alloc, addr, size));
                live.push((addr, size));
            } else {
                let (addr, size) = live.swap_remove(rand(live.len() as u64) as usize);
                t.push(entry(Action::FreeRequested, addr, size));
            }
        }
        let tl = Timeline::build(&snapshot(vec![], t), 0);
        let list = &tl.allocations.list;
        for (a, b, width, min_bytes) in [
            (0, 400, 37, 2 * MB),
            (50, 333, 500, 4 * MB),
            (123, 124, 5, 1),
        ] {
            let l = layout(&tl, a, b, width, min_bytes);
            let banded = |k: usize| {
                let al = &list[k];
                al.size >= min_bytes && al.start < al.end && al.start < b && al.end > a
            };
            let want: Vec<usize> = (0..list.len()).filter(|&k| banded(k)).collect();
            assert_eq!(l.banded, want);
            for c in &l.columns {
                let smalls: Vec<u64> = (c.start..c.end)
                    .map(|i| {
                        let bands: u64 = want
                            .iter()
                            .filter(|&&k| list[k].start <= i && i < list[k].end)
                            .map(|&k| list[k].size)
                            .sum();
                        tl.allocated.values()[i].saturating_sub(bands)
                    })
                    .collect();
                assert_eq!(
                    c.summary_min,
                    *smalls.iter().min().unwrap(),
                    "{a}..{b} column {}",
                    c.start
                );
                assert_eq!(
                    c.summary_max,
                    *smalls.iter().max().unwrap(),
                    "{a}..{b} column {}",
                    c.start
                );
                let cells: Vec<usize> = c.cells.iter().map(|x| x.alloc).collect();
                let in_column: Vec<usize> = want
                    .iter()
                    .copied()
                    .filter(|&k| list[k].start < c.end && list[k].end > c.start)
                    .collect();
                assert_eq!(cells, in_column);
            }
        }
    }
}
