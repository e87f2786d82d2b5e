//! Partition time extraction (Java's `PartitionTimeExtractorTest` examples and more), option
//! parsing, both strategies, Java's order and limits, the drop commits.

use bytes::Bytes;

use super::*;
use crate::commit::{CommitMessage, DataIncrement, commit_machine};
use crate::io::MemoryStore;
use crate::scan::planner::read_live_entries;
use crate::spec::snapshot::decode_snapshot;
use crate::spec::{
    CommitKind, DataFileMeta, DataType, Datum, FileSource, SimpleStats, TypeKind, decode_schema,
    encode_schema,
};

fn t(text: &str) -> LocalNanos {
    // "yyyy-mm-ddThh:mm:ss[.nnnnnnnnn]" built by hand, independent of the parsers.
    let n = |r: std::ops::Range<usize>| text[r].parse::<u32>().unwrap();
    let nanos = if text.len() > 19 {
        format!("{:0<9}", &text[20..]).parse::<u32>().unwrap()
    } else {
        0
    };
    LocalNanos::of(
        i64::from(n(0..4)),
        n(5..7),
        n(8..10),
        n(11..13),
        n(14..16),
        n(17..19),
        nanos,
    )
}

fn extract(
    pattern: Option<&str>,
    formatter: Option<&str>,
    kv: &[(&str, &str)],
) -> Option<LocalNanos> {
    let e = PartitionTimeExtractor::new(pattern, formatter).unwrap();
    let keys: Vec<&str> = kv.iter().map(|(k, _)| *k).collect();
    let values: Vec<Option<&str>> = kv.iter().map(|(_, v)| Some(*v)).collect();
    e.extract(&keys, &values).unwrap()
}

#[test]
fn java_extractor_examples() {
    // testDefault
    for (text, want) in [
        ("2023-01-01 20:08:08", "2023-01-01T20:08:08"),
        ("2023-1-1 20:08:08", "2023-01-01T20:08:08"),
        ("2023-01-01", "2023-01-01T00:00:00"),
        ("2023-1-1", "2023-01-01T00:00:00"),
    ] {
        assert_eq!(
            extract(None, None, &[("dt", text)]),
            Some(t(want)),
            "{text}"
        );
    }
    // testPattern
    assert_eq!(
        extract(
            Some("$year-$month-$day 00:00:00"),
            None,
            &[("year", "2023"), ("month", "01"), ("day", "01")]
        ),
        Some(t("2023-01-01T00:00:00"))
    );
    assert_eq!(
        extract(
            Some("$year-$month-$day $hour:00:00"),
            None,
            &[
                ("year", "2023"),
                ("month", "01"),
                ("day", "01"),
                ("hour", "01")
            ]
        ),
        Some(t("2023-01-01T01:00:00"))
    );
    assert_eq!(
        extract(
            Some("$dt"),
            None,
            &[("other", "dummy"), ("dt", "2023-01-01")]
        ),
        Some(t("2023-01-01T00:00:00"))
    );
    // testFormatter
    assert_eq!(
        extract(None, Some("yyyyMMdd"), &[("dt", "20230101")]),
        Some(t("2023-01-01T00:00:00"))
    );
    // testExtractNonDateFormattedPartition: no time, the partition is skipped.
    assert_eq!(
        extract(Some("$ds"), Some("yyyyMMdd"), &[("ds", "unknown")]),
        None
    );
}

