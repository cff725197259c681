//! Placeholder until the reader lands.
use super::model::Snapshot;

#[derive(Debug, Clone, PartialEq)]
pub struct ReadError {
    pub offset: Option<u64>,
    pub message: String,
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.offset {
            Some(o) => write!(f, "at byte {o}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ReadError {}

pub fn read(_bytes: &[u8]) -> Result<Snapshot, ReadError> {
    Err(ReadError {
        offset: None,
        message: "reader not built yet".into(),
    })
}
