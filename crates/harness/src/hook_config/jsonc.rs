//! A format-preserving editor for JSON and JSONC (JSON with `//` and `/* */`
//! comments and trailing commas, as Gemini CLI reads its `settings.json`).
//!
//! roster-hooks must leave every byte of a user's configuration it does not own
//! as it was: comments, key order, the spelling of numbers (`1.0`, `1e3`,
//! `12345678901234567890`), string escapes, blank lines, tabs, CRLF line ends
//! and a missing final newline. Parsing into `serde_json::Value` and printing
//! again loses all of that, and no well-kept crate edits JSONC in place, so
//! this file parses the text into a tree of byte spans and edits by splicing:
//! a member or element is inserted as new text in the file's own indentation
//! and line ends, or cut out with the separator and the line it stood on. Every
//! other byte is copied through. The edits are the inverse of each other, so
//! an insertion followed by the removal of what it inserted gives back the
//! original bytes.

use std::ops::Range;

use serde_json::Value;

/// A parsed JSON or JSONC text.
#[derive(Clone, Debug)]
pub(crate) struct JsoncDocument<'a> {
    text: &'a str,
    /// `None` for a text of only blanks and comments.
    root: Option<Node>,
}

/// One value of the text and where it stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Node {
    pub span: Range<usize>,
    pub kind: NodeKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum NodeKind {
    Object(Container),
    Array(Container),
    /// A string, number, `true`, `false` or `null`, kept as its own text.
    Scalar,
}

/// The entries of an object or an array between its brackets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Container {
    /// Byte offset of `{` or `[`.
    pub open: usize,
    /// Byte offset of `}` or `]`.
    pub close: usize,
    pub entries: Vec<Entry>,
}

/// A member of an object (`"key": value`) or an element of an array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The decoded key of an object member; `None` in an array.
    pub key: Option<String>,
    /// Where the entry starts: its key, or its value in an array.
    pub start: usize,
    pub value: Node,
    /// Byte offset of the comma after the entry, when there is one.
    pub comma: Option<usize>,
}

/// One replacement of a byte range by new text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Splice {
    pub range: Range<usize>,
    pub text: String,
}

/// The line end and indentation the file already uses, for new text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    pub newline: &'static str,
    pub indent_unit: String,
}

/// Deeper nesting than this is refused, so a hostile file cannot exhaust the
/// stack; real settings files nest a handful of levels.
const DEEPEST_NESTING: usize = 128;

impl<'a> JsoncDocument<'a> {
    /// Parses `text`; the reason, with its line, when it is not JSON or JSONC.
    pub(crate) fn parse(text: &'a str) -> Result<Self, String> {
        let mut parser = Parser { text, bytes: text.as_bytes(), position: 0 };
        parser.skip_trivia()?;
        if parser.position == text.len() {
            return Ok(JsoncDocument { text, root: None });
        }
        let root = parser.value(0)?;
        parser.skip_trivia()?;
        if parser.position != text.len() {
            return Err(parser.error("unexpected text after the end of the document"));
        }
        Ok(JsoncDocument { text, root: Some(root) })
    }

    pub(crate) fn root(&self) -> Option<&Node> {
        self.root.as_ref()
    }

    /// The meaning of `node`, for comparing and recognising entries. Numbers
    /// too large for serde_json become `null` here; the text keeps them.
    pub(crate) fn value_of(&self, node: &Node) -> Value {
        match &node.kind {
            NodeKind::Scalar => {
                let text = &self.text[node.span.clone()];
                serde_json::from_str(text).unwrap_or(Value::Null)
            }
            NodeKind::Array(container) => {
                Value::Array(container.entries.iter().map(|entry| self.value_of(&entry.value)).collect())
            }
            NodeKind::Object(container) => Value::Object(
                container
                    .entries
                    .iter()
                    .map(|entry| (entry.key.clone().unwrap_or_default(), self.value_of(&entry.value)))
                    .collect(),
            ),
        }
    }

    /// The line end and indentation unit of this text: CRLF when any line
    /// ends so, and the step between the first container that puts an entry
    /// on a line of its own and that entry (two spaces when none does).
    pub(crate) fn layout(&self) -> Layout {
        let newline = if self.text.contains("\r\n") { "\r\n" } else { "\n" };
        let indent_unit =
            self.root.as_ref().and_then(|root| self.indent_step(root)).unwrap_or_else(|| "  ".to_owned());
        Layout { newline, indent_unit }
    }

