//! What can go wrong turning a snapshot into Parquet tables.

use std::path::PathBuf;

#[derive(Debug)]
pub enum ExportError {
    /// A figure above the signed 64-bit range the tables use.
    Value {
        column: String,
        value: u64,
    },
    Arrow(String),
    /// Writing a file failed.
    Write {
        path: PathBuf,
        message: String,
    },
}

impl std::fmt::Display for ExportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExportError::Value { column, value } => write!(
                f,
                "{column} value {value} does not fit a signed 64-bit Parquet column"
            ),
            ExportError::Arrow(m) => write!(f, "building a table: {m}"),
            ExportError::Write { path, message } => write!(f, "{}: {message}", path.display()),
        }
    }
}

impl std::error::Error for ExportError {}
