//! Level-of-detail for drawing a long series: min, max and last value per pixel bucket.
//!
//! A min/max pyramid over aligned blocks (16, 32, 64, ... entries) is built once; a range query
//! then reads O(log n) blocks plus at most 30 raw values, so a 1M-entry series draws in
//! O(width · log n) per zoom or pan. The pyramid costs about n/4 values (levels start at 16
//! entries, halving upwards), not 2n.

const BASE: usize = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Bucket {
    /// First entry index of the bucket.
    pub start: usize,
    /// One past its last entry index.
    pub end: usize,
    pub min: u64,
    pub max: u64,
    /// Value after the bucket's last entry (what a step line continues with).
    pub last: u64,
}

#[derive(Debug, Clone, Default)]
pub struct Series {
    values: Vec<u64>,
    /// `levels[k][j]` = (min, max) of `values[j * 16 << k .. (j + 1) * 16 << k]` (full blocks only).
    levels: Vec<Vec<(u64, u64)>>,
}

impl Series {
    pub fn new(values: Vec<u64>) -> Series {
        let mut levels: Vec<Vec<(u64, u64)>> = Vec::new();
        let base: Vec<(u64, u64)> = values
            .chunks_exact(BASE)
            .map(|c| {
                c.iter()
                    .fold((u64::MAX, 0), |(lo, hi), &v| (lo.min(v), hi.max(v)))
            })
            .collect();
        if !base.is_empty() {
            levels.push(base);
        }
        while let Some(prev) = levels.last() {
            if prev.len() < 2 {
                break;
            }
            let next: Vec<(u64, u64)> = prev
                .chunks_exact(2)
                .map(|p| (p[0].0.min(p[1].0), p[0].1.max(p[1].1)))
                .collect();
            levels.push(next);
        }
        Series { values, levels }
    }

    pub fn values(&self) -> &[u64] {
        &self.values
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// (min, max) of `values[a..b]`; `None` for an empty range.
    pub fn min_max(&self, a: usize, b: usize) -> Option<(u64, u64)> {
        let b = b.min(self.values.len());
        if a >= b {
            return None;
        }
        let mut lo = u64::MAX;
        let mut hi = 0;
        let mut i = a;
        let mut take = |v: (u64, u64)| {
            lo = lo.min(v.0);
            hi = hi.max(v.1);
        };
        while i < b && i & (BASE - 1) != 0 {
            take((self.values[i], self.values[i]));
            i += 1;
        }
        // Greedy aligned blocks: the largest level whose block starts at i and fits.
        while i + BASE <= b {
            let mut k = 0;
            while k + 1 < self.levels.len() {
                let w = BASE << (k + 1);
                if i & (w - 1) == 0 && i + w <= b {
                    k += 1;
                } else {
                    break;
                }
            }
            let w = BASE << k;
            take(self.levels[k][i / w]);
            i += w;
        }
        while i < b {
            take((self.values[i], self.values[i]));
            i += 1;
        }
        Some((lo, hi))
    }

    /// The first index of `values[a..b]` holding its maximum: the maximum from the pyramid,
    /// then a walk over 16-entry blocks to the first that reaches it (n/16 reads, not 2n).
    pub fn first_max(&self, a: usize, b: usize) -> Option<usize> {
        let b = b.min(self.values.len());
        let (_, hi) = self.min_max(a, b)?;
        let mut i = a;
        while i < b {
            let block = i / BASE;
            let full = i.is_multiple_of(BASE) && i + BASE <= b;
            if full && self.levels[0][block].1 < hi {
                i += BASE;
                continue;
            }
            if self.values[i] == hi {
                return Some(i);
            }
            i += 1;
        }
        None
    }

    /// Splits `[a, b)` into at most `width` buckets of (nearly) equal entry counts and returns
    /// each non-empty bucket's min, max and last value.
    pub fn buckets(&self, a: usize, b: usize, width: usize) -> Vec<Bucket> {
        let b = b.min(self.values.len());
        if a >= b || width == 0 {
            return Vec::new();
        }
        let n = b - a;
        let w = width.min(n);
        (0..w)
            .filter_map(|j| {
                let s = a + j * n / w;
                let e = a + (j + 1) * n / w;
                let (min, max) = self.min_max(s, e)?;
                Some(Bucket {
                    start: s,
                    end: e,
                    min,
                    max,
                    last: self.values[e - 1],
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn brute(v: &[u64], a: usize, b: usize) -> Option<(u64, u64)> {
        let s = v.get(a..b.min(v.len()))?;
        Some((*s.iter().min()?, *s.iter().max()?))
    }

    #[test]
    fn small_and_edges() {
        let s = Series::new(vec![]);
        assert_eq!(s.min_max(0, 1), None);
        assert!(s.buckets(0, 10, 5).is_empty());
        let v: Vec<u64> = (0..100).map(|i| (i * 37 % 101) as u64).collect();
        let s = Series::new(v.clone());
        for a in 0..100 {
            for b in a..=100 {
                assert_eq!(s.min_max(a, b), brute(&v, a, b), "{a}..{b}");
            }
        }
        for (a, b) in [(0, 100), (3, 40), (17, 18), (50, 50)] {
            let want = (a..b).find(|&i| Some(v[i]) == v[a..b].iter().max().copied());
            assert_eq!(s.first_max(a, b), want, "{a}..{b}");
        }
        let bs = s.buckets(0, 100, 7);
        assert_eq!(bs.len(), 7);
        assert_eq!(bs[0].start, 0);
        assert_eq!(bs[6].end, 100);
        assert_eq!(bs[6].last, v[99]);
    }

    proptest! {
        #[test]
        fn buckets_equal_brute_force(
            v in proptest::collection::vec(0u64..1_000_000, 0..3000),
            a in 0usize..3000, len in 0usize..3000, width in 1usize..300
        ) {
            let s = Series::new(v.clone());
            let b = (a + len).min(v.len());
            let bs = s.buckets(a, b, width);
            let mut covered = a;
            for bk in &bs {
                prop_assert_eq!(bk.start, covered);
                covered = bk.end;
                prop_assert_eq!(Some((bk.min, bk.max)), brute(&v, bk.start, bk.end));
                prop_assert_eq!(bk.last, v[bk.end - 1]);
            }
            if a < b { prop_assert_eq!(covered, b); prop_assert!(bs.len() <= width); }
        }

        #[test]
        fn first_max_equals_brute_force(
            v in proptest::collection::vec(0u64..50, 0..3000),
            a in 0usize..3000, len in 0usize..3000,
        ) {
            let s = Series::new(v.clone());
            let b = (a + len).min(v.len());
            let want = v.get(a..b).and_then(|part| {
                let max = part.iter().max()?;
                part.iter().position(|x| x == max).map(|i| a + i)
            });
            prop_assert_eq!(s.first_max(a, b), want);
        }
    }
}
