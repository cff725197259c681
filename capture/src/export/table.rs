//! A table being built column by column, then turned into one Arrow record batch. Every
//! integer is a signed 64-bit column: Spark has no unsigned types (it reads Parquet's UINT_64
//! as a decimal), and addresses (< 2^57) and sizes fit.

use std::sync::Arc;

use arrow_array::{ArrayRef, BooleanArray, Int64Array, RecordBatch, StringArray};
use arrow_schema::{ArrowError, DataType, Field, Schema};

use super::error::ExportError;

pub struct Table {
    pub name: &'static str,
    fields: Vec<Field>,
    columns: Vec<ArrayRef>,
}

/// A count, size or address as the signed 64-bit integer the table stores.
pub fn int(v: u64, column: &str) -> Result<i64, ExportError> {
    i64::try_from(v).map_err(|_| ExportError::Value {
        column: column.to_string(),
        value: v,
    })
}

/// [`int`] over a whole column.
pub fn ints(v: impl IntoIterator<Item = u64>, column: &str) -> Result<Vec<i64>, ExportError> {
    v.into_iter().map(|x| int(x, column)).collect()
}

/// [`int`] over a whole nullable column.
pub fn opt_ints(
    v: impl IntoIterator<Item = Option<u64>>,
    column: &str,
) -> Result<Vec<Option<i64>>, ExportError> {
    v.into_iter()
        .map(|x| x.map(|x| int(x, column)).transpose())
        .collect()
}

impl Table {
    pub fn new(name: &'static str) -> Table {
        Table {
            name,
            fields: Vec::new(),
            columns: Vec::new(),
        }
    }

    fn push(mut self, name: &str, ty: DataType, nullable: bool, a: ArrayRef) -> Table {
        self.fields.push(Field::new(name, ty, nullable));
        self.columns.push(a);
        self
    }

    pub fn int(self, name: &str, v: Vec<i64>) -> Table {
        self.push(name, DataType::Int64, false, Arc::new(Int64Array::from(v)))
    }

    pub fn opt_int(self, name: &str, v: Vec<Option<i64>>) -> Table {
        self.push(name, DataType::Int64, true, Arc::new(Int64Array::from(v)))
    }

    pub fn str<S: AsRef<str>>(self, name: &str, v: &[S]) -> Table {
        let a = StringArray::from_iter_values(v.iter().map(|s| s.as_ref()));
        self.push(name, DataType::Utf8, false, Arc::new(a))
    }

    pub fn opt_str<S: AsRef<str>>(self, name: &str, v: &[Option<S>]) -> Table {
        let a: StringArray = v.iter().map(|s| s.as_ref().map(|s| s.as_ref())).collect();
        self.push(name, DataType::Utf8, true, Arc::new(a))
    }

    pub fn bool(self, name: &str, v: Vec<bool>) -> Table {
        self.push(
            name,
            DataType::Boolean,
            false,
            Arc::new(BooleanArray::from(v)),
        )
    }

    pub fn opt_bool(self, name: &str, v: Vec<Option<bool>>) -> Table {
        self.push(
            name,
            DataType::Boolean,
            true,
            Arc::new(BooleanArray::from(v)),
        )
    }

    pub fn batch(self) -> Result<RecordBatch, ArrowError> {
        RecordBatch::try_new(Arc::new(Schema::new(self.fields)), self.columns)
    }
}
