package org.benthospaimon.interop;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.options.Options;

/**
 * Entry point of the Java Paimon interop oracle.
 *
 * <pre>
 * read      --warehouse W --database D --table T [--snapshot N] [--filter EXPR] [--no-exact]
 * plan      --warehouse W --database D --table T [--snapshot N] [--filter EXPR]
 * write     --warehouse W --database D --table T --spec FILE
 * expire    --warehouse W --database D --table T --retain-max N [--retain-min M]
 * expire-table --warehouse W --database D --table T   (the writer's expiry with the table's options)
 * remove-orphans --warehouse W --database D --table T --older-than-millis MS   (LocalOrphanFilesClean)
 * snapshots --warehouse W --database D --table T
 * pk-write  --warehouse W --database D --table T --spec FILE        (primary-key spec, {@link PkWriter})
 * stream    --warehouse W --database D --table T [--mode M] [--snapshot N]   (bounded, {@link PkReader})
 * pk-bench  --warehouse W [--database D] [--table T] [--rows N] [--buckets B] [--runs R] [--reads K]
 * pk-upsert-bench --warehouse W [--database D] [--table T] [--rows N] [--buckets B] [--commits C] [--updates U] [--options k=v,k=v]
 * append-bench-write --warehouse W [--database D] [--table T] --rows N [--partitions P] [--dataset payments|unique]   ({@link AppendBench})
 * append-bench-read  --warehouse W --database D --table T
 * append-bench-tail  --warehouse W --database D --table T --rows N   (stream until N rows, {@link AppendTail})
 * canon-float   (stdin "f|d HEXBITS" lines -> canonical float text, for cross-checks)
 * batch         (stdin: one JSON array of arguments per line; see {@link #batch})
 * version
 * </pre>
 *
 * Output goes to stdout as JSON lines; errors go to stderr as one line starting "paimon-interop:" and the
 * exit code is 1 (2 for a usage error).
 */
public final class Main {

    private Main() {}

    /** A usage error: exit code 2. */
    static final class UsageException extends RuntimeException {
        UsageException(String message) {
            super(message);
        }
    }

    public static void main(String[] args) {
        exit("paimon-interop", usage(), args, Main::run);
    }

    /**
     * Runs one command of a program of the oracle and exits: 0 when it succeeds, 2 for a usage error (with usage,
     * when not null), 1 for any other error, each error as one stderr line starting with name.
     */
    static void exit(String name, String usage, String[] args, Command command) {
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        int code;
        try {
            command.run(args, out);
            code = 0;
        } catch (UsageException e) {
            System.err.println(name + ": " + e.getMessage());
            if (usage != null) {
                System.err.println(usage);
            }
            code = 2;
        } catch (Throwable e) {
            System.err.println(name + ": " + (args.length > 0 ? args[0] + ": " : "") + describe(e));
            if (System.getenv("PAIMON_INTEROP_TRACE") != null) {
                e.printStackTrace();
            }
            code = 1;
        }
        out.flush();
        System.exit(code);
    }

