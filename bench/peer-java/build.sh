#!/bin/sh
# Builds target/paimon-java-wbench-1.0.jar and target/classpath.txt (runtime classpath).
set -e
cd "$(dirname "$0")"
mvn -q -B -Dstyle.color=never package -DskipTests >&2
mvn -q -B -Dstyle.color=never dependency:build-classpath -Dmdep.includeScope=runtime -Dmdep.outputFile=target/classpath.txt >&2
