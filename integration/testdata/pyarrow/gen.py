# Writes the Parquet and ORC files of this directory with pyarrow (26.0.1):
# files as writers other than Spark write them (see ../README.md).
# Run from this directory: python3 gen.py
import os

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq


def out(path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return path


# A data column named _metadata, which hides Spark's own in a load of
# many files: a struct with a file_path field, and a string in another case.
pq.write_table(pa.table({'id': [1, 2], '_metadata': pa.array([{'file_path': 'fake-a'}, {'file_path': 'fake-b'}])}), out('metadata-struct/a.parquet'))
pq.write_table(pa.table({'id': [3]}), out('metadata-struct/b.parquet'))
pq.write_table(pa.table({'id': [4]}), out('metadata-struct/c.parquet'))
pq.write_table(pa.table({'id': [1, 2], '_METADATA': ['x', None]}), out('metadata-string/a.parquet'))
pq.write_table(pa.table({'id': [3]}), out('metadata-string/b.parquet'))
orc.write_table(pa.table({'id': [1, 2], '_metadata': pa.array([{'file_path': 'fake-a'}, {'file_path': 'fake-b'}])}), out('metadata-orc/a.orc'))
orc.write_table(pa.table({'id': [3]}), out('metadata-orc/b.orc'))

# Parquet files under other names: Impala's *_data.0.parq, .pq, beside a
# .parquet file; and beside Hive's extension-less 000000_0 too.
pq.write_table(pa.table({'id': [1]}), out('parq/part-0.parquet'))
pq.write_table(pa.table({'id': [2]}), out('parq/abc_data.0.parq'))
pq.write_table(pa.table({'id': [3]}), out('parq/c.pq'))
pq.write_table(pa.table({'id': [1]}), out('parq-noext/part-0.parquet'))
pq.write_table(pa.table({'id': [2]}), out('parq-noext/abc_data.0.parq'))
pq.write_table(pa.table({'id': [4]}), out('parq-noext/000000_0'))

# A dataset with Parquet summary files (pyarrow's write_metadata, Dask).
t = pa.table({'id': [1, 2]})
collected = []
pq.write_table(t, out('summary/part-0.parquet'), metadata_collector=collected)
collected[0].set_file_path('part-0.parquet')
pq.write_metadata(t.schema, out('summary/_common_metadata'))
pq.write_metadata(t.schema, out('summary/_metadata'), metadata_collector=collected)
