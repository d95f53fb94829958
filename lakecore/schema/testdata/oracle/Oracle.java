import org.apache.paimon.fs.Path;
import org.apache.paimon.fs.local.LocalFileIO;
import org.apache.paimon.schema.*;
import org.apache.paimon.types.*;
import org.apache.paimon.utils.JsonSerdeUtil;
import org.apache.paimon.Snapshot;
import org.apache.paimon.consumer.Consumer;
import java.util.*;

public class Oracle {
  public static void main(String[] a) throws Exception {
    String dir = a[0];
    LocalFileIO io = LocalFileIO.create();
    SchemaManager sm = new SchemaManager(io, new Path(dir));
    Map<String,String> opts = new HashMap<>();
    opts.put("bucket", "2"); opts.put("bucket-key", "id"); opts.put("file.format", "parquet");
    opts.put("metadata.stats-mode", "full"); opts.put("fields.name.stats-mode", "none");
    opts.put("snapshot.time-retained", "2 h"); opts.put("target-file-size", "128 mb");
    Schema s = Schema.newBuilder()
      .column("id", DataTypes.BIGINT().notNull())
      .column("name", DataTypes.STRING(), "the \"name\" <b>\n\t\u0001 é")
      .column("pt", DataTypes.INT())
      .column("nest", DataTypes.ROW(DataTypes.FIELD(0, "a", DataTypes.ROW(DataTypes.FIELD(0, "x", DataTypes.INT()), DataTypes.FIELD(0, "y", DataTypes.ARRAY(DataTypes.ROW(DataTypes.FIELD(0, "z", DataTypes.STRING())))))), DataTypes.FIELD(0, "b", DataTypes.MAP(DataTypes.STRING(), DataTypes.DECIMAL(10, 2)))))
      .partitionKeys("pt").options(opts).comment("tbl/comment \u007f").build();
    TableSchema ts = sm.createTable(s);
    sm.commitChanges(SchemaChange.addColumn("extra", DataTypes.ROW(DataTypes.FIELD(0, "p", DataTypes.ROW(DataTypes.FIELD(0, "q", DataTypes.INT()))), DataTypes.FIELD(0, "r", DataTypes.INT())), "desc", null));
    Snapshot snap = new Snapshot(5L, 1L, "manifest-list-a-0", 100L, "manifest-list-a-1", 200L, null, null, null, "user-1", Long.MAX_VALUE, Snapshot.CommitKind.APPEND, 1700000000000L, 10L, 3L, null, null, null, null, null);
    System.out.println(snap.toJson());
    System.out.println("----");
    System.out.println(new Consumer(7).toJson());
  }
}
