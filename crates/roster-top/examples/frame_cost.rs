//! What one frame of `roster-top` costs with many sessions, built as the
//! tools are (release) for `cargo xtask bench`: `frame_cost SESSIONS WIDTH
//! HEIGHT ROUNDS` prints each redraw's time in nanoseconds, one a line
//! (`roster_top::redraw_times`: ordering, fitting the columns, rendering
//! and diffing the frame; not the terminal's I/O).

fn main() {
    let numbers: Vec<usize> = std::env::args()
        .skip(1)
        .map(|argument| argument.parse().expect("SESSIONS WIDTH HEIGHT ROUNDS, whole numbers"))
        .collect();
    let [sessions, width, height, rounds] = numbers[..] else {
        panic!("usage: frame_cost SESSIONS WIDTH HEIGHT ROUNDS");
    };
    let size = |value: usize| u16::try_from(value).expect("a screen size fits in 16 bits");
    for time in roster_top::redraw_times(sessions, size(width), size(height), rounds) {
        println!("{}", time.as_nanos());
    }
}
