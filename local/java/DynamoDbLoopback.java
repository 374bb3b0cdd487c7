import java.lang.reflect.Field;
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
    System.out.println("DynamoDB Local listening on " + host);
    proxy.join();
  }
}
