//! JSON objects whose keys repeat. JSON leaves a repeated key's meaning open
//! (RFC 8259, section 4: "the names within an object SHOULD be unique"), and
//! readers differ: serde_json's `Value` and maps keep the last value, other
//! readers the first, so a file with one is read one way by resim and
//! another by the system that wrote or reads it. The import refuses a
//! repeated key, naming it (the reader's error adds the file, line and
//! column, and the JSON pointer of the object). Shared by every JSON reader
//! of the import: [`Strict`] for a value read whole, [`UniqueMap`] for a map,
//! [`repeated`] for an object read key by key.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::collections::{BTreeMap, HashMap};
use std::fmt;

/// The message of a repeated key.
pub fn repeated(key: &str) -> String {
    format!(
        "the key `{}` appears twice in one object: JSON readers keep one of the two (serde_json the last, others the first), so the file means different things to different readers; remove one",
        key.escape_debug()
    )
}

/// A JSON value read whole, refusing a repeated key in any object inside it.
pub struct Strict(pub serde_json::Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Strict, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = serde_json::Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(serde_json::Value::Null, Into::into))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(v.into())
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        Strict::deserialize(d).map(|s| s.0)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Strict(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(out.into())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(de::Error::custom(repeated(&key)));
            }
            let Strict(v) = map.next_value()?;
            out.insert(key, v);
        }
        Ok(out.into())
    }
}

/// A map (string keys) refusing a repeated key.
pub struct UniqueMap<M>(pub M);

/// The maps a [`UniqueMap`] may be.
pub trait Insert: Default {
    /// The values.
    type Value;
    /// Inserts, false when the key was there.
    fn fresh(&mut self, key: String, value: Self::Value) -> bool;
}

impl<V> Insert for BTreeMap<String, V> {
    type Value = V;
    fn fresh(&mut self, key: String, value: V) -> bool {
        self.insert(key, value).is_none()
    }
}

impl<V> Insert for HashMap<String, V> {
    type Value = V;
    fn fresh(&mut self, key: String, value: V) -> bool {
        self.insert(key, value).is_none()
    }
}

impl<M> Default for UniqueMap<M>
where
    M: Default,
{
    fn default() -> Self {
        UniqueMap(M::default())
    }
}

impl<'de, M: Insert> Deserialize<'de> for UniqueMap<M>
where
    M::Value: Deserialize<'de>,
{
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Vis<M>(std::marker::PhantomData<M>);
        impl<'de, M: Insert> Visitor<'de> for Vis<M>
        where
            M::Value: Deserialize<'de>,
        {
            type Value = M;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_unit<E>(self) -> Result<M, E> {
                Ok(M::default())
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<M, A::Error> {
                let mut out = M::default();
                while let Some(key) = map.next_key::<String>()? {
                    let value: M::Value = map.next_value()?;
                    if !out.fresh(key.clone(), value) {
                        return Err(de::Error::custom(repeated(&key)));
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_any(Vis(std::marker::PhantomData))
            .map(UniqueMap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_key_is_refused_at_any_depth() {
        let ok: Strict = serde_json::from_str(r#"{"a": [1, {"b": 2}], "c": null}"#).unwrap();
        assert_eq!(ok.0["a"][1]["b"], 2);
        for bad in [r#"{"a": 1, "a": 2}"#, r#"[{"x": {"b": 1, "b": 1}}]"#] {
            let e = serde_json::from_str::<Strict>(bad).err().unwrap();
            assert!(e.to_string().contains("appears twice"), "{e}");
        }
        let e = serde_json::from_str::<UniqueMap<BTreeMap<String, u8>>>(r#"{"k": 1, "k": 2}"#)
            .err()
            .unwrap();
        assert!(e.to_string().contains("`k` appears twice"), "{e}");
    }
}
