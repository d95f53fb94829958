package org.benthospaimon.interop;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.sink.StreamTableCommit;
import org.apache.paimon.table.sink.StreamTableWrite;
import org.apache.paimon.table.sink.StreamWriteBuilder;
import org.apache.paimon.types.DataTypes;

/**
 * pk-upsert-bench: writes N changes into a new deduplicate table (id BIGINT primary key, a BIGINT, b STRING,
 * c DOUBLE; B buckets; Java's default compaction) in C commits and times the whole write, compactions
 * included (the last commit waits for them). A fraction U of the changes update an earlier key. The changes
 * come from the 64-bit LCG that tests/interop/pk_bench_test.go uses too, so lakecore writes exactly the same
 * ones: state = state * 6364136223846793005 + 1442695040888963407, a draw is (state >>> 33).
 */
final class PkUpsertBench {

    private PkUpsertBench() {}

    static final class Lcg {
        long state = 42;

        long next(long bound) {
            state = state * 6364136223846793005L + 1442695040888963407L;
            return Long.remainderUnsigned(state >>> 33, bound);
        }
    }

    /** Parses "k=v,k=v" (the --options flag) into table options. */
    static Map<String, String> parseOptions(String text) {
        Map<String, String> options = new java.util.HashMap<>();
        for (String kv : text.split(",")) {
            if (kv.isEmpty()) {
                continue;
            }
            int eq = kv.indexOf('=');
            if (eq <= 0) {
                throw new Main.UsageException("--options: " + kv + " is not key=value");
            }
            options.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
        return options;
    }

    static void run(Catalog catalog, Identifier id, long rows, int buckets, int commits, double updates,
            Map<String, String> extra, PrintStream out) throws Exception {
        Map<String, String> options = new java.util.HashMap<>(extra);
        options.put("bucket", String.valueOf(buckets));
        Schema schema = Schema.newBuilder()
                .column("id", DataTypes.BIGINT().notNull())
                .column("a", DataTypes.BIGINT())
                .column("b", DataTypes.STRING())
                .column("c", DataTypes.DOUBLE())
                .primaryKey("id")
                .options(options)
                .build();
        catalog.createDatabase(id.getDatabaseName(), true);
        catalog.createTable(id, schema, false);
        FileStoreTable t = (FileStoreTable) catalog.getTable(id);
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long wall0 = System.nanoTime();
        long proc0 = os.getProcessCpuTime();
        Lcg rng = new Lcg();
        long threshold = Math.round(updates * 1_000_000);
        long nextKey = 0;
        long perCommit = Math.max(1, rows / commits);
        StreamWriteBuilder wb = t.newStreamWriteBuilder().withCommitUser("pk-upsert-bench");
        // lookup (changelog-producer lookup, deletion vectors) spills to a temp directory,
        // removed with everything in it when the run ends, however it ends
        Path tmp = Files.createTempDirectory("pk-upsert-bench-");
        try (IOManager io = IOManager.create(tmp.toString());
                StreamTableWrite w = wb.newWrite();
                StreamTableCommit c = wb.newCommit()) {
            w.withIOManager(io);
            long commit = 0;
            for (long i = 0; i < rows; i++) {
                long k;
                if (nextKey > 0 && rng.next(1_000_000) < threshold) {
                    k = rng.next(nextKey);
                } else {
                    k = nextKey++;
                }
                w.write(GenericRow.of(k, i * 7, BinaryString.fromString("value-" + i), i * 0.5));
                if ((i + 1) % perCommit == 0 || i == rows - 1) {
                    commit++;
                    c.commit(commit, w.prepareCommit(i == rows - 1, commit));
                }
            }
        } finally {
            deleteRecursively(tmp);
        }
        double wall = (System.nanoTime() - wall0) / 1e9;
        double proc = (os.getProcessCpuTime() - proc0) / 1e9;
        out.println("{\"paimon\":" + Canonical.quote(Main.paimonVersion()) + ",\"table\":"
                + Canonical.quote(t.location().toString()) + ",\"changes\":" + rows + ",\"keys\":" + nextKey
                + ",\"seconds\":" + String.format("%.3f", wall) + ",\"processCpuSeconds\":" + String.format("%.3f", proc)
                + ",\"rowsPerSecond\":" + Math.round(rows / wall) + ",\"rowsPerCpuSecond\":" + Math.round(rows / proc) + "}");
    }

    /** Deletes dir and everything below it, deepest first. */
    private static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        }
    }
}