    fn indent_step(&self, node: &Node) -> Option<String> {
        let container = node.container()?;
        if let Some(first) = container.entries.first()
            && self.starts_own_line(first.start)
        {
            let outer = self.line_indent(container.open);
            let inner = self.line_indent(first.start);
            if let Some(step) = inner.strip_prefix(outer)
                && !step.is_empty()
            {
                return Some(step.to_owned());
            }
        }
        container.entries.iter().find_map(|entry| self.indent_step(&entry.value))
    }

    /// The blanks at the start of the line holding `offset`.
    pub(crate) fn line_indent(&self, offset: usize) -> &'a str {
        let line_start = self.line_start(offset);
        let rest = &self.text[line_start..];
        let blanks = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        &rest[..blanks]
    }

    fn line_start(&self, offset: usize) -> usize {
        self.text[..offset].rfind('\n').map_or(0, |newline| newline + 1)
    }

    /// Whether only blanks stand between the start of its line and `offset`.
    fn starts_own_line(&self, offset: usize) -> bool {
        self.text[self.line_start(offset)..offset].chars().all(|character| matches!(character, ' ' | '\t'))
    }

    /// Where the line after `offset` starts, when only blanks (and a CR)
    /// stand between `offset` and the line's end.
    fn rest_of_line_is_blank(&self, offset: usize) -> Option<usize> {
        let rest = &self.text[offset..];
        let end = rest.find('\n')?;
        rest[..end]
            .chars()
            .all(|character| matches!(character, ' ' | '\t' | '\r'))
            .then_some(offset + end + 1)
    }

    /// The splices that take entry `index` out of `container`, with its
    /// separator, and with its line when it stands on a line of its own.
    pub(crate) fn remove_entry(&self, container: &Container, index: usize) -> Vec<Splice> {
        let entries = &container.entries;
        let entry = &entries[index];
        if entries.len() == 1 {
            // The only entry: the brackets close up, whatever the layout.
            let interior = container.open + 1..container.close;
            let blank = self.text[interior.clone()].trim().len() == self.entry_text_len(entry);
            let range = if blank {
                interior
            } else {
                entry.start..entry.comma.map_or(entry.value.span.end, |c| c + 1)
            };
            return vec![Splice { range, text: String::new() }];
        }
        let own_line = self.starts_own_line(entry.start);
        match entry.comma {
            // Not the last entry (or a trailing comma): cut the entry and its comma.
            Some(comma) => {
                let after_comma = comma + 1;
                if own_line && let Some(next_line) = self.rest_of_line_is_blank(after_comma) {
                    return vec![Splice {
                        range: self.line_start(entry.start)..next_line,
                        text: String::new(),
                    }];
                }
                if index + 1 == entries.len() {
                    // The last entry with a trailing comma: the blanks before it go.
                    let before = &self.text[..entry.start];
                    let blanks = before.len() - before.trim_end_matches([' ', '\t']).len();
                    return vec![Splice { range: entry.start - blanks..after_comma, text: String::new() }];
                }
                let rest = &self.text[after_comma..];
                let blanks = rest.len() - rest.trim_start_matches([' ', '\t']).len();
                vec![Splice { range: entry.start..after_comma + blanks, text: String::new() }]
            }
            // The last entry: cut it and the comma after the entry before it.
            None => {
                let previous = &entries[index - 1];
                let Some(previous_comma) = previous.comma else {
                    return vec![Splice { range: entry.start..entry.value.span.end, text: String::new() }];
                };
                if own_line && let Some(next_line) = self.rest_of_line_is_blank(entry.value.span.end) {
                    return vec![
                        Splice { range: previous_comma..previous_comma + 1, text: String::new() },
                        Splice { range: self.line_start(entry.start)..next_line, text: String::new() },
                    ];
                }
                vec![Splice { range: previous_comma..entry.value.span.end, text: String::new() }]
            }
        }
    }

    fn entry_text_len(&self, entry: &Entry) -> usize {
        let end = entry.comma.map_or(entry.value.span.end, |comma| comma + 1);
        self.text[entry.start..end].len()
    }

    /// The splice that puts `entry_text` (a member `"key": value` or an
    /// element, rendered by [`render_entry`] for the indentation this
    /// returns) into `container` before entry `index`, or last when `index`
    /// is the number of entries. `render` gets the indentation of the new
    /// entry's first line and returns its text.
    pub(crate) fn insert_entry(
        &self,
        container: &Container,
        index: usize,
        layout: &Layout,
        render: impl Fn(Option<&str>) -> String,
    ) -> Splice {
        let entries = &container.entries;
        let container_indent = self.line_indent(container.open);
        if entries.is_empty() {
            let indent = format!("{container_indent}{}", layout.indent_unit);
            let interior = container.open + 1..container.close;
            let newline = layout.newline;
            let entry = render(Some(&indent));
            if self.text[interior.clone()].trim().is_empty() {
                return Splice {
                    range: interior,
                    text: format!("{newline}{indent}{entry}{newline}{container_indent}"),
                };
            }
            // Comments inside: the entry goes first, the comments stay after it.
            return Splice {
                range: container.open + 1..container.open + 1,
                text: format!("{newline}{indent}{entry}"),
            };
        }
        let multi_line = entries.iter().any(|entry| self.starts_own_line(entry.start));
        let neighbour = &entries[index.min(entries.len() - 1)];
        let indent = if multi_line && self.starts_own_line(neighbour.start) {
            self.line_indent(neighbour.start).to_owned()
        } else {
            format!("{container_indent}{}", layout.indent_unit)
        };
        let entry = render(multi_line.then_some(indent.as_str()));
        let newline = layout.newline;
        if index < entries.len() {
            let before = &entries[index];
            let text = if multi_line && self.starts_own_line(before.start) {
                format!("{entry},{newline}{indent}")
            } else {
                format!("{entry}, ")
            };
            return Splice { range: before.start..before.start, text };
        }
        let last = &entries[entries.len() - 1];
        match last.comma {
            // A trailing comma stays trailing: the new entry gets one too.
            Some(comma) => {
                let text =
                    if multi_line { format!("{newline}{indent}{entry},") } else { format!(" {entry},") };
                Splice { range: comma + 1..comma + 1, text }
            }
            None => {
                let end = last.value.span.end;
                let text =
                    if multi_line { format!(",{newline}{indent}{entry}") } else { format!(", {entry}") };
                Splice { range: end..end, text }
            }
        }
    }
}

