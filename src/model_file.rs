//! The model container shared by every learned scorer: a versioned, checksummed file.
//!
//! Layout (all integers little-endian):
//! ```text
//! magic      8 bytes  "APMODEL\x01"
//! version    u32      container format version (1)
//! header     u32 length + UTF-8 JSON (kind, feature set, hash seed, training summary, ...)
//! payload    u64 length + bytes (the scorer's weights; layout owned by the scorer)
//! checksum   u64      xxh3-64 of everything before it
//! ```
//! Loading never trusts a length: every one is checked against the bytes actually present
//! before anything is allocated, so a truncated or corrupt file is a clear error, never a
//! panic or a huge allocation.

use xxhash_rust::xxh3::xxh3_64;

pub const MAGIC: &[u8; 8] = b"APMODEL\x01";
pub const VERSION: u32 = 1;

/// Why a model file could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ModelFileError {
    #[error("not a model file (bad magic)")]
    BadMagic,
    #[error("unsupported model format version {0} (this build reads {VERSION})")]
    Version(u32),
    #[error("model file truncated at byte {0}")]
    Truncated(usize),
    #[error("model file checksum mismatch (corrupt file)")]
    Checksum,
    #[error("model header is not valid: {0}")]
    Header(String),
    #[error("model payload is not valid: {0}")]
    Payload(String),
    #[error("{0} trailing bytes after the checksum")]
    Trailing(usize),
}

/// Writes a container.
pub fn encode(header_json: &str, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(32 + header_json.len() + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(header_json.len() as u32).to_le_bytes());
    out.extend_from_slice(header_json.as_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(payload);
    let sum = xxh3_64(&out);
    out.extend_from_slice(&sum.to_le_bytes());
    out
}

/// Reads a container: the header JSON and the payload bytes.
pub fn decode(bytes: &[u8]) -> Result<(&str, &[u8]), ModelFileError> {
    let mut r = Reader { b: bytes, pos: 0 };
    if r.take(8)? != MAGIC {
        return Err(ModelFileError::BadMagic);
    }
    let version = r.u32()?;
    if version != VERSION {
        return Err(ModelFileError::Version(version));
    }
    let hlen = r.u32()? as usize;
    let header = std::str::from_utf8(r.take(hlen)?).map_err(|e| ModelFileError::Header(e.to_string()))?;
    let plen = usize::try_from(r.u64()?).map_err(|_| ModelFileError::Truncated(r.pos))?;
    let payload = r.take(plen)?;
    let body_end = r.pos;
    let sum = r.u64()?;
    if r.pos != bytes.len() {
        return Err(ModelFileError::Trailing(bytes.len() - r.pos));
    }
    if xxh3_64(&bytes[..body_end]) != sum {
        return Err(ModelFileError::Checksum);
    }
    Ok((header, payload))
}

/// A bounds-checked little-endian reader.
pub struct Reader<'a> {
    pub b: &'a [u8],
    pub pos: usize,
}

impl<'a> Reader<'a> {
    pub fn new(b: &'a [u8]) -> Self {
        Reader { b, pos: 0 }
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8], ModelFileError> {
        let end =
            self.pos.checked_add(n).filter(|&e| e <= self.b.len()).ok_or(ModelFileError::Truncated(self.b.len()))?;
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    pub fn u32(&mut self) -> Result<u32, ModelFileError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }

    pub fn u64(&mut self) -> Result<u64, ModelFileError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }

    pub fn remaining(&self) -> usize {
        self.b.len() - self.pos
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn round_trip_and_every_truncation_fails_cleanly() {
        let f = encode("{\"kind\":\"nb\"}", b"payload bytes");
        assert_eq!(decode(&f).unwrap(), ("{\"kind\":\"nb\"}", &b"payload bytes"[..]));
        for cut in 0..f.len() {
            assert!(decode(&f[..cut]).is_err(), "cut at {cut}");
        }
        let mut bad = f.clone();
        bad[20] ^= 1;
        assert!(decode(&bad).is_err());
        let mut v = f.clone();
        v[8] = 9;
        assert_eq!(decode(&v), Err(ModelFileError::Version(9)));
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(b in prop::collection::vec(any::<u8>(), 0..200)) {
            let mut with_magic = MAGIC.to_vec();
            with_magic.extend_from_slice(&b);
            let _ = decode(&b);
            let _ = decode(&with_magic);
        }

        #[test]
        fn single_byte_corruption_is_detected(pos in 0usize..40, flip in 1u8..=255) {
            let f = encode("{}", &[7u8; 16]);
            let mut g = f.clone();
            let p = pos % g.len();
            g[p] ^= flip;
            prop_assert!(decode(&g).is_err());
        }
    }
}
