//! Shared file mappings that survive their file being cut.
//!
//! A shared mapping of a file (`MAP_SHARED`) is the one way to make a store durable
//! across `kill -9` without a system call: the page cache *is* the file. Its hazard is
//! the file itself: when someone truncates it, every access to a mapped page past the new
//! end raises `SIGBUS`, and the process dies without a log line. The credit journal
//! (`access::journal`) is such a mapping.
//!
//! A range registered here ([`register`]) is guarded: a `SIGBUS` whose address lies
//! inside it is answered by mapping a zeroed private page over the faulting page
//! (`MAP_FIXED`), so the faulting access is retried on that page and succeeds, and
//! [`Registered::take_faulted`] reports it. The owner of the mapping (the journal's once-a-second
//! flush) then sees the fault, or the shorter file, and writes a new file from the copy
//! of the data it keeps in memory; the page that replaced the file's is dropped with the
//! old mapping. A `SIGBUS` anywhere else is handed to the handler that was installed
//! before (the standard library's, which reports a stack overflow), or to the default
//! action, exactly as if this module did not exist.
//!
//! The table of ranges is a fixed array of atomics, so the handler reads it without a
//! lock or an allocation; the only system calls it makes are `mmap` and, for a fault
//! that is not its own, `sigaction`.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Ranges that can be guarded at once: the journal maps one range per 64 keys' records,
/// so this covers 262,144 keys. A range beyond it is mapped unguarded ([`register`]
/// says so).
const SLOTS: usize = 4096;

#[allow(clippy::declare_interior_mutable_const)]
const FREE: AtomicUsize = AtomicUsize::new(0);
/// Start of each guarded range (0: the slot is free).
static STARTS: [AtomicUsize; SLOTS] = [FREE; SLOTS];
/// End (exclusive) of each guarded range.
static ENDS: [AtomicUsize; SLOTS] = [FREE; SLOTS];
#[allow(clippy::declare_interior_mutable_const)]
const CLEAR: AtomicBool = AtomicBool::new(false);
/// Set by the handler when it answered a fault in the slot's range.
static FAULTED: [AtomicBool; SLOTS] = [CLEAR; SLOTS];
/// The page size, read before the handler is installed.
static PAGE: AtomicUsize = AtomicUsize::new(4096);
/// The action for `SIGBUS` before ours, for the faults that are not ours.
static PREVIOUS: OnceLock<Previous> = OnceLock::new();

struct Previous(libc::sigaction);

// SAFETY: `libc::sigaction` is plain data (a function address, a signal mask, flags);
// it is written once, before the handler can run, and only read afterwards.
unsafe impl Send for Previous {}
// SAFETY: as above: shared read-only after it is set.
unsafe impl Sync for Previous {}

/// A guarded range; dropping it ends the guard. Drop it *before* the mapping is unmapped
/// (declare it before the mapping in a struct), so that the handler never maps a page
/// over an address that was unmapped and given to someone else.
#[derive(Debug)]
pub struct Registered(Option<usize>);

impl Registered {
    /// Whether the range is guarded (false when every slot was taken).
    #[cfg(test)]
    pub fn is_guarded(&self) -> bool {
        self.0.is_some()
    }

    /// Whether a fault in the range was answered since the last call.
    pub fn take_faulted(&self) -> bool {
        self.0
            .is_some_and(|i| FAULTED[i].swap(false, Ordering::AcqRel))
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        if let Some(i) = self.0 {
            STARTS[i].store(0, Ordering::Release);
            FAULTED[i].store(false, Ordering::Release);
            ENDS[i].store(0, Ordering::Release);
        }
    }
}

/// Guards `len` bytes from `start`, a range of a shared file mapping that the caller
/// keeps mapped while the returned value lives.
pub fn register(start: *const u8, len: usize) -> Registered {
    install();
    let (start, end) = (start as usize, start as usize + len);
    for i in 0..SLOTS {
        // The end first: a handler that sees the start sees a range at most as large.
        if ENDS[i]
            .compare_exchange(0, end, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            STARTS[i].store(start, Ordering::Release);
            return Registered(Some(i));
        }
    }
    Registered(None)
}

