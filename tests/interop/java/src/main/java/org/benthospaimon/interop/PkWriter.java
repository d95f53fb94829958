package org.benthospaimon.interop;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
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

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.index.HashBucketAssigner;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.schema.SchemaChange;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.RowPartitionKeyExtractor;
import org.apache.paimon.table.sink.StreamTableCommit;
import org.apache.paimon.table.sink.StreamTableWrite;
import org.apache.paimon.table.sink.StreamWriteBuilder;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.types.RowKind;
import org.apache.paimon.types.RowType;

/**
 * Writes a primary-key table from a PK spec (tests/interop/README.md, "Primary-key tables"): a list of
 * commits, each a list of changes with row kinds, through ONE StreamTableWrite kept open across commits (as a
 * Flink sink keeps its writer), so that Java's own compactions (and lookup / full-compaction changelog, and
 * deletion vectors) run between commits exactly as in a streaming job. Each commit is
 * prepareCommit(waitCompaction, identifier) + StreamTableCommit.commit(identifier, ...). An "alter" step
 * closes the writer, changes the schema and opens a new writer (a job restart).
 */
final class PkWriter {

    private PkWriter() {}

    /** The open writer of one table schema. */
    private static final class Session implements AutoCloseable {
        final FileStoreTable table;
        final StreamWriteBuilder builder;
        final StreamTableWrite write;
        final StreamTableCommit commit;
        final java.nio.file.Path tmp;
        final RowType rowType;
        final int[] keyIndex;
        final int[] partIndex;
        /** (partition bytes, bucket) pairs written by this session, for "compact". */
        final Map<String, Object[]> written = new LinkedHashMap<>();
        /**
         * With "hashAssigner": Java's own dynamic-bucket assigner, as Flink's HashBucketAssignerOperator runs it
         * with one assigner task (restored from the table's HASH index), and its key extractor.
         */
        HashBucketAssigner assigner;
        RowPartitionKeyExtractor extractor;

        Session(Catalog catalog, Identifier id, String user) throws Exception {
            table = (FileStoreTable) catalog.getTable(id);
            builder = table.newStreamWriteBuilder().withCommitUser(user);
            // lookup (changelog-producer lookup, deletion vectors, first-row) spills to a temp directory
            tmp = Files.createTempDirectory("pk-write-");
            write = builder.newWrite();
            write.withIOManager(IOManager.create(tmp.toString()));
            commit = builder.newCommit();
            rowType = table.rowType();
            List<String> names = rowType.getFieldNames();
            keyIndex = table.primaryKeys().stream().mapToInt(names::indexOf).toArray();
            partIndex = table.partitionKeys().stream().mapToInt(names::indexOf).toArray();
        }

        void useHashAssigner(String user) {
            assigner = new HashBucketAssigner(table.snapshotManager(), user, table.store().newIndexFileHandler(), 1, 1, 0,
                    table.coreOptions().dynamicBucketTargetRowNum(), table.coreOptions().dynamicBucketMaxBuckets());
            extractor = new RowPartitionKeyExtractor(table.schema());
        }

        @Override
        public void close() throws Exception {
            try {
                write.close();
            } finally {
                commit.close();
                deleteTree(tmp);
            }
        }
    }