#[test]
fn default_format_is_lenient_and_whole_text() {
    assert_eq!(
        parse_default_date_time("2023-01-01 20:08:08.5"),
        Some(t("2023-01-01T20:08:08.5"))
    );
    assert_eq!(
        parse_default_date_time("2023-01-01 20:08:08.123456789"),
        Some(t("2023-01-01T20:08:08.123456789"))
    );
    // Lenient: month 13 is next January, day 32 of January is February 1st, hour 24 the
    // next day, day 0 the last of the previous month.
    assert_eq!(
        parse_default_date_time("2023-13-01"),
        Some(t("2024-01-01T00:00:00"))
    );
    assert_eq!(
        parse_default_date_time("2023-01-32"),
        Some(t("2023-02-01T00:00:00"))
    );
    assert_eq!(
        parse_default_date_time("2023-01-01 24:00:00"),
        Some(t("2023-01-02T00:00:00"))
    );
    assert_eq!(
        parse_default_date_time("2023-03-00"),
        Some(t("2023-02-28T00:00:00"))
    );
    for bad in [
        "20230101",
        "2023-01-01 ",
        "2023-01-01 20:08",
        "2023-01-01T20:08:08",
        "2023-001-01",
        "2023-01-01 20:08:08.",
        "",
        "dummy",
    ] {
        assert_eq!(parse_default_date_time(bad), None, "{bad}");
    }
}

#[test]
fn formatter_patterns_as_java() {
    let f = |p: &str, text: &str| TimestampFormatter::new(p).unwrap().parse_date_time(text);
    assert_eq!(
        f("yyyy-MM-dd", "2024-03-05"),
        Some(t("2024-03-05T00:00:00"))
    );
    assert_eq!(
        f("yyyyMMddHH", "2024030517"),
        Some(t("2024-03-05T17:00:00"))
    );
    assert_eq!(
        f("yyyyMMdd HH", "20240305 17"),
        Some(t("2024-03-05T17:00:00"))
    );
    assert_eq!(
        f("yyyy-MM-dd HH:mm:ss", "2024-03-05 17:04:59"),
        Some(t("2024-03-05T17:04:59"))
    );
    assert_eq!(
        f("yyyy-MM-dd HH:mm:ss.SSS", "2024-03-05 17:04:59.120"),
        Some(t("2024-03-05T17:04:59.12"))
    );
    assert_eq!(
        f("yyyyMMddHHmmssSSS", "20240305170459120"),
        Some(t("2024-03-05T17:04:59.12"))
    );
    assert_eq!(f("yyyy/M/d", "2024/3/5"), Some(t("2024-03-05T00:00:00")));
    assert_eq!(f("yyyy/M/d", "2024/03/05"), Some(t("2024-03-05T00:00:00")));
    assert_eq!(f("yyMMdd", "240305"), Some(t("2024-03-05T00:00:00")));
    assert_eq!(
        f("'day='yyyyMMdd", "day=20240305"),
        Some(t("2024-03-05T00:00:00"))
    );
    assert_eq!(f("yyyy''MM", "2024'03"), None, "no day: no date");
    // Hour without minutes resolves; seconds without minutes leave only the date.
    assert_eq!(
        f("yyyyMMdd HH", "20240305 07"),
        Some(t("2024-03-05T07:00:00"))
    );
    assert_eq!(
        f("yyyyMMdd HH ss", "20240305 07 09"),
        Some(t("2024-03-05T00:00:00"))
    );
    // SMART: the day is clamped to the month, 24:00 is the next day.
    assert_eq!(f("yyyyMMdd", "20230231"), Some(t("2023-02-28T00:00:00")));
    assert_eq!(f("yyyyMMdd", "20240231"), Some(t("2024-02-29T00:00:00")));
    assert_eq!(
        f("yyyyMMddHH", "2024030524"),
        Some(t("2024-03-06T00:00:00"))
    );
    for (p, bad) in [
        ("yyyyMMdd", "2024-03-05"),
        ("yyyyMMdd", "20241305"),
        ("yyyyMMdd", "20240132"),
        ("yyyyMMdd", "2024030"),
        ("yyyy-MM-dd", "2024-3-5"),
        ("yyyyMMddHH", "2024030525"),
        ("yyyyMMdd", "20240305 "),
    ] {
        assert_eq!(f(p, bad), None, "{p} {bad}");
    }
    // Pattern errors name the option.
    for (p, unsupported) in [
        ("yyyy-MMM-dd", true),
        ("yyyyMMdd a", true),
        ("yyyy-ddd", false),
        ("yyyy]MM", false),
        ("yyyy-MM-dd{x}", false),
        ("'x", false),
    ] {
        let err = TimestampFormatter::new(p).unwrap_err();
        assert!(
            err.to_string().contains("partition.timestamp-formatter"),
            "{err}"
        );
        assert_eq!(
            matches!(err, Error::Unsupported { .. }),
            unsupported,
            "{p}: {err}"
        );
    }
}

