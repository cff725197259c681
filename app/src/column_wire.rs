//! The timeline's band columns on the wire: each column sends only the bands after the ones it
//! shares with the column before it (bands stack oldest lowest, so neighbours share all but the
//! top few). At 1M entries 99.8% of the band entries were such repeats: a timeline answer was
//! 163–190 kB, encoded, copied to the page and decoded at every zoom step (370–600 kB on the real
//! fixtures' first paint). In memory, and to every view, a column keeps its whole stack.
//!
//! Used as `#[serde(with = "crate::column_wire")]` on `TimelineView::columns`.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::analysis_protocol::ColumnVm;

#[derive(Serialize)]
struct WireRef<'a> {
    start: u64,
    end: u64,
    /// Bands equal to the previous column's first `shared`.
    shared: u32,
    tail: &'a [u32],
    small_max: u64,
}

#[derive(Deserialize)]
struct Wire {
    start: u64,
    end: u64,
    shared: u32,
    tail: Vec<u32>,
    small_max: u64,
}

pub fn serialize<S: Serializer>(columns: &[ColumnVm], s: S) -> Result<S::Ok, S::Error> {
    let mut prev: &[u32] = &[];
    let wire: Vec<WireRef> = columns
        .iter()
        .map(|c| {
            let shared = c.bands.iter().zip(prev).take_while(|(a, b)| a == b).count();
            prev = &c.bands;
            WireRef {
                start: c.start,
                end: c.end,
                shared: shared as u32,
                tail: &c.bands[shared..],
                small_max: c.small_max,
            }
        })
        .collect();
    wire.serialize(s)
}

pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<ColumnVm>, D::Error> {
    let wire = Vec::<Wire>::deserialize(d)?;
    let mut columns: Vec<ColumnVm> = Vec::with_capacity(wire.len());
    for (i, w) in wire.into_iter().enumerate() {
        let prev = columns.last().map_or(&[][..], |c| &c.bands[..]);
        let shared = w.shared as usize;
        if shared > prev.len() {
            return Err(D::Error::custom(format!(
                "timeline column {i} shares {shared} bands with a column of {}",
                prev.len()
            )));
        }
        let mut bands = Vec::with_capacity(shared + w.tail.len());
        bands.extend_from_slice(&prev[..shared]);
        bands.extend_from_slice(&w.tail);
        columns.push(ColumnVm {
            start: w.start,
            end: w.end,
            bands,
            small_max: w.small_max,
        });
    }
    Ok(columns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis_protocol::{EntryRange, TimelineView};
    use crate::protocol::{decode, encode, Response};

    fn column(start: u64, bands: &[u32]) -> ColumnVm {
        ColumnVm {
            start,
            end: start + 1,
            bands: bands.to_vec(),
            small_max: start * 3,
        }
    }

    fn view(columns: Vec<ColumnVm>) -> TimelineView {
        TimelineView {
            device: 0,
            entries: 10,
            range: EntryRange { start: 0, end: 10 },
            start_time_us: None,
            end_time_us: None,
            y_max: 1,
            allocated: Vec::new(),
            reserved: Vec::new(),
            min_bytes: 0,
            columns,
            band_sizes: Vec::new(),
            peak: None,
        }
    }

    #[test]
    fn columns_come_back_whole() {
        let columns = vec![
            column(0, &[]),
            column(1, &[7, 3, 9]),
            column(2, &[7, 3, 9, 4]),
            column(3, &[7, 3]),
            column(4, &[8, 3, 9]),
            column(5, &[8, 3, 9]),
            column(6, &[]),
            column(7, &[1]),
        ];
        let v = Response::Timeline(view(columns));
        let back = decode::<Response>(&encode(5, &v)).unwrap();
        assert_eq!(back.id, 5);
        assert_eq!(back.body, v);
    }

    #[test]
    fn repeated_stacks_are_sent_once() {
        let stack: Vec<u32> = (0..200).collect();
        let one = |n: usize| {
            let columns = (0..n as u64).map(|i| column(i, &stack)).collect();
            encode(1, &Response::Timeline(view(columns))).len()
        };
        // Each further identical column costs a few bytes, not its 200 bands again.
        assert!(one(100) - one(1) < 99 * 20, "{} -> {}", one(1), one(100));
    }

    #[test]
    fn a_column_sharing_more_than_its_neighbour_has_is_refused() {
        let wire = vec![WireRef {
            start: 0,
            end: 1,
            shared: 2,
            tail: &[],
            small_max: 0,
        }];
        let bytes = postcard::to_allocvec(&wire).unwrap();
        // postcard keeps no message of a custom error; that it is one is what matters here.
        assert!(postcard::from_bytes::<Columns>(&bytes).is_err());
        // The same column sharing nothing reads back.
        let wire = vec![WireRef {
            shared: 0,
            tail: &[4, 5],
            ..wire[0]
        }];
        let bytes = postcard::to_allocvec(&wire).unwrap();
        let back = postcard::from_bytes::<Columns>(&bytes).unwrap().0;
        assert_eq!(back[0].bands, vec![4, 5]);
    }

    #[derive(Debug, Deserialize)]
    struct Columns(#[serde(with = "super")] Vec<ColumnVm>);
}
