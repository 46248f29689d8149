"""Writes the Parquet fixtures of sparkmerge/spark's footer tests.

The files are committed (a few KB each); rerun this to rebuild them:

    python3 -m venv /tmp/pq && /tmp/pq/bin/pip install pyarrow==26.0.1
    /tmp/pq/bin/python sparkmerge/spark/testdata/parquet/gen.py

Each file exercises one family of Parquet annotations as pyarrow writes
them. The tests compare the client's reading of each footer with the
schema Spark infers for the same file.
"""
import datetime as dt
import decimal
import os

import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
UTC = dt.timezone.utc


def write(name, table, **kw):
    pq.write_table(table, os.path.join(HERE, name), **kw)


def d(s):
    return decimal.Decimal(s)


ts = dt.datetime(2024, 5, 1, 12, 30, 15, 123000)

write("primitives.parquet", pa.table({
    "b": pa.array([True, None], pa.bool_()),
    "i8": pa.array([-8, None], pa.int8()),
    "i16": pa.array([-16, None], pa.int16()),
    "i32": pa.array([-32, None], pa.int32()),
    "i64": pa.array([-64, None], pa.int64()),
    "u8": pa.array([8, None], pa.uint8()),
    "u16": pa.array([16, None], pa.uint16()),
    "u32": pa.array([32, None], pa.uint32()),
    "u64": pa.array([64, None], pa.uint64()),
    "f32": pa.array([1.5, None], pa.float32()),
    "f64": pa.array([2.5, None], pa.float64()),
    "s": pa.array(["x", None], pa.string()),
    "ls": pa.array(["y", None], pa.large_string()),
    "dict": pa.array(["z", None], pa.string()).dictionary_encode(),
    "bin": pa.array([b"\x00\x01", None], pa.binary()),
    "fixed": pa.array([b"0123456789abcdef", None], pa.binary(16)),
    "day": pa.array([dt.date(2024, 5, 1), None], pa.date32()),
    "dec9": pa.array([d("1234567.89"), None], pa.decimal128(9, 2)),
    "dec18": pa.array([d("12345678901234.5678"), None], pa.decimal128(18, 4)),
    "dec38": pa.array([d("1234567890123456789012345678.0123456789"), None], pa.decimal128(38, 10)),
    "ts_ms_utc": pa.array([ts.replace(tzinfo=UTC), None], pa.timestamp("ms", tz="UTC")),
    "ts_us_utc": pa.array([ts.replace(tzinfo=UTC), None], pa.timestamp("us", tz="UTC")),
    "ts_us_local": pa.array([ts, None], pa.timestamp("us")),
    "ts_ms_local": pa.array([ts, None], pa.timestamp("ms")),
}))

write("decimals-as-integers.parquet", pa.table({
    "dec4": pa.array([d("12.34"), None], pa.decimal128(4, 2)),
    "dec9": pa.array([d("1234567.89"), None], pa.decimal128(9, 2)),
    "dec18": pa.array([d("12345678901234.5678"), None], pa.decimal128(18, 4)),
    "dec30": pa.array([d("1234567890123456789012345.67891"), None], pa.decimal128(30, 5)),
}), store_decimal_as_integer=True)

write("required.parquet", pa.Table.from_arrays(
    [pa.array([1, 2], pa.int64()), pa.array(["a", "b"], pa.string()), pa.array([None, 1.0], pa.float64())],
    schema=pa.schema([
        pa.field("id", pa.int64(), nullable=False),
        pa.field("Name", pa.string(), nullable=False),
        pa.field("score", pa.float64()),
    ])))

write("int96.parquet", pa.table({
    "id": pa.array([1], pa.int32()),
    "at": pa.array([ts], pa.timestamp("us")),
}), use_deprecated_int96_timestamps=True)

write("nested.parquet", pa.table({
    "id": pa.array([1], pa.int64()),
    "tags": pa.array([["a", "b"]], pa.list_(pa.string())),
    "point": pa.array([{"x": 1.0, "y": 2.0}], pa.struct([("x", pa.float64()), ("y", pa.float64())])),
    "attrs": pa.array([[("k", 1)]], pa.map_(pa.string(), pa.int32())),
}))

# Unsupported by Spark: each of these fails Spark's inference.
write("time-of-day.parquet", pa.table({"t": pa.array([dt.time(10, 0)], pa.time32("ms"))}))
write("nanos.parquet", pa.table({"at": pa.array([ts], pa.timestamp("ns"))}))
# Names equal but for case: Spark refuses them (case-insensitive session).
write("case-duplicates.parquet", pa.table({"a": pa.array([1], pa.int32()), "A": pa.array([2], pa.int32())}))

# Schema evolution over days, for grouping: 1 and 2 merge (2 adds a
# column), 3 changes id's type, 4 spells a shared name in another case.
write("day-1.parquet", pa.table({"id": pa.array([1], pa.int64()), "x": pa.array([0.5], pa.float64())}))
write("day-2.parquet", pa.table({"id": pa.array([2], pa.int64()), "x": pa.array([1.5], pa.float64()), "y": pa.array(["b"], pa.string())}))
write("day-3.parquet", pa.table({"id": pa.array([3], pa.int32()), "x": pa.array([2.5], pa.float64())}))
write("day-4.parquet", pa.table({"ID": pa.array([4], pa.int64()), "x": pa.array([3.5], pa.float64())}))

# Parquet's Null logical type (INT32 (Null)), as pyarrow writes a column
# of the null type and pandas a column of None: Spark reads it as int.
write("null-typed.parquet", pa.table({"id": pa.array([1, 2], pa.int64()), "paid": pa.array([None, None], pa.null())}))
