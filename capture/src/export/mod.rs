//! `memsnap export --parquet`: one rank's snapshot as eight Parquet tables that DuckDB,
//! DataFusion or Spark query as they are (docs/parquet-schema.md). memsnap converts; existing
//! engines do the distributed part.
//!
//! Layout (Hive partitioning by rank): `OUT_DIR/<table>/rank=<R>/part-0.parquet` for the
//! tables `ranks`, `segments`, `blocks`, `allocations`, `trace`, `stacks`, `frames`, `phases`. Each
//! rank's files depend on that rank alone, so ranks can be converted by separate processes on
//! separate machines into one shared directory.

mod error;
mod table;
mod tables;

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_schema::DataType;
use memsnap_core::analysis::rank_summary::RankSummary;
use memsnap_core::snapshot::Snapshot;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;

pub use error::ExportError;
pub use table::Table;

/// The tables, in the order they are written.
pub const TABLES: [&str; 8] = [
    "ranks",
    "segments",
    "blocks",
    "allocations",
    "trace",
    "stacks",
    "frames",
    "phases",
];

/// Rows written per table, in [`TABLES`] order, and the bytes written in all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    pub rows: Vec<(&'static str, usize)>,
    pub bytes: u64,
}

/// `OUT_DIR/<table>/rank=<R>/part-0.parquet`
pub fn table_path(out_dir: &Path, table: &str, rank: u32) -> PathBuf {
    out_dir
        .join(table)
        .join(format!("rank={rank}"))
        .join("part-0.parquet")
}

/// Writes the eight tables of one rank under `out_dir`, replacing that rank's earlier files.
/// Each file is written beside its final name and renamed into place, so a reader of the
/// shared directory never sees half a file.
pub fn export_rank(
    snap: &Snapshot,
    summary: &RankSummary,
    out_dir: &Path,
) -> Result<Written, ExportError> {
    let mut written = Written::default();
    let rank = summary.rank;
    // One table at a time, so only one is held in memory beside the snapshot.
    for name in TABLES {
        let table = match name {
            "ranks" => tables::ranks(summary)?,
            "segments" => tables::segments(snap)?,
            "blocks" => tables::blocks(snap)?,
            "allocations" => tables::allocation_rows(snap)?,
            "trace" => tables::trace(snap)?,
            "stacks" => tables::stacks(snap),
            "frames" => tables::frames(snap),
            _ => tables::phases(snap)?,
        };
        let batch = table
            .batch()
            .map_err(|e| ExportError::Arrow(format!("{name}: {e}")))?;
        written.rows.push((name, batch.num_rows()));
        written.bytes += write(&table_path(out_dir, name, rank), &batch)?;
    }
    Ok(written)
}

fn write(path: &Path, batch: &RecordBatch) -> Result<u64, ExportError> {
    let err = |p: &Path, e: &dyn std::fmt::Display| ExportError::Write {
        path: p.to_path_buf(),
        message: e.to_string(),
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| err(dir, &e))?;
    }
    let tmp = path.with_extension("parquet.tmp");
    let file = File::create(&tmp).map_err(|e| err(&tmp, &e))?;
    // Snappy: what Spark writes by default, fast, and pure Rust to build. Dictionaries only
    // for strings: numeric columns (addresses, sizes, entries) are mostly distinct, and hashing
    // every value into a dictionary was ~15% of an export's user CPU (128 real-fixture ranks,
    // -j 1: 0.96-1.04 s with, 0.80-0.87 s without; Parquet 6% smaller).
    let mut props = WriterProperties::builder().set_compression(Compression::SNAPPY);
    for f in batch.schema().fields() {
        if !matches!(
            f.data_type(),
            DataType::Utf8 | DataType::LargeUtf8 | DataType::Dictionary(..)
        ) {
            props = props.set_column_dictionary_enabled(ColumnPath::from(f.name().as_str()), false);
        }
    }
    let props = props.build();
    let mut w =
        ArrowWriter::try_new(file, batch.schema(), Some(props)).map_err(|e| err(&tmp, &e))?;
    w.write(batch).map_err(|e| err(&tmp, &e))?;
    let file = w.into_inner().map_err(|e| err(&tmp, &e))?;
    let bytes = file.metadata().map_err(|e| err(&tmp, &e))?.len();
    drop(file);
    std::fs::rename(&tmp, path).map_err(|e| err(path, &e))?;
    Ok(bytes)
}
