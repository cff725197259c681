//! The reader's one error: what is wrong with the input, and where.

#[derive(Debug, Clone, PartialEq)]
pub struct ReadError {
    pub offset: Option<u64>,
    pub message: String,
}

impl ReadError {
    pub(crate) fn at(offset: u64, message: impl Into<String>) -> ReadError {
        ReadError {
            offset: Some(offset),
            message: message.into(),
        }
    }

    pub(crate) fn whole(message: impl Into<String>) -> ReadError {
        ReadError {
            offset: None,
            message: message.into(),
        }
    }
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
