//! Reading the hook payload from real file descriptors: pipes whose writer
//! closes, pipes whose writer never does, oversized input, regular files,
//! `/dev/null` and a terminal. The deadline cases prove the read never
//! hangs a harness.

use std::fs::File;
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::thread;
use std::time::{Duration, Instant};

use harness::{MAX_PAYLOAD_BYTES, PAYLOAD_READ_DEADLINE, PayloadError, parse_payload, read_payload};

/// Short, so the deadline cases finish quickly; long enough that a loaded
/// machine still writes a whole small payload within it.
const TEST_DEADLINE: Duration = Duration::from_millis(200);

/// Generous bound on how late a deadline may fire on a busy machine; the
/// point is that it fires at all instead of waiting for the writer.
const DEADLINE_SLACK: Duration = Duration::from_millis(1800);

fn pipe() -> (File, OwnedFd) {
    let (read_end, write_end) = nix::unistd::pipe().expect("a pipe");
    (File::from(write_end), read_end)
}

/// Writes `bytes` from another thread, then closes the pipe; returns how
/// many bytes the writer got in before the reader went away.
fn write_and_close(mut writer: File, bytes: Vec<u8>) -> thread::JoinHandle<usize> {
    thread::spawn(move || {
        let mut written = 0;
        for chunk in bytes.chunks(4096) {
            // The reader may stop early (over the limit) and close its end.
            if writer.write_all(chunk).is_err() {
                break;
            }
            written += chunk.len();
        }
        written
    })
}

#[test]
fn the_documented_limits() {
    assert_eq!(MAX_PAYLOAD_BYTES, 1024 * 1024);
    assert_eq!(PAYLOAD_READ_DEADLINE, Duration::from_secs(2));
}

#[test]
fn a_writer_that_sends_and_closes() {
    let payload = br#"{"session_id":"abc","cwd":"/home/dev/src/app"}"#.to_vec();
    let (writer, reader) = pipe();
    let handle = write_and_close(writer, payload.clone());
    let read = read_payload(reader.as_fd(), MAX_PAYLOAD_BYTES, PAYLOAD_READ_DEADLINE).expect("the payload");
    assert_eq!(read, payload);
    assert_eq!(handle.join().unwrap(), payload.len());
    assert_eq!(parse_payload(&read).unwrap().session_id.as_deref(), Some("abc"));
}

#[test]
fn a_payload_larger_than_the_pipe_buffer_arrives_whole() {
    // Exactly the limit, several times a pipe's 64 KiB buffer: many reads.
    let payload: Vec<u8> = (0..MAX_PAYLOAD_BYTES).map(|index| (index % 251) as u8).collect();
    let (writer, reader) = pipe();
    let handle = write_and_close(writer, payload.clone());
    let read = read_payload(reader.as_fd(), MAX_PAYLOAD_BYTES, Duration::from_secs(20)).expect("the payload");
    assert_eq!(read.len(), payload.len());
    assert!(read == payload);
    handle.join().unwrap();
}

#[test]
fn a_writer_that_never_closes_meets_the_deadline() {
    for partial in [&b""[..], &br#"{"session_id":"abc""#[..]] {
        let (mut writer, reader) = pipe();
        writer.write_all(partial).unwrap();
        let started = Instant::now();
        let result = read_payload(reader.as_fd(), MAX_PAYLOAD_BYTES, TEST_DEADLINE);
        let elapsed = started.elapsed();
        assert_eq!(result, Err(PayloadError::Deadline { deadline: TEST_DEADLINE }), "after {partial:?}");
        assert!(elapsed >= TEST_DEADLINE, "gave up early, after {elapsed:?}");
        assert!(elapsed < TEST_DEADLINE + DEADLINE_SLACK, "overran the deadline: {elapsed:?}");
        // The writer is still open here: it was never waited for.
        drop(writer);
    }
}