    static void write(Catalog catalog, Identifier id, Path specFile, PrintStream out) throws Exception {
        ObjectMapper mapper = new ObjectMapper()
                .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
                .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
        JsonNode spec = mapper.readTree(Files.readAllBytes(specFile));
        // "random", "model", "streams", "expect" are read by the Go driver (it expands "random" into commits)
        checkKeys(spec, "spec", "description", "schema", "partitionKeys", "primaryKeys", "options", "commitUser", "continue",
                "waitCompaction", "dynamicBuckets", "hashAssigner", "commits", "random", "model", "streams", "expect");
        if (spec.has("random") && !spec.has("commits")) {
            throw new IllegalArgumentException("spec has \"random\" but no \"commits\": the Go driver expands it"
                    + " (tests/interop/pk_model_test.go)");
        }
        String user = spec.path("commitUser").asText("interop-java-pk");
        boolean wait = spec.path("waitCompaction").asBoolean(true);
        int dynamicBuckets = spec.path("dynamicBuckets").asInt(2);
        boolean hashAssigner = spec.path("hashAssigner").asBoolean(false);

        if (spec.path("continue").asBoolean(false)) {
            catalog.getTable(id); // an existing table (e.g. written by lakecore) goes on
        } else {
            createTable(catalog, id, spec);
        }

        Session s = new Session(catalog, id, user);
        if (hashAssigner) {
            s.useHashAssigner(user);
        }
        try {
            int step = 0;
            for (JsonNode c : spec.path("commits")) {
                String kind = c.path("kind").asText();
                Long before = s.table.snapshotManager().latestSnapshotId();
                String detail;
                try {
                    switch (kind) {
                        case "changes": {
                            checkKeys(c, "changes", "kind", "changes", "waitCompaction");
                            int n = 0;
                            for (JsonNode ch : c.path("changes")) {
                                writeChange(s, ch, dynamicBuckets, n);
                                n++;
                            }
                            long ident = nextIdentifier(s.table, user);
                            if (s.assigner != null) {
                                s.assigner.prepareCommit(ident); // prepareSnapshotPreBarrier
                            }
                            List<CommitMessage> msgs = s.write.prepareCommit(
                                    c.path("waitCompaction").asBoolean(wait), ident);
                            s.commit.commit(ident, msgs);
                            detail = "\"changes\":" + n + ",\"commitIdentifier\":" + ident;
                            break;
                        }
                        case "compact": {
                            checkKeys(c, "compact", "kind", "full");
                            boolean full = c.path("full").asBoolean(true);
                            int units = 0;
                            for (Object[] pb : buckets(s)) {
                                s.write.compact((BinaryRow) pb[0], (Integer) pb[1], full);
                                units++;
                            }
                            long ident = nextIdentifier(s.table, user);
                            s.commit.commit(ident, s.write.prepareCommit(true, ident));
                            detail = "\"units\":" + units + ",\"commitIdentifier\":" + ident;
                            break;
                        }
                        case "alter": {
                            checkKeys(c, "alter", "kind", "addColumns", "setOptions", "removeOptions");
                            s.close();
                            s = null;
                            List<SchemaChange> changes = new ArrayList<>();
                            for (JsonNode a : c.path("addColumns")) {
                                checkKeys(a, "addColumns", "name", "type");
                                changes.add(SchemaChange.addColumn(a.path("name").asText(),
                                        TypeParser.parse(a.path("type").asText())));
                            }
                            for (Iterator<Map.Entry<String, JsonNode>> it = c.path("setOptions").fields();
                                    it.hasNext(); ) {
                                Map.Entry<String, JsonNode> e = it.next();
                                changes.add(SchemaChange.setOption(e.getKey(), e.getValue().asText()));
                            }
                            for (JsonNode k : c.path("removeOptions")) {
                                changes.add(SchemaChange.removeOption(k.asText()));
                            }
                            catalog.alterTable(id, changes, false);
                            s = new Session(catalog, id, user);
                            if (hashAssigner) {
                                s.useHashAssigner(user);
                            }
                            detail = "\"schemaId\":" + s.table.schema().id();
                            break;
                        }
                        default:
                            throw new IllegalArgumentException("unknown commit kind '" + kind + "'");
                    }
                } catch (Exception e) {
                    throw new Exception("commit " + step + " (" + kind + "): " + e.getMessage(), e);
                }
                Long latest = s.table.snapshotManager().latestSnapshotId();
                long first = before == null ? 1 : before + 1;
                String snaps = latest == null || latest < first ? "" : ",\"firstSnapshot\":" + first;
                out.println("{\"step\":" + step + ",\"kind\":" + Canonical.quote(kind) + ",\"snapshot\":" + latest
                        + snaps + (detail.isEmpty() ? "" : "," + detail) + "}");
                step++;
            }
        } finally {
            if (s != null) {
                s.close();
            }
        }
    }

