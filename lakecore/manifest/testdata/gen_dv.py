# Generates the deletion-vector golden files in this directory with pyroaring
# (CRoaring's portable serialization, the format org.roaringbitmap writes), as
# an oracle independent of the Go decoder. Layout per apache/paimon
# docs/docs/concepts/spec/tableindex.md. Run: pip install pyroaring==1.2.0;
# python gen_dv.py. The positions are mirrored in index_test.go.
import struct, zlib, json
from pyroaring import BitMap, BitMap64

def sets32():
    return {
        "data-a.parquet": BitMap([0, 3, 7, 100]),                        # one array container, no runs
        "data-b.parquet": BitMap(list(range(0, 15000, 3)) + list(range(70000, 70010))),  # bitmap + array
        "data-c.parquet": BitMap(range(0, 200000)),                      # 4 run containers: offsets present
        "data-d.parquet": BitMap(list(range(5, 11)) + list(range(1000, 2001))),  # runs, no offsets
    }

def bin32(bm, run):
    if run:
        bm.run_optimize()
    return struct.pack(">i", 1581511376) + bm.serialize()

def write32(path):
    out = bytearray([1])
    ranges = []
    for name, bm in sets32().items():
        run = name != "data-a.parquet"
        b = bin32(bm, run)
        ranges.append({"f0": name, "f1": len(out), "f2": len(b), "card": len(bm)})
        out += struct.pack(">i", len(b)) + b + struct.pack(">I", zlib.crc32(b))
    open(path, "wb").write(bytes(out))
    return ranges

def write64(path):
    bm = BitMap64([1, 5, (1 << 32) + 7] + list(range((3 << 32) + 100, (3 << 32) + 201)))
    bm.run_optimize()
    data = struct.pack("<i", 1681511377) + bm.serialize()
    out = bytearray([1])
    off = len(out)
    blob = struct.pack(">i", len(data)) + data + struct.pack(">I", zlib.crc32(data))
    out += blob
    open(path, "wb").write(bytes(out))
    return [{"f0": "data-64.parquet", "f1": off, "f2": len(blob), "card": len(bm)}]

print(json.dumps({"dv32.bin": write32("dv32.bin"), "dv64.bin": write64("dv64.bin")}, indent=1))
