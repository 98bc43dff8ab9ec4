//! A program that takes the terminal exactly as `roster-top` does
//! (`roster_top::terminal::take`, with its panic hook) and then panics,
//! for the test that proves a panic gives the terminal back: it says
//! `taken`, waits for one key (one byte: the terminal is raw), and panics.

fn main() {
    roster_top::terminal::take().expect("take the terminal");
    print!("taken");
    std::io::Write::flush(&mut std::io::stdout()).expect("flush");
    let mut key = [0_u8; 1];
    let _ = std::io::Read::read(&mut std::io::stdin(), &mut key);
    panic!("a panic in the view");
}
