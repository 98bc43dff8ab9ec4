//! Keeping backends apart: each backend gets a worker thread of its own
//! with a bounded queue. The dispatcher never waits for a worker (a full
//! queue drops the job, said in the log); a worker gives each attempt at
//! most the timeout (an attempt that does not return in time is left to
//! finish on its own thread and counted failed), and retries a failed one
//! with a doubling backoff a few times before it drops it, logging each
//! failure. So a backend that fails or hangs delays only itself.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::backends::{Backend, BackendError};
use crate::notice::Notice;

/// What a worker is asked to do.
#[derive(Clone, Debug)]
pub enum Job {
    Show(Notice),
    Replace(Notice),
    Withdraw(Notice),
}

impl Job {
    fn verb(&self) -> &'static str {
        match self {
            Job::Show(_) => "show",
            Job::Replace(_) => "replace",
            Job::Withdraw(_) => "withdraw",
        }
    }

    fn notice(&self) -> &Notice {
        match self {
            Job::Show(notice) | Job::Replace(notice) | Job::Withdraw(notice) => notice,
        }
    }
}

/// How a worker treats its backend.
#[derive(Clone, Copy, Debug)]
pub struct WorkerSettings {
    /// The longest one attempt may take.
    pub timeout: Duration,
    /// How many attempts a job gets.
    pub attempts: u32,
    /// The wait before the second attempt; doubled for each one after.
    pub first_backoff: Duration,
    /// How many jobs may wait for the worker.
    pub queue: usize,
}

impl Default for WorkerSettings {
    fn default() -> WorkerSettings {
        WorkerSettings {
            timeout: Duration::from_secs(10),
            attempts: 4,
            first_backoff: Duration::from_millis(500),
            queue: 64,
        }
    }
}

/// Where a worker's log lines go (stderr in the binary, captured in tests).
pub type Log = Arc<dyn Fn(&str) + Send + Sync>;

/// One backend's worker.
pub struct Worker {
    name: &'static str,
    leaves_the_machine: bool,
    sender: Option<SyncSender<Job>>,
    thread: Option<JoinHandle<()>>,
    log: Log,
}

impl Worker {
    /// Starts the worker thread of `backend`.
    pub fn start(backend: Arc<dyn Backend>, settings: WorkerSettings, log: Log) -> Worker {
        let (sender, receiver) = sync_channel(settings.queue);
        let name = backend.name();
        let leaves_the_machine = backend.leaves_the_machine();
        let thread_log = log.clone();
        let thread = std::thread::Builder::new()
            .name(format!("notify-{name}"))
            .spawn(move || work(backend, receiver, settings, thread_log))
            .expect("a worker thread starts");
        Worker { name, leaves_the_machine, sender: Some(sender), thread: Some(thread), log }
    }

    pub fn name(&self) -> &'static str {
        self.name
    }

    pub fn leaves_the_machine(&self) -> bool {
        self.leaves_the_machine
    }

    /// Hands `job` over without waiting: a full queue drops it.
    pub fn hand_over(&self, job: Job) {
        let Some(sender) = &self.sender else { return };
        match sender.try_send(job) {
            Ok(()) => {}
            Err(TrySendError::Full(job)) => (self.log)(&format!(
                "{}: {} of the notice for {} dropped: its queue is full (the backend is slow or hangs)",
                self.name,
                job.verb(),
                job.notice().key,
            )),
            Err(TrySendError::Disconnected(_)) => {}
        }
    }

    /// Lets the queued jobs run for at most `within`, then stops waiting
    /// for the worker.
    pub fn finish(mut self, within: Duration) {
        self.sender.take();
        if let Some(thread) = self.thread.take() {
            let deadline = std::time::Instant::now() + within;
            while !thread.is_finished() && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            if thread.is_finished() {
                let _ = thread.join();
            }
        }
    }
}

fn work(backend: Arc<dyn Backend>, jobs: Receiver<Job>, settings: WorkerSettings, log: Log) {
    while let Ok(job) = jobs.recv() {
        let mut backoff = settings.first_backoff;
        for attempt in 1..=settings.attempts {
            match attempt_within(&backend, &job, settings.timeout) {
                Ok(()) => break,
                Err(why) => {
                    let last = attempt == settings.attempts;
                    log(&format!(
                        "{}: {} of the notice for {} failed (attempt {attempt} of {}): {why}{}",
                        backend.name(),
                        job.verb(),
                        job.notice().key,
                        settings.attempts,
                        if last {
                            "; given up".to_owned()
                        } else {
                            format!("; trying again in {} ms", backoff.as_millis())
                        }
                    ));
                    if last {
                        break;
                    }
                    std::thread::sleep(backoff);
                    backoff *= 2;
                }
            }
        }
    }
}

