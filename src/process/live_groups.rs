//! The process groups Baton has running, in memory it shares with its watchdog.
//!
//! The watchdog only needs Baton's list of live groups once: when Baton is gone.
//! Telling it of every group over its pipe woke it twice a step, a context switch
//! on a core the steps' own scripts wanted and two system calls on Baton's side;
//! in a fan-out on two cores that was a tenth of Baton's own CPU per step
//! (`docs/benchmarks.md`, issue 22's ninth round). So Baton keeps the list here, in
//! an anonymous shared mapping made before the watchdog's fork: registering a group
//! is one store into a slot, releasing it another, and the watchdog, which reads its
//! pipe only to learn that Baton is gone, reads the table then.
//!
//! A SIGKILL can land between any two instructions, so every slot is one atomic
//! word: the watchdog sees each group either registered or not, never half-written.
//! The high-water mark (word 0) is raised before a new slot is written, so the
//! watchdog's scan always covers every slot that may hold a group.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

/// Slots in the table: the most groups that can be live at once through it (past
/// it, groups go over the pipe as before). The mapping is `MAP_NORESERVE` and only
/// the pages of slots ever used are touched, so a run that never has more than a
/// hundred groups at once uses one page of it.
const SLOTS: usize = 1 << 20;

/// The shared table: word 0 is the number of slots ever handed out, words 1.. the
/// slots (0: free).
pub(crate) struct LiveGroups {
    words: &'static [AtomicU32],
    /// Baton's own bookkeeping of the slots; the watchdog's copy of it is unused.
    slots: Mutex<SlotAllocator>,
}

/// A group's place in the table, returned by [`LiveGroups::insert`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot(u32);

/// Which slots are free, and how many were ever handed out (never shared).
#[derive(Default)]
struct SlotAllocator {
    free: Vec<u32>,
    used: u32,
}

impl LiveGroups {
    /// Map a new table, or `None` where the kernel refuses (the caller then sends
    /// every group over the pipe).
    pub(crate) fn map() -> Option<LiveGroups> {
        let bytes = (SLOTS + 1) * size_of::<AtomicU32>();
        // SAFETY: a new anonymous mapping; nothing else refers to that memory.
        let address = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if address == libc::MAP_FAILED {
            tracing::debug!(error = %std::io::Error::last_os_error(), "no shared table for the watchdog");
            return None;
        }
        // SAFETY: the mapping is `bytes` long, zeroed, aligned to a page, and never
        // unmapped (it lives as long as the process; `Watchdog`s are made once per
        // invocation), so a `'static` slice of atomics over it stays valid.
        let words = unsafe { std::slice::from_raw_parts(address.cast::<AtomicU32>(), SLOTS + 1) };
        Some(LiveGroups { words, slots: Mutex::default() })
    }

    /// Put `group` in a free slot, or `None` when every slot is taken.
    pub(crate) fn insert(&self, group: u32) -> Option<Slot> {
        let mut slots = self.slots.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let slot = match slots.free.pop() {
            Some(slot) => slot,
            None if (slots.used as usize) < SLOTS => {
                slots.used += 1;
                // Raised before the slot is written: a scan after a SIGKILL covers it.
                self.words[0].store(slots.used, Ordering::Release);
                slots.used
            }
            None => return None,
        };
        self.words[slot as usize].store(group, Ordering::Release);
        Some(Slot(slot))
    }

    /// Free `slot`: its group is no longer the watchdog's to kill.
    pub(crate) fn remove(&self, Slot(slot): Slot) {
        self.words[slot as usize].store(0, Ordering::Release);
        self.slots.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).free.push(slot);
    }

    /// Every group registered now (read by the watchdog once Baton is gone).
    pub(crate) fn groups(&self) -> impl Iterator<Item = u32> + '_ {
        let used = (self.words[0].load(Ordering::Acquire) as usize).min(SLOTS);
        self.words[1..=used].iter().map(|word| word.load(Ordering::Acquire)).filter(|group| *group > 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn released_slots_are_reused_and_only_registered_groups_are_listed() {
        let table = LiveGroups::map().expect("mapping");
        let first = table.insert(101).expect("slot");
        let second = table.insert(102).expect("slot");
        table.remove(first);
        assert_eq!(table.groups().collect::<Vec<_>>(), [102]);
        let third = table.insert(103).expect("slot");
        assert_eq!(third, first, "a freed slot is used again");
        assert_eq!(table.groups().collect::<Vec<_>>(), [103, 102]);
        table.remove(second);
        table.remove(third);
        assert_eq!(table.groups().count(), 0);
    }

    #[test]
    fn a_full_table_refuses_and_says_so() {
        let table = LiveGroups::map().expect("mapping");
        table.slots.lock().expect("slots").used = SLOTS as u32;
        assert_eq!(table.insert(7), None);
    }

    /// What a forked watchdog sees: the mapping is shared, not copied on write.
    #[test]
    fn a_forked_child_sees_groups_registered_after_the_fork() {
        let table = LiveGroups::map().expect("mapping");
        let mut go = [0; 2];
        // SAFETY: a pipe for this test's child to wait on.
        assert_eq!(unsafe { libc::pipe(go.as_mut_ptr()) }, 0);
        // SAFETY: the child only reads a pipe, reads the table and exits.
        match unsafe { libc::fork() } {
            0 => unsafe {
                let mut byte = 0u8;
                libc::close(go[1]);
                libc::read(go[0], (&raw mut byte).cast(), 1);
                // No allocation in the child of a multi-threaded test binary.
                let mut seen = table.groups();
                let saw_it = seen.next() == Some(4242) && seen.next().is_none();
                libc::_exit(if saw_it { 0 } else { 1 });
            },
            child => {
                assert!(child > 0, "fork");
                table.insert(4242).expect("slot");
                // SAFETY: closing our ends wakes the child; then reap it.
                let mut status = 0;
                unsafe {
                    libc::close(go[0]);
                    libc::close(go[1]);
                    libc::waitpid(child, &mut status, 0);
                }
                assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "the child saw the group");
            }
        }
    }
}
