"""The tf.train.Example codec and its tensors: features, parsing, serialising, sparse and ragged values, CSV and strings."""
