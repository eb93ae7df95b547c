//! Running work on behalf of agents and model servers so that it cannot
//! end the process: a panic becomes an error value (and is not printed
//! over the console, nor does it make the console give the terminal back),
//! and work whose depth follows its input runs on a thread with a large
//! stack, after its input was bounded.

use std::any::Any;
use std::cell::Cell;
use std::panic::AssertUnwindSafe;

thread_local! {
    static CONTAINED: Cell<bool> = const { Cell::new(false) };
}

/// True while the current thread runs inside [`contain`]. Panic hooks use
/// it to stay quiet: the panic is about to become an error value.
pub fn is_contained() -> bool {
    CONTAINED.with(Cell::get)
}

/// The message a panic carried.
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "an unknown panic".to_string())
}

/// Runs `f`, turning a panic into `Err(message)`.
pub fn contain<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    let was = CONTAINED.with(|c| c.replace(true));
    let result = std::panic::catch_unwind(AssertUnwindSafe(f));
    CONTAINED.with(|c| c.set(was));
    result.map_err(|payload| panic_message(payload.as_ref()))
}

/// A stack large enough for recursion over bounded input (calculations,
/// HTML documents): 256 MiB of address space, touched only as deep as the
/// work goes.
pub const BIG_STACK: usize = 256 * 1024 * 1024;

/// Runs `f` on a `stack`-byte stack of the current thread (no thread is
/// started), contained. The stack is mapped once per thread and kept for
/// its next call, its pages past the first [`KEPT_STACK`] given back after
/// each call; a call made from inside one (or of another size) maps a
/// stack of its own for the call.
pub fn on_big_stack<T: Send>(stack: usize, f: impl FnOnce() -> T + Send) -> Result<T, String> {
    big_stack::run(stack, || contain(f))
}

/// Bytes at the top of a kept big stack that stay resident between calls
/// (what a calculation usually touches); the rest is given back.
pub const KEPT_STACK: usize = 1024 * 1024;

/// Big stacks this thread has mapped (one per thread in steady use; for
/// tests and diagnostics).
pub fn big_stacks_mapped_here() -> usize {
    big_stack::MAPPED.with(Cell::get)
}

#[cfg(target_os = "linux")]
mod big_stack {
    use std::cell::{Cell, RefCell};

    thread_local! {
        /// The thread's kept stack, when no call is running on it.
        static SPARE: RefCell<Option<Mapping>> = const { RefCell::new(None) };
        pub(super) static MAPPED: Cell<usize> = const { Cell::new(0) };
    }

    /// A stack mapping with a guard page below it (stacks grow down).
    struct Mapping {
        base: *mut u8,
        len: usize,
        page: usize,
        /// The stack size it was mapped for.
        asked: usize,
    }

    impl Mapping {
        fn new(stack: usize) -> Mapping {
            // SAFETY: sysconf has no preconditions.
            let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) })
                .unwrap_or(4096)
                .max(4096);
            let len = stack.div_ceil(page).max(1) * page + page;
            // SAFETY: an anonymous private mapping of `len` bytes; the
            // result is checked before use.
            let base = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_STACK,
                    -1,
                    0,
                )
            };
            assert_ne!(
                base,
                libc::MAP_FAILED,
                "cannot map a stack of {len} bytes: {}",
                std::io::Error::last_os_error()
            );
            // SAFETY: the first page of the mapping just made; overflowing
            // the stack faults on it instead of writing past the mapping.
            let guarded = unsafe { libc::mprotect(base, page, libc::PROT_NONE) };
            assert_eq!(
                guarded,
                0,
                "cannot guard a stack: {}",
                std::io::Error::last_os_error()
            );
            MAPPED.with(|m| m.set(m.get() + 1));
            Mapping {
                base: base.cast(),
                len,
                page,
                asked: stack,
            }
        }

        /// Usable bytes (above the guard page).
        fn size(&self) -> usize {
            self.len - self.page
        }

        /// Gives back every page but the top `keep` bytes.
        fn trim(&self, keep: usize) {
            let keep = keep.div_ceil(self.page) * self.page;
            let give = self.size().saturating_sub(keep);
            if give > 0 {
                // SAFETY: a range inside the mapping, above its guard page;
                // nothing runs on it now.
                unsafe {
                    libc::madvise(self.base.add(self.page).cast(), give, libc::MADV_DONTNEED)
                };
            }
        }
    }

    impl Drop for Mapping {
        fn drop(&mut self) {
            // SAFETY: the mapping made in `new`, no longer in use.
            unsafe { libc::munmap(self.base.cast(), self.len) };
        }
    }

    /// Runs `f` (which must not unwind) on a big stack.
    pub(super) fn run<T>(stack: usize, f: impl FnOnce() -> T) -> T {
        let mapping = SPARE
            .with(|s| s.borrow_mut().take())
            .filter(|m| m.asked == stack)
            .unwrap_or_else(|| Mapping::new(stack));
        // SAFETY: the area above the guard page is ours alone while `f`
        // runs, and `f` does not unwind (callers contain it).
        let out = unsafe { psm::on_stack(mapping.base.add(mapping.page), mapping.size(), f) };
        mapping.trim(super::KEPT_STACK);
        SPARE.with(|s| *s.borrow_mut() = Some(mapping));
        out
    }
}

