package org.benthospaimon.interop;

import java.io.PrintStream;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.internal.TableResultInternal;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.data.RowData;
import org.apache.flink.util.CloseableIterator;

import org.apache.paimon.flink.FlinkRowWrapper;
import org.apache.paimon.flink.LogicalTypeConversion;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.RowType;

/**
 * The Flink SQL oracle: Flink's Table API with its planner, on a local mini-cluster in this JVM, and Paimon's
 * Flink connector (catalog type {@code paimon}). Rows print in the canonical JSON form of {@link Canonical}
 * (a query's result columns converted to Paimon types by the connector's own {@link LogicalTypeConversion}).
 *
 * <pre>
 * version                                                   {"flink":"2.0.0","paimon":"2.0.0","java":"17..."}
 * sql          --warehouse W --sql S                        batch mode: a query prints its rows, any other
 *                                                           statement (INSERT, CALL, DDL) runs to its end
 * stream-start --warehouse W --id ID --sql S                streaming mode: starts the query in the background
 * stream-take  --id ID --rows N [--timeout-ms T]            the next N rows of stream ID, as
 *                                                           {"kind":"+I|-U|+U|-D","row":{...}}; fails after T ms
 *                                                           (default 120000) naming the rows that did arrive
 * stream-poll  --id ID --ms T                               every row stream ID emits within T ms
 * stream-quiet --id ID --ms T                               fails if stream ID emits a row within T ms
 * stream-stop  --id ID                                      cancels the query
 * batch                                                     the batch protocol of {@link Main#batch}
 * </pre>
 *
 * Every warehouse gets one Paimon catalog per table environment, named {@code w0, w1, ...} in the order of first
 * use; statements run with it as the current catalog, so they name tables as {@code database.table}. Streaming
 * queries checkpoint every 500 ms, so that a {@code consumer-id} records its progress in the table.
 */
public final class FlinkMain {

    private FlinkMain() {}

    private static TableEnvironment batchEnv;
    private static TableEnvironment streamEnv;
    private static final Map<TableEnvironment, Map<String, String>> catalogs = new HashMap<>();
    private static final Map<String, Stream> streams = new HashMap<>();

    public static void main(String[] args) {
        Main.exit("flink-interop", null, args, FlinkMain::run);
    }

    static void run(String[] args, PrintStream out) throws Exception {
        if (args.length == 0) {
            throw new Main.UsageException("missing command");
        }
        Map<String, String> flags = Main.parseFlags(args, 1);
        switch (args[0]) {
            case "version":
                Main.allow(flags);
                out.println("{\"flink\":" + Canonical.quote(org.apache.flink.runtime.util.EnvironmentInformation.getVersion())
                        + ",\"paimon\":" + Canonical.quote(Main.paimonVersion())
                        + ",\"java\":" + Canonical.quote(System.getProperty("java.version")) + "}");
                return;
            case "sql": {
                Main.allow(flags, "warehouse", "sql");
                TableEnvironment env = env(false, Main.required(flags, "warehouse"));
                TableResult r = env.executeSql(Main.required(flags, "sql"));
                if (!isQuery(flags.get("sql"))) {
                    r.await();
                    return;
                }
                RowType type = paimonType(r.getResolvedSchema());
                try (CloseableIterator<RowData> it = ((TableResultInternal) r).collectInternal()) {
                    while (it.hasNext()) {
                        out.println(Canonical.row(type, new FlinkRowWrapper(it.next())));
                    }
                }
                return;
            }
            case "batch":
                Main.allow(flags);
                Main.batch(out, FlinkMain::run);
                return;
            case "stream-start": {
                Main.allow(flags, "warehouse", "sql", "id");
                String id = Main.required(flags, "id");
                if (streams.containsKey(id)) {
                    throw new Main.UsageException("stream " + id + " is already running");
                }
                TableEnvironment env = env(true, Main.required(flags, "warehouse"));
                TableResult r = env.executeSql(Main.required(flags, "sql"));
                Stream s = new Stream(r, paimonType(r.getResolvedSchema()));
                streams.put(id, s);
                s.start();
                return;
            }
            case "stream-take": {
                Main.allow(flags, "id", "rows", "timeout-ms");
                Stream s = stream(flags);
                long n = Main.longFlag(flags, "rows", true);
                Long t = Main.longFlag(flags, "timeout-ms");
                for (String line : s.take(n, t == null ? 120_000 : t)) {
                    out.println(line);
                }
                return;
            }
            case "stream-poll": {
                Main.allow(flags, "id", "ms");
                for (String line : stream(flags).take(Long.MAX_VALUE, Main.longFlag(flags, "ms", true), false)) {
                    out.println(line);
                }
                return;
            }
            case "stream-quiet": {
                Main.allow(flags, "id", "ms");
                List<String> extra = stream(flags).take(1, Main.longFlag(flags, "ms", true), false);
                if (!extra.isEmpty()) {
                    throw new IllegalStateException("stream " + flags.get("id") + " emitted " + extra.get(0)
                            + " where no more rows were expected");
                }
                return;
            }
            case "stream-stop": {
                Main.allow(flags, "id");
                Stream s = stream(flags);
                streams.remove(flags.get("id"));
                s.stop();
                return;
            }
            default:
                throw new Main.UsageException("unknown command " + args[0]);
        }
    }

    private static boolean isQuery(String sql) {
        String s = sql.stripLeading().toUpperCase(java.util.Locale.ROOT);
        return s.startsWith("SELECT") || s.startsWith("WITH") || s.startsWith("SHOW") || s.startsWith("DESC")
                || s.startsWith("CALL");
    }

