//! `memsnap trace FILE`: the trace as a Python-style listing, one line per entry (the
//! counterpart of `python -m torch.cuda._memory_viz trace`, same line shapes): allocations get
//! short names (`a`, `b`, ..., `a1`, names reused after free) and are placed in their segment.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;

use memsnap_core::snapshot::{Action, Snapshot, TraceEntry};

use super::format::size;
use super::input::{load, CliError};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Snapshot file (pickle or gzipped pickle); `-` reads stdin.
    pub file: String,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let snapshot = load(&args.file)?;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    write_trace(&snapshot, &mut out).map_err(CliError::stdout)?;
    out.flush().map_err(CliError::stdout)
}

/// Every device's listing, devices with an empty trace skipped.
pub fn write_trace(s: &Snapshot, out: &mut impl Write) -> std::io::Result<()> {
    let Some(traces) = &s.device_traces else {
        return Ok(());
    };
    for (device, entries) in traces.iter().enumerate() {
        if !entries.is_empty() {
            writeln!(out, "Device {device} ----------------")?;
            Listing::new(s).write(entries, out)?;
        }
    }
    Ok(())
}

/// Names handed out as `_memory_viz` does: a..z, a1..z1, ...; freed names are reused first.
#[derive(Default)]
struct Names {
    next: u64,
    free: Vec<String>,
}

impl Names {
    fn take(&mut self) -> String {
        if let Some(n) = self.free.pop() {
            return n;
        }
        let (r, m) = (self.next / 26, self.next % 26);
        self.next += 1;
        let letter = char::from(b'a' + m as u8);
        if r == 0 {
            letter.to_string()
        } else {
            format!("{letter}{r}")
        }
    }
}

struct Listing {
    names: Names,
    /// Segments of the dump, by address: (end, index).
    dumped: BTreeMap<u64, (u64, usize)>,
    /// Segments the trace allocated, by address: (end, name).
    traced: BTreeMap<u64, (u64, String)>,
    /// Live allocations by address: name.
    live: HashMap<u64, String>,
}

impl Listing {
    fn new(s: &Snapshot) -> Listing {
        let dumped = s
            .segments
            .iter()
            .enumerate()
            .map(|(i, seg)| (seg.address, (seg.address.saturating_add(seg.total_size), i)))
            .collect();
        Listing {
            names: Names::default(),
            dumped,
            traced: BTreeMap::new(),
            live: HashMap::new(),
        }
    }

    /// `(segment name, offset)` of an address, or `("MEM", addr)` outside every segment.
    fn place(&self, addr: u64) -> (String, u64) {
        if let Some((&start, (end, name))) = self.traced.range(..=addr).next_back() {
            if addr < *end {
                return (name.clone(), addr - start);
            }
        }
        if let Some((&start, &(end, i))) = self.dumped.range(..=addr).next_back() {
            if addr < end {
                return (format!("seg_{i}"), addr - start);
            }
        }
        ("MEM".to_string(), addr)
    }

    fn write(&mut self, entries: &[TraceEntry], out: &mut impl Write) -> std::io::Result<()> {
        writeln!(out, "{} entries", entries.len())?;
        let mut total: i128 = 0;
        for e in entries {
            let addr = e.addr().unwrap_or(0);
            let bytes = e.size().unwrap_or(0);
            match &e.action() {
                Action::Alloc => {
                    let name = self.names.take();
                    let (seg, offset) = self.place(addr);
                    writeln!(out, "{name} = {seg}[{offset}:{}]", size(bytes))?;
                    self.live.insert(addr, name);
                    total += i128::from(bytes);
                }
                Action::FreeRequested => match self.live.get(&addr) {
                    Some(name) => writeln!(out, "del {name} # {}", size(bytes))?,
                    None => writeln!(out, "del {addr} # {}", size(bytes))?,
                },
                Action::FreeCompleted => {
                    total -= i128::from(bytes);
                    match self.live.remove(&addr) {
                        Some(name) => {
                            writeln!(out, "# free completed for {name} {}", size(bytes))?;
                            self.names.free.push(name);
                        }
                        None => writeln!(out, "# free completed for {addr} {}", size(bytes))?,
                    }
                }
                Action::SegmentAlloc => {
                    let name = self.names.take();
                    writeln!(out, "{name} = cudaMalloc({addr}, {})", size(bytes))?;
                    self.traced.insert(addr, (addr.saturating_add(bytes), name));
                }
                Action::SegmentFree => match self.traced.remove(&addr) {
                    Some((_, name)) => {
                        writeln!(out, "cudaFree({name}) # {}", size(bytes))?;
                        self.names.free.push(name);
                    }
                    None => writeln!(out, "cudaFree({addr}) # {}", size(bytes))?,
                },
                Action::Oom => writeln!(
                    out,
                    "raise OutOfMemoryError # {} requested, {} free in CUDA",
                    size(bytes),
                    size(e.device_free().unwrap_or(0))
                )?,
                other => writeln!(out, "{} addr={addr} size={bytes}", other.as_str())?,
            }
        }
        let sign = if total < 0 { "-" } else { "" };
        writeln!(
            out,
            "TOTAL MEM: {sign}{}",
            size(total.unsigned_abs() as u64)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use memsnap_core::snapshot::{Segment, Snapshot};

    fn entry(action: Action, addr: u64, bytes: u64) -> TraceEntry {
        TraceEntry::new(action, addr, bytes)
    }

    #[test]
    fn names_placement_and_reuse() {
        let mut s = Snapshot {
            segments: vec![Segment {
                address: 1 << 20,
                total_size: 2 << 20,
                ..Segment::default()
            }],
            ..Snapshot::default()
        };
        s.device_traces = Some(vec![vec![
            entry(Action::Alloc, (1 << 20) + 512, 512),
            entry(Action::FreeRequested, (1 << 20) + 512, 512),
            entry(Action::FreeCompleted, (1 << 20) + 512, 512),
            entry(Action::Alloc, 7, 1024),
            entry(Action::SegmentAlloc, 1 << 30, 20 << 20),
            entry(Action::Alloc, (1 << 30) + 4096, 2048),
        ]]);
        let mut out = Vec::new();
        write_trace(&s, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "Device 0 ----------------\n6 entries\n\
             a = seg_0[512:512.0B]\ndel a # 512.0B\n# free completed for a 512.0B\n\
             a = MEM[7:1.0KiB]\nb = cudaMalloc(1073741824, 20.0MiB)\n\
             c = b[4096:2.0KiB]\nTOTAL MEM: 3.0KiB\n"
        );
    }

    #[test]
    fn names_past_z() {
        let mut n = Names::default();
        let all: Vec<String> = (0..28).map(|_| n.take()).collect();
        assert_eq!(&all[25..], ["z", "a1", "b1"]);
    }
}
