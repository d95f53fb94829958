package org.benthospaimon.interop;

import java.io.PrintStream;
import java.util.HashMap;
import java.util.Map;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.SnapshotNotExistPlan;
import org.apache.paimon.table.source.StreamTableScan;
import org.apache.paimon.table.source.TableRead;
import org.apache.paimon.table.source.TableScan;
import org.apache.paimon.types.RowType;

/**
 * The streaming read of a (primary-key) table, bounded: Java's StreamTableScan with the given scan.mode, plan
 * after plan until no snapshot is left that existed when the scan started. Every plan that has records prints
 * a header line and then its records in Java's order, each with its row kind.
 */
final class PkReader {

    private PkReader() {}

    static void stream(Catalog catalog, Identifier id, String mode, Long snapshot, PrintStream out)
            throws Exception {
        FileStoreTable base = (FileStoreTable) catalog.getTable(id);
        Long end = base.snapshotManager().latestSnapshotId();
        if (end == null) {
            return;
        }
        Map<String, String> opts = new HashMap<>();
        if (mode != null) {
            opts.put("scan.mode", mode);
        }
        if (snapshot != null) {
            opts.put("scan.snapshot-id", String.valueOf(snapshot));
        }
        FileStoreTable t = base.copy(opts);
        RowType rowType = t.rowType();
        ReadBuilder rb = t.newReadBuilder();
        StreamTableScan scan = rb.newStreamScan();
        TableRead read = rb.newRead();
        int plans = 0;
        // a bound on empty plans in a row (latest/from-snapshot start with one); the end is next > end
        for (int idle = 0; idle < 1000; ) {
            TableScan.Plan plan = scan.plan();
            Long next = scan.checkpoint();
            if (plan instanceof SnapshotNotExistPlan || plan.splits().isEmpty()) {
                if (next == null || next > end) {
                    break;
                }
                idle++;
                continue;
            }
            idle = 0;
            long snap = next - 1;
            StringBuilder records = new StringBuilder();
            int[] n = {0};
            try (RecordReader<InternalRow> r = read.createReader(plan)) {
                r.forEachRemaining(row -> {
                    records.append("{\"snapshot\":").append(snap).append(",\"kind\":")
                            .append(Canonical.quote(row.getRowKind().shortString())).append(",\"row\":")
                            .append(Canonical.row(rowType, row)).append("}\n");
                    n[0]++;
                });
            }
            plans++;
            out.println("{\"plan\":" + plans + ",\"snapshot\":" + snap + ",\"splits\":" + plan.splits().size()
                    + ",\"records\":" + n[0] + "}");
            out.print(records);
            if (next > end) {
                break;
            }
        }
    }
}
