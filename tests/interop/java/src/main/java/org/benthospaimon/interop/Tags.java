package org.benthospaimon.interop;

import java.io.PrintStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;

import org.apache.paimon.Snapshot;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.table.FileStoreTable;

/** Java's tags and rollback (TagManager, RollbackHelper) for the Go side's tag and rollback checks. */
final class Tags {

    private Tags() {}

    /** Prints {"name":N,"snapshot":ID} per tag, ordered by snapshot id and then as TagManager lists them. */
    static void list(Catalog catalog, Identifier id, PrintStream out) throws Exception {
        FileStoreTable t = (FileStoreTable) catalog.getTable(id);
        SortedMap<Snapshot, List<String>> tags = t.tagManager().tags();
        for (Map.Entry<Snapshot, List<String>> e : tags.entrySet()) {
            for (String name : e.getValue().stream().sorted().toList()) {
                out.println("{\"name\":" + Canonical.quote(name) + ",\"snapshot\":" + e.getKey().id() + "}");
            }
        }
    }

    /** The create_tag procedure: of the snapshot (default the latest), with an optional time retained. */
    static void create(Catalog catalog, Identifier id, String tag, Long snapshot, Long retainedMillis)
            throws Exception {
        FileStoreTable t = (FileStoreTable) catalog.getTable(id);
        Duration retained = retainedMillis == null ? null : Duration.ofMillis(retainedMillis);
        if (snapshot == null) {
            t.createTag(tag, retained);
        } else {
            t.createTag(tag, snapshot, retained);
        }
    }

    /** The delete_tag procedure. */
    static void delete(Catalog catalog, Identifier id, String tag) throws Exception {
        catalog.getTable(id).deleteTags(tag);
    }

    /** The rollback_to procedure: to a snapshot id or a tag. */
    static void rollback(Catalog catalog, Identifier id, Long snapshot, String tag) throws Exception {
        FileStoreTable t = (FileStoreTable) catalog.getTable(id);
        if (tag != null) {
            t.rollbackTo(tag);
        } else {
            t.rollbackTo(snapshot);
        }
    }
}