#[cfg(not(target_os = "linux"))]
mod big_stack {
    use std::cell::Cell;

    thread_local! {
        pub(super) static MAPPED: Cell<usize> = const { Cell::new(0) };
    }

    /// Runs `f` on a stack mapped for the call.
    pub(super) fn run<T>(stack: usize, f: impl FnOnce() -> T) -> T {
        MAPPED.with(|m| m.set(m.get() + 1));
        let mut f = Some(f);
        let mut out = None;
        stacker::grow(stack, || out = f.take().map(|f| f()));
        out.expect("the callback ran")
    }
}

static BACKGROUND_PANICS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Keeps the message of a panic in a background task, for the console to
/// show (at most the last 16 are kept).
pub fn note_background_panic(message: String) {
    let mut panics = BACKGROUND_PANICS.lock().unwrap_or_else(|e| e.into_inner());
    if panics.len() >= 16 {
        panics.remove(0);
    }
    panics.push(message);
}

/// Takes the background panics noted since the last call.
pub fn take_background_panics() -> Vec<String> {
    std::mem::take(&mut *BACKGROUND_PANICS.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Installs a process-wide panic hook that stays silent for contained
/// panics and otherwise does what the previous hook did.
pub fn install_quiet_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !is_contained() {
            previous(info);
        }
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_error() {
        install_quiet_hook();
        let result: Result<(), String> = contain(|| panic!("boom {}", 1));
        assert_eq!(result, Err("boom 1".to_string()));
        assert!(!is_contained());
        assert_eq!(contain(|| 2 + 2), Ok(4));
    }

    #[test]
    fn deep_recursion_fits_the_big_stack() {
        fn depth(n: u64) -> u64 {
            if n == 0 {
                0
            } else {
                1 + std::hint::black_box(depth(n - 1))
            }
        }
        assert_eq!(on_big_stack(BIG_STACK, || depth(200_000)), Ok(200_000));
    }

    #[test]
    fn a_thread_maps_its_big_stack_once_and_a_nested_call_its_own() {
        std::thread::spawn(|| {
            let before = big_stacks_mapped_here();
            for n in 0..50u64 {
                assert_eq!(on_big_stack(BIG_STACK, || n * 2), Ok(n * 2));
            }
            assert_eq!(big_stacks_mapped_here() - before, 1, "one stack, kept");
            let nested = on_big_stack(BIG_STACK, || on_big_stack(BIG_STACK, || 7));
            assert_eq!(nested, Ok(Ok(7)));
            assert_eq!(big_stacks_mapped_here() - before, 2, "the inner call's own");
            // A panic on the kept stack is contained and the stack kept.
            assert!(on_big_stack(BIG_STACK, || panic!("deep")).is_err());
            assert_eq!(on_big_stack(BIG_STACK, || 1), Ok(1));
            assert_eq!(big_stacks_mapped_here() - before, 2);
        })
        .join()
        .unwrap();
    }
}
