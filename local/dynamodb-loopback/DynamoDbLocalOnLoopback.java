/*
 * DynamoDB Local on 127.0.0.1 only. The jar has no host option: its Jetty server is built as
 * `new Server(port)`, whose one connector listens on every interface, and DynamoDB Local takes
 * any credentials (with -sharedDb, one database for all), so anyone who can reach the port could
 * read token digests and events or plant a token. This starts the very server the jar's own
 * main starts (ServerRunner.createServerFromCommandLineArgs, the same arguments), but sets each
 * connector's host to 127.0.0.1 before the server starts, so the socket is bound to loopback.
 * The jar's main also configures telemetry; this never does (pass -disableTelemetry too).
 *
 * It also exits when its standard input ends: the local stack holds the write end of that pipe,
 * and the kernel closes it however the stack's process ends, SIGKILL included (a process cannot
 * run code on SIGKILL, and the JVM runs in a process group of its own, so nothing else would
 * end it). So a database never outlives the stack that started it. Run it with a pipe on stdin.
 *
 * Compiled once per source by local/dynamodb-loopback.ts with the JDK compiler module
 * (jdk.compiler) and run with the jar and its lib folder on the class path.
 */
import com.amazonaws.services.dynamodbv2.local.main.ServerRunner;
import com.amazonaws.services.dynamodbv2.local.server.DynamoDBProxyServer;
import java.io.IOException;
import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

public final class DynamoDbLocalOnLoopback {
  private static final String LOOPBACK = "127.0.0.1";

  public static void main(String[] args) throws Exception {
    exitWhenStandardInputEnds();
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    // The Jetty server is a private field with no accessor; the jar is on the class path (not
    // a named module), so reflection may open it.
    Field serverField = DynamoDBProxyServer.class.getDeclaredField("server");
    serverField.setAccessible(true);
    Server server = (Server) serverField.get(proxy);
    Connector[] connectors = server.getConnectors();
    if (connectors.length == 0) throw new IllegalStateException("DynamoDB Local built a server without a connector");
    for (Connector connector : connectors) {
      if (!(connector instanceof ServerConnector)) throw new IllegalStateException("unexpected connector " + connector.getClass().getName());
      ((ServerConnector) connector).setHost(LOOPBACK);
    }
    proxy.start();
    System.out.println("DynamoDB Local listening on " + LOOPBACK + " only");
  }

  /** A daemon thread that reads standard input to its end, then exits (the parent is gone). */
  private static void exitWhenStandardInputEnds() {
    Thread watchdog = new Thread(() -> {
      try {
        while (System.in.read() != -1) {
          // The parent writes nothing; whatever comes is ignored.
        }
      } catch (IOException ignored) {
        // A broken pipe is an end too.
      }
      System.exit(0);
    }, "parent-watchdog");
    watchdog.setDaemon(true);
    watchdog.start();
  }
}
