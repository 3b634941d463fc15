import numpy as np
import pytest

import headrace as hr
from headrace.readers import make_batched_features_dataset, make_csv_dataset


def test_make_csv_dataset_infers_types_and_splits_the_label(tmp_path):
    (tmp_path / "a.csv").write_text("n,f,s,label\n1,0.5,x,0\n2,1.5,y,1\n")
    (tmp_path / "b.csv").write_text("n,f,s,label\n3,2.5,z,0\n4,3,w,1\n")
    ds = make_csv_dataset(str(tmp_path / "*.csv"), 2, label_name="label", num_epochs=1, shuffle=False)
    batches = list(ds)
    assert len(batches) == 2
    features, label = batches[0]
    assert list(features) == ["n", "f", "s"]
    assert features["n"].dtype == np.int32 and features["f"].dtype == np.float32
    assert features["s"].tolist() == [b"x", b"y"] and label.tolist() == [0, 1]
    assert batches[1][0]["f"].tolist() == [2.5, 3.0]
    # As tf.data: inferred columns are required, so an empty field is an error.
    (tmp_path / "c.csv").write_text("n,f\n1,\n")
    with pytest.raises(hr.InvalidArgumentError, match="column 1 is empty"):
        list(make_csv_dataset(str(tmp_path / "c.csv"), 1, num_epochs=1))


def test_make_csv_dataset_repeats_shuffles_and_selects(tmp_path):
    (tmp_path / "a.csv").write_text("a,b\n" + "".join(f"{i},{i * 10}\n" for i in range(10)))
    ds = make_csv_dataset(str(tmp_path / "a.csv"), 4, select_columns=["b"], shuffle_seed=1, num_epochs=None)
    batches = [b["b"].tolist() for b in ds.take(5)]
    assert all(len(b) == 4 for b in batches)
    assert sorted(x for b in batches for x in b)[:2] != [0, 10] or len({tuple(b) for b in batches}) > 1
    with pytest.raises(hr.InvalidArgumentError, match="label_name"):
        make_csv_dataset(str(tmp_path / "a.csv"), 2, label_name="zzz")
    with pytest.raises(hr.InvalidArgumentError, match="matches no files"):
        make_csv_dataset(str(tmp_path / "*.none"), 2)


@pytest.mark.parametrize("compression_type", ["GZIP", "ZLIB"])
def test_make_csv_dataset_reads_the_header_of_compressed_files(tmp_path, compression_type):
    # tensorflow.org/tutorials/load_data/csv reads a .csv.gz this way: the header and the rows used to
    # infer types are read through the decompressor too.
    import gzip  # noqa: PLC0415
    import zlib  # noqa: PLC0415

    text = b"traffic_volume,temp,holiday\n5545,288.28,None\n4516,289.36,Labor Day\n"
    path = tmp_path / "traffic.csv.gz"
    path.write_bytes(gzip.compress(text) if compression_type == "GZIP" else zlib.compress(text))
    ds = make_csv_dataset(
        str(path), batch_size=2, label_name="traffic_volume", num_epochs=1, compression_type=compression_type
    )
    features, label = next(iter(ds))
    assert list(features) == ["temp", "holiday"] and sorted(label.tolist()) == [4516, 5545]
    assert features["temp"].dtype == np.float32 and features["holiday"].dtype == object


def test_make_batched_features_dataset(tmp_path):
    path = str(tmp_path / "e.tfrecord")
    with hr.io.TFRecordWriter(path) as writer:
        for i in range(5):
            writer.write(hr.io.serialize_example({"x": [float(i), 1.0], "y": i}))
    spec = {"x": hr.io.FixedLenFeature([2], "float32"), "y": hr.io.FixedLenFeature([], "int64")}
    ds = make_batched_features_dataset(path, 2, spec, label_key="y", num_epochs=1, shuffle=False)
    got = [(f["x"][:, 0].tolist(), y.tolist()) for f, y in ds]
    assert got == [([0.0, 1.0], [0, 1]), ([2.0, 3.0], [2, 3]), ([4.0], [4])]
    dropped = make_batched_features_dataset(path, 2, spec, num_epochs=1, shuffle=False, drop_final_batch=True)
    assert len(list(dropped)) == 2