    private static Stream stream(Map<String, String> flags) {
        String id = Main.required(flags, "id");
        Stream s = streams.get(id);
        if (s == null) {
            throw new Main.UsageException("no stream " + id);
        }
        return s;
    }

    /** The batch or streaming table environment, with warehouse's catalog current. */
    private static TableEnvironment env(boolean streaming, String warehouse) throws Exception {
        TableEnvironment env = streaming ? streamEnv : batchEnv;
        if (env == null) {
            Configuration conf = new Configuration();
            conf.setString("parallelism.default", "1");
            conf.setString("table.exec.resource.default-parallelism", "1");
            // every job goes to the one session mini-cluster of this JVM (a per-job cluster would start for each
            // statement: seconds per query)
            URI rest = cluster().getRestAddress().get();
            conf.setString("execution.target", "remote");
            conf.setString("rest.address", rest.getHost());
            conf.setString("rest.port", String.valueOf(rest.getPort()));
            if (streaming) {
                conf.setString("execution.checkpointing.interval", "500ms");
            }
            EnvironmentSettings.Builder b = EnvironmentSettings.newInstance().withConfiguration(conf);
            env = TableEnvironment.create((streaming ? b.inStreamingMode() : b.inBatchMode()).build());
            if (streaming) {
                streamEnv = env;
            } else {
                batchEnv = env;
            }
        }
        Map<String, String> names = catalogs.computeIfAbsent(env, e -> new HashMap<>());
        String abs = java.nio.file.Path.of(warehouse).toAbsolutePath().toString();
        String name = names.get(abs);
        if (name == null) {
            name = "w" + names.size();
            env.executeSql("CREATE CATALOG `" + name + "` WITH ('type'='paimon', 'warehouse'='file://"
                    + abs.replace("'", "''") + "')").await();
            names.put(abs, name);
        }
        env.useCatalog(name);
        return env;
    }

    private static MiniCluster cluster;

    /** The session mini-cluster, started on first use: one task manager with a slot per concurrent job. */
    private static MiniCluster cluster() throws Exception {
        if (cluster == null) {
            Configuration conf = new Configuration();
            conf.setString("rest.bind-port", "0");
            conf.setString("rest.address", "127.0.0.1");
            conf.setString("rest.bind-address", "127.0.0.1");
            conf.setString("taskmanager.memory.network.min", "32mb");
            conf.setString("taskmanager.memory.network.max", "32mb");
            conf.setString("taskmanager.memory.managed.size", "128mb");
            MiniCluster mc = new MiniCluster(new MiniClusterConfiguration.Builder()
                    .setConfiguration(conf)
                    .setNumTaskManagers(1)
                    .setNumSlotsPerTaskManager(8)
                    .build());
            mc.start();
            cluster = mc;
        }
        return cluster;
    }

    /** The Paimon row type of a result, for {@link Canonical}. */
    private static RowType paimonType(ResolvedSchema schema) {
        List<Column> cols = schema.getColumns();
        DataType[] types = new DataType[cols.size()];
        String[] names = new String[cols.size()];
        for (int i = 0; i < cols.size(); i++) {
            types[i] = LogicalTypeConversion.toDataType(cols.get(i).getDataType().getLogicalType());
            names[i] = cols.get(i).getName();
        }
        return RowType.of(types, names);
    }

    /** A streaming query whose rows a background thread collects. */
    private static final class Stream {
        private final TableResult result;
        private final RowType type;
        private final List<String> rows = new ArrayList<>();
        private Throwable failure;
        private boolean ended;
        private Thread thread;
        private CloseableIterator<RowData> it;

        Stream(TableResult result, RowType type) {
            this.result = result;
            this.type = type;
        }

        void start() {
            it = ((TableResultInternal) result).collectInternal();
            thread = new Thread(() -> {
                try {
                    while (it.hasNext()) {
                        RowData r = it.next();
                        String line = "{\"kind\":" + Canonical.quote(r.getRowKind().shortString()) + ",\"row\":"
                                + Canonical.row(type, new FlinkRowWrapper(r)) + "}";
                        synchronized (this) {
                            rows.add(line);
                            notifyAll();
                        }
                    }
                } catch (Throwable e) {
                    synchronized (this) {
                        failure = e;
                    }
                } finally {
                    synchronized (this) {
                        ended = true;
                        notifyAll();
                    }
                }
            }, "flink-interop-stream");
            thread.setDaemon(true);
            thread.start();
        }

        List<String> take(long n, long timeoutMs) throws InterruptedException {
            return take(n, timeoutMs, true);
        }

        /** The next n rows, or with strict false whatever arrived (at most n) within timeoutMs. */
        synchronized List<String> take(long n, long timeoutMs, boolean strict) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
            while (rows.size() < n && !ended) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            int k = (int) Math.min(n, rows.size());
            List<String> got = new ArrayList<>(rows.subList(0, k));
            if (strict && k < n) {
                String why = failure != null ? "the query failed: " + Main.describe(failure)
                        : ended ? "the query ended" : "timed out after " + timeoutMs + " ms";
                throw new IllegalStateException("stream: " + why + "; got " + k + " of " + n + " rows: " + got);
            }
            rows.subList(0, k).clear();
            return got;
        }

        void stop() throws Exception {
            try {
                it.close();
            } finally {
                if (result.getJobClient().isPresent()) {
                    try {
                        result.getJobClient().get().cancel().get(30, TimeUnit.SECONDS);
                    } catch (Exception ignored) {
                        // closing the iterator has already ended the job
                    }
                }
                thread.join(30_000);
            }
        }
    }
}
