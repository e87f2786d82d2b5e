#!/bin/sh
# install.sh [DIR]: builds java-check (Java Paimon reading, writing, compacting and planning for
# the tests; the Paimon version is the pom's paimon.version, 2.0.0; see README.md) and installs
# it into DIR (default ~/.cache/paimon-kernel/java-check-VERSION): DIR/lib/ (the jar and its
# dependencies), the wrappers DIR/read, files, plan, write, commits, run, messages, batch,
# read-split and write-split (see README.md),
# DIR/paimon.version and DIR/read.jsa (a class-data-sharing archive that halves the JVM start).
# Idempotent: run it again after changing the sources (scripts/install-deps.sh does, when their
# hash changes).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
version=$(sed -n 's:.*<paimon.version>\(.*\)</paimon.version>.*:\1:p' "$here/pom.xml")
[ -n "$version" ] || { echo "install.sh: no paimon.version in $here/pom.xml" >&2; exit 1; }
dest=${1:-$HOME/.cache/paimon-kernel/java-check-$version}
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
printf '%s\n' "$version" > "$dest/paimon.version"

# wrapper NAME CLASS USAGE: DIR/NAME runs check.CLASS. -Xlog:disable keeps the JVM's own log
# lines (CDS warnings print to stdout) out of the rows; warnings still reach stderr.
wrapper() {
    cat > "$dest/$1" <<WRAP
#!/bin/sh
# Java Paimon $version (installed by conformance/java-check/install.sh; see its README.md).
# $3
exec java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xshare:auto -XX:SharedArchiveFile="$dest/read.jsa" \\
    -Xlog:disable -Xlog:all=warning:stderr \\
    -Duser.timezone=UTC -Dfile.encoding=UTF-8 \\
    -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.logFile=System.err \\
    \${JAVA_CHECK_OPTS:-} -cp "$cp" check.$2 "\$@"
WRAP
    chmod +x "$dest/$1"
}
wrapper read Main 'read TABLE_DIR [--columns a,b] [--snapshot N] [--tag T] [--branch B] [--option K=V]... [K=V]... [--row-kind] [--system NAME] [--trace]'
wrapper plan Plan 'plan TABLE_DIR [--full] | plan-append TABLE_DIR | plan-de TABLE_DIR: the compaction Java plans for the latest snapshot'
wrapper write Write 'write write TABLE_DIR ROWS.jsonl | write compact TABLE_DIR [--full]'
wrapper commits Commits 'commits TABLE_DIR W N: N one-row batch commits (see Commits.java)'
wrapper run Run 'run SCENARIO.json WAREHOUSE (see Run.java, README.md)'
wrapper messages Messages 'messages check FILE | messages commit TABLE_DIR FILE: commit messages through CommitMessageSerializer'
wrapper batch Batch 'batch [FILE]: many commands in one JVM, one JSON array a line (see Batch.java)'
wrapper read-split 'Splits read-split' 'read-split TABLE_DIR SPLIT_FILE [read flags]: rows of serialized DataSplits (see Splits.java)'
wrapper write-split 'Splits write-split' 'write-split TABLE_DIR OUT_FILE [read flags]: Java'"'"'s plan as serialized DataSplits'
cat > "$dest/files" <<EOF2
#!/bin/sh
# Java Paimon $version's \$files system table of TABLE_DIR (see read).
exec "$dest/read" "\$@" --system files
EOF2
chmod +x "$dest/files"

# The class-data-sharing archive: the classes loaded by one read of a small table in the repo.
java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:ArchiveClassesAtExit="$dest/read.jsa" \
    -Xlog:disable -Xlog:all=error:stderr \
    -Duser.timezone=UTC -Dorg.slf4j.simpleLogger.defaultLogLevel=error \
    -cp "$cp" check.Main "$here/../java-tables/p142_orc_pk" > /dev/null ||
    echo "install.sh: no class-data-sharing archive (the reader works, only starts slower)" >&2
echo "installed $dest/read (Java Paimon $version)" >&2
