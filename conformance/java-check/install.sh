#!/bin/sh
# install.sh [DIR]: builds java-check (Java Paimon 1.4.2's reader, see README.md) and installs it
# into DIR (default /work/java-check): DIR/lib/ (the jar and its dependencies), DIR/read,
# DIR/files (the $files system table), DIR/plan (the compaction Java plans), DIR/write (Java writing and compacting), DIR/commits (Java committing many small batches), DIR/run (Java running a scenario of
# conformance/scenarios) and DIR/read.jsa (a class-data-sharing archive that
# halves the JVM start). Idempotent: run it again after changing the sources. Not part of CI.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dest=${1:-/work/java-check}
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)

cd "$here"
mkdir -p target
# Maven's output goes to target/mvn.log, shown only when it fails.
mvn_quiet() {
    mvn -q -B -Dstyle.color=never "$@" > target/mvn.log 2>&1 || { cat target/mvn.log >&2; exit 1; }
}
mvn_quiet package -DskipTests
rm -rf target/lib
mvn_quiet dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory=target/lib

# A fresh lib/ (jars of an older install may linger otherwise), then the class path in a fixed
# order: the class-data-sharing archive is only used with the class path it was made with.
rm -rf "$dest/lib" "$dest/read.jsa"
mkdir -p "$dest/lib"
cp target/paimon-java-check-1.0.jar target/lib/*.jar "$dest/lib/"
cp="$dest/lib/paimon-java-check-1.0.jar"
for j in $(cd "$dest/lib" && ls *.jar | grep -v '^paimon-java-check-1.0.jar$' | sort); do
    cp="$cp:$dest/lib/$j"
done
printf '%s\n' "$cp" > "$dest/classpath.txt"

# -Xlog:disable keeps the JVM's own log lines (CDS warnings print to stdout) out of the rows;
# warnings still reach stderr.
cat > "$dest/read" <<EOF
#!/bin/sh
# Java Paimon 1.4.2 reader (installed by conformance/java-check/install.sh; see its README.md).
# read TABLE_DIR [--columns a,b] [--snapshot N] [--tag T] [--branch B] [--option K=V]... [K=V]...
#      [--row-kind] [--system NAME] [--trace]
exec java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto -XX:SharedArchiveFile="$dest/read.jsa" \\
    -Xlog:disable -Xlog:all=warning:stderr \\
    -Duser.timezone=UTC -Dfile.encoding=UTF-8 \\
    -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.logFile=System.err \\
    \${JAVA_CHECK_OPTS:-} -cp "$cp" check.Main "\$@"
EOF
cat > "$dest/files" <<EOF
#!/bin/sh
# Java Paimon 1.4.2's \$files system table of TABLE_DIR (see read).
exec "$dest/read" "\$@" --system files
EOF
cat > "$dest/plan" <<EOF
#!/bin/sh
# Java Paimon 1.4.2's compaction plan of TABLE_DIR's latest snapshot: plan TABLE_DIR [--full].
exec java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto -XX:SharedArchiveFile="$dest/read.jsa" \\
    -Xlog:disable -Xlog:all=warning:stderr \\
    -Duser.timezone=UTC -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.logFile=System.err \\
    \${JAVA_CHECK_OPTS:-} -cp "$cp" check.Plan "\$@"
EOF
cat > "$dest/write" <<EOF
#!/bin/sh
# Java Paimon 1.4.2 writing and compacting: write TABLE_DIR ROWS.jsonl | compact TABLE_DIR [--full].
exec java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto -XX:SharedArchiveFile="$dest/read.jsa" \\
    -Xlog:disable -Xlog:all=warning:stderr \\
    -Duser.timezone=UTC -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.logFile=System.err \\
    \${JAVA_CHECK_OPTS:-} -cp "$cp" check.Write "\$@"
EOF
cat > "$dest/commits" <<EOF
#!/bin/sh
# Java Paimon 1.4.2 committing N one-row batches: commits TABLE_DIR W N (see Commits.java).
exec java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto -XX:SharedArchiveFile="$dest/read.jsa" \\
    -Xlog:disable -Xlog:all=warning:stderr \\
    -Duser.timezone=UTC -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.logFile=System.err \\
    \${JAVA_CHECK_OPTS:-} -cp "$cp" check.Commits "\$@"
EOF
cat > "$dest/run" <<EOF
#!/bin/sh
# Java Paimon 1.4.2 running a scenario: run SCENARIO.json WAREHOUSE (see Run.java, README.md).
exec java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto -XX:SharedArchiveFile="$dest/read.jsa" \\
    -Xlog:disable -Xlog:all=warning:stderr \\
    -Duser.timezone=UTC -Dfile.encoding=UTF-8 \\
    -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.logFile=System.err \\
    \${JAVA_CHECK_OPTS:-} -cp "$cp" check.Run "\$@"
EOF
chmod +x "$dest/read" "$dest/files" "$dest/plan" "$dest/write" "$dest/commits" "$dest/run"

# The class-data-sharing archive: the classes loaded by one read of a small table in the repo.
java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:ArchiveClassesAtExit="$dest/read.jsa" \
    -Xlog:disable -Xlog:all=error:stderr \
    -Duser.timezone=UTC -Dorg.slf4j.simpleLogger.defaultLogLevel=error \
    -cp "$cp" check.Main "$here/../java-tables/p142_orc_pk" > /dev/null ||
    echo "install.sh: no class-data-sharing archive (the reader works, only starts slower)" >&2
echo "installed $dest/read (Java Paimon 1.4.2)" >&2
