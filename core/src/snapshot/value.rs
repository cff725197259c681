//! Generic pickle data, for the parts of a snapshot the typed model does not name
//! (unknown keys, `external_annotations`, legacy `history`, FX frame fields).
//!
//! Containers are behind `Arc` so that memo sharing in the file stays sharing in memory:
//! a pickle that references one list a million times costs one list, not a million copies,
//! and the writer can emit it once again (it memoizes by pointer).

use std::sync::Arc;

#[derive(Debug, Clone)]
pub enum Value {
    None,
    Bool(bool),
    Int(i64),
    /// An integer that does not fit i64: two's-complement little-endian bytes, as pickle's LONG1/LONG4.
    BigInt(Arc<[u8]>),
    Float(f64),
    Str(Arc<str>),
    Bytes(Arc<[u8]>),
    List(Arc<Vec<Value>>),
    Tuple(Arc<Vec<Value>>),
    /// Key order kept as in the file.
    Dict(Arc<Vec<(Value, Value)>>),
    Set(Arc<Vec<Value>>),
    FrozenSet(Arc<Vec<Value>>),
}

impl Value {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Bool(b) => Some(*b as i64),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Float(f) => Some(*f),
            Value::Int(i) => Some(*i as f64),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The items of a list or tuple.
    pub fn as_seq(&self) -> Option<&[Value]> {
        match self {
            Value::List(v) | Value::Tuple(v) => Some(v),
            _ => None,
        }
    }

    pub fn as_dict(&self) -> Option<&[(Value, Value)]> {
        match self {
            Value::Dict(d) => Some(d),
            _ => None,
        }
    }

    /// Looks up a string key in a dict (linear: snapshot dicts have a handful of keys).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_dict()?
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    }

    /// Short name of the Python type, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::None => "None",
            Value::Bool(_) => "bool",
            Value::Int(_) | Value::BigInt(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::Bytes(_) => "bytes",
            Value::List(_) => "list",
            Value::Tuple(_) => "tuple",
            Value::Dict(_) => "dict",
            Value::Set(_) => "set",
            Value::FrozenSet(_) => "frozenset",
        }
    }
}

/// Python equality (`==`), used by tests and round-trip checks: dicts compare regardless of
/// key order, 1 == 1.0 == True as in Python.
impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        use Value::*;
        match (self, other) {
            (None, None) => true,
            (Str(a), Str(b)) => a == b,
            (Bytes(a), Bytes(b)) => a == b,
            (BigInt(a), BigInt(b)) => a == b,
            (List(a), List(b)) | (Tuple(a), Tuple(b)) => a == b,
            (Dict(a), Dict(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .all(|(k, v)| b.iter().any(|(k2, v2)| k == k2 && v == v2))
            }
            (Set(a), Set(b))
            | (FrozenSet(a), FrozenSet(b))
            | (Set(a), FrozenSet(b))
            | (FrozenSet(a), Set(b)) => a.len() == b.len() && a.iter().all(|x| b.contains(x)),
            (Float(a), _) => other.as_f64() == Some(*a),
            (_, Float(b)) => self.as_f64() == Some(*b),
            (Int(_) | Bool(_), Int(_) | Bool(_)) => self.as_i64() == other.as_i64(),
            _ => false,
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Str(Arc::from(s))
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(i)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}