/// Installs the handler once for the process.
fn install() {
    PREVIOUS.get_or_init(|| {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if page > 0 {
            PAGE.store(page as usize, Ordering::Relaxed);
        }
        // SAFETY: a zeroed `sigaction` is a valid value (no handler, empty mask, no
        // flags), and is overwritten by the kernel with the current action.
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        let mut new: libc::sigaction = unsafe { std::mem::zeroed() };
        new.sa_sigaction = on_sigbus as *const () as usize;
        new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        // SAFETY: `new.sa_mask` is a valid signal set to empty; `sigaction` is given
        // valid pointers to two `sigaction` values that live across the call. The
        // handler only touches atomics and makes async-signal-safe system calls.
        unsafe {
            libc::sigemptyset(&mut new.sa_mask);
            if libc::sigaction(libc::SIGBUS, &new, &mut old) != 0 {
                // Not installed: faults take their usual course.
                old.sa_sigaction = libc::SIG_DFL;
            }
        }
        Previous(old)
    });
}

extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid `siginfo_t` to an SA_SIGINFO handler; for SIGBUS
    // `si_addr` is the faulting address.
    let addr = unsafe { (*info).si_addr() } as usize;
    for i in 0..SLOTS {
        let start = STARTS[i].load(Ordering::Acquire);
        if start != 0 && addr >= start && addr < ENDS[i].load(Ordering::Acquire) {
            let page = PAGE.load(Ordering::Relaxed);
            let at = addr & !(page - 1);
            // SAFETY: `at` is the page holding a byte of a registered range, which its
            // owner keeps mapped (and registered) as one shared mapping of its own; the
            // page is inside that mapping (a mapping covers whole pages), so MAP_FIXED
            // replaces a page of that mapping and nothing else.
            let mapped = unsafe {
                libc::mmap(
                    at as *mut libc::c_void,
                    page,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if mapped != libc::MAP_FAILED {
                FAULTED[i].store(true, Ordering::Release);
                return;
            }
            break;
        }
    }
    // Not ours (or no page could be had): what would have happened without this module.
    match PREVIOUS.get() {
        Some(Previous(prev))
            if prev.sa_flags & libc::SA_SIGINFO != 0
                && prev.sa_sigaction != libc::SIG_DFL
                && prev.sa_sigaction != libc::SIG_IGN =>
        {
            // SAFETY: an SA_SIGINFO action's `sa_sigaction` is a handler of this type,
            // installed by whoever installed it; it is called as the kernel would.
            let handler: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                unsafe { std::mem::transmute(prev.sa_sigaction) };
            handler(sig, info, ctx);
        }
        Some(Previous(prev)) => {
            // The earlier action back, then a return: the access faults again and gets
            // the earlier action (the default: the process ends with SIGBUS).
            // SAFETY: `prev` is a valid action the kernel gave us.
            unsafe { libc::sigaction(libc::SIGBUS, prev, std::ptr::null_mut()) };
        }
        None => {
            let mut dfl: libc::sigaction = {
                // SAFETY: a zeroed `sigaction` is SIG_DFL with an empty mask.
                unsafe { std::mem::zeroed() }
            };
            dfl.sa_sigaction = libc::SIG_DFL;
            // SAFETY: a valid action for SIGBUS.
            unsafe { libc::sigaction(libc::SIGBUS, &dfl, std::ptr::null_mut()) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    /// A shared map of a file cut to nothing: reads and writes of the guarded range go on
    /// (on zeroed pages), the fault is reported once, and the range is free again after
    /// the guard is dropped.
    #[test]
    fn a_cut_file_under_a_guarded_map_faults_into_a_zeroed_page() {
        let dir = crate::files::TestDir::new("mapguard");
        let path = dir.join("mapped");
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .unwrap();
        file.set_len(3 * 4096).unwrap();
        file.write_all_at(b"kept", 0).unwrap();
        let map = memmap2::MmapOptions::new()
            .len(3 * 4096)
            .map_raw(&file)
            .unwrap();
        let guard = register(map.as_ptr(), map.len());
        assert!(guard.is_guarded());
        let words = map.as_mut_ptr().cast::<AtomicUsize>();
        // SAFETY: `map` is 3 pages of read-write shared memory, page-aligned, which only
        // this test reaches, as atomics; it outlives these uses.
        let word = |i: usize| unsafe { &*words.add(i) };
        word(1000).store(7, Ordering::SeqCst);
        assert!(!guard.take_faulted());
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(0)
            .unwrap();
        // The second page: past the file's end now.
        assert_eq!(word(1000).load(Ordering::SeqCst), 0);
        word(1000).fetch_add(5, Ordering::SeqCst);
        assert_eq!(word(1000).load(Ordering::SeqCst), 5);
        assert!(guard.take_faulted());
        assert!(!guard.take_faulted());
        let slot = guard.0.unwrap();
        drop(guard);
        assert_eq!(STARTS[slot].load(Ordering::SeqCst), 0);
    }
}
