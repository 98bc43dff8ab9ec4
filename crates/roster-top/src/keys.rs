//! The keys as the terminal sends them in raw mode, read from the bytes
//! the view's epoll said are there (no reader thread, no polling): a
//! printable character, Enter, Esc, Backspace, the arrows and page keys.

/// One key press.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    Char(char),
    Enter,
    Escape,
    Backspace,
    Up,
    Down,
    PageUp,
    PageDown,
    Home,
    End,
    /// Ctrl-C (raw mode sends it as a byte, not SIGINT).
    Interrupt,
    Tab,
}

/// The keys in `bytes`, one read's worth. A lone ESC is Escape; an escape
/// sequence not known here is dropped whole.
pub fn keys_in(bytes: &[u8]) -> Vec<Key> {
    let mut keys = Vec::new();
    let text = String::from_utf8_lossy(bytes);
    let mut characters = text.chars().peekable();
    while let Some(character) = characters.next() {
        let key = match character {
            '\r' | '\n' => Key::Enter,
            '\u{7f}' | '\u{8}' => Key::Backspace,
            '\u{3}' => Key::Interrupt,
            '\t' => Key::Tab,
            '\u{1b}' => match characters.peek() {
                None => Key::Escape,
                Some('[' | 'O') => {
                    characters.next();
                    let mut sequence = String::new();
                    for next in characters.by_ref() {
                        sequence.push(next);
                        if next.is_ascii_alphabetic() || next == '~' {
                            break;
                        }
                    }
                    match sequence.as_str() {
                        "A" => Key::Up,
                        "B" => Key::Down,
                        "5~" => Key::PageUp,
                        "6~" => Key::PageDown,
                        "H" | "1~" => Key::Home,
                        "F" | "4~" => Key::End,
                        _ => continue,
                    }
                }
                // Alt+key: the key alone.
                Some(_) => continue,
            },
            character if character.is_control() => continue,
            character => Key::Char(character),
        };
        keys.push(key);
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_alone_arrows_and_text() {
        assert_eq!(keys_in(b"\x1b"), vec![Key::Escape]);
        assert_eq!(keys_in(b"\x1b[A\x1b[Bq"), vec![Key::Up, Key::Down, Key::Char('q')]);
        assert_eq!(keys_in(b"a\r\x7f"), vec![Key::Char('a'), Key::Enter, Key::Backspace]);
        assert_eq!(keys_in(b"\x1b[200~x"), vec![Key::Char('x')]);
    }
}
