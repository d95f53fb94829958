package org.benthospaimon.interop;

import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.Decimal;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.types.DataTypes;

/**
 * The peers section of the benchmark report (tests/bench/peers.go): Java Paimon writing and reading the payment
 * event of internal/paymentevent, an append table with Paimon's default options (bucket -1, parquet, zstd level 1).
 *
 * <p>append-bench-write builds rows 1..N in memory (every value derived from n exactly as internal/paymentevent's Row
 * does, or with --dataset unique its UniqueRow: see {@link Dataset}), then times one batch write and commit of them;
 * append-bench-read times a full read (plan and read) of a table. Both print one JSON line with the wall seconds and the CPU seconds of the whole JVM (all threads: GC and JIT
 * included) over the timed part, so that the Go harness compares the same span it times for lakecore. Before the
 * clock starts each does the same work once untimed (a write of a tenth of the rows into a table of its own, a
 * full read of the table), so that class loading and the first compilations are not counted: the figure is the
 * library's, not the JVM's start-up.
 */
final class AppendBench {

    private AppendBench() {}

    private static final String[] COUNTRIES = {"DE", "FR", "US", "GB", "JP", "BR", "IN", "ES", "NL", "CA"};
    private static final String[] METHODS = {"card", "paypal", "sepa", "apple_pay"};
    /** 2026-01-01T00:00:00Z in microseconds; event n happens n ms later (paymentevent.EpochMicros). */
    private static final long EPOCH_MICROS = 1767225600000000L;