/// Optional sections (`[ ]`, nested, left open at the end): parsed whole or skipped whole,
/// as Java's `DateTimeFormatterBuilder.optionalStart` / `optionalEnd`.
#[test]
fn optional_sections_as_java() {
    let f = |p: &str, text: &str| TimestampFormatter::new(p).unwrap().parse_date_time(text);
    let p = "yyyy-MM-dd[ HH:mm[:ss]]";
    assert_eq!(f(p, "2024-03-05"), Some(t("2024-03-05T00:00:00")));
    assert_eq!(f(p, "2024-03-05 17:04"), Some(t("2024-03-05T17:04:00")));
    assert_eq!(f(p, "2024-03-05 17:04:09"), Some(t("2024-03-05T17:04:09")));
    // A section that does not match whole is skipped; what it left fails the whole text.
    assert_eq!(f(p, "2024-03-05 17"), None);
    assert_eq!(f(p, "2024-03-05 17:04:9"), None);
    // Left open at the end: closed there.
    // `yyyy` takes every digit not reserved by the fixed-width MM and dd (the section's HH
    // reserves none): a 6-digit year, which strict `yyyy` refuses without a sign.
    assert_eq!(f("yyyyMMdd[HH", "2024030517"), None);
    assert_eq!(f("yyyyMMdd", "2024030517"), None);
    assert_eq!(
        f("yyyyMMdd[-HH", "20240305-17"),
        Some(t("2024-03-05T17:00:00"))
    );
    assert_eq!(f("yyyyMMdd[HH", "20240305"), Some(t("2024-03-05T00:00:00")));
    // Alternatives: the first section that matches wins.
    let p = "[yyyy-MM-dd][yyyyMMdd]";
    assert_eq!(f(p, "2024-03-05"), Some(t("2024-03-05T00:00:00")));
    assert_eq!(f(p, "20240305"), Some(t("2024-03-05T00:00:00")));
    // A section whose fields disagree with earlier ones does not match.
    assert_eq!(f("yyyy-MM-dd[/dd]", "2024-03-05/06"), None);
    assert_eq!(
        f("yyyy-MM-dd[/dd]", "2024-03-05/05"),
        Some(t("2024-03-05T00:00:00"))
    );
}

/// Java substitutes `$key` with `String.replaceAll`: keys with regular-expression characters
/// and values with `$` or `\` are refused rather than substituted differently.
#[test]
fn pattern_substitution_refuses_regex_characters() {
    let e = PartitionTimeExtractor::new(Some("$dt"), None).unwrap();
    let err = e.extract(&["dt"], &[Some("2024-01-02$1")]).unwrap_err();
    assert!(matches!(err, Error::Unsupported { .. }), "{err}");
    assert!(
        err.to_string().contains("partition.timestamp-pattern"),
        "{err}"
    );
    assert!(e.extract(&["dt"], &[Some("2024\\01")]).is_err());
    let e = PartitionTimeExtractor::new(Some("$d.t"), None).unwrap();
    let err = e.extract(&["d.t"], &[Some("2024-01-02")]).unwrap_err();
    assert!(err.to_string().contains("'d.t'"), "{err}");
    // Without a pattern nothing is substituted.
    let e = PartitionTimeExtractor::new(None, None).unwrap();
    assert_eq!(
        e.extract(&["d.t"], &[Some("2024-01-02")]).unwrap(),
        Some(t("2024-01-02T00:00:00"))
    );
}