/// One attempt, given up after `timeout`: it runs on a thread of its own
/// so that a call that never returns (a hung server) is left behind.
fn attempt_within(backend: &Arc<dyn Backend>, job: &Job, timeout: Duration) -> Result<(), BackendError> {
    let (done, outcome) = sync_channel(1);
    let attempt_backend = backend.clone();
    let attempt_job = job.clone();
    std::thread::Builder::new()
        .name(format!("notify-{}-call", backend.name()))
        .spawn(move || {
            let result = match &attempt_job {
                Job::Show(notice) => attempt_backend.show(notice),
                Job::Replace(notice) => attempt_backend.replace(notice),
                Job::Withdraw(notice) => attempt_backend.withdraw(notice),
            };
            let _ = done.send(result);
        })
        .map_err(|error| BackendError::new(format!("no thread for the call: {error}")))?;
    match outcome.recv_timeout(timeout) {
        Ok(result) => result,
        Err(RecvTimeoutError::Timeout) => {
            Err(BackendError::new(format!("no answer within {} ms", timeout.as_millis())))
        }
        Err(RecvTimeoutError::Disconnected) => Err(BackendError::new("the call panicked")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::time::Instant;

    use crate::notice::{SessionView, make_notice};
    use crate::triggers::{SessionKey, Trigger};

    /// A backend that answers as told: fails `failures` times, or hangs.
    struct Scripted {
        name: &'static str,
        hang: bool,
        failures: Mutex<u32>,
        shown: Mutex<Vec<(String, Instant)>>,
    }

    impl Backend for Scripted {
        fn name(&self) -> &'static str {
            self.name
        }
        fn leaves_the_machine(&self) -> bool {
            false
        }
        fn show(&self, notice: &Notice) -> Result<(), BackendError> {
            if self.hang {
                std::thread::sleep(Duration::from_secs(3600));
            }
            let mut failures = self.failures.lock().unwrap();
            if *failures > 0 {
                *failures -= 1;
                return Err(BackendError::new("refused"));
            }
            self.shown.lock().unwrap().push((notice.key.clone(), Instant::now()));
            Ok(())
        }
        fn withdraw(&self, _: &Notice) -> Result<(), BackendError> {
            Ok(())
        }
    }

    fn scripted(name: &'static str, hang: bool, failures: u32) -> Arc<Scripted> {
        Arc::new(Scripted { name, hang, failures: Mutex::new(failures), shown: Mutex::new(Vec::new()) })
    }

    fn notice(record: &str) -> Notice {
        let key = SessionKey { host: None, record: record.into() };
        make_notice(&SessionView::default(), &key, Trigger::Waiting, 0, 0, false)
    }

    fn collecting_log() -> (Log, Arc<Mutex<Vec<String>>>) {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        (Arc::new(move |line: &str| sink.lock().unwrap().push(line.to_owned())), lines)
    }

    fn wait_for(what: impl Fn() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !what() {
            assert!(Instant::now() < deadline, "not within 10 s");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn a_hanging_backend_delays_neither_the_others_nor_its_own_next_notice_past_the_timeout() {
        let settings =
            WorkerSettings { timeout: Duration::from_millis(200), attempts: 1, ..WorkerSettings::default() };
        let (log, lines) = collecting_log();
        let hanging = scripted("hanging", true, 0);
        let healthy = scripted("healthy", false, 0);
        let hanging_worker = Worker::start(hanging.clone(), settings, log.clone());
        let healthy_worker = Worker::start(healthy.clone(), settings, log);
        let handed = Instant::now();
        hanging_worker.hand_over(Job::Show(notice("a")));
        healthy_worker.hand_over(Job::Show(notice("a")));
        wait_for(|| !healthy.shown.lock().unwrap().is_empty());
        assert!(healthy.shown.lock().unwrap()[0].1 - handed < Duration::from_millis(200));
        wait_for(|| lines.lock().unwrap().iter().any(|line| line.contains("no answer within 200 ms")));
        assert!(handed.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn a_failing_backend_is_tried_again_with_a_backoff_and_logged() {
        let settings = WorkerSettings {
            first_backoff: Duration::from_millis(20),
            attempts: 4,
            ..WorkerSettings::default()
        };
        let (log, lines) = collecting_log();
        let flaky = scripted("flaky", false, 2);
        let worker = Worker::start(flaky.clone(), settings, log);
        worker.hand_over(Job::Show(notice("a")));
        wait_for(|| !flaky.shown.lock().unwrap().is_empty());
        let lines = lines.lock().unwrap().clone();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[0].contains("attempt 1 of 4") && lines[0].contains("trying again in 20 ms"),
            "{lines:?}"
        );
        assert!(
            lines[1].contains("attempt 2 of 4") && lines[1].contains("trying again in 40 ms"),
            "{lines:?}"
        );
    }

    #[test]
    fn a_full_queue_drops_the_job_without_waiting() {
        let settings =
            WorkerSettings { queue: 1, timeout: Duration::from_secs(60), ..WorkerSettings::default() };
        let (log, lines) = collecting_log();
        let worker = Worker::start(scripted("hanging", true, 0), settings, log);
        let handed = Instant::now();
        for record in ["a", "b", "c", "d"] {
            worker.hand_over(Job::Show(notice(record)));
        }
        assert!(handed.elapsed() < Duration::from_millis(100));
        wait_for(|| lines.lock().unwrap().iter().any(|line| line.contains("its queue is full")));
    }
}
