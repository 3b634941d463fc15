"""TFRecord framing, CRCs, GZIP/ZLIB streams, indexes and the record writer."""