#[test]
fn nulls_and_patterns() {
    let e = PartitionTimeExtractor::new(Some("$dt $hour:00:00"), None).unwrap();
    assert_eq!(
        e.extract(&["dt", "hour"], &[Some("2024-01-02"), Some("3")])
            .unwrap(),
        Some(t("2024-01-02T03:00:00"))
    );
    assert_eq!(
        e.extract(&["dt", "hour"], &[Some("2024-01-02"), None])
            .unwrap(),
        None
    );
    let e = PartitionTimeExtractor::new(None, None).unwrap();
    assert_eq!(
        e.extract(&["dt", "x"], &[Some("2024-01-02"), None])
            .unwrap(),
        Some(t("2024-01-02T00:00:00"))
    );
    assert_eq!(e.extract(&["dt"], &[None]).unwrap(), None);
}

fn options(kv: &[(&str, &str)]) -> CoreOptions {
    CoreOptions::new(
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    )
}

#[test]
fn config_defaults_and_errors() {
    assert_eq!(
        PartitionExpireConfig::from_options(&options(&[])).unwrap(),
        None
    );
    let c = PartitionExpireConfig::from_options(&options(&[("partition.expiration-time", "7 d")]))
        .unwrap()
        .unwrap();
    assert_eq!(
        c,
        PartitionExpireConfig {
            expiration_millis: 7 * 86_400_000,
            check_interval_millis: 3_600_000,
            strategy: ExpireStrategy::ValuesTime,
            timestamp_pattern: None,
            timestamp_formatter: None,
            max_expires: 100,
            batch_size: 100,
            end_input_check: false,
            default_partition_name: "__DEFAULT_PARTITION__".into(),
        }
    );
    assert!(!c.runs_after_commit());
    let c = PartitionExpireConfig::from_options(&options(&[
        ("partition.expiration-time", "1 h"),
        ("partition.expiration-max-num", "5"),
        ("partition.expiration-batch-size", "2"),
        ("partition.expiration-strategy", "update-time"),
        ("partition.expiration-check-interval", "0"),
    ]))
    .unwrap()
    .unwrap();
    assert_eq!(
        (
            c.max_expires,
            c.batch_size,
            c.strategy.clone(),
            c.runs_after_commit()
        ),
        (5, 2, ExpireStrategy::UpdateTime, true)
    );
    for (k, v) in [
        ("partition.expiration-max-num", "-1"),
        ("partition.expiration-max-num", "x"),
        ("partition.expiration-strategy", "VALUES-TIME"),
        ("partition.timestamp-formatter", "yyyy-MMM"),
        ("end-input.check-partition-expire", "yes"),
    ] {
        let err = PartitionExpireConfig::from_options(&options(&[
            ("partition.expiration-time", "1 d"),
            (k, v),
        ]))
        .unwrap_err();
        assert!(err.to_string().contains(k), "{k}: {err}");
    }
}

// ---------------------------------------------------------------------------------------
// Expiring over an in-memory table: partitions (dt STRING, hr INT), one file each.

const DAY: i64 = 86_400_000;
/// 2024-01-10T00:00:00Z.
const NOW: i64 = 1_704_844_800_000;

fn table(options: &[(&str, &str)]) -> (MemoryStore, TableSchema) {
    let opts: BTreeMap<String, String> = std::iter::once(("bucket".to_string(), "-1".to_string()))
        .chain(options.iter().map(|(k, v)| (k.to_string(), v.to_string())))
        .collect();
    let json = format!(
        r#"{{"version":3,"id":0,"fields":[
            {{"id":0,"name":"dt","type":"STRING"}},
            {{"id":1,"name":"hr","type":"INT"}},
            {{"id":2,"name":"v","type":"STRING"}}],
          "highestFieldId":2,"partitionKeys":["dt","hr"],"primaryKeys":[],
          "options":{},"timeMillis":1700000000000}}"#,
        serde_json::to_string(&opts).unwrap()
    );
    let schema = decode_schema(json.as_bytes(), "schema/schema-0").unwrap();
    let mut store = MemoryStore::new();
    store.objects.insert(
        "schema/schema-0".into(),
        Bytes::from(encode_schema(&schema).unwrap()),
    );
    (store, schema)
}

