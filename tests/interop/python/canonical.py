"""Canonical JSON form of Paimon values (tests/interop/README.md, "Canonical JSON").

The reference implementation is tests/interop/java/.../Canonical.java; this module renders Arrow data
(what pypaimon and DuckDB return) the same way, and builds Arrow arrays from canonical JSON values (for
pypaimon writes). Rendering is driven by the Arrow type: timestamps with a time zone are LTZ (UTC + "Z"),
float32 is FLOAT and float64 is DOUBLE.
"""

import base64
import datetime
import decimal
import json
import math
import struct
from decimal import Decimal

import numpy as np
import pyarrow as pa

_CTX = decimal.Context(prec=2000)
_EPOCH_DATE = datetime.date(1970, 1, 1)
_EPOCH = datetime.datetime(1970, 1, 1)


# ---------------------------------------------------------------- JSON text

def quote(s):
    """JSON string exactly as Java's Canonical.appendQuoted (Python's json.dumps, ensure_ascii=False)."""
    return json.dumps(s, ensure_ascii=False)


# ---------------------------------------------------------------- floating point

def _f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def _f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def _midpoint(exact, neighbour, other, lower):
    if math.isinf(neighbour):
        gap = abs(_CTX.subtract(exact, Decimal(other)))
        half = _CTX.divide(gap, 2)
        return _CTX.subtract(exact, half) if lower else _CTX.add(exact, half)
    return _CTX.divide(_CTX.add(exact, Decimal(neighbour)), 2)


def _bounds(x, is32):
    """(exact, lo, hi, inclusive) of the round-to-nearest-even interval of x."""
    exact = Decimal(x)
    if is32:
        f = np.float32(x)
        with np.errstate(over="ignore"):
            down = float(np.nextafter(f, np.float32(-np.inf)))
            up = float(np.nextafter(f, np.float32(np.inf)))
        even = _f32_bits(x) & 1 == 0
    else:
        down = math.nextafter(x, -math.inf)
        up = math.nextafter(x, math.inf)
        even = _f64_bits(x) & 1 == 0
    return exact, _midpoint(exact, down, up, True), _midpoint(exact, up, down, False), even


def _candidates(exact, lo, hi, inclusive, p):
    out = []
    for mode in (decimal.ROUND_FLOOR, decimal.ROUND_CEILING):
        d = decimal.Context(prec=p, rounding=mode).plus(exact)
        ok = (lo <= d <= hi) if inclusive else (lo < d < hi)
        if ok and all(d != o for o in out):
            out.append(d)
    return out


def _shortest(x, is32):
    exact, lo, hi, inclusive = _bounds(x, is32)
    best = None
    for p in range(1, (9 if is32 else 17) + 2):
        c = _candidates(exact, lo, hi, inclusive, p)
        if not c:
            continue
        if p == 1:
            c = _candidates(exact, lo, hi, inclusive, 2)
        best = c[0]
        for d in c[1:]:
            dd, db = abs(_CTX.subtract(d, exact)), abs(_CTX.subtract(best, exact))
            if dd < db or (dd == db and int(d.as_tuple().digits[-1]) % 2 == 0):
                best = d
        break
    d = best.normalize(_CTX)
    a = abs(exact)
    if Decimal("0.001") <= a < Decimal(10_000_000):
        s = format(d, "f")
        return s if "." in s else s + ".0"
    sign, digits, exp = d.as_tuple()
    ds = "".join(map(str, digits))
    e10 = len(ds) - 1 + exp
    return ("-" if sign else "") + ds[0] + "." + (ds[1:] or "0") + "E" + str(e10)


def format_float(x, is32=False):
    """Canonical FLOAT (is32) or DOUBLE: Java's (JDK 19+) Float/Double.toString digits and layout."""
    if math.isnan(x):
        return '"NaN"'
    if math.isinf(x):
        return '"Infinity"' if x > 0 else '"-Infinity"'
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    return _shortest(x, is32)


def parse_float32(text):
    """The float32 nearest to the decimal text (exact, no double rounding)."""
    exact = Decimal(text)
    f = np.float32(float(text))
    if not np.isfinite(f) or f == 0:
        return f
    with np.errstate(over="ignore"):
        neighbours = (f, np.nextafter(f, np.float32(np.inf)), np.nextafter(f, np.float32(-np.inf)))
    for cand in neighbours:
        c = float(cand)
        if c == 0 or math.isinf(c):
            continue
        e, lo, hi, inclusive = _bounds(c, True)
        if (lo <= exact <= hi) if inclusive else (lo < exact < hi):
            return cand
    return f


# ---------------------------------------------------------------- rendering Arrow data

