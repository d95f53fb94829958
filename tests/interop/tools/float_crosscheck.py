"""Cross-checks the canonical FLOAT/DOUBLE text of python/canonical.py against the Java oracle's.

    .venv/bin/python tools/float_crosscheck.py [N]

Generates N random bit patterns per width plus edge cases (subnormals, extremes, powers of ten, values that
JDK 17's own Double.toString prints non-shortest), renders them with both and reports every difference.
Also a generator for the Go driver: the printed "kind hex text" lines make a golden table.
"""
import os
import random
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))
import canonical  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def cases(n):
    rnd = random.Random(42)
    out = []
    f32 = [0x00000001, 0x00000002, 0x007fffff, 0x00800000, 0x7f7fffff, 0x3f800000, 0x3dcccccd, 0x40490fdb,
           0x4b189680, 0x4b18967f, 0x3a83126f, 0x3a83126e, 0x80000001, 0xff7fffff, 0x80000000, 0x7fc00000,
           0x7f800000, 0xff800000]
    f64 = [0x0000000000000001, 0x0000000000000002, 0x000fffffffffffff, 0x0010000000000000,
           0x7fefffffffffffff, 0x3ff0000000000000, 0x3fb999999999999a, 0x44b52d02c7e14af6,
           0x416312d000000000, 0x41633ffffffffffe, 0x3f50624dd2f1a9fc, 0x3f50624dd2f1a9fb, 0x8000000000000001,
           0x8000000000000000, 0x7ff8000000000000, 0x7ff0000000000000, 0xfff0000000000000,
           0x4480f0cf064dd592, 0x3e112e0be826d695]
    for e in range(-45, 39):
        f32.append(struct.unpack("<I", struct.pack("<f", float("1e%d" % e)))[0])
    for e in range(-324, 309):
        f64.append(struct.unpack("<Q", struct.pack("<d", float("1e%d" % e)))[0])
    f32 += [rnd.getrandbits(32) for _ in range(n)]
    f64 += [rnd.getrandbits(64) for _ in range(n)]
    f32 += [rnd.randrange(0, 0x800000) for _ in range(n // 10)]
    f64 += [rnd.randrange(0, 1 << 52) for _ in range(n // 10)]
    out += [("f", "%08x" % b) for b in f32]
    out += [("d", "%016x" % b) for b in f64]
    return out


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    cs = cases(n)
    java = subprocess.run([os.path.join(HERE, "..", "bin", "paimon-java"), "paimon1", "canon-float"],
                          input="".join("%s %s\n" % c for c in cs), capture_output=True, text=True, check=True)
    jl = java.stdout.splitlines()
    bad = 0
    for (kind, hx), j in zip(cs, jl):
        if kind == "f":
            v = struct.unpack("<f", bytes.fromhex(hx)[::-1])[0]
            p = canonical.format_float(v, True)
        else:
            v = struct.unpack("<d", bytes.fromhex(hx)[::-1])[0]
            p = canonical.format_float(v)
        if p != j:
            bad += 1
            print("DIFF %s %s java=%s python=%s" % (kind, hx, j, p))
    print("%d passed, %d failed" % (len(cs) - bad, bad))
    return 1 if bad or len(jl) != len(cs) else 0


if __name__ == "__main__":
    sys.exit(main())
