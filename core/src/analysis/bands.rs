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

/// One pixel column's entries and its stack of bands, kept as the bands it shares with the
/// column before (the same allocations, bottom up, at the same heights) and its own past those,
/// in `BandLayout::tails`. Bands stack oldest lowest, so neighbouring columns share all but the
/// top few: at 1M entries 99.8% of the bands were such repeats, and a zoomed-in real trace
/// (cs336-a-2.7b-forward, 868 entries over 550 columns) held 7 MB of per-column cells.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Column {
    pub start: usize,
    pub end: usize,
    /// How many bands, from the bottom, are the previous column's.
    pub shared: usize,
    /// Where this column's own bands end in `BandLayout::tails` (they start where the
    /// previous column's end).
    pub tail_end: usize,
    /// Top of the last band: where the summary band starts.
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
    /// Each column's bands past those it shares with the column before, bottom to top, one
    /// column after another: indices into `banded`.
    pub tails: Vec<u32>,
    /// The allocations that have a band in some column, in list order.
    pub banded: Vec<usize>,
    /// Their sizes (a band's height), in the same order.
    pub sizes: Vec<u64>,
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
            ..BandLayout::default()
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
    let mut tails: Vec<u32> = Vec::new();
    let mut next = 0;
    // The column's stack: positions in `visible`, with the top of each band.
    let mut active: Vec<(u32, u64)> = Vec::new();
    for j in 0..w {
        let s = a + j * n / w;
        let e = a + (j + 1) * n / w;
        // The bands below the first one that ended stay where they were.
        let shared = active
            .iter()
            .position(|&(p, _)| list[visible[p as usize]].end <= s)
            .unwrap_or(active.len());
        let mut kept = shared;
        for i in shared..active.len() {
            let p = active[i].0;
            if list[visible[p as usize]].end > s {
                active[kept].0 = p;
                kept += 1;
            }
        }
        active.truncate(kept);
        while next < visible.len() && list[visible[next]].start < e {
            active.push((next as u32, 0));
            next += 1;
        }
        let mut y = shared.checked_sub(1).map_or(0, |i| active[i].1);
        for (p, top) in &mut active[shared..] {
            y += list[visible[*p as usize]].size;
            *top = y;
            tails.push(*p);
        }
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
            shared,
            tail_end: tails.len(),
            top: y,
            summary_min: if s < e { small_min } else { 0 },
            summary_max: small_max,
        });
    }
    let sizes = visible.iter().map(|&k| list[k].size).collect();
    BandLayout {
        min_bytes,
        columns,
        tails,
        banded: visible,
        sizes,
    }
}

/// A band kept in place over consecutive columns: one rectangle to draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    /// Index into `BandLayout::banded`.
    pub band: u32,
    pub first_column: usize,
    pub last_column: usize,
    pub y0: u64,
    pub y1: u64,
}

impl BandLayout {
    /// A band's allocation (index into `Timeline::allocations.list`) and size; `None` for a
    /// position past `banded`, as a malformed message could bring.
    pub fn band(&self, band: u32) -> Option<(usize, u64)> {
        let i = band as usize;
        Some((*self.banded.get(i)?, *self.sizes.get(i)?))
    }

    /// A column's own bands (past the shared ones); empty where the column does not hold
    /// together with the one before it.
    fn tail(&self, column: usize) -> &[u32] {
        let start = column
            .checked_sub(1)
            .map_or(0, |c| self.columns[c].tail_end);
        self.tails
            .get(start..self.columns[column].tail_end)
            .unwrap_or_default()
    }

    /// Calls `each` with every band's runs, in column order of their ends: each band as long
    /// as it keeps its place, one rectangle per run instead of one per column and band. Of two
    /// runs that share a column the higher comes first (it cannot outlast the one it sits on),
    /// so a painter that fills only what is still empty shows the highest band in a pixel row
    /// that several share. A column claiming more shared bands than the one before has takes
    /// the ones it has.
    pub fn for_each_run(&self, mut each: impl FnMut(Run)) {
        // The open runs, bottom to top: band, first column, heights.
        let mut open: Vec<(u32, usize, u64, u64)> = Vec::new();
        for (j, col) in self.columns.iter().enumerate() {
            let shared = col.shared.min(open.len());
            for &(band, first, y0, y1) in open[shared..].iter().rev() {
                each(Run {
                    band,
                    first_column: first,
                    last_column: j - 1,
                    y0,
                    y1,
                });
            }
            open.truncate(shared);
            for &band in self.tail(j) {
                let y0 = open.last().map_or(0, |o| o.3);
                let size = self.band(band).map_or(0, |b| b.1);
                open.push((band, j, y0, y0.saturating_add(size)));
            }
        }
        let last = self.columns.len().saturating_sub(1);
        for &(band, first, y0, y1) in open.iter().rev() {
            each(Run {
                band,
                first_column: first,
                last_column: last,
                y0,
                y1,
            });
        }
    }

    /// The column holding entry `index`.
    pub fn column_at(&self, index: usize) -> Option<usize> {
        let c = self.columns.partition_point(|c| c.end <= index);
        self.columns.get(c).filter(|c| c.start <= index).map(|_| c)
    }