#[test]
fn a_writer_that_trickles_forever_meets_the_deadline() {
    // Keeps sending a byte at a time and never closes: every poll wakes,
    // yet the total deadline still holds.
    let (mut writer, reader) = pipe();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer_stop = stop.clone();
    let handle = thread::spawn(move || {
        while !writer_stop.load(std::sync::atomic::Ordering::Relaxed) {
            if writer.write_all(b" ").is_err() {
                break;
            }
            thread::yield_now();
        }
    });
    let started = Instant::now();
    let result = read_payload(reader.as_fd(), MAX_PAYLOAD_BYTES, TEST_DEADLINE);
    let elapsed = started.elapsed();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    drop(reader);
    handle.join().unwrap();
    // A fast writer may fill the limit before the deadline; either way the
    // read ends in bounded time with an error.
    assert!(
        matches!(result, Err(PayloadError::Deadline { .. }) | Err(PayloadError::TooLarge { .. })),
        "{result:?}"
    );
    assert!(elapsed < TEST_DEADLINE + DEADLINE_SLACK, "overran the deadline: {elapsed:?}");
}

#[test]
fn over_the_limit_is_refused_after_reading_one_byte_more() {
    let limit = 1000;
    let (writer, reader) = pipe();
    let handle = write_and_close(writer, vec![b'x'; 5000]);
    let result = read_payload(reader.as_fd(), limit, PAYLOAD_READ_DEADLINE);
    assert_eq!(result, Err(PayloadError::TooLarge { max_bytes: limit }));
    assert_eq!(result.unwrap_err().to_string(), "hook payload is over 1000 bytes");
    drop(reader);
    handle.join().unwrap();

    // One byte over, exactly at, and under the limit.
    for (size, expect_ok) in [(limit + 1, false), (limit, true), (limit - 1, true)] {
        let (writer, reader) = pipe();
        let handle = write_and_close(writer, vec![b'x'; size]);
        let result = read_payload(reader.as_fd(), limit, PAYLOAD_READ_DEADLINE);
        assert_eq!(result.is_ok(), expect_ok, "size {size}: {result:?}");
        drop(reader);
        handle.join().unwrap();
    }
}

#[test]
fn an_endless_writer_is_cut_off_at_the_limit() {
    // The writer would send 64 MiB; the reader stops after 1 MiB + 1 and
    // closes, so the writer sees a broken pipe long before its end.
    let (writer, reader) = pipe();
    let handle = write_and_close(writer, vec![b'{'; 64 << 20]);
    let result = read_payload(reader.as_fd(), MAX_PAYLOAD_BYTES, Duration::from_secs(20));
    assert_eq!(result, Err(PayloadError::TooLarge { max_bytes: MAX_PAYLOAD_BYTES }));
    assert_eq!(result.unwrap_err().to_string(), "hook payload is over 1 MiB");
    drop(reader);
    let written = handle.join().unwrap();
    assert!(written < 64 << 20, "the writer was never cut off");
}

#[test]
fn a_regular_file() {
    let path = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(path.path(), br#"{"sessionId":"copilot-1","cwd":"/x"}"#).unwrap();
    let handle = File::open(path.path()).unwrap();
    let read = read_payload(handle.as_fd(), MAX_PAYLOAD_BYTES, PAYLOAD_READ_DEADLINE).unwrap();
    assert_eq!(parse_payload(&read).unwrap().session_id.as_deref(), Some("copilot-1"));

    std::fs::write(path.path(), vec![b' '; 2000]).unwrap();
    let handle = File::open(path.path()).unwrap();
    let result = read_payload(handle.as_fd(), 1000, PAYLOAD_READ_DEADLINE);
    assert_eq!(result, Err(PayloadError::TooLarge { max_bytes: 1000 }));
}

#[test]
fn dev_null_is_an_empty_payload() {
    let null = File::open("/dev/null").unwrap();
    let read = read_payload(null.as_fd(), MAX_PAYLOAD_BYTES, PAYLOAD_READ_DEADLINE).unwrap();
    assert!(read.is_empty());
    assert_eq!(parse_payload(&read), Err(PayloadError::Empty));
}

#[test]
fn a_terminal_is_refused_at_once() {
    use nix::fcntl::OFlag;
    let terminal = nix::pty::posix_openpt(OFlag::O_RDWR | OFlag::O_NOCTTY).expect("a pseudo-terminal");
    let started = Instant::now();
    let result = read_payload(terminal.as_fd(), MAX_PAYLOAD_BYTES, PAYLOAD_READ_DEADLINE);
    assert_eq!(result, Err(PayloadError::Terminal));
    assert!(started.elapsed() < PAYLOAD_READ_DEADLINE, "waited on the terminal");
    assert!(PayloadError::Terminal.to_string().starts_with("stdin is a terminal, expected the hook payload"));
}
