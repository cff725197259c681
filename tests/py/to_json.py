"""Writes a snapshot pickle as the JSON PyTorch's viewer also opens (`json.dump` of the same
dict; tuples become lists, as json writes them). Usage: python3 to_json.py IN OUT [--gzip]."""
import gzip
import json
import pickle
import sys

with open(sys.argv[1], "rb") as f:
    data = f.read()
if data[:2] == b"\x1f\x8b":
    data = gzip.decompress(data)
text = json.dumps(pickle.loads(data)).encode()
if "--gzip" in sys.argv[3:]:
    text = gzip.compress(text)
with open(sys.argv[2], "wb") as f:
    f.write(text)
