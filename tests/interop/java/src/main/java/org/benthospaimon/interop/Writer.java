package org.benthospaimon.interop;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.apache.paimon.CoreOptions;
import org.apache.paimon.append.AppendCompactCoordinator;
import org.apache.paimon.append.AppendCompactTask;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.consumer.Consumer;
import org.apache.paimon.consumer.ConsumerManager;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.operation.BaseAppendFileStoreWrite;
import org.apache.paimon.operation.CleanOrphanFilesResult;
import org.apache.paimon.operation.LocalOrphanFilesClean;
import org.apache.paimon.options.ExpireConfig;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.schema.SchemaChange;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.StreamTableCommit;
import org.apache.paimon.table.sink.StreamTableWrite;
import org.apache.paimon.table.sink.StreamWriteBuilder;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.RowType;

/**
 * The write side: runs a JSON spec (see tests/interop/README.md, "Write specs") against a table through the
 * FileSystemCatalog, and Java's own snapshot expiry.
 */
final class Writer {

    private Writer() {}

    static final String DEFAULT_COMMIT_USER = "interop-java";

    static void write(Catalog catalog, Identifier id, Path specFile, PrintStream out) throws Exception {
        ObjectMapper mapper = new ObjectMapper()
                .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
                .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
        JsonNode spec = mapper.readTree(Files.readAllBytes(specFile));
        checkKeys(spec, "spec", "description", "schema", "partitionKeys", "primaryKeys", "options", "commitUser",
                "filters", "expectJavaSnapshots", "commits");
        String user = spec.path("commitUser").asText(DEFAULT_COMMIT_USER);

        ensureTable(catalog, id, spec);

        int step = 0;
        for (JsonNode c : spec.path("commits")) {
            String kind = c.path("kind").asText();
            String detail;
            try {
                switch (kind) {
                    case "append":
                        checkKeys(c, "append", "kind", "rows");
                        detail = append(catalog, id, user, c.path("rows"));
                        break;
                    case "overwrite":
                        checkKeys(c, "overwrite", "kind", "partition", "rows");
                        detail = overwrite(catalog, id, c.path("partition"), c.path("rows"));
                        break;
                    case "alter":
                        checkKeys(c, "alter", "kind", "addColumns", "renameColumns", "dropColumns",
                                "updateColumnTypes", "setOptions", "removeOptions");
                        detail = alter(catalog, id, c);
                        break;
                    case "expire":
                        checkKeys(c, "expire", "kind", "retainMax", "retainMin");
                        detail = "\"expired\":" + expire(catalog, id, c.path("retainMax").asInt(Integer.MAX_VALUE),
                                c.path("retainMin").asInt(1));
                        break;
                    case "compact":
                        checkKeys(c, "compact", "kind");
                        detail = compact(catalog, id, user);
                        break;
                    case "consumer":
                        checkKeys(c, "consumer", "kind", "id", "nextSnapshot");
                        detail = consumer(catalog, id, c.path("id").asText(), c.path("nextSnapshot").asLong());
                        break;
                    default:
                        throw new IllegalArgumentException("unknown commit kind '" + kind + "'");
                }
            } catch (Exception e) {
                throw new Exception("commit " + step + " (" + kind + "): " + e.getMessage(), e);
            }
            Long latest = ((FileStoreTable) catalog.getTable(id)).snapshotManager().latestSnapshotId();
            out.println("{\"step\":" + step + ",\"kind\":" + Canonical.quote(kind) + ",\"snapshot\":" + latest
                    + (detail.isEmpty() ? "" : "," + detail) + "}");
            step++;
        }
    }

