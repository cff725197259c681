//! Nodes the typed model does not name -> [`Value`], keeping the file's sharing: each
//! container or string node becomes one `Arc`, reused wherever the node is referenced again.

use std::sync::Arc;

use foldhash::{HashMap, HashMapExt, HashSet};

use super::super::value::Value;
use super::arena::{Arena, Node, NodeId};
use super::error::ReadError;

/// How deep generic data may nest (containers inside containers). Snapshot data nests a few
/// levels; the bound keeps hostile input from overflowing the (small, on wasm) stack.
pub(super) const MAX_DEPTH: usize = 100;

#[derive(Default)]
pub(super) struct Values {
    cache: HashMap<NodeId, Value>,
    visiting: HashSet<NodeId>,
}

impl Values {
    pub(super) fn value(
        &mut self,
        arena: &Arena<'_>,
        id: NodeId,
        depth: usize,
    ) -> Result<Value, ReadError> {
        let v = match arena.node(id) {
            Node::None => return Ok(Value::None),
            Node::Bool(b) => return Ok(Value::Bool(*b)),
            Node::Int(i) => return Ok(Value::Int(*i)),
            Node::Float(f) => return Ok(Value::Float(*f)),
            _ => {
                if let Some(v) = self.cache.get(&id) {
                    return Ok(v.clone());
                }
                self.convert(arena, id, depth)?
            }
        };
        self.cache.insert(id, v.clone());
        Ok(v)
    }

    fn convert(&mut self, arena: &Arena<'_>, id: NodeId, depth: usize) -> Result<Value, ReadError> {
        if depth >= MAX_DEPTH {
            return Err(ReadError::at(
                arena.offset(id),
                format!("data nests deeper than {MAX_DEPTH} levels"),
            ));
        }
        if !self.visiting.insert(id) {
            return Err(ReadError::at(
                arena.offset(id),
                format!(
                    "a {} contains itself (recursive structure); snapshots are acyclic",
                    arena.node(id).type_name()
                ),
            ));
        }
        let seq = |this: &mut Values, items: &[NodeId]| -> Result<Vec<Value>, ReadError> {
            items
                .iter()
                .map(|&i| this.value(arena, i, depth + 1))
                .collect()
        };
        let v = match arena.node(id) {
            Node::None | Node::Bool(_) | Node::Int(_) | Node::Float(_) => unreachable_scalar(),
            Node::Entry(_) => {
                return Err(ReadError::at(
                    arena.offset(id),
                    "a trace entry dict of device_traces is referenced a second time (memo reference); memsnap reads each trace entry once",
                ))
            }
            Node::SkippedFrames => {
                return Err(ReadError::at(
                    arena.offset(id),
                    "a trace entry's frame list is referenced again elsewhere (memo reference); this read skips frames, so read the file in full",
                ))
            }
            Node::BigInt(b) => Value::BigInt(Arc::from(&b[..])),
            Node::Str(s) => Value::Str(Arc::from(&s[..])),
            Node::Bytes(b) => Value::Bytes(Arc::from(&b[..])),
            Node::List(sp) => Value::List(Arc::new(seq(self, arena.items(sp))?)),
            Node::Tuple(sp) => Value::Tuple(Arc::new(seq(self, arena.items(sp))?)),
            Node::Set(sp) => Value::Set(Arc::new(dedup(seq(self, arena.items(sp))?))),
            Node::FrozenSet(sp) => Value::FrozenSet(Arc::new(dedup(seq(self, arena.items(sp))?))),
            Node::Dict(sp) => {
                let pairs = arena.pairs(sp);
                let mut out: Vec<(Value, Value)> = Vec::with_capacity(pairs.len());
                for &(k, val) in pairs {
                    let k = self.value(arena, k, depth + 1)?;
                    let val = self.value(arena, val, depth + 1)?;
                    out.push((k, val));
                }
                Value::Dict(Arc::new(dedup_keys(out)))
            }
        };
        self.visiting.remove(&id);
        Ok(v)
    }
}

/// Scalars return before `convert`; this keeps the match exhaustive without a panic path.
fn unreachable_scalar() -> Value {
    Value::None
}

/// A hashable stand-in for the scalar keys Python would hash (1 == True as in Python).
#[derive(PartialEq, Eq, Hash)]
enum Key<'v> {
    None,
    Int(i64),
    Big(&'v [u8]),
    Str(&'v str),
    Bytes(&'v [u8]),
}

fn key_of(v: &Value) -> Option<Key<'_>> {
    Some(match v {
        Value::None => Key::None,
        Value::Bool(b) => Key::Int(i64::from(*b)),
        Value::Int(i) => Key::Int(*i),
        Value::BigInt(b) => Key::Big(b),
        Value::Str(s) => Key::Str(s),
        Value::Bytes(b) => Key::Bytes(b),
        _ => return None,
    })
}

/// Python dict semantics for repeated keys: the first position, the last value. Only scalar
/// keys are folded: Python never pickles a dict or set with two equal keys, so repeats come from
/// crafted files, and comparing container keys structurally costs quadratic time in the number
/// of keys and exponential time in memo-shared depth (a hang, not an answer).
fn dedup_keys(pairs: Vec<(Value, Value)>) -> Vec<(Value, Value)> {
    // A small dict (every annotation and setting) is searched without a map: the map's
    // allocation and hashing were most of converting one (1,802 annotations in one real file).
    if pairs.len() <= SMALL_DICT && !has_repeated_key(&pairs) {
        return pairs;
    }
    let mut keep: Vec<Option<usize>> = Vec::with_capacity(pairs.len());
    {
        let mut seen = HashMap::new();
        for (i, (k, _)) in pairs.iter().enumerate() {
            match key_of(k) {
                Some(key) => match seen.get(&key) {
                    Some(&first) => keep.push(Some(first)),
                    None => {
                        seen.insert(key, i);
                        keep.push(None);
                    }
                },
                None => keep.push(None),
            }
        }
    }
    if keep.iter().all(Option::is_none) {
        return pairs;
    }
    let mut out: Vec<Option<(Value, Value)>> = Vec::with_capacity(pairs.len());
    for (i, (k, v)) in pairs.into_iter().enumerate() {
        match keep[i] {
            Some(first) => {
                if let Some(slot) = out[first].as_mut() {
                    slot.1 = v;
                }
                out.push(None);
            }
            None => out.push(Some((k, v))),
        }
    }
    out.into_iter().flatten().collect()
}

/// Dicts up to this many pairs are searched for repeated keys pairwise.
const SMALL_DICT: usize = 8;

fn has_repeated_key(pairs: &[(Value, Value)]) -> bool {
    pairs.iter().enumerate().any(|(i, (k, _))| {
        key_of(k).is_some_and(|k| {
            pairs[..i]
                .iter()
                .any(|(e, _)| key_of(e).as_ref() == Some(&k))
        })
    })
}

/// Python set semantics: equal items kept once.
fn dedup(items: Vec<Value>) -> Vec<Value> {
    let pairs = items.into_iter().map(|v| (v, Value::None)).collect();
    dedup_keys(pairs).into_iter().map(|(k, _)| k).collect()
}
