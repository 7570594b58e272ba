//! The pieces of a streamed trace file's reading, shared by the readers of
//! each format and the file's top level: where the reader is ([`Ctx`], with
//! its JSON pointer), a value derived whole that keeps the pointer of its
//! fault ([`Whole`]) and a JSON array streamed element by element ([`List`],
//! serde's "stream an array" recipe).

use super::spans::{BadTime, Kept, SpanStore};
use serde::de::{self, DeserializeSeed, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::marker::PhantomData;

/// The state of one file's reading: where the reader is, and the store.
pub struct Ctx<'s> {
    /// Where spans go.
    pub store: &'s mut SpanStore,
    /// The JSON pointer's steps through the arrays and objects streamed.
    pub path: Vec<String>,
    /// Inside an element derived whole: the pointer of the value at fault.
    pub inner: String,
}

impl Ctx<'_> {
    /// The JSON pointer (RFC 6901) of where the reader is.
    pub fn pointer(&self) -> String {
        let out: String = self.path.iter().map(|s| format!("/{s}")).collect();
        match (out + &self.inner).as_str() {
            "" => "/".into(),
            p => p.into(),
        }
    }

    /// Runs `f` with `key` on the pointer.
    pub fn at<T, E>(
        &mut self,
        key: &str,
        f: impl FnOnce(&mut Self) -> Result<T, E>,
    ) -> Result<T, E> {
        self.path.push(key.replace('~', "~0").replace('/', "~1"));
        let v = f(self)?;
        self.path.pop();
        Ok(v)
    }
}

/// A span's time at fault as the reader's error, the pointer on its field.
pub fn refuse<E: de::Error>(ctx: &mut Ctx<'_>, e: BadTime) -> E {
    ctx.inner = format!("/{}", e.field.replace('~', "~0"));
    E::custom(e.message)
}

/// `#[serde(deserialize_with)]` for lists and maps that may be `null`.
pub fn nullable<'de, D: Deserializer<'de>, T: Deserialize<'de> + Default>(
    d: D,
) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// A value derived whole, the pointer inside it kept when it fails.
pub struct Whole<'i, T>(pub &'i mut String, pub PhantomData<T>);

impl<'de, T: Deserialize<'de>> DeserializeSeed<'de> for Whole<'_, T> {
    type Value = T;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        let mut track = serde_path_to_error::Track::new();
        let got = T::deserialize(serde_path_to_error::Deserializer::new(d, &mut track));
        if got.is_err() {
            self.0.clear();
            for seg in track.path().iter() {
                use serde_path_to_error::Segment;
                match seg {
                    Segment::Seq { index } => self.0.push_str(&format!("/{index}")),
                    Segment::Map { key } => self
                        .0
                        .push_str(&format!("/{}", key.replace('~', "~0").replace('/', "~1"))),
                    _ => {}
                }
            }
        }
        got
    }
}

/// A JSON array streamed (serde's "stream an array" recipe): each element
/// derived as `T` and handed to `each`, the list itself never held. `what`
/// names the list in messages.
pub struct List<'c, 's, T, F> {
    /// The reader's state.
    pub ctx: &'c mut Ctx<'s>,
    /// What the list is, for "expected ...".
    pub what: &'static str,
    /// What to do with each element.
    pub each: F,
    /// The element type.
    pub item: PhantomData<T>,
}

impl<'de, T, F> Visitor<'de> for List<'_, '_, T, F>
where
    T: Deserialize<'de>,
    F: FnMut(T, &mut Ctx<'_>) -> Kept,
{
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(self.what)
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        for i in 0.. {
            self.ctx.path.push(i.to_string());
            let Some(item) = seq.next_element_seed(Whole(&mut self.ctx.inner, PhantomData))? else {
                self.ctx.path.pop();
                return Ok(());
            };
            if let Err(e) = (self.each)(item, self.ctx) {
                return Err(refuse(self.ctx, e));
            }
            self.ctx.path.pop();
        }
        Ok(())
    }
}

impl<'de, T, F> DeserializeSeed<'de> for List<'_, '_, T, F>
where
    T: Deserialize<'de>,
    F: FnMut(T, &mut Ctx<'_>) -> Kept,
{
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}
