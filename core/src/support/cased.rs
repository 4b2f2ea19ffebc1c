//! Values going out to a host, with field names in the host's casing.
//!
//! The schema spells fields in snake_case (records, journal entries, exports,
//! the Rust and Python APIs). JavaScript gets the same values with camelCase
//! field names (`providerTaskId`, `deadLetteredAt`). Only the names of struct
//! fields are respelled, which a serializer can tell apart from the keys of
//! maps: labels (`{jobId: "x"}`), a solution's extra fields and analysis
//! buckets keep their keys exactly as they are. A blanket key conversion of a
//! JSON tree cannot make that distinction; respelling label keys is the bug
//! this module exists to rule out.
//!
//! It is also the one serializer of the crate's types: stores' rows, exports and
//! the limits check encode snake_case through it, so each `Serialize` impl is
//! compiled once (every other serializer was a copy of all of them in the
//! browser build, ~7 KB gzipped).

use serde::ser::{self, Serialize};
use serde_json::{Map, Value};

use crate::support::json_field::camel;
use crate::support::json_read::Casing;

/// `value` as JSON, struct field names in `casing`.
pub fn to_value<T: Serialize + ?Sized>(value: &T, casing: Casing) -> Result<Value, Error> {
    // One serializer for both casings: every `Serialize` impl is compiled once for it, not once per casing
    // (each extra serializer was a copy of every record, task and event encoder in the browser build).
    value.serialize(Cased(casing))
}

/// A value that cannot be JSON (a map with non-string keys, a float that is NaN).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(pub String);

impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: core::fmt::Display>(msg: T) -> Self {
        Error(msg.to_string())
    }
}

/// Serializes into a [`Value`] like `serde_json::value::Serializer`, with struct
/// (and struct variant) field names in the casing it carries.
#[derive(Clone, Copy)]
struct Cased(Casing);

impl Cased {
    fn field(self, name: &'static str) -> String {
        match self.0 {
            Casing::Snake => name.to_string(),
            Casing::Camel => camel(name),
        }
    }
}

fn plain<T: Serialize + ?Sized>(v: &T) -> Result<Value, Error> {
    serde_json::to_value(v).map_err(|e| Error(e.to_string()))
}

fn tagged(variant: &'static str, value: Value) -> Value {
    let mut map = Map::new();
    map.insert(variant.to_string(), value);
    Value::Object(map)
}

impl ser::Serializer for Cased {
    type Ok = Value;
    type Error = Error;
    type SerializeSeq = Seq;
    type SerializeTuple = Seq;
    type SerializeTupleStruct = Seq;
    type SerializeTupleVariant = VariantSeq;
    type SerializeMap = MapOut;
    type SerializeStruct = StructOut;
    type SerializeStructVariant = VariantStruct;

