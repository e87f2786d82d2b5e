package check;

import org.apache.paimon.utils.JsonSerdeUtil;

import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * batch [FILE]: many java-check commands in one JVM (one start of about 1.5 s instead of one per
 * command). FILE (default stdin) holds one command a line, a JSON array of strings whose first
 * element names the script: ["read", TABLE, FLAGS...], ["read-split", ...], ["write-split",
 * ...], ["plan", TABLE, ...], ["write", "write" | "update" | "compact", ...], ["messages", ...]
 * (the arguments as each script takes them, see README.md). The commands run in order; for
 * command N (from 0) stdout gets a line "&gt;&gt;&gt; N", then the command's own output, then,
 * when it failed, "&lt;&lt;&lt; N error: MESSAGE" (one line), and last "&lt;&lt;&lt; N exit=CODE". A
 * failed command does not stop the batch; the batch exits 0 once every command ran.
 */
public final class Batch {

    private Batch() {}

    public static void main(String[] argv) throws Exception {
        InputStream in = argv.length > 0 ? new FileInputStream(argv[0]) : System.in;
        PrintStream out =
                new PrintStream(new FileOutputStream(FileDescriptor.out), false, "UTF-8");
        System.setOut(out);
        List<String[]> commands = new ArrayList<>();
        try (BufferedReader r =
                new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (line.trim().isEmpty()) {
                    continue;
                }
                JsonNode node = JsonSerdeUtil.OBJECT_MAPPER_INSTANCE.readTree(line);
                String[] cmd = new String[node.size()];
                for (int i = 0; i < cmd.length; i++) {
                    cmd[i] = node.get(i).asText();
                }
                commands.add(cmd);
            }
        }
        for (int n = 0; n < commands.size(); n++) {
            out.println(">>> " + n);
            out.flush();
            int code;
            try {
                code = run(commands.get(n), out);
            } catch (Throwable t) {
                code = t instanceof Run.Unsupported ? 3 : 1;
                out.flush();
                out.println("<<< " + n + " error: " + Main.describe(t).replace('\n', ' '));
            }
            out.flush();
            out.println("<<< " + n + " exit=" + code);
            out.flush();
        }
        System.exit(0);
    }

    private static int run(String[] cmd, PrintStream out) throws Exception {
        if (cmd.length == 0) {
            throw new IllegalArgumentException("empty command");
        }
        String[] rest = java.util.Arrays.copyOfRange(cmd, 1, cmd.length);
        Writer w = new OutputStreamWriter(out, StandardCharsets.UTF_8);
        switch (cmd[0]) {
            case "read":
                {
                    Main.Args args = Main.parse(rest);
                    if (args == null) {
                        return 2;
                    }
                    Main.read(args, w);
                    w.flush();
                    return 0;
                }
            case "read-split":
            case "write-split":
                {
                    int code = Splits.run(cmd, w);
                    w.flush();
                    return code;
                }
            case "plan":
                return Plan.run(rest);
            case "write":
                return Write.run(rest);
            case "messages":
                return Messages.run(rest);
            default:
                throw new IllegalArgumentException("unknown script " + cmd[0]);
        }
    }
}