fn row(dt: Option<&str>, hr: i32) -> BinaryRow {
    BinaryRow::encode(
        &[
            dt.map_or(Datum::Null, |d| Datum::String(d.into())),
            Datum::Int(hr),
        ],
        &[
            DataType::nullable(TypeKind::VarChar {
                length: i32::MAX as u32,
            }),
            DataType::nullable(TypeKind::Int),
        ],
    )
    .unwrap()
}

fn data_file(name: &str, created: i64) -> DataFileMeta {
    DataFileMeta {
        file_name: name.into(),
        file_size: 100,
        row_count: 1,
        min_key: BinaryRow::empty(),
        max_key: BinaryRow::empty(),
        key_stats: SimpleStats::empty(),
        value_stats: SimpleStats::empty(),
        min_sequence_number: 0,
        max_sequence_number: 0,
        schema_id: 0,
        level: 0,
        extra_files: vec![],
        creation_time_millis: Some(created),
        delete_row_count: Some(0),
        embedded_index: None,
        file_source: Some(FileSource::Append),
        value_stats_cols: Some(vec![]),
        external_path: None,
        first_row_id: None,
        write_cols: None,
        write_cols_sequences: None,
    }
}

/// Commit one file per `(dt, hr, created)`.
fn fill(store: &mut MemoryStore, schema: &TableSchema, parts: &[(Option<&str>, i32, i64)]) {
    let messages: Vec<CommitMessage> = parts
        .iter()
        .enumerate()
        .map(|(i, (dt, hr, created))| CommitMessage {
            partition: row(*dt, *hr),
            bucket: 0,
            total_buckets: None,
            data_increment: DataIncrement {
                new_files: vec![data_file(&format!("f{i}.parquet"), *created)],
                ..Default::default()
            },
            compact_increment: Default::default(),
        })
        .collect();
    store
        .run(commit_machine(
            schema.clone(),
            messages,
            CommitMode::Append,
            CommitOptions::new("writer", NOW - DAY, 1),
        ))
        .unwrap();
}

fn expire(
    store: &mut MemoryStore,
    options: &[(&str, &str)],
    dry_run: bool,
) -> PartitionExpireOutcome {
    let config = PartitionExpireConfig::from_options(&self::options(options))
        .unwrap()
        .unwrap();
    store
        .run(expire_partitions_machine(
            config,
            NOW,
            CommitOptions::new("writer", NOW, 2),
            dry_run,
        ))
        .unwrap()
        .remove(0)
}

fn shown(outcome: &PartitionExpireOutcome) -> Vec<String> {
    outcome
        .partitions
        .iter()
        .map(ExpiredPartition::display)
        .collect()
}

fn live_partitions(store: &MemoryStore) -> Vec<String> {
    let mut store = store.clone();
    let m = Machine::once("live", |io| async move {
        let id = latest_snapshot_id(&io).await?.unwrap();
        let s = read_snapshot(&io, id).await?;
        read_live_entries(&io, &s).await
    });
    let mut names: Vec<String> = store
        .run(m)
        .unwrap()
        .remove(0)
        .into_iter()
        .map(|e| e.file.file_name)
        .collect();
    names.sort();
    names
}

fn snapshot_kind(store: &MemoryStore, id: i64) -> CommitKind {
    let bytes = &store.objects[&format!("snapshot/snapshot-{id}")];
    decode_snapshot(bytes, "s").unwrap().commit_kind
}

fn dated() -> Vec<(Option<&'static str>, i32, i64)> {
    vec![
        (Some("2024-01-09"), 1, NOW - 10 * DAY), // f0: 1 day old by value
        (Some("2024-01-01"), 3, NOW - DAY),      // f1: 9 days
        (Some("2023-12-25"), 2, NOW - DAY),      // f2: 16 days
        (Some("2024-01-01"), 12, NOW - 20 * DAY), // f3: 9 days
        (Some("no-date"), 0, NOW - 30 * DAY),    // f4: never parses
        (None, 5, NOW - 30 * DAY),               // f5: NULL dt
    ]
}

