//! The harness's reading of strace logs (`tests::strace`), checked on
//! small logs written out here: which calls count, numbered from where.

use tests::strace::*;

#[test]
fn start_up_calls_and_the_runtime_are_left_out() {
    let log = "\
100 openat(AT_FDCWD, \"/etc/ld.so.cache\", O_RDONLY|O_CLOEXEC) = 3
100 poll([{fd=0, events=0}], 3, 0) = 0 (Timeout)
100 rt_sigaction(SIGBUS, NULL, {sa_handler=SIG_DFL}, 8) = 0
100 rt_sigaction(SIGBUS, {sa_handler=0x1}, NULL, 8) = 0
100 openat(AT_FDCWD, \"/r\", O_RDONLY) = 3
100 mmap(NULL, 4096) = 0x1
100 poll([{fd=0, events=POLLIN}], 1, 600 <unfinished ...>
101 openat(3, \"x\", O_RDONLY) = 4
100 <... poll resumed>) = 1
100 openat(3, \"sessions\", O_RDONLY) = 4
100 +++ exited with 0 +++
";
    let uses = syscalls_in_scope(log);
    let openat = uses.iter().find(|use_| use_.name == "openat").unwrap();
    assert_eq!((openat.first, openat.second, openat.last, openat.calls), (2, Some(3), 3, 2));
    let poll = uses.iter().find(|use_| use_.name == "poll").unwrap();
    assert_eq!((poll.first, poll.second, poll.last), (2, None, 2));
    assert!(uses.iter().all(|use_| use_.name != "mmap" && use_.name != "rt_sigaction"));
}

/// A helper thread that reads more than the main thread: its numbers
/// start after the main thread's start-up reads, which `when=` would
/// otherwise fail too (in the dynamic loader, before main).
#[test]
fn another_thread_is_counted_from_after_the_main_threads_start_up() {
    let log = "\
100 read(3, \"\\177ELF\", 832) = 832
100 read(3, \"\\177ELF\", 832) = 832
100 rt_sigaction(SIGBUS, {sa_handler=0x1}, NULL, 8) = 0
100 read(4, \"{\", 540) = 539
101 read(5, \"{\", 540) = 539
101 read(5, \"{\", 540) = 539
101 read(5, \"{\", 540) = 539
101 read(5, \"{\", 540) = 539
101 read(5, \"{\", 540) = 539
";
    let uses = syscalls_in_scope(log);
    let read = uses.iter().find(|use_| use_.name == "read").unwrap();
    assert_eq!((read.first, read.second, read.last, read.calls), (3, Some(4), 5, 3));
}