impl Node {
    pub(crate) fn container(&self) -> Option<&Container> {
        match &self.kind {
            NodeKind::Object(container) | NodeKind::Array(container) => Some(container),
            NodeKind::Scalar => None,
        }
    }

    pub(crate) fn as_object(&self) -> Option<&Container> {
        match &self.kind {
            NodeKind::Object(container) => Some(container),
            _ => None,
        }
    }

    pub(crate) fn as_array(&self) -> Option<&Container> {
        match &self.kind {
            NodeKind::Array(container) => Some(container),
            _ => None,
        }
    }
}

impl Container {
    /// The index of the first member named `key`.
    pub(crate) fn member_index(&self, key: &str) -> Option<usize> {
        self.entries.iter().position(|entry| entry.key.as_deref() == Some(key))
    }

    pub(crate) fn member(&self, key: &str) -> Option<&Entry> {
        self.member_index(key).map(|index| &self.entries[index])
    }
}

/// Applies `splices` (non-overlapping) to `text`.
pub(crate) fn apply_splices(text: &str, splices: &[Splice]) -> String {
    let mut ordered: Vec<&Splice> = splices.iter().collect();
    ordered.sort_by_key(|splice| splice.range.start);
    let mut out = String::with_capacity(text.len() + 256);
    let mut position = 0;
    for splice in ordered {
        out.push_str(&text[position..splice.range.start]);
        out.push_str(&splice.text);
        position = splice.range.end;
    }
    out.push_str(&text[position..]);
    out
}