    static void run(String[] args, PrintStream out) throws Exception {
        if (args.length == 0) {
            throw new UsageException("missing command");
        }
        String cmd = args[0];
        Map<String, String> flags = parseFlags(args, 1);
        switch (cmd) {
            case "version":
                out.println(
                        "{\"paimon\":"
                                + Canonical.quote(paimonVersion())
                                + ",\"java\":"
                                + Canonical.quote(System.getProperty("java.version"))
                                + "}");
                return;
            case "read":
                allow(flags, "warehouse", "database", "table", "snapshot", "tag", "filter", "no-exact");
                try (Catalog c = catalog(flags)) {
                    Reader.read(c, ident(flags), longFlag(flags, "snapshot"), flags.get("tag"), flags.get("filter"),
                            !flags.containsKey("no-exact"), out);
                }
                return;
            case "plan":
                allow(flags, "warehouse", "database", "table", "snapshot", "filter");
                try (Catalog c = catalog(flags)) {
                    Reader.plan(c, ident(flags), longFlag(flags, "snapshot"), flags.get("filter"), out);
                }
                return;
            case "write":
                allow(flags, "warehouse", "database", "table", "spec");
                try (Catalog c = catalog(flags)) {
                    Writer.write(c, ident(flags), java.nio.file.Path.of(required(flags, "spec")), out);
                }
                return;
            case "expire":
                allow(flags, "warehouse", "database", "table", "retain-max", "retain-min");
                try (Catalog c = catalog(flags)) {
                    Long min = longFlag(flags, "retain-min");
                    int n = Writer.expire(c, ident(flags), Math.toIntExact(longFlag(flags, "retain-max", true)),
                            min == null ? 1 : Math.toIntExact(min));
                    out.println("{\"expired\":" + n + "}");
                }
                return;
            case "expire-table":
                allow(flags, "warehouse", "database", "table");
                try (Catalog c = catalog(flags)) {
                    out.println(Writer.expireTable(c, ident(flags)));
                }
                return;
            case "remove-orphans":
                allow(flags, "warehouse", "database", "table", "older-than-millis");
                try (Catalog c = catalog(flags)) {
                    out.println(Writer.removeOrphans(c, ident(flags), longFlag(flags, "older-than-millis", true)));
                }
                return;
            case "tags":
                allow(flags, "warehouse", "database", "table");
                try (Catalog c = catalog(flags)) {
                    Tags.list(c, ident(flags), out);
                }
                return;
            case "create-tag":
                allow(flags, "warehouse", "database", "table", "tag", "snapshot", "time-retained-millis");
                try (Catalog c = catalog(flags)) {
                    Tags.create(c, ident(flags), required(flags, "tag"), longFlag(flags, "snapshot"),
                            longFlag(flags, "time-retained-millis"));
                }
                return;
            case "delete-tag":
                allow(flags, "warehouse", "database", "table", "tag");
                try (Catalog c = catalog(flags)) {
                    Tags.delete(c, ident(flags), required(flags, "tag"));
                }
                return;
            case "alter":
                allow(flags, "warehouse", "database", "table", "changes");
                try (Catalog c = catalog(flags)) {
                    Alter.alter(c, ident(flags), required(flags, "changes"));
                }
                return;
            case "rollback":
                allow(flags, "warehouse", "database", "table", "snapshot", "tag");
                try (Catalog c = catalog(flags)) {
                    Tags.rollback(c, ident(flags), longFlag(flags, "snapshot"), flags.get("tag"));
                }
                return;
            case "snapshots":
                allow(flags, "warehouse", "database", "table");
                try (Catalog c = catalog(flags)) {
                    Reader.snapshots(c, ident(flags), out);
                }
                return;
            case "pk-write":
                allow(flags, "warehouse", "database", "table", "spec");
                try (Catalog c = catalog(flags)) {
                    PkWriter.write(c, ident(flags), java.nio.file.Path.of(required(flags, "spec")), out);
                }
                return;
            case "stream":
                allow(flags, "warehouse", "database", "table", "mode", "snapshot");
                try (Catalog c = catalog(flags)) {
                    PkReader.stream(c, ident(flags), flags.get("mode"), longFlag(flags, "snapshot"), out);
                }
                return;
            case "pk-bench":
                allow(flags, "warehouse", "database", "table", "rows", "buckets", "runs", "reads");
                flags.putIfAbsent("database", "bench");
                try (Catalog c = catalog(flags)) {
                    long rows = flags.containsKey("rows") ? longFlag(flags, "rows") : 100_000L;
                    int buckets = flags.containsKey("buckets") ? Math.toIntExact(longFlag(flags, "buckets")) : 4;
                    int runs = flags.containsKey("runs") ? Math.toIntExact(longFlag(flags, "runs")) : 5;
                    int reads = flags.containsKey("reads") ? Math.toIntExact(longFlag(flags, "reads")) : 3;
                    flags.putIfAbsent("table", "dedup_" + buckets + "b_" + runs + "r_" + rows);
                    PkBench.run(c, ident(flags), rows, buckets, runs, reads, out);
                }
                return;
            case "pk-upsert-bench":
                allow(flags, "warehouse", "database", "table", "rows", "buckets", "commits", "updates", "options");
                flags.putIfAbsent("database", "bench");
                try (Catalog c = catalog(flags)) {
                    long rows = flags.containsKey("rows") ? longFlag(flags, "rows") : 100_000L;
                    int buckets = flags.containsKey("buckets") ? Math.toIntExact(longFlag(flags, "buckets")) : 4;
                    int commits = flags.containsKey("commits") ? Math.toIntExact(longFlag(flags, "commits")) : 10;
                    double updates = flags.containsKey("updates") ? Double.parseDouble(flags.get("updates")) : 0.2;
                    flags.putIfAbsent("table", "upsert_" + buckets + "b_" + rows);
                    PkUpsertBench.run(c, ident(flags), rows, buckets, commits, updates,
                            PkUpsertBench.parseOptions(flags.getOrDefault("options", "")), out);
                }
                return;
            case "append-bench-write":
                allow(flags, "warehouse", "database", "table", "rows", "partitions", "dataset");
                flags.putIfAbsent("database", "bench");
                flags.putIfAbsent("table", "events");
                AppendBench.Dataset dataset = AppendBench.Dataset.of(flags.getOrDefault("dataset", "payments"));
                try (Catalog c = catalog(flags)) {
                    long partitions = flags.containsKey("partitions") ? longFlag(flags, "partitions") : 4L;
                    AppendBench.write(c, ident(flags), longFlag(flags, "rows", true), Math.toIntExact(partitions), dataset,
                            out);
                }
                return;
            case "append-bench-read":
                allow(flags, "warehouse", "database", "table");
                try (Catalog c = catalog(flags)) {
                    AppendBench.read(c, ident(flags), out);
                }
                return;
            case "append-bench-tail":
                allow(flags, "warehouse", "database", "table", "rows");
                try (Catalog c = catalog(flags)) {
                    AppendTail.tail(c, ident(flags), longFlag(flags, "rows", true), out);
                }
                return;
            case "batch":
                allow(flags);
                batch(out);
                return;
            case "canon-float":
                // stdin lines "f <hex32>" or "d <hex64>" (IEEE bits) -> canonical text; for cross-checking the
                // float rendering of other implementations (python/canonical.py, the Go driver)
                allow(flags);
                canonFloat(out);
                return;
            default:
                throw new UsageException("unknown command " + cmd);
        }
    }

