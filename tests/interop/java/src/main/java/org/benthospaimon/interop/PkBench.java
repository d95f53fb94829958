package org.benthospaimon.interop;

import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.List;
import java.util.Map;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.sink.StreamTableCommit;
import org.apache.paimon.table.sink.StreamTableWrite;
import org.apache.paimon.table.sink.StreamWriteBuilder;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.types.DataTypes;

/**
 * The merged-read benchmark: a deduplicate table (id BIGINT primary key, a BIGINT, b STRING, c DOUBLE) with
 * a fixed number of buckets and `runs` sorted runs per bucket (one commit per run, write-only so that Java
 * never compacts; commit r holds the keys k with k % runs == r, so every run spans the whole key range and
 * the reader merges all of them), then Java's batch read of it, timed.
 */
final class PkBench {

    private PkBench() {}

    static void run(Catalog catalog, Identifier id, long rows, int buckets, int runs, int reads, PrintStream out)
            throws Exception {
        FileStoreTable t;
        long writeMillis = -1;
        try {
            t = (FileStoreTable) catalog.getTable(id);
        } catch (Catalog.TableNotExistException e) {
            long start = System.nanoTime();
            Schema schema = Schema.newBuilder()
                    .column("id", DataTypes.BIGINT().notNull())
                    .column("a", DataTypes.BIGINT())
                    .column("b", DataTypes.STRING())
                    .column("c", DataTypes.DOUBLE())
                    .primaryKey("id")
                    .options(Map.of("bucket", String.valueOf(buckets), "write-only", "true",
                            "write-buffer-size", "512 mb", "write-buffer-spillable", "false",
                            "target-file-size", "1 gb"))
                    .build();
            catalog.createDatabase(id.getDatabaseName(), true);
            catalog.createTable(id, schema, false);
            t = (FileStoreTable) catalog.getTable(id);
            StreamWriteBuilder wb = t.newStreamWriteBuilder().withCommitUser("pk-bench");
            try (StreamTableWrite w = wb.newWrite(); StreamTableCommit c = wb.newCommit()) {
                for (int r = 0; r < runs; r++) {
                    for (long k = r; k < rows; k += runs) {
                        w.write(GenericRow.of(k, k * 7, BinaryString.fromString("value-" + k), k * 0.5));
                    }
                    c.commit(r + 1, w.prepareCommit(false, r + 1));
                }
            }
            writeMillis = (System.nanoTime() - start) / 1_000_000;
            t = (FileStoreTable) catalog.getTable(id);
        }
        ReadBuilder rb = t.newReadBuilder();
        List<Split> splits = rb.newScan().plan().splits();
        long files = 0;
        long bytes = 0;
        for (Split s : splits) {
            for (DataFileMeta f : ((DataSplit) s).dataFiles()) {
                files++;
                bytes += f.fileSize();
            }
        }
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        StringBuilder each = new StringBuilder();
        double bestWall = Double.MAX_VALUE;
        double bestCpu = Double.MAX_VALUE;
        double bestProc = Double.MAX_VALUE;
        long count = 0;
        for (int i = 0; i < reads; i++) {
            long wall0 = System.nanoTime();
            long cpu0 = mx.getCurrentThreadCpuTime();
            long proc0 = os.getProcessCpuTime();
            long[] n = {0, 0};
            try (RecordReader<InternalRow> r = rb.newRead().createReader(splits)) {
                r.forEachRemaining(row -> {
                    n[0]++;
                    n[1] += row.getLong(1);
                });
            }
            double wall = (System.nanoTime() - wall0) / 1e9;
            double cpu = (mx.getCurrentThreadCpuTime() - cpu0) / 1e9;
            double proc = (os.getProcessCpuTime() - proc0) / 1e9;
            count = n[0];
            bestWall = Math.min(bestWall, wall);
            bestCpu = Math.min(bestCpu, cpu);
            bestProc = Math.min(bestProc, proc);
            each.append(i == 0 ? "" : ",").append("{\"seconds\":").append(String.format("%.3f", wall))
                    .append(",\"threadCpuSeconds\":").append(String.format("%.3f", cpu))
                    .append(",\"processCpuSeconds\":").append(String.format("%.3f", proc)).append("}");
        }
        out.println("{\"paimon\":" + Canonical.quote(Main.paimonVersion()) + ",\"table\":"
                + Canonical.quote(t.location().toString()) + ",\"rows\":" + count + ",\"buckets\":"
                + t.coreOptions().bucket() + ",\"files\":" + files + ",\"bytes\":" + bytes + ",\"splits\":"
                + splits.size() + ",\"writeMillis\":" + writeMillis + ",\"reads\":[" + each + "]"
                + ",\"rowsPerSecond\":" + Math.round(count / bestWall)
                + ",\"rowsPerThreadCpuSecond\":" + Math.round(count / bestCpu)
                + ",\"rowsPerCpuSecond\":" + Math.round(count / bestProc) + "}");
    }
}