/// `value` as JSON text whose first line is at `indent` and whose nested
/// lines step by the layout's unit, or on one line when `indent` is `None`
/// (an entry of a container written on one line); `key`, when given, makes
/// it a member.
pub(crate) fn render_entry(
    key: Option<&str>,
    value: &Value,
    indent: Option<&str>,
    layout: &Layout,
) -> String {
    let mut out = String::new();
    if let Some(key) = key {
        out.push_str(&serde_json::to_string(key).unwrap_or_default());
        out.push_str(": ");
    }
    match indent {
        Some(indent) => render_value(value, indent, layout, &mut out),
        None => render_on_one_line(value, &mut out),
    }
    out
}

fn render_on_one_line(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            out.push('{');
            for (position, (key, member)) in map.iter().enumerate() {
                if position > 0 {
                    out.push_str(", ");
                }
                out.push_str(&serde_json::to_string(key).unwrap_or_default());
                out.push_str(": ");
                render_on_one_line(member, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (position, item) in items.iter().enumerate() {
                if position > 0 {
                    out.push_str(", ");
                }
                render_on_one_line(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&serde_json::to_string(other).unwrap_or_default()),
    }
}

fn render_value(value: &Value, indent: &str, layout: &Layout, out: &mut String) {
    let inner = format!("{indent}{}", layout.indent_unit);
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push('{');
            for (position, (key, member)) in map.iter().enumerate() {
                if position > 0 {
                    out.push(',');
                }
                out.push_str(layout.newline);
                out.push_str(&inner);
                out.push_str(&serde_json::to_string(key).unwrap_or_default());
                out.push_str(": ");
                render_value(member, &inner, layout, out);
            }
            out.push_str(layout.newline);
            out.push_str(indent);
            out.push('}');
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('[');
            for (position, item) in items.iter().enumerate() {
                if position > 0 {
                    out.push(',');
                }
                out.push_str(layout.newline);
                out.push_str(&inner);
                render_value(item, &inner, layout, out);
            }
            out.push_str(layout.newline);
            out.push_str(indent);
            out.push(']');
        }
        other => out.push_str(&serde_json::to_string(other).unwrap_or_default()),
    }
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    position: usize,
}

