import org.apache.paimon.deletionvectors.BitmapDeletionVector;
import java.io.*;
public class Gold {
  public static void main(String[] a) throws Exception {
    long[][] cases = {
      {0}, {4}, {1,2,3,4,5,6,7,8,9,10}, {0,2,4,6,8}, {5, 70000, 70001, 70002, 200000},
      range(0, 5000), range2(0, 10000), range(65530, 65545), {0,1,2,3,10,11,12,13,100,101,102,103,131072,131073,262144, 327680, 393216},
    };
    for (long[] c : cases) {
      BitmapDeletionVector dv = new BitmapDeletionVector();
      for (long p : c) dv.delete(p);
      ByteArrayOutputStream bos = new ByteArrayOutputStream();
      DataOutputStream out = new DataOutputStream(bos);
      dv.serializeTo(out); out.flush();
      StringBuilder sb = new StringBuilder();
      for (byte b : bos.toByteArray()) sb.append(String.format("%02x", b));
      System.out.println(sb);
    }
  }
  static long[] range(long lo, long hi) { long[] r = new long[(int)(hi-lo)]; for (int i=0;i<r.length;i++) r[i]=lo+i; return r; }
  static long[] range2(long lo, long hi) { long[] r = new long[(int)((hi-lo)/2)]; for (int i=0;i<r.length;i++) r[i]=lo+2*i; return r; }
}
