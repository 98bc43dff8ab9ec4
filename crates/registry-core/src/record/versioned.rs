//! The first step of reading every roster file, records and consent
//! markers alike: UTF-8, a JSON object, a `format` this roster knows, then
//! a strict parse. One reader for both formats, so both refuse the same
//! files for the same reasons.

use serde::Deserialize;

use crate::record::malformed::Malformed;

/// Why a roster file's bytes are not a value of the format this roster
/// understands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FormatProblem {
    Malformed(Malformed),
    /// Written by a newer roster (`format` above ours).
    Unsupported(u64),
}

/// The keys of a roster file as parsed, which name their format.
pub trait Versioned {
    fn format(&self) -> u64;
}

/// The first step of parsing every roster file (records, consent markers):
/// UTF-8, a JSON object, a `format` key between 1 and `supported`, then a
/// strict parse into `T` (serde refuses duplicate keys and wrong types).
///
/// A file roster wrote parses at the first try, in one pass over its bytes;
/// only one that does not (or names another format) is scanned for its
/// `format` first, to say exactly what is wrong with it.
pub fn parse_versioned<T: serde::de::DeserializeOwned + Versioned>(
    bytes: &[u8],
    supported: u64,
) -> Result<T, FormatProblem> {
    let malformed = |problem| Err(FormatProblem::Malformed(problem));
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => return malformed(Malformed::NotUtf8(error.to_string())),
    };
    if let Ok(keys) = serde_json::from_str::<T>(text)
        && (1..=supported).contains(&keys.format())
    {
        return Ok(keys);
    }
    let format = match serde_json::from_str::<FormatOnly>(text) {
        Ok(FormatOnly { format: Some(value) }) => value,
        Ok(FormatOnly { format: None }) => return malformed(Malformed::NoFormat),
        Err(error) => return malformed(Malformed::NotAnObject(error.to_string())),
    };
    let Some(format) = format.as_u64() else {
        return malformed(Malformed::FormatNotAnInteger(format.to_string()));
    };
    if format > supported {
        return Err(FormatProblem::Unsupported(format));
    }
    if format < 1 {
        return malformed(Malformed::FormatBelowOne(format));
    }
    serde_json::from_str(text).map_err(|error| FormatProblem::Malformed(Malformed::Shape(error.to_string())))
}

#[derive(Deserialize)]
struct FormatOnly {
    format: Option<serde_json::Value>,
}