impl Parser<'_> {
    fn error(&self, what: &str) -> String {
        let line =
            self.bytes[..self.position.min(self.bytes.len())].iter().filter(|byte| **byte == b'\n').count()
                + 1;
        format!("it is not valid JSON or JSONC: {what} at line {line}")
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.position).copied()
    }

    /// Skips blanks, comments and a leading byte-order mark.
    fn skip_trivia(&mut self) -> Result<(), String> {
        if self.position == 0 && self.text.starts_with('\u{feff}') {
            self.position = '\u{feff}'.len_utf8();
        }
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\n' | b'\r') => self.position += 1,
                Some(b'/') if self.bytes.get(self.position + 1) == Some(&b'/') => {
                    let rest = &self.text[self.position..];
                    self.position += rest.find('\n').unwrap_or(rest.len());
                }
                Some(b'/') if self.bytes.get(self.position + 1) == Some(&b'*') => {
                    let rest = &self.text[self.position + 2..];
                    let end = rest.find("*/").ok_or_else(|| self.error("a /* comment that never ends"))?;
                    self.position += 2 + end + 2;
                }
                _ => return Ok(()),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, String> {
        if depth > DEEPEST_NESTING {
            return Err(self.error("nesting deeper than 128 levels"));
        }
        let start = self.position;
        match self.peek() {
            Some(b'{') => self.container(depth, b'}', true),
            Some(b'[') => self.container(depth, b']', false),
            Some(b'"') => {
                self.string()?;
                Ok(Node { span: start..self.position, kind: NodeKind::Scalar })
            }
            Some(b'-' | b'0'..=b'9') => {
                self.number()?;
                Ok(Node { span: start..self.position, kind: NodeKind::Scalar })
            }
            Some(_) => {
                for literal in ["true", "false", "null"] {
                    if self.text[start..].starts_with(literal) {
                        self.position += literal.len();
                        return Ok(Node { span: start..self.position, kind: NodeKind::Scalar });
                    }
                }
                Err(self.error("expected a value"))
            }
            None => Err(self.error("the text ends where a value should be")),
        }
    }

    fn container(&mut self, depth: usize, closing: u8, is_object: bool) -> Result<Node, String> {
        let open = self.position;
        self.position += 1;
        let mut entries: Vec<Entry> = Vec::new();
        loop {
            self.skip_trivia()?;
            if self.peek() == Some(closing) {
                break;
            }
            if let Some(last) = entries.last()
                && last.comma.is_none()
            {
                return Err(self.error(if is_object {
                    "expected , or } after a member"
                } else {
                    "expected , or ] after an element"
                }));
            }
            let start = self.position;
            let key = if is_object {
                if self.peek() != Some(b'"') {
                    return Err(self.error("expected a member name in double quotes"));
                }
                let key = self.string()?;
                self.skip_trivia()?;
                if self.peek() != Some(b':') {
                    return Err(self.error("expected : after a member name"));
                }
                self.position += 1;
                self.skip_trivia()?;
                Some(key)
            } else {
                None
            };
            let value = self.value(depth + 1)?;
            self.skip_trivia()?;
            let comma = (self.peek() == Some(b',')).then(|| {
                self.position += 1;
                self.position - 1
            });
            entries.push(Entry { key, start, value, comma });
        }
        let close = self.position;
        self.position += 1;
        let container = Container { open, close, entries };
        let kind = if is_object { NodeKind::Object(container) } else { NodeKind::Array(container) };
        Ok(Node { span: open..self.position, kind })
    }

    /// A string literal; its decoded text. serde_json decodes it, so escapes
    /// mean exactly what JSON says.
    fn string(&mut self) -> Result<String, String> {
        let start = self.position;
        self.position += 1;
        loop {
            match self.peek() {
                None => return Err(self.error("a string that never ends")),
                Some(b'"') => break,
                Some(b'\\') => self.position += 2,
                Some(_) => self.position += 1,
            }
        }
        self.position += 1;
        let literal = self.text.get(start..self.position).ok_or_else(|| self.error("a broken string"))?;
        serde_json::from_str(literal).map_err(|error| self.error(&format!("a bad string ({error})")))
    }

    fn number(&mut self) -> Result<(), String> {
        let start = self.position;
        let digits = |parser: &mut Self| {
            let from = parser.position;
            while parser.peek().is_some_and(|byte| byte.is_ascii_digit()) {
                parser.position += 1;
            }
            parser.position > from
        };
        if self.peek() == Some(b'-') {
            self.position += 1;
        }
        let integer_start = self.position;
        if !digits(self) {
            return Err(self.error("a number without digits"));
        }
        if self.bytes[integer_start] == b'0' && self.position - integer_start > 1 {
            return Err(self.error("a number with a leading zero"));
        }
        if self.peek() == Some(b'.') {
            self.position += 1;
            if !digits(self) {
                return Err(self.error("a number without digits after its point"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.position += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.position += 1;
            }
            if !digits(self) {
                return Err(self.error("a number without digits in its exponent"));
            }
        }
        debug_assert!(self.position > start);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn removed(text: &str, path: &[&str], index: usize) -> String {
        let document = JsoncDocument::parse(text).unwrap();
        let container = container_at(&document, path);
        apply_splices(text, &document.remove_entry(&container, index))
    }

    fn container_at(document: &JsoncDocument, path: &[&str]) -> Container {
        let mut node = document.root().unwrap().clone();
        for key in path {
            node = node.as_object().unwrap().member(key).unwrap().value.clone();
        }
        node.container().unwrap().clone()
    }

    fn inserted(text: &str, path: &[&str], index: usize, key: Option<&str>, value: Value) -> String {
        let document = JsoncDocument::parse(text).unwrap();
        let layout = document.layout();
        let container = container_at(&document, path);
        let index = index.min(container.entries.len());
        let splice = document
            .insert_entry(&container, index, &layout, |indent| render_entry(key, &value, indent, &layout));
        apply_splices(text, &[splice])
    }

    #[test]
    fn parses_jsonc_and_keeps_number_spelling() {
        let text = "\u{feff}// top\n{\"a\": 1.0, /* c */ \"b\": [1e3, 12345678901234567890,],}\n";
        let document = JsoncDocument::parse(text).unwrap();
        let root = document.root().unwrap().as_object().unwrap();
        assert_eq!(root.entries.len(), 2);
        let b = &root.member("b").unwrap().value;
        assert_eq!(&text[b.as_array().unwrap().entries[1].value.span.clone()], "12345678901234567890");
        assert!(JsoncDocument::parse("").unwrap().root().is_none());
        assert!(JsoncDocument::parse("  // only a comment\n").unwrap().root().is_none());
    }

    #[test]
    fn refuses_what_is_not_json() {
        for (text, why) in [
            ("{", "expected a member name"),
            ("{\"a\" 1}", "expected :"),
            ("[1 2]", "expected , or ]"),
            ("{\"a\": 01}", "leading zero"),
            ("{\"a\": tru}", "expected a value"),
            ("{} x", "after the end"),
            ("/* x", "never ends"),
            ("\"\\q\"", "bad string"),
        ] {
            let error = JsoncDocument::parse(text).unwrap_err();
            assert!(error.contains(why), "{text:?}: {error}");
        }
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert!(JsoncDocument::parse(&deep).unwrap_err().contains("nesting"));
    }

    #[test]
    fn layout_follows_the_file() {
        assert_eq!(
            JsoncDocument::parse("{\n\t\"a\": 1\n}").unwrap().layout(),
            Layout { newline: "\n", indent_unit: "\t".into() }
        );
        assert_eq!(
            JsoncDocument::parse("{\r\n    \"a\": 1\r\n}").unwrap().layout(),
            Layout { newline: "\r\n", indent_unit: "    ".into() }
        );
        assert_eq!(JsoncDocument::parse("{\"a\": {\n   \"b\": 1}}").unwrap().layout().indent_unit, "   ");
        assert_eq!(JsoncDocument::parse("{}").unwrap().layout().indent_unit, "  ");
    }

    #[test]
    fn insertion_then_removal_gives_back_the_bytes() {
        let cases: &[(&str, &[&str])] = &[
            ("{\n  \"a\": 1\n}\n", &[]),
            ("{\n  \"a\": 1, // note\n  \"b\": 2\n}", &[]),
            ("{\"a\": 1}", &[]),
            ("{\"a\": 1,}", &[]),
            ("{\r\n\t\"a\": {\r\n\t\t\"x\": 1\r\n\t}\r\n}\r\n", &["a"]),
            ("{\n  \"a\": 1 // trailing\n}\n", &[]),
            ("{\n  \"a\": 1,\n  \"b\": 2,\n}\n", &[]),
        ];
        for (text, path) in cases {
            let document = JsoncDocument::parse(text).unwrap();
            let count = container_at(&document, path).entries.len();
            for index in 0..=count {
                let with = inserted(text, path, index, Some("new"), serde_json::json!({"k": [1, 2]}));
                JsoncDocument::parse(&with).unwrap_or_else(|error| panic!("{with:?}: {error}"));
                let back = removed(&with, path, index);
                assert_eq!(&back, text, "insert at {index} into {text:?} gave {with:?}");
            }
        }
    }

    #[test]
    fn insertion_into_empty_containers() {
        assert_eq!(inserted("{}", &[], 0, Some("a"), serde_json::json!(1)), "{\n  \"a\": 1\n}");
        assert_eq!(inserted("{\"h\": []}", &["h"], 0, None, serde_json::json!(1)), "{\"h\": [\n  1\n]}");
        assert_eq!(removed("{\"h\": [\n  1\n]}", &["h"], 0), "{\"h\": []}");
        assert_eq!(
            inserted("{\n\t\"h\": {\n\t}\n}", &["h"], 0, Some("x"), serde_json::json!([true])),
            "{\n\t\"h\": {\n\t\t\"x\": [\n\t\t\ttrue\n\t\t]\n\t}\n}"
        );
    }

    #[test]
    fn removal_keeps_neighbouring_comments() {
        let text = "[\n  1, // one\n  2,\n  // before three\n  3\n]";
        assert_eq!(removed(text, &[], 1), "[\n  1, // one\n  // before three\n  3\n]");
        assert_eq!(removed(text, &[], 2), "[\n  1, // one\n  2\n  // before three\n]");
        assert_eq!(removed("[1, 2, 3]", &[], 0), "[2, 3]");
        assert_eq!(removed("[1, 2, 3]", &[], 2), "[1, 2]");
    }
}
