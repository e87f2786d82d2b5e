//! Partition time extraction (Java's `PartitionTimeExtractorTest` examples and more) and
//! option parsing. Both strategies, Java's order and limits and the drop commits:
//! `commit/partition_expire/tests.rs`.

use super::*;

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
