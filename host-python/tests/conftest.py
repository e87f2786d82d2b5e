"""Fixtures of the paimon_kernel tests: one local Ray cluster (2 CPUs, no dashboard) per
session, the CLI of this checkout, the shared corpus, a loopback S3 server (moto)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "conformance" / "tables" / "corpus.db"
#: The Java Paimon 2.0.0 checker (scripts/install-deps.sh; $PAIMON_JAVA_CHECK_DIR overrides).
JAVA_CHECK = Path(os.environ.get("PAIMON_JAVA_CHECK_DIR", str(Path.home() / ".cache/paimon-kernel/java-check-2.0.0")))
sys.path.insert(0, str(ROOT / "conformance"))


def cli_path() -> Path:
    """The paimon-kernel CLI of this checkout (PAIMON_KERNEL_CLI, else
    $CARGO_TARGET_DIR/debug/paimon-kernel; scripts/test-all.sh builds it)."""
    given = os.environ.get("PAIMON_KERNEL_CLI")
    if given:
        return Path(given)
    target = Path(os.environ.get("CARGO_TARGET_DIR", str(Path.home() / ".cache/paimon-kernel/target")))
    return target / "debug" / "paimon-kernel"


@pytest.fixture(scope="session")
def cli() -> Path:
    path = cli_path()
    if not path.exists():
        raise RuntimeError(f"the paimon-kernel CLI is not built at {path}: cargo build -p paimon-native --bin paimon-kernel")
    return path


def corpus_tables():
    return sorted(p.name for p in CORPUS.iterdir() if (p / "schema").is_dir())


@pytest.fixture(scope="session")
def ray_cluster():
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        from ray.data import DataContext

        DataContext.get_current().enable_progress_bars = False
    except Exception:  # noqa: BLE001
        pass
    yield ray
    ray.shutdown()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def s3_server():
    """moto's S3 server on loopback; yields the store options of paimon_kernel.open_table.
    The fixture checks that the server refuses a second PUT with If-None-Match: * (the
    snapshot commit's create-new)."""
    import boto3
    from botocore.exceptions import ClientError

    port = _free_port()
    exe = Path(sys.executable).parent / "moto_server"
    proc = subprocess.Popen([str(exe), "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "test")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "test")
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    for _ in range(100):
        try:
            s3.list_buckets()
            break
        except Exception:  # noqa: BLE001
            time.sleep(0.1)
    s3.create_bucket(Bucket="paimon-test")
    s3.put_object(Bucket="paimon-test", Key="probe", Body=b"1", IfNoneMatch="*")
    with pytest.raises(ClientError, match="PreconditionFailed"):
        s3.put_object(Bucket="paimon-test", Key="probe", Body=b"2", IfNoneMatch="*")
    try:
        yield {
            "aws_endpoint": endpoint,
            "aws_allow_http": "true",
            "aws_region": "us-east-1",
            "aws_access_key_id": "test",
            "aws_secret_access_key": "test",
        }
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture
def tmp_table_dir(tmp_path):
    yield tmp_path
    shutil.rmtree(tmp_path, ignore_errors=True)
