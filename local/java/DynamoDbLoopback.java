import com.almworks.sqlite4java.SQLiteConnection;
import com.almworks.sqlite4java.SQLiteJob;
import com.almworks.sqlite4java.SQLiteQueue;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import org.eclipse.jetty.server.AbstractNetworkConnector;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

/**
 * Starts DynamoDB Local (same command-line options as DynamoDBLocal.jar) listening on 127.0.0.1
 * only: the jar itself has no bind-address option and listens on every interface. Compiled and
 * run by local/dynamo.ts.
 *
 * It also exits when its standard input closes, i.e. when the Node process that started it is
 * gone, however that process ended (even SIGKILL): no orphan Java process is left behind.
 *
 * And it gives DynamoDB Local's stream records an index by shard. They are kept in one SQLite
 * table (`us`) for every table the instance holds, keyed by sequence number only, and each
 * GetRecords and GetShardIterator looks a shard's records up by `ShardID`: without the index every
 * stream call scanned the stream records of every table written since the start (deleted tables'
 * too), so an idle poller cost more the more the instance had written (docs/performance.md, "The
 * test suite"). The index changes no answer, only how SQLite finds it.
 */
public class DynamoDbLoopback {
  public static void main(String[] args) throws Exception {
    String host = System.getProperty("crm.bindHost", "127.0.0.1");
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    for (Connector connector : server.getConnectors()) {
      ((AbstractNetworkConnector) connector).setHost(host);
    }
    Thread watchdog = new Thread(() -> {
      try {
        while (System.in.read() != -1) {
          // nothing: only the end of the stream matters
        }
      } catch (Exception ignored) {
        // a broken pipe means the parent is gone as well
      }
      Runtime.getRuntime().halt(0);
    });
    watchdog.setDaemon(true);
    watchdog.start();
    // safeStart: Jetty's start without the jar's start-up telemetry call.
    proxy.safeStart();
    indexStreamRecords(proxy);
    System.out.println("DynamoDB Local listening on " + host);
    proxy.join();
  }

  static final String[] STREAM_RECORDS_INDEXES = {
    "CREATE INDEX IF NOT EXISTS crm_us_shard_sequence ON us (ShardID, SequenceNumber)",
    "CREATE INDEX IF NOT EXISTS crm_us_stream_sequence ON us (StreamID, SequenceNumber)",
    "CREATE INDEX IF NOT EXISTS crm_us_created ON us (CreationDateTime)",
  };

  /**
   * DynamoDB Local opens its database on the first request: a daemon thread looks for its SQLite
   * queue (the `queue` field of SQLiteDBAccess, reached from the server through its fields) and
   * runs the CREATE INDEX on it, as DynamoDB Local runs its own statements.
   */
  static void indexStreamRecords(Object root) {
    Thread t = new Thread(() -> {
      try {
        for (int i = 0; i < 6_000; i++) {
          SQLiteQueue queue = findQueue(root);
          if (queue != null) {
            queue.execute(new SQLiteJob<Object>() {
              @Override
              protected Object job(SQLiteConnection connection) throws Throwable {
                for (String sql : STREAM_RECORDS_INDEXES) connection.exec(sql);
                return null;
              }
            }).complete();
            return;
          }
          Thread.sleep(50);
        }
        System.err.println("DynamoDB Local: no database found to index its stream records by shard");
      } catch (Throwable e) {
        System.err.println("DynamoDB Local: could not index its stream records by shard: " + e);
      }
    });
    t.setDaemon(true);
    t.start();
  }

  /** The SQLiteQueue of the instance's database, found through the fields of DynamoDB Local's own objects (breadth first). */
  static SQLiteQueue findQueue(Object root) throws IllegalAccessException {
    Set<Object> seen = Collections.newSetFromMap(new IdentityHashMap<>());
    ArrayDeque<Object[]> todo = new ArrayDeque<>();
    todo.add(new Object[] { root, 0 });
    while (!todo.isEmpty()) {
      Object[] next = todo.poll();
      Object o = next[0];
      int depth = (Integer) next[1];
      if (o == null || !seen.add(o) || depth > 8) continue;
      if (o instanceof SQLiteQueue) return (SQLiteQueue) o;
      if (o instanceof Map) {
        for (Object v : ((Map<?, ?>) o).values()) todo.add(new Object[] { v, depth + 1 });
        continue;
      }
      if (o instanceof Collection) {
        for (Object v : (Collection<?>) o) todo.add(new Object[] { v, depth + 1 });
        continue;
      }
      if (!o.getClass().getName().startsWith("software.amazon.dynamodb.services.local")) continue;
      for (Class<?> c = o.getClass(); c != null && c != Object.class; c = c.getSuperclass()) {
        for (Field f : c.getDeclaredFields()) {
          if (Modifier.isStatic(f.getModifiers()) || f.getType().isPrimitive()) continue;
          f.setAccessible(true);
          todo.add(new Object[] { f.get(o), depth + 1 });
        }
      }
    }
    return null;
  }
}
