//! The record of the execution a named run is in, kept where a crash of the process cannot
//! lose it (shuttle persists its seed the same way): `target/pctvb/<test>/current-execution`.
//!
//! The file is one page mapped into memory (`MAP_SHARED`): at the start of every execution
//! the engine stores its index there with a plain memory write (no system call), and the page
//! belongs to the kernel's page cache, so the index survives the process dying in any way (a
//! heap corruption, `abort()`, a signal, `kill -9`). The next run of the same test that finds
//! the record unfinished says which execution the dead process was in and how to reproduce
//! it. A run that ends normally marks the file done (one store) and leaves it for the next run
//! to map again: creating and removing it costs far more. While a run holds the file it holds
//! an advisory lock on it, so a run of the same test in another process at the same time is
//! not taken for a crash.
//!
//! The file is opened at the start of the run's second execution, not before its first: a
//! run that ends in its first execution (a failure, or a model with one schedule: a loom
//! suite's one-thread models run one execution each) never touches it. Opening, locking,
//! mapping, first writing (the file system updates the file's times) and unmapping the page
//! cost tens of microseconds per run, more than such a run's whole execution (issue #17's
//! event-listener suite: nine one-execution models, where it was a fifth of pctvb's share of
//! the process). What that leaves out: a process that dies during the first execution without
//! running pctvb's crash handler (`kill -9`, the OOM killer) leaves no record. A fatal signal
//! or an abort there is still reported by the crash handler (`runtime/crash.rs`), with the
//! seed and the line that reproduces it, and a hang by the watchdog.
//!
//! Layout (native-endian `u64` words): `MAGIC` (0 once the run is done), the seed, then [`SLOTS`] slots, one per
//! engine of the run (parallel workers each have one), holding `index + 1` of the execution
//! the engine is in (0: none); then, from byte [`TEXT_AT`], the length (a `u64`) and the
//! bytes of the line that reproduces the run.

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use crate::runtime::ExecutionRecord;

const MAGIC: u64 = u64::from_le_bytes(*b"pctvbrec");
const SLOTS: usize = 64;
const PAGE: usize = 4096;
const TEXT_AT: usize = 8 * (2 + SLOTS);

/// What a previous run that did not finish left behind.
pub(super) struct Unfinished {
    pub(super) seed: u64,
    pub(super) executions: Vec<u64>,
    pub(super) rerun_line: String,
}

impl Unfinished {
    /// What to tell the user, for the test `test`.
    pub(super) fn message(&self, test: &str) -> String {
        let during = match self.executions.as_slice() {
            [] => "between executions (in the runner, or after the execution that broke \
                   something had ended)"
                .to_string(),
            [one] => format!("during execution {one}"),
            many => format!(
                "during one of the executions {} (they ran at the same time, on parallel workers)",
                many.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
            ),
        };
        format!(
            "the previous run of `{test}` did not finish: its process died (a crash, an abort, \
             the watchdog, or a kill) {during} of the run seeded {}. To reproduce it (the run \
             repeats its executions up to that one):\n    {}",
            self.seed, self.rerun_line
        )
    }
}

/// Cargo's target directory, where pctvb keeps its files (`pctvb/`): `CARGO_TARGET_DIR` when
/// set, else the one the running binary was built in (`<target>/<profile>/deps/<test>`, or
/// `examples/`, or the profile directory itself), recognized by cargo's `CACHEDIR.TAG`; else
/// `target` in the working directory. cargo runs tests in the package's directory, which for
/// a workspace member is not where the workspace's `target` is.
pub(super) fn target_dir() -> std::path::PathBuf {
    use std::path::PathBuf;
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    let built_in = std::env::current_exe().ok().and_then(|exe| {
        let mut dir = exe.parent()?;
        if matches!(dir.file_name()?.to_str()?, "deps" | "examples") {
            dir = dir.parent()?;
        }
        let target = dir.parent()?;
        target.join("CACHEDIR.TAG").is_file().then(|| target.to_path_buf())
    });
    built_in.unwrap_or_else(|| PathBuf::from("target"))
}

/// The path of `name`'s record.
#[cfg(unix)]
fn path_for(name: &str) -> std::path::PathBuf {
    let target = target_dir();
    target.join("pctvb").join(crate::replay::file_name(name)).join("current-execution")
}

