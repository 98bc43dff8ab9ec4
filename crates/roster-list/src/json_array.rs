//! A JSON listing written a row at a time, byte for byte as
//! `serde_json::Serializer::pretty` writes the whole array: each row is
//! rendered on the thread that judged it, one level deep
//! (`ArrayElementFormatter`), and the printer only joins them.

use std::cell::RefCell;
use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::Formatter;

/// The indent `serde_json`'s pretty printer uses.
const INDENT: &[u8] = b"  ";

/// `value` as the pretty printer writes it as an element of a top-level
/// array: starting one level deep, without the indent before it.
pub fn render_array_element(value: &impl Serialize) -> serde_json::Result<Vec<u8>> {
    thread_local! {
        static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }
    // Rendered into a buffer each thread reuses, then copied at its exact
    // size: a listing keeps every row until it is sorted, and a buffer
    // reserved ahead for each row held half as much again as the row, in
    // pages the allocator had to fault in.
    SCRATCH.with_borrow_mut(|scratch| {
        scratch.clear();
        let formatter = ArrayElementFormatter { depth: 1, has_value: false };
        value.serialize(&mut serde_json::Serializer::with_formatter(&mut *scratch, formatter))?;
        Ok(scratch.as_slice().to_vec())
    })
}

/// Writes elements rendered by `render_array_element` as the pretty
/// printer writes the array of them, and a newline after it.
pub fn write_array(out: &mut impl Write, elements: impl Iterator<Item = Vec<u8>>) -> io::Result<()> {
    let mut empty = true;
    for element in elements {
        out.write_all(if empty { b"[\n" } else { b",\n" })?;
        out.write_all(INDENT)?;
        out.write_all(&element)?;
        empty = false;
    }
    out.write_all(if empty { b"[]\n" } else { b"\n]\n" })
}

/// `serde_json::ser::PrettyFormatter` (two spaces), starting at a depth
/// of its own: the pretty formatter always starts at the top.
struct ArrayElementFormatter {
    depth: usize,
    has_value: bool,
}

impl ArrayElementFormatter {
    fn write_indent<W: ?Sized + Write>(&self, writer: &mut W) -> io::Result<()> {
        for _ in 0..self.depth {
            writer.write_all(INDENT)?;
        }
        Ok(())
    }

    fn open<W: ?Sized + Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        writer.write_all(bracket)
    }

    fn close<W: ?Sized + Write>(&mut self, writer: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            writer.write_all(b"\n")?;
            self.write_indent(writer)?;
        }
        writer.write_all(bracket)
    }

    fn begin_item<W: ?Sized + Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        writer.write_all(if first { b"\n" } else { b",\n" })?;
        self.write_indent(writer)
    }
}

impl Formatter for ArrayElementFormatter {
    fn begin_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        self.begin_item(writer, first)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.open(writer, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        self.close(writer, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, writer: &mut W, first: bool) -> io::Result<()> {
        self.begin_item(writer, first)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _writer: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Each element rendered alone and joined is what the pretty printer
    /// makes of the whole array.
    fn check(elements: Vec<serde_json::Value>) {
        let mut joined = Vec::new();
        let rendered = elements.iter().map(|element| render_array_element(element).unwrap());
        write_array(&mut joined, rendered).unwrap();
        let mut expected = serde_json::to_vec_pretty(&elements).unwrap();
        expected.push(b'\n');
        assert_eq!(String::from_utf8(joined).unwrap(), String::from_utf8(expected).unwrap());
    }

    #[test]
    fn joined_elements_are_the_pretty_array() {
        check(vec![]);
        check(vec![json!({})]);
        check(vec![json!([])]);
        check(vec![json!(1), json!("two"), json!(null)]);
        check(vec![
            json!({"a": 1, "b": {"c": [1, 2, {"d": []}], "e": {}}, "f": "line\nbreak"}),
            json!({"chain": [{"pid": 1, "start_ticks": 2}, {"pid": 3}], "socket": null}),
            json!([[], [[]], {"x": [{}]}]),
        ]);
    }
}
