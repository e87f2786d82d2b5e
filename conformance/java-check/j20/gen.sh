#!/bin/sh
# gen.sh build | gen-tables OUT_DIR [NAME...] | cast-probe < CASES | read TABLE_DIR [FLAGS]
#
# Java Paimon 2.0.0 tools (README.md): `build` resolves the dependencies (pom.xml, Paimon 2.0.0
# from the file repository shared/java/m2 beside the checkout) and compiles src/check/*.java
# together with java-check's reader (../src/main/java/check/{Main,Canonical}.java) into
# target/classes; the other verbs build when needed and run one tool with JVM time zone UTC.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
build() {
    mkdir -p target/classes
    mvn -q -B -Dstyle.color=never dependency:build-classpath -Dmdep.outputFile=target/cp.txt \
        > target/mvn.log 2>&1 || { cat target/mvn.log >&2; exit 1; }
    javac -nowarn -encoding UTF-8 -d target/classes -cp "$(cat target/cp.txt)" \
        ../src/main/java/check/Main.java ../src/main/java/check/Canonical.java src/check/*.java
}
run() {
    [ -f target/cp.txt ] && [ -d target/classes/check ] || build
    exec java -Duser.timezone=UTC -Dfile.encoding=UTF-8 \
        -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.logFile=System.err \
        -cp "$here/target/classes:$(cat target/cp.txt)" "$@"
}
verb=${1:-}
[ $# -gt 0 ] && shift
case "$verb" in
    build) build ;;
    gen-tables) run check.GenTables "$@" ;;
    cast-probe) run check.CastProbe "$@" ;;
    read) run check.Main "$@" ;;
    *) sed -n '2,7p' "$0" >&2; exit 2 ;;
esac