    /// Column `column`'s bands, bottom to top, rebuilt from the columns before it (empty for
    /// an unknown column).
    pub fn cells(&self, column: usize) -> Vec<Cell> {
        let mut stack: Vec<Cell> = Vec::new();
        for j in 0..self.columns.len().min(column.saturating_add(1)) {
            stack.truncate(self.columns[j].shared);
            for &band in self.tail(j) {
                let Some((alloc, size)) = self.band(band) else {
                    continue;
                };
                let y0 = stack.last().map_or(0, |c| c.y1);
                stack.push(Cell {
                    alloc,
                    y0,
                    y1: y0.saturating_add(size),
                });
            }
        }
        if column >= self.columns.len() {
            stack.clear();
        }
        stack
    }

    /// What is drawn at entry `index`, height `bytes`.
    pub fn hit(&self, index: usize, bytes: u64) -> Hit {
        let Some(c) = self.column_at(index) else {
            return Hit::Nothing;
        };
        let col = &self.columns[c];
        let cells = self.cells(c);
        let k = cells.partition_point(|cell| cell.y1 <= bytes);
        match cells.get(k) {
            Some(cell) if cell.y0 <= bytes => Hit::Allocation(cell.alloc),
            _ if bytes >= col.top && bytes < col.top.saturating_add(col.summary_max) => {
                Hit::Summary
            }
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
        let ys: Vec<Vec<(u64, u64)>> = (0..6)
            .map(|j| l.cells(j).iter().map(|x| (x.y0, x.y1)).collect())
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
        // A stays in place over columns 0..=2; B sits on it in column 2, then slides down.
        assert_eq!(l.banded, vec![0, 2]);
        assert_eq!(
            (
                l.columns[2].shared,
                l.columns[3].shared,
                l.columns[4].shared
            ),
            (1, 0, 1)
        );
        let mut runs = Vec::new();
        l.for_each_run(|r| runs.push((r.band, r.first_column, r.last_column, r.y0, r.y1)));
        assert_eq!(
            runs,
            vec![
                (1, 2, 2, 4 * MB, 6 * MB),
                (0, 0, 2, 0, 4 * MB),
                (1, 3, 4, 0, 2 * MB),
            ]
        );
    }

    #[test]
    fn zoomed_out_keeps_short_allocations() {
        let tl = tl();
        let l = layout(&tl, 0, 6, 2, MB);
        assert_eq!(l.columns.len(), 2);
        // Column 0 is entries 0..3: A and B both present.
        assert_eq!(l.cells(0).len(), 2);
        assert_eq!(l.columns[0].summary_min, 0);
        assert_eq!(l.columns[0].summary_max, 512);
        // Column 1 is entries 3..6: B only (A freed at 3).
        assert_eq!(l.cells(1).len(), 1);
        assert_eq!(min_bytes_for(&tl, 0, 6, 6), MB + 512 / 6);
    }

    /// A layout that does not hold together (as a malformed message could bring) draws what
    /// does, and answers the rest as nothing, without a panic.
    #[test]
    fn a_malformed_layout_is_read_without_a_panic() {
        let column = |shared, tail_end| Column {
            start: 0,
            end: 1,
            shared,
            tail_end,
            top: 0,
            summary_min: 0,
            summary_max: 0,
        };
        let l = BandLayout {
            min_bytes: 1,
            // Shares more than the column before has; a tail ending before it starts; one
            // ending past the tails; a band past `banded`.
            columns: vec![column(3, 2), column(9, 1), column(0, 99), column(0, 3)],
            tails: vec![0, 7, 0],
            banded: vec![5],
            sizes: vec![MB],
        };
        let mut runs = Vec::new();
        l.for_each_run(|r| runs.push((r.band, r.first_column, r.last_column)));
        assert_eq!(runs, vec![(7, 0, 1), (0, 0, 1)]);
        assert_eq!(l.cells(0).len(), 1);
        assert_eq!(l.cells(0)[0].alloc, 5);
        assert!(l.cells(2).is_empty());
        assert!(l.cells(3).is_empty());
        assert!(l.cells(99).is_empty());
        assert_eq!(l.hit(0, 2 * MB), Hit::Nothing);
        assert_eq!(l.band(7), None);
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
            for (j, c) in l.columns.iter().enumerate() {
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
                let cells: Vec<usize> = l.cells(j).iter().map(|x| x.alloc).collect();
                let in_column: Vec<usize> = want
                    .iter()
                    .copied()
                    .filter(|&k| list[k].start < c.end && list[k].end > c.start)
                    .collect();
                assert_eq!(cells, in_column);
            }
            // The runs, cut back into columns, are the columns' cells, and come highest first
            // in each column.
            let mut from_runs: Vec<Vec<Cell>> = vec![Vec::new(); l.columns.len()];
            l.for_each_run(|r| {
                let (alloc, size) = l.band(r.band).unwrap();
                assert_eq!(r.y1 - r.y0, size);
                for col in &mut from_runs[r.first_column..=r.last_column] {
                    col.push(Cell {
                        alloc,
                        y0: r.y0,
                        y1: r.y1,
                    });
                }
            });
            for (j, mut cells) in from_runs.into_iter().enumerate() {
                assert!(
                    cells.windows(2).all(|w| w[0].y0 > w[1].y0),
                    "{a}..{b} column {j}: runs not highest first"
                );
                cells.reverse();
                assert_eq!(cells, l.cells(j), "{a}..{b} column {j}");
                assert_eq!(l.columns[j].top, cells.last().map_or(0, |c| c.y1));
            }
        }
    }
}