    /**
     * One JVM for many commands: each stdin line is a JSON array of the arguments of one command (as on the
     * command line, e.g. ["read","--warehouse","/w","--database","d","--table","t"]); its output is followed
     * by the line {"__done__":true,"ok":true} or {"__done__":true,"ok":false,"error":"..."}.
     */
    static void batch(PrintStream out) throws java.io.IOException {
        batch(out, Main::run);
    }

    /** One command of a batch: its arguments as on the command line, its output lines to out. */
    interface Command {
        void run(String[] args, PrintStream out) throws Exception;
    }

    /** {@link #batch(PrintStream)} for another set of commands (the Flink SQL oracle's). */
    static void batch(PrintStream out, Command command) throws java.io.IOException {
        com.fasterxml.jackson.databind.ObjectMapper mapper = new com.fasterxml.jackson.databind.ObjectMapper();
        java.io.BufferedReader in = new java.io.BufferedReader(
                new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            if (line.isBlank()) {
                continue;
            }
            String error = null;
            try {
                String[] a = mapper.readValue(line, String[].class);
                if (a.length > 0 && (a[0].equals("batch") || a[0].equals("canon-float"))) {
                    throw new UsageException(a[0] + " inside batch");
                }
                command.run(a, out);
            } catch (Throwable e) {
                error = describe(e);
            }
            out.println(error == null ? "{\"__done__\":true,\"ok\":true}"
                    : "{\"__done__\":true,\"ok\":false,\"error\":" + Canonical.quote(error) + "}");
            out.flush();
        }
    }