/// A named run's record: the file is opened at the start of the run's second execution (see
/// the module documentation); until then `enter` and `leave` store nothing.
pub(super) struct Record {
    name: String,
    seed: u64,
    rerun_line: String,
    /// Whether the run's first execution has begun (it runs without the file). The first
    /// execution of a run always runs alone (parallel workers start after it), so a plain
    /// load and store suffice.
    first_begun: AtomicBool,
    /// The mapped page, once opened (`None` inside when it cannot be kept: no writable target
    /// directory, or another process runs the same test now).
    mapped: OnceLock<Option<Mapped>>,
    next_slot: AtomicUsize,
    /// What an earlier run that did not finish left in the file, as said on stderr (past the
    /// harness's capture) when the file was opened.
    note: OnceLock<String>,
}

impl Record {
    /// The record of the run `name`, seeded `seed`, reproduced by `rerun_line`.
    pub(super) fn new(name: &str, seed: u64, rerun_line: &str) -> Record {
        Record {
            name: name.to_string(),
            seed,
            rerun_line: rerun_line.to_string(),
            first_begun: AtomicBool::new(false),
            mapped: OnceLock::new(),
            next_slot: AtomicUsize::new(0),
            note: OnceLock::new(),
        }
    }

    /// What an earlier run of the same test that did not finish left behind, if this run
    /// opened the file and found it (the message was printed on stderr then).
    pub(super) fn unfinished_note(&self) -> Option<String> {
        self.note.get().cloned()
    }

    /// The mapped page, opening it on first use.
    fn mapped(&self) -> Option<&Mapped> {
        self.mapped
            .get_or_init(|| {
                let (mapped, unfinished) = Mapped::open(&self.name, self.seed, &self.rerun_line);
                if let Some(unfinished) = unfinished {
                    let note = unfinished.message(&self.name);
                    // Written to the stderr stream itself, past the harness's capture (which
                    // takes `eprintln!`'s output and shows it only for a failing test): the
                    // next run usually passes, and it has just consumed the record, so a
                    // captured note would be lost for good. The report keeps it too, with the
                    // run's other notes.
                    let _ = writeln!(std::io::stderr(), "pctvb: {note}");
                    let _ = self.note.set(note);
                }
                mapped
            })
            .as_ref()
    }
}

impl ExecutionRecord for Arc<Record> {
    fn claim(&self) -> usize {
        self.next_slot.fetch_add(1, Ordering::Relaxed) % SLOTS
    }

    #[inline]
    fn enter(&self, slot: usize, index: u64) {
        if !self.first_begun.load(Ordering::Relaxed) {
            self.first_begun.store(true, Ordering::Relaxed);
            return;
        }
        if let Some(mapped) = self.mapped() {
            mapped.store(slot, index + 1);
        }
    }

    #[inline]
    fn leave(&self, slot: usize) {
        if let Some(Some(mapped)) = self.mapped.get() {
            mapped.store(slot, 0);
        }
    }
}

#[cfg(unix)]
use mapped::Mapped;

#[cfg(not(unix))]
struct Mapped;

#[cfg(not(unix))]
impl Mapped {
    fn open(_name: &str, _seed: u64, _rerun_line: &str) -> (Option<Mapped>, Option<Unfinished>) {
        (None, None)
    }
    fn store(&self, _slot: usize, _value: u64) {}
}

#[cfg(unix)]
mod mapped {
    use std::fs::{File, OpenOptions};
    use std::os::unix::io::AsRawFd;
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::{path_for, Unfinished, MAGIC, PAGE, SLOTS, TEXT_AT};

    /// A run's mapped record; marked done when dropped (the run ended without the process
    /// dying).
    pub(super) struct Mapped {
        words: *mut AtomicU64,
        /// Keeps the lock.
        _file: File,
    }

    // SAFETY: the mapping is only accessed through atomics.
    unsafe impl Send for Mapped {}
    // SAFETY: as above.
    unsafe impl Sync for Mapped {}

