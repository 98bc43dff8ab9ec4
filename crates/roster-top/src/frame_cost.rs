//! What one frame of the view costs with many sessions, for `cargo xtask
//! bench`: a board of N sessions (of every state, their ages varied, from
//! the same events the watch hands the view) drawn into an off-screen
//! terminal of a given size, the time of the draw alone (ordering, fitting
//! the columns, rendering and diffing the frame; not the terminal's I/O).

use std::time::{Duration, Instant};

use registry_core::Timestamp;
use session_events::Event;

use crate::actions::Passed;
use crate::view::View;

/// The time of each of `rounds` full redraws of `sessions` sessions on a
/// `width`×`height` screen (the first draw, which fills an empty screen,
/// not counted).
pub fn redraw_times(sessions: usize, width: u16, height: u16, rounds: usize) -> Vec<Duration> {
    let mut view = View::new(true, false, Passed::default());
    let now = Timestamp::now().unix_nanos();
    for index in 0..sessions {
        let (state, waiting_for) = match index % 4 {
            0 => ("waiting", "\"permission\""),
            1 => ("working", "null"),
            2 => ("idle", "null"),
            _ => ("unknown", "null"),
        };
        let since = Timestamp::from_unix_nanos(now - (index as i128 + 1) * 7_000_000_000).to_rfc3339_millis();
        let line = format!(
            r#"{{"schema":1,"event":"listed","at":"{since}","row":{{"path":"/r/sessions/{index}.json","session_pid":{pid},"harness":"claude-code","agent":"agent-{index}","cwd":"/home/dev/src/project-{project}","state":"{state}","waiting_for":{waiting_for},"state_since":"{since}","liveness":"alive","problem":null,"consent":"none","should_arm":false,"messages_pending":{pending},"location":{{"shown":"tmux work:{index}.0","status":"current"}}}},"host":"bench"}}"#,
            pid = 10_000 + index,
            project = index % 37,
            pending = index % 3,
        );
        let event = Event::from_line(&line).expect("a made-up event reads back");
        view.board.apply(&event, None);
    }
    let backend = ratatui::backend::TestBackend::new(width, height);
    let mut screen = ratatui::Terminal::new(backend).expect("an off-screen terminal");
    let _ = screen.draw(|frame| view.draw(frame));
    (0..rounds)
        .map(|_| {
            let started = Instant::now();
            let _ = screen.draw(|frame| view.draw(frame));
            started.elapsed()
        })
        .collect()
}