#[test]
fn values_time_in_java_order_with_batches() {
    let (mut store, schema) = table(&[]);
    fill(&mut store, &schema, &dated());
    // Dry run: text order of "dt,hr" ("2024-01-01,12" before "2024-01-01,3").
    let opts = [
        ("partition.expiration-time", "5 d"),
        ("partition.expiration-batch-size", "2"),
    ];
    let dry = expire(&mut store, &opts, true);
    assert_eq!(
        shown(&dry),
        [
            "dt=2023-12-25, hr=2",
            "dt=2024-01-01, hr=12",
            "dt=2024-01-01, hr=3"
        ]
    );
    assert!(dry.snapshot_ids.is_empty());
    assert_eq!(live_partitions(&store).len(), 6);
    // Two batches: two OVERWRITE snapshots.
    let done = expire(&mut store, &opts, false);
    assert_eq!(shown(&done), shown(&dry));
    assert_eq!(done.snapshot_ids, vec![2, 3]);
    assert_eq!(snapshot_kind(&store, 2), CommitKind::Overwrite);
    assert_eq!(snapshot_kind(&store, 3), CommitKind::Overwrite);
    assert_eq!(
        live_partitions(&store),
        ["f0.parquet", "f4.parquet", "f5.parquet"]
    );
    // Nothing left to expire: no commit.
    let again = expire(&mut store, &opts, false);
    assert!(again.partitions.is_empty() && again.snapshot_ids.is_empty());
    assert!(!store.objects.contains_key("snapshot/snapshot-4"));
}

#[test]
fn values_time_boundary_and_max_num() {
    let (mut store, schema) = table(&[]);
    fill(&mut store, &schema, &dated());
    // Exactly 9 days: 2024-01-01T00:00 is not before the cut-off, so it stays (strict).
    let out = expire(&mut store, &[("partition.expiration-time", "9 d")], true);
    assert_eq!(shown(&out), ["dt=2023-12-25, hr=2"]);
    let out = expire(
        &mut store,
        &[
            ("partition.expiration-time", "1 h"),
            ("partition.expiration-max-num", "2"),
        ],
        false,
    );
    assert_eq!(shown(&out), ["dt=2023-12-25, hr=2", "dt=2024-01-01, hr=12"]);
    assert_eq!(out.snapshot_ids, vec![2]);
    assert_eq!(
        live_partitions(&store),
        ["f0.parquet", "f1.parquet", "f4.parquet", "f5.parquet"]
    );
    // A pattern using hr: 2024-01-09 at 01:00 is 23 h old.
    let out = expire(
        &mut store,
        &[
            ("partition.expiration-time", "22 h"),
            ("partition.timestamp-pattern", "$dt $hr:00:00"),
        ],
        true,
    );
    assert_eq!(shown(&out), ["dt=2024-01-01, hr=3", "dt=2024-01-09, hr=1"]);
}

/// `partition.expiration-max-num` = 0 with expired partitions fails, as Java's expire does
/// (it limits the list to nothing, then refuses an empty drop); nothing is dropped.
#[test]
fn max_num_zero_fails_when_partitions_are_expired() {
    let (mut store, schema) = table(&[]);
    fill(&mut store, &schema, &dated());
    let config = PartitionExpireConfig::from_options(&options(&[
        ("partition.expiration-time", "9 d"),
        ("partition.expiration-max-num", "0"),
    ]))
    .unwrap()
    .unwrap();
    let err = store
        .run(expire_partitions_machine(
            config.clone(),
            NOW,
            CommitOptions::new("writer", NOW, 2),
            false,
        ))
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("partition.expiration-max-num is 0"),
        "{err}"
    );
    assert!(!store.objects.contains_key("snapshot/snapshot-2"));
    // Nothing expired: nothing to refuse.
    let config = PartitionExpireConfig {
        expiration_millis: 1000 * DAY,
        ..config
    };
    let out = store
        .run(expire_partitions_machine(
            config,
            NOW,
            CommitOptions::new("writer", NOW, 2),
            false,
        ))
        .unwrap()
        .remove(0);
    assert!(out.partitions.is_empty());
}

