//! A snapshot in object storage (`persist: { store }`): immutable,
//! content-addressed parts, and one small manifest naming them, written
//! last with a conditional write, so that two servers saving one tenant
//! never lose an update silently (the loser's write is refused). Keys are
//! relative to the tenant's prefix, which the store adds.

use crate::bytes::SnapshotError;
use serde_json::{json, Value};

/// The manifest's key.
pub const MANIFEST: &str = "manifest.json";
const FORMAT: &str = "workspace-search/manifest-1";

/// A part named by its content: the same bytes always have the same key,
/// so a part is written once and never overwritten.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartRef {
    pub key: String,
    pub size: u64,
    /// xxh3-128 of the bytes, hex.
    pub hash: String,
}

impl PartRef {
    pub fn of(bytes: &[u8]) -> PartRef {
        let hash = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(bytes));
        PartRef { key: format!("parts/{hash}.wss"), size: bytes.len() as u64, hash }
    }

    /// Whether `bytes` are this part's (a truncated or foreign object is not).
    pub fn check(&self, bytes: &[u8]) -> Result<(), SnapshotError> {
        if bytes.len() as u64 != self.size {
            return Err(SnapshotError::Truncated { got: bytes.len() as u64, expected: self.size });
        }
        if PartRef::of(bytes).hash != self.hash {
            return Err(SnapshotError::Checksum);
        }
        Ok(())
    }
}

/// What the manifest names: the snapshot (today one part: the framed
/// snapshot file, `persist::disk`'s format).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    pub snapshot: PartRef,
}

impl Manifest {
    pub fn encode(&self) -> Vec<u8> {
        let p = &self.snapshot;
        let v = json!({ "format": FORMAT, "snapshot": { "key": p.key, "size": p.size, "hash": p.hash } });
        serde_json::to_vec_pretty(&v).expect("a manifest encodes")
    }

    pub fn decode(bytes: &[u8]) -> Result<Manifest, SnapshotError> {
        let bad = |why: &str| SnapshotError::Corrupt(format!("the manifest {why}"));
        let v: Value = serde_json::from_slice(bytes).map_err(|_| bad("is not JSON"))?;
        if v["format"] != FORMAT {
            return Err(SnapshotError::NotSnapshot);
        }
        let s = &v["snapshot"];
        let (Some(key), Some(size), Some(hash)) = (s["key"].as_str(), s["size"].as_u64(), s["hash"].as_str()) else {
            return Err(bad("names no snapshot part"));
        };
        // Only keys this format writes: a manifest never sends a read elsewhere.
        if !key.starts_with("parts/") || key.contains("..") || hash.len() != 32 {
            return Err(bad("names a part of another shape"));
        }
        Ok(Manifest { snapshot: PartRef { key: key.into(), size, hash: hash.into() } })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_round_trips_and_a_part_checks_its_bytes() {
        let part = PartRef::of(b"snapshot bytes");
        let m = Manifest { snapshot: part.clone() };
        assert_eq!(Manifest::decode(&m.encode()).unwrap(), m);
        assert!(part.check(b"snapshot bytes").is_ok());
        assert!(matches!(part.check(b"snapshot byte"), Err(SnapshotError::Truncated { .. })));
        assert!(matches!(part.check(b"snapshot bytez"), Err(SnapshotError::Checksum)));
        assert!(Manifest::decode(b"{}").is_err());
        let foreign = br#"{"format":"workspace-search/manifest-1","snapshot":{"key":"../x","size":1,"hash":"00000000000000000000000000000000"}}"#;
        assert!(Manifest::decode(foreign).is_err());
    }
}