    fn serialize_bool(self, v: bool) -> Result<Value, Error> {
        Ok(Value::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<Value, Error> {
        Ok(Value::from(v))
    }
    fn serialize_i16(self, v: i16) -> Result<Value, Error> {
        Ok(Value::from(v))
    }
    fn serialize_i32(self, v: i32) -> Result<Value, Error> {
        Ok(Value::from(v))
    }
    fn serialize_i64(self, v: i64) -> Result<Value, Error> {
        Ok(Value::from(v))
    }
    fn serialize_u8(self, v: u8) -> Result<Value, Error> {
        Ok(Value::from(v))
    }
    fn serialize_u16(self, v: u16) -> Result<Value, Error> {
        Ok(Value::from(v))
    }
    fn serialize_u32(self, v: u32) -> Result<Value, Error> {
        Ok(Value::from(v))
    }
    fn serialize_u64(self, v: u64) -> Result<Value, Error> {
        Ok(Value::from(v))
    }
    fn serialize_f32(self, v: f32) -> Result<Value, Error> {
        plain(&v)
    }
    fn serialize_f64(self, v: f64) -> Result<Value, Error> {
        plain(&v)
    }
    fn serialize_char(self, v: char) -> Result<Value, Error> {
        Ok(Value::String(v.to_string()))
    }
    fn serialize_str(self, v: &str) -> Result<Value, Error> {
        Ok(Value::String(v.to_string()))
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Value, Error> {
        plain(v)
    }
    fn serialize_none(self) -> Result<Value, Error> {
        Ok(Value::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Value, Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Value, Error> {
        Ok(Value::Null)
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<Value, Error> {
        Ok(Value::Null)
    }
    fn serialize_unit_variant(self, _name: &'static str, _index: u32, variant: &'static str) -> Result<Value, Error> {
        Ok(Value::String(variant.to_string()))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _name: &'static str, value: &T) -> Result<Value, Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Value, Error> {
        Ok(tagged(variant, value.serialize(self)?))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<Seq, Error> {
        Ok(Seq(self, Vec::with_capacity(len.unwrap_or(0))))
    }
    fn serialize_tuple(self, len: usize) -> Result<Seq, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Seq, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<VariantSeq, Error> {
        Ok(VariantSeq(self, variant, Vec::with_capacity(len)))
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<MapOut, Error> {
        Ok(MapOut(self, Map::new(), None))
    }
    fn serialize_struct(self, _name: &'static str, _len: usize) -> Result<StructOut, Error> {
        Ok(StructOut(self, Map::new()))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<VariantStruct, Error> {
        Ok(VariantStruct(self, variant, Map::new()))
    }
}

struct Seq(Cased, Vec<Value>);
struct VariantSeq(Cased, &'static str, Vec<Value>);
/// A map under construction and the key waiting for its value.
struct MapOut(Cased, Map<String, Value>, Option<String>);
struct StructOut(Cased, Map<String, Value>);
struct VariantStruct(Cased, &'static str, Map<String, Value>);

impl ser::SerializeSeq for Seq {
    type Ok = Value;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.1.push(value.serialize(self.0)?);
        Ok(())
    }
    fn end(self) -> Result<Value, Error> {
        Ok(Value::Array(self.1))
    }
}

impl ser::SerializeTuple for Seq {
    type Ok = Value;
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<Value, Error> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleStruct for Seq {
    type Ok = Value;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        ser::SerializeSeq::serialize_element(self, value)
    }
    fn end(self) -> Result<Value, Error> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleVariant for VariantSeq {
    type Ok = Value;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.2.push(value.serialize(self.0)?);
        Ok(())
    }
    fn end(self) -> Result<Value, Error> {
        Ok(tagged(self.1, Value::Array(self.2)))
    }
}

impl ser::SerializeMap for MapOut {
    type Ok = Value;
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        // Map keys are data: taken as they are (serde_json's own rules for non-string keys).
        match plain(key)? {
            Value::String(s) => self.2 = Some(s),
            Value::Number(n) => self.2 = Some(n.to_string()),
            Value::Bool(b) => self.2 = Some(b.to_string()),
            other => return Err(Error(format!("a map key must be a string, got {other}"))),
        }
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        let key = self.2.take().ok_or_else(|| Error("a map value came without its key".into()))?;
        self.1.insert(key, value.serialize(self.0)?);
        Ok(())
    }
    fn end(self) -> Result<Value, Error> {
        Ok(Value::Object(self.1))
    }
}

impl ser::SerializeStruct for StructOut {
    type Ok = Value;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Error> {
        self.1.insert(self.0.field(key), value.serialize(self.0)?);
        Ok(())
    }
    fn end(self) -> Result<Value, Error> {
        Ok(Value::Object(self.1))
    }
}

impl ser::SerializeStructVariant for VariantStruct {
    type Ok = Value;
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Error> {
        self.2.insert(self.0.field(key), value.serialize(self.0)?);
        Ok(())
    }
    fn end(self) -> Result<Value, Error> {
        Ok(tagged(self.1, Value::Object(self.2)))
    }
}