    private static com.sun.management.OperatingSystemMXBean os() {
        return (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    }

    /** The rows append-bench-write writes: a generator of internal/paymentevent, mirrored value for value. */
    enum Dataset {
        /** paymentevent.Row: the repetitive payment events (5,000 users, sequential times). */
        PAYMENTS,
        /** paymentevent.UniqueRow: a user string unique to each row, times in no order, amounts spread widely. */
        UNIQUE;

        /** The dataset the flag value names (payments or unique). */
        static Dataset of(String name) {
            switch (name) {
                case "payments":
                    return PAYMENTS;
                case "unique":
                    return UNIQUE;
                default:
                    throw new Main.UsageException("--dataset wants payments or unique, got " + name);
            }
        }

        GenericRow row(long n, int partitions) {
            return this == UNIQUE ? uniqueRow(n, partitions) : AppendBench.row(n, partitions);
        }
    }

    /** splitmix64 of x: paymentevent.Mix64 (SplittableRandom's mix64 after its golden-ratio increment). */
    static long mix64(long x) {
        long z = x + 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /**
     * Row n of paymentevent.UniqueRow(n, partitions): stream k of row n is mix64(n << 2 | k); unsigned as Go's
     * uint64 is (>>> and Long.remainderUnsigned).
     */
    static GenericRow uniqueRow(long n, int partitions) {
        long h0 = mix64(n << 2), h1 = mix64(n << 2 | 1), h2 = mix64(n << 2 | 2), h3 = mix64(n << 2 | 3);
        long micros = EPOCH_MICROS + n * 1000 + Long.remainderUnsigned(h3, 60_000_000L) - 30_000_000L;
        return GenericRow.of(n, h0 >>> 44,
                BinaryString.fromString("u" + n + "-" + String.format("%08x", h0 & 0xffffffffL)),
                Decimal.fromUnscaledLong(h1 >>> 31, 10, 2),
                BinaryString.fromString(COUNTRIES[(int) ((h2 >>> 32) % 10)]),
                BinaryString.fromString(METHODS[(int) (h2 & 3)]),
                Timestamp.fromMicros(micros),
                BinaryString.fromString(String.format("d%03d", n % partitions)));
    }

    /** Row n of paymentevent.Row(n, partitions), in the schema's column order. */
    static GenericRow row(long n, int partitions) {
        long u = n * 7919 % 5000;
        return GenericRow.of(n, u, BinaryString.fromString(String.format("user-%04d", u)),
                Decimal.fromUnscaledLong((n % 500) * 100 + n % 100, 10, 2),
                BinaryString.fromString(COUNTRIES[(int) (n % 10)]), BinaryString.fromString(METHODS[(int) (n % 4)]),
                Timestamp.fromMicros(EPOCH_MICROS + n * 1000),
                BinaryString.fromString(String.format("d%03d", n % partitions)));
    }

    static void write(Catalog catalog, Identifier id, long rows, int partitions, Dataset dataset, PrintStream out)
            throws Exception {
        catalog.createDatabase(id.getDatabaseName(), true);
        Identifier warmup = Identifier.create(id.getDatabaseName(), id.getObjectName() + "_warmup");
        catalog.createTable(warmup, schema(), false);
        writeRows(catalog.getTable(warmup), rows(Math.min(rows, Math.max(1000, rows / 10)), partitions, dataset));
        catalog.createTable(id, schema(), false);
        Table t = catalog.getTable(id);
        List<GenericRow> data = rows(rows, partitions, dataset);
        System.gc(); // start the clock from a collected heap, as the Go harness does
        com.sun.management.OperatingSystemMXBean os = os();
        long wall0 = System.nanoTime();
        long proc0 = os.getProcessCpuTime();
        writeRows(t, data);
        double wall = (System.nanoTime() - wall0) / 1e9;
        double proc = (os.getProcessCpuTime() - proc0) / 1e9;
        out.println("{\"paimon\":" + Canonical.quote(Main.paimonVersion()) + ",\"rows\":" + rows
                + ",\"seconds\":" + String.format("%.4f", wall) + ",\"processCpuSeconds\":" + String.format("%.4f", proc)
                + "}");
    }

    private static List<GenericRow> rows(long rows, int partitions, Dataset dataset) {
        List<GenericRow> data = new ArrayList<>((int) rows);
        for (long n = 1; n <= rows; n++) {
            data.add(dataset.row(n, partitions));
        }
        return data;
    }

    /** One batch write of data and its commit. */
    private static void writeRows(Table t, List<GenericRow> data) throws Exception {
        BatchWriteBuilder wb = t.newBatchWriteBuilder();
        try (BatchTableWrite w = wb.newWrite(); BatchTableCommit c = wb.newCommit()) {
            for (GenericRow r : data) {
                w.write(r);
            }
            c.commit(w.prepareCommit());
        }
    }

    private static Schema schema() {
        return Schema.newBuilder()
                .column("id", DataTypes.BIGINT().notNull())
                .column("user_id", DataTypes.BIGINT().notNull())
                .column("user", DataTypes.STRING().notNull())
                .column("amount", DataTypes.DECIMAL(10, 2).notNull())
                .column("country", DataTypes.STRING().notNull())
                .column("method", DataTypes.STRING().notNull())
                .column("event_time", DataTypes.TIMESTAMP(6).notNull())
                .column("dt", DataTypes.STRING().notNull())
                .partitionKeys("dt")
                .build();
    }

    static void read(Catalog catalog, Identifier id, PrintStream out) throws Exception {
        Table t = catalog.getTable(id);
        readAll(t);
        System.gc();
        com.sun.management.OperatingSystemMXBean os = os();
        long wall0 = System.nanoTime();
        long proc0 = os.getProcessCpuTime();
        long[] n = readAll(t);
        double wall = (System.nanoTime() - wall0) / 1e9;
        double proc = (os.getProcessCpuTime() - proc0) / 1e9;
        out.println("{\"paimon\":" + Canonical.quote(Main.paimonVersion()) + ",\"rows\":" + n[0] + ",\"idSum\":" + n[1]
                + ",\"seconds\":" + String.format("%.4f", wall) + ",\"processCpuSeconds\":" + String.format("%.4f", proc)
                + "}");
    }

    /** A full read of t: plan and every row; returns the rows and the sum of their ids. */
    private static long[] readAll(Table t) throws Exception {
        ReadBuilder rb = t.newReadBuilder();
        List<Split> splits = rb.newScan().plan().splits();
        long[] n = {0, 0};
        try (RecordReader<InternalRow> r = rb.newRead().createReader(splits)) {
            r.forEachRemaining(row -> {
                n[0]++;
                n[1] += row.getLong(0);
            });
        }
        return n;
    }
}
