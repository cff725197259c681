//! Runs scenario actions on the allocator model: tensor names to addresses, stream names to
//! streams, frames per step, and out-of-memory as an outcome to count, not a failure.

use std::collections::{HashMap, HashSet};

use memsnap_core::allocator::{Allocator, StreamId};
use memsnap_core::snapshot::StackId;

use super::device::Device;
use super::progress::Progress;
use crate::scenario::program::{PhaseMark, DEFAULT_STREAM};
use crate::scenario::{Step, Target};

pub struct Executor<'a, D: Device> {
    pub alloc: &'a mut Allocator<D>,
    stacks: HashMap<usize, StackId>,
    streams: HashMap<String, StreamId>,
    /// Live tensors: name -> (address, stream).
    tensors: HashMap<String, u64>,
    /// Tensors whose allocation ran out of memory: freeing them is a no-op, as it would be
    /// in a program that caught the OOM and went on.
    failed: HashSet<String>,
    pub ooms: Vec<String>,
    /// Phase marks as written: (stage, name, time_us).
    pub marks: Vec<(PhaseMark, String, i64)>,
    progress: &'a Progress,
}

impl<'a, D: Device> Executor<'a, D> {
    pub fn new(
        alloc: &'a mut Allocator<D>,
        stacks: HashMap<usize, StackId>,
        progress: &'a Progress,
    ) -> Executor<'a, D> {
        let mut streams = HashMap::new();
        streams.insert(DEFAULT_STREAM.to_string(), 0);
        Executor {
            alloc,
            stacks,
            streams,
            tensors: HashMap::new(),
            failed: HashSet::new(),
            ooms: Vec::new(),
            marks: Vec::new(),
            progress,
        }
    }

    /// Names of tensors still allocated at the end, sorted.
    pub fn live(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.tensors.keys().map(|s| s.as_str()).collect();
        v.sort_unstable();
        v
    }

    fn stream(&mut self, name: &str) -> Result<StreamId, String> {
        if let Some(s) = self.streams.get(name) {
            return Ok(*s);
        }
        let s = self.alloc.backing_mut().new_stream()?;
        self.streams.insert(name.to_string(), s);
        Ok(s)
    }

    fn done(&mut self) -> Result<(), String> {
        self.progress.inc();
        self.alloc.backing_mut().check()
    }

    fn lookup(&self, tensor: &str, what: &str) -> Result<Option<u64>, String> {
        match self.tensors.get(tensor) {
            Some(a) => Ok(Some(*a)),
            None if self.failed.contains(tensor) => Ok(None),
            None => Err(format!("{what} `{tensor}`, which is not allocated")),
        }
    }
}

impl<D: Device> Target for Executor<'_, D> {
    fn alloc(
        &mut self,
        step: &Step,
        tensor: String,
        size: u64,
        stream: &str,
    ) -> Result<(), String> {
        if self.tensors.contains_key(&tensor) {
            return Err(format!(
                "alloc `{tensor}`, which is already allocated (free it first)"
            ));
        }
        let s = self.stream(stream)?;
        let frames = self.stacks.get(&step.id).copied();
        match self.alloc.malloc(size, s, frames) {
            Ok(addr) => {
                self.alloc.backing_mut().touch(addr, size, s);
                self.failed.remove(&tensor);
                self.tensors.insert(tensor, addr);
            }
            Err(oom) => {
                self.ooms
                    .push(format!("alloc `{tensor}` (line {}): {oom}", step.line));
                self.failed.insert(tensor);
            }
        }
        self.done()
    }

    fn free(&mut self, _step: &Step, tensor: String) -> Result<(), String> {
        if let Some(addr) = self.lookup(&tensor, "free")? {
            self.alloc.free(addr).map_err(|e| e.to_string())?;
            self.tensors.remove(&tensor);
        }
        self.failed.remove(&tensor);
        self.done()
    }

    fn record_stream(&mut self, _step: &Step, tensor: String, stream: &str) -> Result<(), String> {
        let s = self.stream(stream)?;
        if let Some(addr) = self.lookup(&tensor, "record_stream of")? {
            self.alloc
                .record_stream(addr, s)
                .map_err(|e| e.to_string())?;
        }
        self.done()
    }

    fn empty_cache(&mut self, _step: &Step) -> Result<(), String> {
        self.alloc.empty_cache();
        self.done()
    }

    fn sync(&mut self, _step: &Step) -> Result<(), String> {
        self.alloc.backing_mut().synchronize()?;
        self.alloc.process_events();
        self.alloc.backing_mut().after_synchronize();
        self.done()
    }

    fn phase(&mut self, _step: &Step, stage: PhaseMark, name: String) -> Result<(), String> {
        // On the allocator's clock, so the mark sorts between the entries around it.
        let t = self.alloc.backing_mut().now_us();
        self.marks.push((stage, name, t));
        Ok(())
    }
}