    private static void deleteTree(java.nio.file.Path dir) throws java.io.IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (java.util.stream.Stream<java.nio.file.Path> paths = Files.walk(dir)) {
            for (java.nio.file.Path p : (Iterable<java.nio.file.Path>) paths.sorted(java.util.Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        }
    }

    private static void writeChange(Session s, JsonNode ch, int dynamicBuckets, int n) throws Exception {
        checkKeys(ch, "change", "kind", "row");
        GenericRow row;
        try {
            row = Canonical.rowFromJson(s.rowType, ch.path("row"));
            row.setRowKind(RowKind.fromShortString(ch.path("kind").asText()));
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("change " + n + ": " + e.getMessage(), e);
        }
        int bucketOption = s.table.coreOptions().bucket();
        if (bucketOption == -1 && s.assigner != null) {
            // HashBucketAssignerOperator.processElement
            int bucket = s.assigner.assign(s.extractor.partition(row), s.extractor.trimmedPrimaryKey(row).hashCode());
            s.write.write(row, bucket);
            remember(s, row, bucket);
        } else if (bucketOption == -1) {
            // dynamic bucket: Flink's assigner operator picks the bucket and calls write(row, bucket); here a
            // deterministic function of the primary key (a key always goes to the same bucket)
            StringBuilder key = new StringBuilder();
            for (int i : s.keyIndex) {
                key.append(Canonical.value(s.rowType.getTypeAt(i), row.getField(i))).append('\u0000');
            }
            int bucket = Math.floorMod(key.toString().hashCode(), dynamicBuckets);
            s.write.write(row, bucket);
            remember(s, row, bucket);
        } else {
            s.write.write(row);
            remember(s, row, s.write.getBucket(row));
        }
    }

    private static void remember(Session s, GenericRow row, int bucket) {
        BinaryRow part = s.write.getPartition(row).copy();
        s.written.putIfAbsent(java.util.Arrays.toString(part.toBytes()) + "/" + bucket, new Object[] {part, bucket});
    }

    /** Every (partition, bucket) of the live files plus those this session wrote. */
    private static List<Object[]> buckets(Session s) {
        Map<String, Object[]> all = new LinkedHashMap<>();
        for (Split sp : s.table.newReadBuilder().newScan().plan().splits()) {
            DataSplit ds = (DataSplit) sp;
            all.putIfAbsent(java.util.Arrays.toString(ds.partition().toBytes()) + "/" + ds.bucket(),
                    new Object[] {ds.partition(), ds.bucket()});
        }
        s.written.forEach(all::putIfAbsent);
        List<Object[]> out = new ArrayList<>();
        Set<String> seen = new LinkedHashSet<>();
        all.forEach((k, v) -> {
            if (seen.add(k)) {
                out.add(v);
            }
        });
        return out;
    }

    private static long nextIdentifier(FileStoreTable t, String user) {
        return t.snapshotManager().latestSnapshotOfUser(user).map(sn -> sn.commitIdentifier() + 1).orElse(1L);
    }

    private static void createTable(Catalog catalog, Identifier id, JsonNode spec) throws Exception {
        try {
            catalog.getTable(id);
            throw new IllegalArgumentException("table " + id + " exists: a PK spec writes a new table");
        } catch (Catalog.TableNotExistException e) {
            // expected
        }
        Schema.Builder b = Schema.newBuilder();
        for (JsonNode f : spec.path("schema")) {
            checkKeys(f, "schema field", "name", "type");
            b.column(f.path("name").asText(), TypeParser.parse(f.path("type").asText()));
        }
        b.partitionKeys(strings(spec.path("partitionKeys")));
        List<String> pks = strings(spec.path("primaryKeys"));
        if (pks.isEmpty()) {
            throw new IllegalArgumentException("a PK spec needs primaryKeys");
        }
        b.primaryKey(pks);
        Map<String, String> options = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = spec.path("options").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            options.put(e.getKey(), e.getValue().asText());
        }
        b.options(options);
        catalog.createDatabase(id.getDatabaseName(), true);
        catalog.createTable(id, b.build(), false);
    }

    private static List<String> strings(JsonNode n) {
        List<String> out = new ArrayList<>();
        for (JsonNode s : n) {
            out.add(s.asText());
        }
        return out;
    }

    static void checkKeys(JsonNode n, String what, String... allowed) {
        Set<String> ok = new java.util.HashSet<>(List.of(allowed));
        for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
            String k = it.next();
            if (!ok.contains(k)) {
                throw new IllegalArgumentException(what + ": unknown key '" + k + "'");
            }
        }
    }
}
