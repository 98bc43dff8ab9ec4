//! The one hash roster writes into file names (session-id index entries,
//! the boot part of a record's name): FNV-1a, 64 bits, stable across
//! processes, releases and machines, which std's hasher does not promise.

/// FNV-1a of `bytes`, 64 bits.
pub(crate) fn fnv1a_64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The published FNV-1a test vectors: a name written by one roster is
    /// found by every other.
    #[test]
    fn matches_the_published_vectors() {
        assert_eq!(fnv1a_64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a_64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a_64(b"foobar"), 0x8594_4171_f739_67e8);
    }
}