def _ts_text(value, unit):
    per_sec = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}[unit]
    secs, frac = divmod(value, per_sec)
    nanos = frac * (1_000_000_000 // per_sec)
    t = _EPOCH + datetime.timedelta(seconds=secs)
    return "%04d-%02d-%02dT%02d:%02d:%02d.%09d" % (t.year, t.month, t.day, t.hour, t.minute, t.second, nanos)


def _date_text(days):
    d = _EPOCH_DATE + datetime.timedelta(days=days)
    return "%04d-%02d-%02d" % (d.year, d.month, d.day)


def _time_text(ms):
    return "%02d:%02d:%02d.%03d" % (ms // 3_600_000, ms // 60_000 % 60, ms // 1000 % 60, ms % 1000)


def render(arr):
    """Renders an Arrow array (or chunked array) into a list of canonical JSON texts (None for null -> "null")."""
    if isinstance(arr, pa.ChunkedArray):
        out = []
        for ch in arr.chunks:
            out.extend(render(ch))
        return out
    t = arr.type
    if pa.types.is_dictionary(t):
        return render(arr.dictionary_decode())
    valid = [not v for v in arr.is_null().to_pylist()] if arr.null_count else [True] * len(arr)

    def simple(fn, values):
        return [fn(v) if ok else "null" for v, ok in zip(values, valid)]

    if pa.types.is_null(t):
        return ["null"] * len(arr)
    if pa.types.is_boolean(t):
        return simple(lambda v: "true" if v else "false", arr.to_pylist())
    if pa.types.is_integer(t):
        return simple(str, arr.to_pylist())
    if pa.types.is_float32(t):
        return simple(lambda v: format_float(v, True), arr.to_pylist())
    if pa.types.is_float64(t) or pa.types.is_float16(t):
        return simple(lambda v: format_float(float(v)), arr.to_pylist())
    if pa.types.is_decimal(t):
        return simple(lambda v: quote(format(v, "f")), arr.to_pylist())
    if pa.types.is_string(t) or pa.types.is_large_string(t) or str(t) == "string_view":
        return simple(quote, arr.to_pylist())
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t) \
            or str(t) == "binary_view":
        return simple(lambda v: quote(base64.b64encode(v).decode("ascii")), arr.to_pylist())
    if pa.types.is_date32(t):
        return simple(lambda v: quote(_date_text(v)), arr.cast(pa.int32()).to_pylist())
    if pa.types.is_date64(t):
        return simple(lambda ms: quote(_date_text(ms // 86_400_000)), arr.cast(pa.int64()).to_pylist())
    if pa.types.is_time(t):
        div = {"s": None, "ms": 1, "us": 1000, "ns": 1_000_000}[t.unit]
        ints = arr.cast(pa.int64() if pa.types.is_time64(t) else pa.int32()).to_pylist()
        return simple(lambda v: quote(_time_text(v * 1000 if div is None else v // div)), ints)
    if pa.types.is_timestamp(t):
        ints = arr.cast(pa.int64()).to_pylist()
        suffix = "Z" if t.tz is not None else ""
        return simple(lambda v: quote(_ts_text(v, t.unit) + suffix), ints)
    if pa.types.is_map(t):
        keys = render(arr.keys)
        items = render(arr.items)
        offs = arr.offsets.to_pylist()
        out = []
        for i, ok in enumerate(valid):
            if not ok:
                out.append("null")
                continue
            pairs = sorted(zip(keys[offs[i]:offs[i + 1]], items[offs[i]:offs[i + 1]]))
            out.append("[" + ",".join("[" + k + "," + v + "]" for k, v in pairs) + "]")
        return out
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        values = render(arr.values)
        offs = arr.offsets.to_pylist()
        return ["[" + ",".join(values[offs[i]:offs[i + 1]]) + "]" if ok else "null" for i, ok in enumerate(valid)]
    if pa.types.is_fixed_size_list(t):
        values = render(arr.values)
        n = t.list_size
        base = arr.offset * n
        return ["[" + ",".join(values[base + i * n:base + (i + 1) * n]) + "]" if ok else "null"
                for i, ok in enumerate(valid)]
    if pa.types.is_struct(t):
        names = [t.field(i).name for i in range(t.num_fields)]
        cols = [render(arr.field(i)) for i in range(t.num_fields)]
        return ["{" + ",".join(quote(n) + ":" + c[i] for n, c in zip(names, cols)) + "}" if ok else "null"
                for i, ok in enumerate(valid)]
    raise ValueError("no canonical form for Arrow type %s" % t)


def table_lines(table):
    """Canonical JSON lines of an Arrow table, one object per row keyed by column name, sorted."""
    names = table.column_names
    cols = [render(table.column(i)) for i in range(table.num_columns)]
    lines = []
    for r in range(table.num_rows):
        lines.append("{" + ",".join(quote(n) + ":" + c[r] for n, c in zip(names, cols)) + "}")
    lines.sort()
    return lines


# ---------------------------------------------------------------- canonical JSON -> Arrow

def _ts_value(text, unit):
    """Epoch count in unit for "YYYY-MM-DDTHH:MM:SS[.f]" (optional trailing Z)."""
    s = text.replace(" ", "T")
    if s.endswith("Z"):
        s = s[:-1]
    main, _, frac = s.partition(".")
    t = datetime.datetime.strptime(main, "%Y-%m-%dT%H:%M:%S")
    nanos = int((frac + "000000000")[:9]) if frac else 0
    delta = t - _EPOCH
    total_ns = (delta.days * 86400 + delta.seconds) * 1_000_000_000 + nanos
    per = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1000, "ns": 1}[unit]
    if total_ns % per:
        raise ValueError("timestamp %s has more precision than unit %s" % (text, unit))
    return total_ns // per


def _float_value(v, is32):
    if isinstance(v, str):
        f = float(v) if v in ("NaN", "Infinity", "-Infinity") else None
        if f is None:
            return parse_float32(v) if is32 else float(Decimal(v))
        return np.float32(f) if is32 else f
    if is32:
        return parse_float32(repr(v) if isinstance(v, float) else str(v))
    return float(v)


def build(values, t):
    """Builds an Arrow array of type t from canonical JSON values (already json-decoded, None = null)."""
    mask = [v is None for v in values]
    if pa.types.is_boolean(t) or pa.types.is_integer(t) or pa.types.is_string(t) or pa.types.is_large_string(t):
        return pa.array(values, type=t)
    if pa.types.is_floating(t):
        is32 = pa.types.is_float32(t)
        return pa.array([None if v is None else _float_value(v, is32) for v in values], type=t)
    if pa.types.is_decimal(t):
        return pa.array([None if v is None else Decimal(str(v)) for v in values], type=t)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return pa.array([None if v is None else base64.b64decode(v) for v in values], type=t)
    if pa.types.is_date32(t):
        return pa.array([None if v is None else (v if isinstance(v, int) else
                         (datetime.date.fromisoformat(v) - _EPOCH_DATE).days) for v in values],
                        type=pa.int32()).cast(t)
    if pa.types.is_time(t):
        def ms(v):
            h, m, s = v.split(":")
            sec, _, frac = s.partition(".")
            return ((int(h) * 60 + int(m)) * 60 + int(sec)) * 1000 + int((frac + "000")[:3])
        per = {"s": 0.001, "ms": 1, "us": 1000, "ns": 1_000_000}[t.unit]
        ints = [None if v is None else int(ms(v) * per) for v in values]
        return pa.array(ints, type=pa.int64() if pa.types.is_time64(t) else pa.int32()).cast(t)
    if pa.types.is_timestamp(t):
        return pa.array([None if v is None else _ts_value(v, t.unit) for v in values], type=pa.int64()).cast(t)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        offsets, flat = [0], []
        for v in values:
            flat.extend(v or [])
            offsets.append(len(flat))
        child = build(flat, t.value_type)
        arr = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), child, type=t, mask=pa.array(mask))
        return arr
    if pa.types.is_map(t):
        offsets, ks, vs = [0], [], []
        for v in values:
            for pair in v or []:
                ks.append(pair[0])
                vs.append(pair[1])
            offsets.append(len(ks))
        return pa.MapArray.from_arrays(pa.array(offsets, pa.int32()), build(ks, t.key_type), build(vs, t.item_type),
                                       type=t, mask=pa.array(mask))
    if pa.types.is_struct(t):
        children = []
        for i in range(t.num_fields):
            f = t.field(i)
            children.append(build([None if v is None else (v[i] if isinstance(v, list) else v.get(f.name))
                                   for v in values], f.type))
        return pa.StructArray.from_arrays(children, fields=[t.field(i) for i in range(t.num_fields)],
                                          mask=pa.array(mask))
    raise ValueError("cannot build Arrow type %s from canonical JSON" % t)


def build_table(rows, schema):
    """An Arrow table with the given schema from canonical JSON row objects (absent keys are null)."""
    names = set(schema.names)
    for r in rows:
        extra = set(r) - names
        if extra:
            raise ValueError("row %s has unknown columns %s" % (r, sorted(extra)))
    cols = [build([r.get(f.name) for r in rows], f.type) for f in schema]
    return pa.Table.from_arrays(cols, schema=schema)