    static void canonFloat(PrintStream out) throws java.io.IOException {
        java.io.BufferedReader in = new java.io.BufferedReader(
                new java.io.InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            String[] p = line.trim().split("\\s+");
            if (p.length != 2) {
                continue;
            }
            if (p[0].equals("f")) {
                out.println(Canonical.formatFloat(Float.intBitsToFloat(Integer.parseUnsignedInt(p[1], 16))));
            } else {
                out.println(Canonical.formatDouble(Double.longBitsToDouble(Long.parseUnsignedLong(p[1], 16))));
            }
        }
    }

    static String usage() {
        return "usage: Main read|plan|write|pk-write|stream|pk-bench|pk-upsert-bench|append-bench-write|append-bench-read|append-bench-tail|expire|expire-table|remove-orphans|snapshots|tags|create-tag|delete-tag|rollback|alter|version --warehouse W --database D --table T"
                + " [--snapshot N] [--tag NAME] [--time-retained-millis MS] [--changes JSON] [--filter EXPR] [--no-exact] [--spec FILE] [--retain-max N] [--retain-min M]";
    }

    /** Paimon's version, from the bundled Maven metadata. */
    static String paimonVersion() {
        try (var in = Catalog.class.getResourceAsStream(
                "/META-INF/maven/org.apache.paimon/paimon-core/pom.properties")) {
            if (in == null) {
                return "unknown";
            }
            java.util.Properties p = new java.util.Properties();
            p.load(in);
            return p.getProperty("version", "unknown");
        } catch (java.io.IOException e) {
            return "unknown";
        }
    }

    static Catalog catalog(Map<String, String> flags) {
        String warehouse = required(flags, "warehouse");
        Options options = new Options();
        options.set("warehouse", java.nio.file.Path.of(warehouse).toAbsolutePath().toString());
        return CatalogFactory.createCatalog(CatalogContext.create(options));
    }

    static Identifier ident(Map<String, String> flags) {
        return Identifier.create(required(flags, "database"), required(flags, "table"));
    }

    static String required(Map<String, String> flags, String name) {
        String v = flags.get(name);
        if (v == null || v.isEmpty()) {
            throw new UsageException("missing --" + name);
        }
        return v;
    }

    static Long longFlag(Map<String, String> flags, String name) {
        return longFlag(flags, name, false);
    }

    static Long longFlag(Map<String, String> flags, String name, boolean required) {
        String v = required ? required(flags, name) : flags.get(name);
        if (v == null) {
            return null;
        }
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new UsageException("--" + name + " wants an integer, got " + v);
        }
    }

    static void allow(Map<String, String> flags, String... names) {
        List<String> ok = List.of(names);
        for (String k : flags.keySet()) {
            if (!ok.contains(k)) {
                throw new UsageException("unknown flag --" + k);
            }
        }
    }

    /** Parses "--name value" pairs; "--no-exact" is the one flag without a value. */
    static Map<String, String> parseFlags(String[] args, int from) {
        Map<String, String> flags = new HashMap<>();
        List<String> rest = new ArrayList<>();
        for (int i = from; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--")) {
                rest.add(a);
                continue;
            }
            String name = a.substring(2);
            String value;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            } else if (name.equals("no-exact")) {
                value = "true";
            } else if (i + 1 < args.length) {
                value = args[++i];
            } else {
                throw new UsageException("flag --" + name + " needs a value");
            }
            if (flags.put(name, value) != null) {
                throw new UsageException("flag --" + name + " given twice");
            }
        }
        if (!rest.isEmpty()) {
            throw new UsageException("unexpected arguments " + rest);
        }
        return flags;
    }

    static String describe(Throwable e) {
        StringBuilder sb = new StringBuilder();
        Throwable t = e;
        int depth = 0;
        while (t != null && depth < 6) {
            if (depth > 0) {
                sb.append(" <- ");
            }
            sb.append(t.getClass().getSimpleName());
            if (t.getMessage() != null) {
                sb.append(": ").append(t.getMessage().replace('\n', ' '));
            }
            t = t.getCause() == t ? null : t.getCause();
            depth++;
        }
        return sb.toString();
    }
}