    impl Mapped {
        /// Opens the record of the run `name` (seeded `seed`, reproduced by `rerun_line`),
        /// and returns what an earlier run that did not finish left in it. `None` when the
        /// record cannot be kept (no writable target directory, or another process runs the
        /// same test now).
        pub(super) fn open(
            name: &str,
            seed: u64,
            rerun_line: &str,
        ) -> (Option<Mapped>, Option<Unfinished>) {
            let path = path_for(name);
            let open = || {
                OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path)
            };
            let file = match open() {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    let Some(dir) = path.parent() else { return (None, None) };
                    if std::fs::create_dir_all(dir).is_err() {
                        return (None, None);
                    }
                    open()
                }
                other => other,
            };
            let Ok(file) = file else { return (None, None) };
            // SAFETY: flock on an open descriptor.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
                return (None, None);
            }
            let len = file.metadata().map_or(0, |m| m.len());
            if len != PAGE as u64 && file.set_len(PAGE as u64).is_err() {
                return (None, None);
            }
            // SAFETY: maps one page of a file open for reading and writing.
            let ptr = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    PAGE,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_SHARED,
                    file.as_raw_fd(),
                    0,
                )
            };
            if ptr == libc::MAP_FAILED {
                return (None, None);
            }
            // SAFETY: one mapped page, read before it is written.
            let unfinished = read_unfinished(unsafe {
                std::slice::from_raw_parts(ptr.cast::<u8>().cast_const(), PAGE)
            });
            let words = ptr.cast::<AtomicU64>();
            let record = Mapped { words, _file: file };
            // SAFETY: the page is mapped and page-aligned; words and bytes stay within it.
            unsafe {
                for i in 0..2 + SLOTS {
                    (*words.add(i)).store(0, Ordering::Relaxed);
                }
                let text = rerun_line.as_bytes();
                let len = text.len().min(PAGE - TEXT_AT - 8);
                (*words.add(TEXT_AT / 8)).store(len as u64, Ordering::Relaxed);
                std::ptr::copy_nonoverlapping(
                    text.as_ptr(),
                    ptr.cast::<u8>().add(TEXT_AT + 8),
                    len,
                );
                (*words.add(1)).store(seed, Ordering::Relaxed);
                (*words).store(MAGIC, Ordering::Release);
            }
            (Some(record), unfinished)
        }
    }

    /// The contents of a record a run left without marking it done.
    fn read_unfinished(bytes: &[u8]) -> Option<Unfinished> {
        let word = |i: usize| u64::from_ne_bytes(bytes[8 * i..8 * i + 8].try_into().unwrap());
        if word(0) != MAGIC {
            return None;
        }
        let executions =
            (0..SLOTS).map(|i| word(2 + i)).filter(|&w| w != 0).map(|w| w - 1).collect();
        let len = (word(TEXT_AT / 8) as usize).min(PAGE - TEXT_AT - 8);
        let rerun_line =
            String::from_utf8_lossy(&bytes[TEXT_AT + 8..TEXT_AT + 8 + len]).into_owned();
        Some(Unfinished { seed: word(1), executions, rerun_line })
    }

    impl Mapped {
        /// Stores `value` in engine `slot`'s word (`index + 1` of its execution, 0: none).
        #[inline]
        pub(super) fn store(&self, slot: usize, value: u64) {
            // SAFETY: `slot < SLOTS`, inside the mapped page.
            unsafe { (*self.words.add(2 + slot)).store(value, Ordering::Relaxed) };
        }
    }

    impl Drop for Mapped {
        /// The run ended without the process dying: marks the record done.
        fn drop(&mut self) {
            // SAFETY: the page is mapped until the `munmap` below, and no reference to it
            // outlives `self`.
            unsafe {
                (*self.words).store(0, Ordering::Release);
                libc::munmap(self.words.cast(), PAGE);
            }
        }
    }
}

#[cfg(test)]
mod target_tests {
    use super::target_dir;

    /// Run by cargo, the test binary lives in the target directory found (a workspace
    /// member's tests run in the member's directory, where no `target` is).
    #[test]
    fn the_target_directory_is_the_one_the_binary_was_built_in() {
        let target = target_dir();
        assert!(target.join("CACHEDIR.TAG").is_file(), "{}", target.display());
        if std::env::var_os("CARGO_TARGET_DIR").is_none() {
            let exe = std::env::current_exe().unwrap();
            assert!(exe.starts_with(&target), "{} in {}", exe.display(), target.display());
        }
    }
}
