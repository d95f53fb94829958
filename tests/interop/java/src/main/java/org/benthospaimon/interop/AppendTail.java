package org.benthospaimon.interop;

import java.io.PrintStream;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.StreamTableScan;
import org.apache.paimon.table.source.TableRead;
import org.apache.paimon.table.source.TableScan;

/**
 * The tail section of the benchmark report (tests/bench/tail.go): Java Paimon tailing a table as a streaming job
 * does, timed by the Go harness as a whole process (JVM start-up included), against benthos-paimon's own process
 * doing the same with the paimon input.
 *
 * <p>append-bench-tail opens a stream scan with the table's default streaming start (latest-full: the latest
 * snapshot in full, then each new one), reads every plan's splits, counts the rows and sums their ids (column 0),
 * and stops once it has read --rows rows. It prints one JSON line with the count and the id sum: a check, not a
 * timing. Nothing is warmed up: the figure is what a user waits for, start-up and JIT included.
 */
final class AppendTail {

    private AppendTail() {}

    static void tail(Catalog catalog, Identifier id, long rows, PrintStream out) throws Exception {
        Table t = catalog.getTable(id);
        ReadBuilder rb = t.newReadBuilder();
        StreamTableScan scan = rb.newStreamScan();
        TableRead read = rb.newRead();
        long[] n = {0, 0};
        long deadline = System.nanoTime() + 600_000_000_000L;
        while (n[0] < rows) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("read " + n[0] + " of " + rows + " rows in 600 s");
            }
            TableScan.Plan plan = scan.plan();
            if (plan.splits().isEmpty()) {
                Thread.sleep(10);
                continue;
            }
            try (RecordReader<InternalRow> r = read.createReader(plan)) {
                r.forEachRemaining(row -> {
                    n[0]++;
                    n[1] += row.getLong(0);
                });
            }
        }
        out.println("{\"paimon\":" + Canonical.quote(Main.paimonVersion()) + ",\"rows\":" + n[0] + ",\"idSum\":" + n[1]
                + "}");
    }
}
