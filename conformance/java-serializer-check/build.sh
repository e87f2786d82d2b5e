#!/bin/sh
# build.sh [--v11]: builds target/paimon-serializer-check-1.0.jar and target/classpath.txt on
# Java Paimon 2.0.0 (from ../shared/java/m2, see the pom); with --v11 also
# target/paimon-1.4.2/ on Java Paimon 1.4.2 (the profile paimon-1.4.2), the version-11 writer.
set -e
cd "$(dirname "$0")"
mvn -q -B -Dstyle.color=never package -DskipTests >&2
mvn -q -B -Dstyle.color=never dependency:build-classpath -Dmdep.includeScope=runtime -Dmdep.outputFile=target/classpath.txt >&2
if [ "${1:-}" = "--v11" ]; then
  mvn -q -B -Dstyle.color=never -Ppaimon-1.4.2 package -DskipTests >&2
  mvn -q -B -Dstyle.color=never -Ppaimon-1.4.2 dependency:build-classpath -Dmdep.includeScope=runtime \
    -Dmdep.outputFile=target/paimon-1.4.2/classpath.txt >&2
fi
