package org.benthospaimon.interop;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import org.apache.paimon.Snapshot;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.predicate.Predicate;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.types.RowType;

/** The read side: rows, the scan plan, and the snapshot list. */
final class Reader {

    private Reader() {}

    static Table table(Catalog catalog, Identifier id, Long snapshot) throws Catalog.TableNotExistException {
        Table t = catalog.getTable(id);
        if (snapshot != null) {
            t = t.copy(Map.of("scan.snapshot-id", String.valueOf(snapshot)));
        }
        return t;
    }

    /**
     * Prints every row (at the snapshot, or the latest) as a canonical JSON line, sorted by code point. The
     * filter is pushed into the ReadBuilder (partition, bucket, stats and file-index pruning), then applied to
     * every row exactly unless exact is false (which shows what pruning alone left).
     */
    static void read(Catalog catalog, Identifier id, Long snapshot, String filter, boolean exact, PrintStream out)
            throws Exception {
        read(catalog, id, snapshot, null, filter, exact, out);
    }

    /** {@link #read} at a snapshot or, with tag set, at that tag (scan.tag-name). */
    static void read(Catalog catalog, Identifier id, Long snapshot, String tag, String filter, boolean exact,
            PrintStream out) throws Exception {
        Table t = table(catalog, id, snapshot);
        if (tag != null) {
            t = t.copy(Map.of("scan.tag-name", tag));
        }
        RowType rowType = t.rowType();
        Predicate pred = filter == null ? null : Filters.parse(filter, rowType);
        ReadBuilder rb = t.newReadBuilder();
        if (pred != null) {
            rb = rb.withFilter(pred);
        }
        List<Split> splits = rb.newScan().plan().splits();
        List<String> lines = new ArrayList<>();
        try (RecordReader<InternalRow> r = rb.newRead().createReader(splits)) {
            r.forEachRemaining(row -> {
                if (!exact || pred == null || pred.test(row)) {
                    lines.add(Canonical.row(rowType, row));
                }
            });
        }
        lines.sort(Canonical::compareCodePoints);
        for (String l : lines) {
            out.println(l);
        }
    }

    /** Prints the files of the scan plan (after pruning by the filter), one JSON line per file, sorted. */
    static void plan(Catalog catalog, Identifier id, Long snapshot, String filter, PrintStream out)
            throws Exception {
        Table t = table(catalog, id, snapshot);
        ReadBuilder rb = t.newReadBuilder();
        if (filter != null) {
            rb = rb.withFilter(Filters.parse(filter, t.rowType()));
        }
        RowType partType = t.rowType().project(t.partitionKeys());
        List<String> lines = new ArrayList<>();
        for (Split s : rb.newScan().plan().splits()) {
            DataSplit ds = (DataSplit) s;
            String partition = Canonical.row(partType, ds.partition());
            for (DataFileMeta f : ds.dataFiles()) {
                String path = f.externalPath().orElse(ds.bucketPath() + "/" + f.fileName());
                lines.add("{\"partition\":" + partition + ",\"bucket\":" + ds.bucket() + ",\"file\":"
                        + Canonical.quote(f.fileName()) + ",\"path\":" + Canonical.quote(path)
                        + ",\"rowCount\":" + f.rowCount() + ",\"level\":"
                        + f.level() + ",\"schemaId\":" + f.schemaId() + "}");
            }
        }
        lines.sort(Canonical::compareCodePoints);
        for (String l : lines) {
            out.println(l);
        }
    }

    /** Prints every live snapshot, oldest first. */
    static void snapshots(Catalog catalog, Identifier id, PrintStream out) throws Exception {
        FileStoreTable t = (FileStoreTable) catalog.getTable(id);
        List<Snapshot> list = new ArrayList<>();
        for (Iterator<Snapshot> it = t.snapshotManager().snapshots(); it.hasNext(); ) {
            list.add(it.next());
        }
        list.sort((a, b) -> Long.compare(a.id(), b.id()));
        for (Snapshot s : list) {
            out.println("{\"id\":" + s.id() + ",\"schemaId\":" + s.schemaId() + ",\"kind\":"
                    + Canonical.quote(s.commitKind().name()) + ",\"totalRecordCount\":" + s.totalRecordCount()
                    + ",\"deltaRecordCount\":" + s.deltaRecordCount() + ",\"commitUser\":"
                    + Canonical.quote(s.commitUser()) + ",\"commitIdentifier\":" + s.commitIdentifier()
                    + ",\"timeMillis\":" + s.timeMillis() + "}");
        }
    }
}