/// A compaction planned before partition expiry dropped its partition conflicts; the error
/// says the partition is expired (Java `ConflictDetection`'s partition-expire check). A
/// conflict in a partition that is not expired keeps the plain message.
#[test]
fn conflict_in_an_expired_partition_says_so() {
    let opts = [("partition.expiration-time", "9 d")];
    let (mut store, schema) = table(&opts);
    fill(&mut store, &schema, &dated());
    let out = expire(&mut store, &opts, false);
    assert_eq!(shown(&out), ["dt=2023-12-25, hr=2"]);
    // f2 (dt=2023-12-25) was dropped; a compaction of it, planned before, commits now.
    let compact = |name: &str, dt: &str, hr: i32| CommitMessage {
        partition: row(Some(dt), hr),
        bucket: 0,
        total_buckets: None,
        data_increment: Default::default(),
        compact_increment: crate::commit::CompactIncrement {
            compact_before: vec![data_file(name, NOW - DAY)],
            compact_after: vec![data_file(&format!("{name}.compacted"), NOW)],
            ..Default::default()
        },
    };
    let err = store
        .run(commit_machine(
            schema.clone(),
            vec![compact("f2.parquet", "2023-12-25", 2)],
            CommitMode::Append,
            CommitOptions::new("compactor", NOW, 3),
        ))
        .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::CommitConflict { .. }), "{text}");
    assert!(
        text.contains("expired partitions (partition dt=2023-12-25, hr=2)"),
        "{text}"
    );
    // A missing file of a live partition: the plain deletion conflict.
    let err = store
        .run(commit_machine(
            schema.clone(),
            vec![compact("gone.parquet", "2024-01-09", 1)],
            CommitMode::Append,
            CommitOptions::new("compactor", NOW, 4),
        ))
        .unwrap_err()
        .to_string();
    assert!(err.contains("not previously added"), "{err}");
    assert!(!err.contains("expired"), "{err}");
}

#[test]
fn update_time_uses_the_newest_file() {
    let (mut store, schema) = table(&[]);
    let mut parts = dated();
    // A second, new file in 2024-01-01/12 keeps it.
    parts.push((Some("2024-01-01"), 12, NOW - DAY));
    fill(&mut store, &schema, &parts);
    let out = expire(
        &mut store,
        &[
            ("partition.expiration-time", "5 d"),
            ("partition.expiration-strategy", "update-time"),
        ],
        false,
    );
    // NULL shown as the default name; "2024-01-09,1" > "__DEFAULT..." > "2024..."? No:
    // digits sort before '_' and letters, so: 2024-01-09,1 then __DEFAULT_PARTITION__,5
    // then no-date,0.
    assert_eq!(
        shown(&out),
        [
            "dt=2024-01-09, hr=1",
            "dt=__DEFAULT_PARTITION__, hr=5",
            "dt=no-date, hr=0"
        ]
    );
    assert_eq!(out.snapshot_ids, vec![2]);
    assert_eq!(
        live_partitions(&store),
        ["f1.parquet", "f2.parquet", "f3.parquet", "f6.parquet"]
    );
}

#[test]
fn drop_commit_is_not_mistaken_for_an_earlier_commit() {
    // The drop uses the writer's user and the batch identifier, as the write did.
    let (mut store, schema) = table(&[]);
    fill(&mut store, &schema, &dated());
    let out = expire(&mut store, &[("partition.expiration-time", "12 d")], false);
    assert_eq!(shown(&out), ["dt=2023-12-25, hr=2"]);
    assert_eq!(out.snapshot_ids, vec![2]);
    // Unpartitioned tables and empty tables: nothing.
    let (mut store, _) = table(&[]);
    let out = expire(&mut store, &[("partition.expiration-time", "1 d")], false);
    assert_eq!(out, PartitionExpireOutcome::default());
}
