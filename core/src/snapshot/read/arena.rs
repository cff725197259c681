//! What the pickle machine builds: a flat arena of nodes that refer to each other by index.
//!
//! A memo get pushes the index of an existing node, so sharing in the file is sharing here and
//! nothing is ever deep-copied. Scalars borrow from the input where the bytes are already in
//! their final form (binary opcodes); text opcodes that need decoding own their result.

use std::borrow::Cow;

pub(super) type NodeId = u32;

#[derive(Debug)]
pub(super) enum Node<'a> {
    None,
    Bool(bool),
    Int(i64),
    /// Two's-complement little-endian bytes of an integer that does not fit i64.
    BigInt(Cow<'a, [u8]>),
    Float(f64),
    Str(Cow<'a, str>),
    Bytes(Cow<'a, [u8]>),
    List(Vec<NodeId>),
    Tuple(Vec<NodeId>),
    Dict(Vec<(NodeId, NodeId)>),
    Set(Vec<NodeId>),
    FrozenSet(Vec<NodeId>),
}

impl Node<'_> {
    /// Python's name for the type, for messages.
    pub(super) fn type_name(&self) -> &'static str {
        match self {
            Node::None => "None",
            Node::Bool(_) => "bool",
            Node::Int(_) | Node::BigInt(_) => "int",
            Node::Float(_) => "float",
            Node::Str(_) => "str",
            Node::Bytes(_) => "bytes",
            Node::List(_) => "list",
            Node::Tuple(_) => "tuple",
            Node::Dict(_) => "dict",
            Node::Set(_) => "set",
            Node::FrozenSet(_) => "frozenset",
        }
    }
}

pub(super) struct Arena<'a> {
    pub(super) nodes: Vec<Node<'a>>,
    /// Byte offset of the opcode that made each node, for messages.
    pub(super) at: Vec<u64>,
    /// The object STOP returned.
    pub(super) root: NodeId,
}

impl<'a> Arena<'a> {
    pub(super) fn node(&self, id: NodeId) -> &Node<'a> {
        &self.nodes[id as usize]
    }

    pub(super) fn offset(&self, id: NodeId) -> u64 {
        self.at[id as usize]
    }
}

/// Decodes a two's-complement little-endian integer: `Int` when it fits i64, else `BigInt`.
pub(super) fn long_from_le<'a>(bytes: Cow<'a, [u8]>) -> Node<'a> {
    let n = bytes.len();
    if n == 0 {
        return Node::Int(0);
    }
    let negative = bytes[n - 1] & 0x80 != 0;
    let fill = if negative { 0xff } else { 0 };
    if n <= 8 || bytes[8..].iter().all(|&b| b == fill) && (bytes[7] & 0x80 != 0) == negative {
        let mut buf = [fill; 8];
        let k = n.min(8);
        buf[..k].copy_from_slice(&bytes[..k]);
        Node::Int(i64::from_le_bytes(buf))
    } else {
        Node::BigInt(bytes)
    }
}
