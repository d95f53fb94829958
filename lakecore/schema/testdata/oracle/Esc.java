import org.apache.paimon.utils.JsonSerdeUtil;
import java.util.*;
public class Esc {
  public static void main(String[] a) throws Exception {
    Map<String,Object> m = new LinkedHashMap<>();
    StringBuilder sb = new StringBuilder();
    for (int c = 0; c < 0x20; c++) sb.append((char) c);
    sb.append("\"\\/<>&'\u007f\u0080\u00e9\u2028\u2029\uD83D\uDE00");
    m.put("s", sb.toString());
    m.put("e", new ArrayList<>());
    m.put("o", new LinkedHashMap<>());
    m.put("n", Arrays.asList(Arrays.asList(1, 2), new ArrayList<>(), Collections.singletonMap("k", Arrays.asList())));
    m.put("neg", -5L);
    m.put("t", true);
    m.put("z", null);
    System.out.print(JsonSerdeUtil.toJson(m));
  }
}
