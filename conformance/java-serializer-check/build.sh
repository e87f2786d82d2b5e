#!/bin/sh
# Builds target/paimon-serializer-check-1.0.jar and target/classpath.txt (paimon-bundle 1.4.2),
# and target/v2-classes: the release-2.0.0 sources of the classes whose serialized form
# changed after 1.4.2, compiled against the 1.4.2 bundle (see README.md). The sources are
# read from the Paimon git mirror ($PAIMON_REPO, default /work/.mirror/apache+paimon/repo)
# into target/v2-src; nothing of them is kept in this repository.
set -e
cd "$(dirname "$0")"
mvn -q -B -Dstyle.color=never package -DskipTests >&2
mvn -q -B -Dstyle.color=never dependency:build-classpath -Dmdep.includeScope=runtime -Dmdep.outputFile=target/classpath.txt >&2
repo=${PAIMON_REPO:-/work/.mirror/apache+paimon/repo}
rm -rf target/v2-src target/v2-classes
mkdir -p target/v2-src target/v2-classes
core=paimon-core/src/main/java/org/apache/paimon
for f in index/GlobalIndexMeta index/IndexFileMeta index/IndexFileMetaSerializer \
         index/IndexFileMetaV4Deserializer table/sink/CommitMessageSerializer; do
  git -C "$repo" show "release-2.0.0:$core/$f.java" > "target/v2-src/$(basename $f).java"
done
javac -nowarn -d target/v2-classes -cp "$(cat target/classpath.txt)" target/v2-src/*.java >&2