    /** Creates the database and table unless the table exists; an existing table must match "schema". */
    private static void ensureTable(Catalog catalog, Identifier id, JsonNode spec) throws Exception {
        List<DataField> fields = new ArrayList<>();
        for (JsonNode f : spec.path("schema")) {
            checkKeys(f, "schema field", "name", "type", "description");
            DataType t = TypeParser.parse(f.path("type").asText());
            fields.add(new DataField(fields.size(), f.path("name").asText(), t,
                    f.hasNonNull("description") ? f.get("description").asText() : null));
        }
        Table existing;
        try {
            existing = catalog.getTable(id);
        } catch (Catalog.TableNotExistException e) {
            existing = null;
        }
        if (existing != null) {
            if (!fields.isEmpty()) {
                List<String> want = new ArrayList<>();
                List<String> got = new ArrayList<>();
                fields.forEach(f -> want.add(f.name() + " " + f.type().asSQLString()));
                existing.rowType().getFields().forEach(f -> got.add(f.name() + " " + f.type().asSQLString()));
                if (!want.equals(got)) {
                    throw new IllegalArgumentException("table " + id + " exists with schema " + got
                            + ", the spec says " + want);
                }
            }
            return;
        }
        if (fields.isEmpty()) {
            throw new IllegalArgumentException("table " + id + " does not exist and the spec has no schema");
        }
        Schema.Builder b = Schema.newBuilder();
        for (DataField f : fields) {
            b.column(f.name(), f.type(), f.description());
        }
        b.partitionKeys(strings(spec.path("partitionKeys")));
        List<String> pks = strings(spec.path("primaryKeys"));
        if (!pks.isEmpty()) {
            b.primaryKey(pks);
        }
        Map<String, String> options = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = spec.path("options").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            options.put(e.getKey(), e.getValue().asText());
        }
        b.options(options);
        catalog.createDatabase(id.getDatabaseName(), true);
        catalog.createTable(id, b.build(), false);
    }

    private static List<GenericRow> rows(RowType type, JsonNode rows) {
        List<GenericRow> out = new ArrayList<>();
        int i = 0;
        for (JsonNode r : rows) {
            try {
                out.add(Canonical.rowFromJson(type, r));
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("row " + i + ": " + e.getMessage(), e);
            }
            i++;
        }
        return out;
    }

    /** Next commit identifier of this user: one past its latest snapshot's, or 1. */
    private static long nextIdentifier(FileStoreTable t, String user) {
        return t.snapshotManager().latestSnapshotOfUser(user).map(s -> s.commitIdentifier() + 1).orElse(1L);
    }

    private static String append(Catalog catalog, Identifier id, String user, JsonNode rowsNode) throws Exception {
        FileStoreTable t = (FileStoreTable) catalog.getTable(id);
        List<GenericRow> rows = rows(t.rowType(), rowsNode);
        long ident = nextIdentifier(t, user);
        StreamWriteBuilder wb = t.newStreamWriteBuilder().withCommitUser(user);
        try (StreamTableWrite w = wb.newWrite(); StreamTableCommit c = wb.newCommit()) {
            for (GenericRow r : rows) {
                w.write(r);
            }
            List<CommitMessage> msgs = w.prepareCommit(false, ident);
            c.commit(ident, msgs);
        }
        return "\"rows\":" + rows.size() + ",\"commitIdentifier\":" + ident;
    }

    private static String overwrite(Catalog catalog, Identifier id, JsonNode partNode, JsonNode rowsNode)
            throws Exception {
        FileStoreTable t = (FileStoreTable) catalog.getTable(id);
        String defaultName = t.coreOptions().partitionDefaultName();
        Map<String, String> partition = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = partNode.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            partition.put(e.getKey(), e.getValue().isNull() ? defaultName : e.getValue().asText());
        }
        List<GenericRow> rows = rows(t.rowType(), rowsNode);
        BatchWriteBuilder wb = t.newBatchWriteBuilder().withOverwrite(partition);
        try (BatchTableWrite w = wb.newWrite(); BatchTableCommit c = wb.newCommit()) {
            for (GenericRow r : rows) {
                w.write(r);
            }
            c.commit(w.prepareCommit());
        }
        return "\"rows\":" + rows.size();
    }

    private static String alter(Catalog catalog, Identifier id, JsonNode c) throws Exception {
        List<SchemaChange> changes = new ArrayList<>();
        for (JsonNode a : c.path("addColumns")) {
            checkKeys(a, "addColumns", "name", "type", "description");
            changes.add(SchemaChange.addColumn(a.path("name").asText(), TypeParser.parse(a.path("type").asText()),
                    a.hasNonNull("description") ? a.get("description").asText() : null));
        }
        for (JsonNode r : c.path("renameColumns")) {
            checkKeys(r, "renameColumns", "from", "to");
            changes.add(SchemaChange.renameColumn(r.path("from").asText(), r.path("to").asText()));
        }
        for (JsonNode d : c.path("dropColumns")) {
            changes.add(SchemaChange.dropColumn(d.asText()));
        }
        for (JsonNode u : c.path("updateColumnTypes")) {
            checkKeys(u, "updateColumnTypes", "name", "type");
            changes.add(SchemaChange.updateColumnType(u.path("name").asText(),
                    TypeParser.parse(u.path("type").asText())));
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = c.path("setOptions").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            changes.add(SchemaChange.setOption(e.getKey(), e.getValue().asText()));
        }
        for (JsonNode k : c.path("removeOptions")) {
            changes.add(SchemaChange.removeOption(k.asText()));
        }
        catalog.alterTable(id, changes, false);
        long schemaId = ((FileStoreTable) catalog.getTable(id)).schema().id();
        return "\"schemaId\":" + schemaId;
    }

    /** Java's snapshot expiry (ExpireSnapshotsImpl): keeps at most retainMax, at least retainMin. */
    static int expire(Catalog catalog, Identifier id, int retainMax, int retainMin) throws Exception {
        Table t = catalog.getTable(id);
        return t.newExpireSnapshots()
                .config(ExpireConfig.builder()
                        .snapshotRetainMax(retainMax)
                        .snapshotRetainMin(retainMin)
                        .snapshotTimeRetain(Duration.ofMillis(Long.MAX_VALUE))
                        .build())
                .expire();
    }

    /**
     * What a Java writer runs after each commit (AbstractFileStoreTable.newExpireRunnable), with the table's own
     * options: ExpireSnapshotsImpl, then ExpireChangelogImpl when the changelog outlives the snapshots
     * (CoreOptions.changelogLifecycleDecoupled). Unlike {@link #expire}, this honours changelog.num-retained.* and
     * changelog.time-retained, keeping expired snapshots as changelog/changelog-N.
     */
    static String expireTable(Catalog catalog, Identifier id) throws Exception {
        FileStoreTable t = (FileStoreTable) catalog.getTable(id);
        CoreOptions o = t.coreOptions();
        ExpireConfig cfg = o.expireConfig();
        int snapshots = t.newExpireSnapshots().config(cfg).expire();
        int changelogs = o.changelogLifecycleDecoupled() ? t.newExpireChangelog().config(cfg).expire() : 0;
        return "{\"expired\":" + snapshots + ",\"changelogsExpired\":" + changelogs + "}";
    }

    /** Java's remove_orphan_files (LocalOrphanFilesClean) for files last modified before olderThanMillis. */
    static String removeOrphans(Catalog catalog, Identifier id, long olderThanMillis) throws Exception {
        FileStoreTable t = (FileStoreTable) catalog.getTable(id);
        CleanOrphanFilesResult r = new LocalOrphanFilesClean(t, olderThanMillis).clean();
        return "{\"deleted\":" + r.getDeletedFileCount() + "}";
    }

    /**
     * A full compaction: per (partition, bucket) through TableWrite.compact for fixed-bucket tables, through
     * AppendCompactCoordinator + AppendCompactTask (what Flink's compact job runs) for bucket -1 tables.
     */
    private static String compact(Catalog catalog, Identifier id, String user) throws Exception {
        FileStoreTable t = (FileStoreTable) catalog.getTable(id);
        long ident = nextIdentifier(t, user);
        StreamWriteBuilder wb = t.newStreamWriteBuilder().withCommitUser(user);
        List<CommitMessage> msgs = new ArrayList<>();
        int units = 0;
        if (t.coreOptions().bucket() > 0) {
            Set<String> seen = new LinkedHashSet<>();
            try (StreamTableWrite w = wb.newWrite()) {
                for (Split s : t.newReadBuilder().newScan().plan().splits()) {
                    DataSplit ds = (DataSplit) s;
                    BinaryRow part = ds.partition();
                    if (seen.add(java.util.Arrays.toString(part.toBytes()) + "/" + ds.bucket())) {
                        w.compact(part, ds.bucket(), true);
                        units++;
                    }
                }
                msgs.addAll(w.prepareCommit(true, ident));
            }
        } else {
            List<AppendCompactTask> tasks = new AppendCompactCoordinator(t, false).run();
            BaseAppendFileStoreWrite write = (BaseAppendFileStoreWrite) t.store().newWrite(user);
            try {
                for (AppendCompactTask task : tasks) {
                    msgs.add(task.doCompact(t, write));
                    units++;
                }
            } finally {
                write.close();
            }
        }
        if (units > 0) {
            try (StreamTableCommit c = wb.newCommit()) {
                c.commit(ident, msgs);
            }
        }
        return "\"units\":" + units;
    }

    private static String consumer(Catalog catalog, Identifier id, String consumerId, long next) throws Exception {
        FileStoreTable t = (FileStoreTable) catalog.getTable(id);
        new ConsumerManager(t.fileIO(), t.location()).resetConsumer(consumerId, new Consumer(next));
        return "\"consumer\":" + Canonical.quote(consumerId);
    }

    private static List<String> strings(JsonNode n) {
        List<String> out = new ArrayList<>();
        for (JsonNode s : n) {
            out.add(s.asText());
        }
        return out;
    }

    private static void checkKeys(JsonNode n, String what, String... allowed) {
        Set<String> ok = new java.util.HashSet<>(List.of(allowed));
        for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
            String k = it.next();
            if (!ok.contains(k)) {
                throw new IllegalArgumentException(what + ": unknown key '" + k + "'");
            }
        }
    }
}
