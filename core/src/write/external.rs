//! Data files outside the table directory: `data-file.external-paths`.
//!
//! A table with `data-file.external-paths` (a comma-separated list of roots, each with a
//! scheme: `file:/mnt/a`, `s3://bucket/p`) and a `data-file.external-paths.strategy` other
//! than `none` writes every new data file (data, changelog and `.blob` files, compaction
//! outputs) to `<root>/<relative bucket path>/<file name>`, where the relative bucket path is
//! the file's bucket directory below the table root (`[<data-file.path-directory>/]<partition
//! path>bucket-<n>`), and records that full path as the file's `_EXTERNAL_PATH`; reads and
//! deletes then use it ([`crate::spec::DataFileMeta::path_in_bucket`]). Index files stay in the
//! table's `index/` directory, as in Java (unless `index-file-in-data-file-dir`, which the
//! writers here refuse together with external paths).
//!
//! The root of each new file is chosen per bucket writer by the strategy:
//!
//! | strategy | root of the next file |
//! |---|---|
//! | `none` (default) | none: files go to the table directory even when paths are set |
//! | `round-robin` | the roots in turn, starting after a position drawn from the writer's seed |
//! | `specific-fs` | as `round-robin`, over the roots whose scheme is `data-file.external-paths.specific-fs` |
//! | `weight-robin` | a root drawn from the writer's seed with the weights of `data-file.external-paths.weights` (without weights or with one root: `round-robin`) |
//! | `entropy-inject` | the roots in turn from the second (the first with one root), no draw; the file goes to `<root>/<relative bucket path>/<entropy dirs>/<file name>` |
//!
//! The entropy directories of `entropy-inject` ([`entropy_dirs`]) spread the files of one
//! bucket over many object-store prefixes: the low 20 bits of the 32-bit Murmur3 hash (seed
//! 0, Guava's `Hashing.murmur3_32()`) of the file name's UTF-8 bytes, written as 20 binary
//! digits and cut into directories of 4, 4, 4 and 8 digits (`1001/1111/0010/10010010`). A name
//! with characters outside the Basic Multilingual Plane hashes as Guava 30's `hashString`
//! does, which ORs their four UTF-8 bytes into its buffer without advancing it (Paimon's
//! names are ASCII). The path depends on the file name and the writer's file count only.
//!
//! Java draws the round-robin start and the weighted choice from a thread-local random
//! generator; the core has no randomness, so both come from the [`NameSource`] of the writer,
//! seeded by the host. (Java's `entropy-inject` starts at a fixed position: no draw here
//! either.) The roots are kept as Java's `org.apache.paimon.fs.Path` prints them
//! (`file:///tmp/a/` is `file:/tmp/a`), so the recorded `_EXTERNAL_PATH` strings are the ones a
//! Java writer would record.
//!
//! Source: Java `CoreOptions#DATA_FILE_EXTERNAL_PATHS*`, `AbstractFileStore#createExternalPaths`,
//! `ExternalPathProvider`, `RoundRobinExternalPathProvider`, `WeightedExternalPathProvider`,
//! `EntropyInjectExternalPathProvider` (release-2.0.0, the same in 1.4.2),
//! `FileStorePathFactory#relativeBucketPath`, `DataFilePathFactory#newPathFromName`.

use crate::error::{Error, Result};
use crate::io::uri_scheme;
use crate::spec::CoreOptions;
use crate::spec::external_paths::{
    DATA_FILE_EXTERNAL_PATHS, DATA_FILE_EXTERNAL_PATHS_SPECIFIC_FS,
    DATA_FILE_EXTERNAL_PATHS_STRATEGY, DATA_FILE_EXTERNAL_PATHS_WEIGHTS, normalize_root,
};
use crate::spec::murmur::{fmix, mix_h1, mix_k1};
use crate::util::NameSource;

/// How a root is chosen for each new file.
///
/// Source: Java `CoreOptions.ExternalPathStrategy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExternalPathStrategy {
    /// No external paths (the default).
    None,
    /// Round robin over the roots of one scheme.
    SpecificFs,
    /// Round robin over all roots.
    RoundRobin,
    /// A root drawn by weight.
    Weighted,
    /// The roots in turn, with hash directories from the file name below the bucket
    /// directory.
    EntropyInject,
}

impl ExternalPathStrategy {
    /// Parse the option's value as Java's enum option does (case-insensitive).
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the option and the accepted values.
    pub fn parse(value: &str) -> Result<Self> {
        let v = value.trim();
        let all = [
            ("none", Self::None),
            ("specific-fs", Self::SpecificFs),
            ("round-robin", Self::RoundRobin),
            ("weight-robin", Self::Weighted),
            ("entropy-inject", Self::EntropyInject),
        ];
        all.iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(v))
            .map(|(_, s)| *s)
            .ok_or_else(|| {
                Error::invalid(format!(
                    "option '{DATA_FILE_EXTERNAL_PATHS_STRATEGY}' = '{value}': expected one of \
                     none, specific-fs, round-robin, weight-robin, entropy-inject"
                ))
            })
    }
}

/// The external roots of a table and how new files choose among them; `None` from
/// [`ExternalPaths::from_options`] when files go to the table directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalPaths {
    roots: Vec<String>,
    /// Weights of `roots` (`weight-robin` with at least two roots), else round robin.
    weights: Option<Vec<u32>>,
    /// `entropy-inject`: round robin from a fixed start, hash directories below the bucket
    /// directory.
    entropy: bool,
}

impl ExternalPaths {
    /// The external roots the options ask for, `None` when there are none: no
    /// `data-file.external-paths` (or an empty one) or strategy `none`.
    ///
    /// # Errors
    /// [`Error::Invalid`] naming the option for a root without a scheme, an empty root, an
    /// unknown strategy, `specific-fs` without `data-file.external-paths.specific-fs` or
    /// keeping no root, bad weights or a count of weights other than the roots'.
    pub fn from_options(options: &CoreOptions) -> Result<Option<Self>> {
        let strategy = match options.get(DATA_FILE_EXTERNAL_PATHS_STRATEGY) {
            None => ExternalPathStrategy::None,
            Some(v) => ExternalPathStrategy::parse(v)?,
        };
        let Some(paths) = options.get(DATA_FILE_EXTERNAL_PATHS) else {
            return Ok(None);
        };
        if paths.is_empty() || strategy == ExternalPathStrategy::None {
            return Ok(None);
        }
        let specific_fs = if strategy == ExternalPathStrategy::SpecificFs {
            Some(
                options
                    .get(DATA_FILE_EXTERNAL_PATHS_SPECIFIC_FS)
                    .map(str::trim)
                    .ok_or_else(|| {
                        Error::invalid(format!(
                            "option '{DATA_FILE_EXTERNAL_PATHS_STRATEGY}' = 'specific-fs' needs \
                             '{DATA_FILE_EXTERNAL_PATHS_SPECIFIC_FS}'"
                        ))
                    })?,
            )
        } else {
            None
        };
        let mut roots = Vec::new();
        for raw in paths.split(',') {
            let root = normalize_root(raw.trim())?;
            let keep = match specific_fs {
                Some(fs) => uri_scheme(&root).is_some_and(|s| s.eq_ignore_ascii_case(fs)),
                None => true,
            };
            if keep {
                roots.push(root);
            }
        }
        if roots.is_empty() {
            return Err(Error::invalid(format!(
                "option '{DATA_FILE_EXTERNAL_PATHS}' = '{paths}': no external path \
                 (with '{DATA_FILE_EXTERNAL_PATHS_SPECIFIC_FS}' = '{}')",
                specific_fs.unwrap_or_default()
            )));
        }
        let weights = match (strategy, options.get(DATA_FILE_EXTERNAL_PATHS_WEIGHTS)) {
            (ExternalPathStrategy::Weighted, Some(w)) => {
                let weights = parse_weights(w)?;
                if roots.len() < 2 {
                    None
                } else if weights.len() != roots.len() {
                    return Err(Error::invalid(format!(
                        "option '{DATA_FILE_EXTERNAL_PATHS_WEIGHTS}' = '{w}': {} weights for {} \
                         external paths",
                        weights.len(),
                        roots.len()
                    )));
                } else {
                    Some(weights)
                }
            }
            _ => None,
        };
        Ok(Some(ExternalPaths {
            roots,
            weights,
            entropy: strategy == ExternalPathStrategy::EntropyInject,
        }))
    }

    /// The roots, as Java prints them (`file:/tmp/a`, `s3://b/p`).
    pub fn roots(&self) -> &[String] {
        &self.roots
    }

    /// A chooser for the files of one bucket writer, whose bucket directory relative to the
    /// table root is `relative_bucket_path` (`dt=1/bucket-0`); its round-robin start comes
    /// from `names` (one draw), except for `entropy-inject`, which starts at the first root
    /// (its first file goes to the second) and draws nothing, as Java.
    pub fn chooser(
        &self,
        relative_bucket_path: &str,
        names: &mut NameSource,
    ) -> ExternalPathChooser {
        let n = self.roots.len().max(1) as u64;
        let seed = if self.entropy { 0 } else { names.next_u64() };
        ExternalPathChooser {
            roots: self.roots.clone(),
            weights: self.weights.clone(),
            entropy: self.entropy,
            relative_bucket_path: relative_bucket_path.trim_matches('/').to_owned(),
            position: (seed % n) as usize,
            random: NameSource::new(seed),
        }
    }
}

/// The entropy directories `entropy-inject` puts between the bucket directory and a file
/// named `file_name`: the low 20 bits of Guava 30's Murmur3-32 (seed 0) of the name as
/// binary digits (most significant first), cut into `4/4/4/8` digits, e.g.
/// `1001/1111/0010/10010010` for `data-1.parquet`.
///
/// Source: Java `EntropyInjectExternalPathProvider#computeHash` and `#dirsFromHash`.
pub fn entropy_dirs(file_name: &str) -> String {
    let bits = format!("{:020b}", guava_murmur3_32(file_name) & 0xf_ffff);
    format!(
        "{}/{}/{}/{}",
        &bits[0..4],
        &bits[4..8],
        &bits[8..12],
        &bits[12..20]
    )
}

/// 32-bit Murmur3 (seed 0) of `s` in UTF-8, as Guava 30's `Hashing.murmur3_32().hashString(s,
/// UTF_8)` (shaded in Paimon) computes it: the same as hashing the UTF-8 bytes, except that
/// the four bytes of a character outside the Basic Multilingual Plane are OR-ed into the
/// pending buffer without moving it forward (they still count in the length).
fn guava_murmur3_32(s: &str) -> u32 {
    let mut h1 = 0u32;
    let mut buffer = 0u64;
    let mut shift = 0u32;
    let mut len = 0usize;
    let mut utf8 = [0u8; 4];
    for c in s.chars() {
        let bytes = c.encode_utf8(&mut utf8).as_bytes();
        let mut word = [0u8; 8];
        word[..bytes.len()].copy_from_slice(bytes);
        buffer |= u64::from_le_bytes(word) << shift;
        len += bytes.len();
        if bytes.len() < 4 {
            shift += 8 * bytes.len() as u32;
        }
        if shift >= 32 {
            h1 = mix_h1(h1, mix_k1(buffer as u32));
            buffer >>= 32;
            shift -= 32;
        }
    }
    h1 ^= mix_k1(buffer as u32);
    fmix(h1, len)
}

/// Chooses the external path of each new file of one bucket writer.
///
/// Source: Java `RoundRobinExternalPathProvider`, `WeightedExternalPathProvider`,
/// `EntropyInjectExternalPathProvider`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalPathChooser {
    roots: Vec<String>,
    weights: Option<Vec<u32>>,
    entropy: bool,
    relative_bucket_path: String,
    /// Index of the root of the last file (round robin).
    position: usize,
    random: NameSource,
}

impl ExternalPathChooser {
    /// The full path of a new file named `file_name`:
    /// `<root>/<relative bucket path>/<file_name>`, the root chosen by the strategy
    /// (`entropy-inject`: `<root>/<relative bucket path>/<entropy dirs>/<file_name>`, see
    /// [`entropy_dirs`]).
    pub fn next_path(&mut self, file_name: &str) -> String {
        let root = match &self.weights {
            Some(weights) => {
                let total: u64 = weights.iter().map(|w| u64::from(*w)).sum();
                let mut draw = self.random.next_u64() % total.max(1);
                let mut pick = 0;
                for (i, w) in weights.iter().enumerate() {
                    if draw < u64::from(*w) {
                        pick = i;
                        break;
                    }
                    draw -= u64::from(*w);
                }
                pick
            }
            None => {
                self.position = (self.position + 1) % self.roots.len().max(1);
                self.position
            }
        };
        let root = self.roots.get(root).map_or("", String::as_str);
        let mut out = root.trim_end_matches('/').to_owned();
        let entropy = if self.entropy {
            entropy_dirs(file_name)
        } else {
            String::new()
        };
        for part in [self.relative_bucket_path.as_str(), &entropy, file_name] {
            if !part.is_empty() {
                out.push('/');
                out.push_str(part);
            }
        }
        out
    }
}

/// Where the new data files of one bucket go: its directory below the table root, or the
/// external paths of [`ExternalPathChooser`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataFilePlacer {
    bucket_path: String,
    external: Option<ExternalPathChooser>,
}

impl DataFilePlacer {
    /// Files of the bucket directory `bucket_path` (relative to the table root, as
    /// [`crate::spec::partition::bucket_path`] with the table's data root); with `external`,
    /// one draw from `names` sets the chooser's start (none for `entropy-inject`).
    pub fn new(
        bucket_path: &str,
        external: Option<&ExternalPaths>,
        names: &mut NameSource,
    ) -> Self {
        DataFilePlacer {
            bucket_path: bucket_path.to_owned(),
            external: external.map(|e| e.chooser(bucket_path, names)),
        }
    }

    /// The bucket directory relative to the table root.
    pub fn bucket_path(&self) -> &str {
        &self.bucket_path
    }

    /// Where a new file named `file_name` goes: the path to `Put` and the `_EXTERNAL_PATH` to
    /// record (the same full path, or `None` for a file in the bucket directory).
    pub fn place(&mut self, file_name: &str) -> (String, Option<String>) {
        match &mut self.external {
            Some(c) => {
                let p = c.next_path(file_name);
                (p.clone(), Some(p))
            }
            None => (format!("{}/{file_name}", self.bucket_path), None),
        }
    }
}

/// Parse `data-file.external-paths.weights`: positive integers separated by commas.
fn parse_weights(value: &str) -> Result<Vec<u32>> {
    value
        .split(',')
        .map(|w| match w.trim().parse::<u32>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(Error::invalid(format!(
                "option '{DATA_FILE_EXTERNAL_PATHS_WEIGHTS}' = '{value}': '{}' is not a positive \
                 integer",
                w.trim()
            ))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn options(pairs: &[(&str, &str)]) -> CoreOptions {
        CoreOptions::new(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect::<BTreeMap<_, _>>(),
        )
    }

    #[test]
    fn no_paths_or_strategy_none_means_table_dir() {
        assert_eq!(ExternalPaths::from_options(&options(&[])).unwrap(), None);
        let none = options(&[(DATA_FILE_EXTERNAL_PATHS, "file:/a")]);
        assert_eq!(ExternalPaths::from_options(&none).unwrap(), None);
        let empty = options(&[
            (DATA_FILE_EXTERNAL_PATHS, ""),
            (DATA_FILE_EXTERNAL_PATHS_STRATEGY, "round-robin"),
        ]);
        assert_eq!(ExternalPaths::from_options(&empty).unwrap(), None);
    }

    #[test]
    fn bad_options_are_invalid() {
        let cases: [(&[(&str, &str)], &str); 7] = [
            (
                &[
                    (DATA_FILE_EXTERNAL_PATHS, "/tmp/a"),
                    (DATA_FILE_EXTERNAL_PATHS_STRATEGY, "round-robin"),
                ],
                "has no scheme",
            ),
            (
                &[
                    (DATA_FILE_EXTERNAL_PATHS, "file:/a,,file:/b"),
                    (DATA_FILE_EXTERNAL_PATHS_STRATEGY, "round-robin"),
                ],
                "is empty",
            ),
            (
                &[
                    (DATA_FILE_EXTERNAL_PATHS, "file:/a"),
                    (DATA_FILE_EXTERNAL_PATHS_STRATEGY, "random"),
                ],
                "data-file.external-paths.strategy",
            ),
            (
                &[
                    (DATA_FILE_EXTERNAL_PATHS, "file:/a"),
                    (DATA_FILE_EXTERNAL_PATHS_STRATEGY, "specific-fs"),
                ],
                "data-file.external-paths.specific-fs",
            ),
            (
                &[
                    (DATA_FILE_EXTERNAL_PATHS, "file:/a"),
                    (DATA_FILE_EXTERNAL_PATHS_STRATEGY, "specific-fs"),
                    (DATA_FILE_EXTERNAL_PATHS_SPECIFIC_FS, "s3"),
                ],
                "no external path",
            ),
            (
                &[
                    (DATA_FILE_EXTERNAL_PATHS, "file:/a,file:/b"),
                    (DATA_FILE_EXTERNAL_PATHS_STRATEGY, "weight-robin"),
                    (DATA_FILE_EXTERNAL_PATHS_WEIGHTS, "1,0"),
                ],
                "not a positive integer",
            ),
            (
                &[
                    (DATA_FILE_EXTERNAL_PATHS, "file:/a,file:/b"),
                    (DATA_FILE_EXTERNAL_PATHS_STRATEGY, "weight-robin"),
                    (DATA_FILE_EXTERNAL_PATHS_WEIGHTS, "1"),
                ],
                "1 weights for 2",
            ),
        ];
        for (pairs, needle) in cases {
            let err = ExternalPaths::from_options(&options(pairs)).unwrap_err();
            assert!(matches!(err, Error::Invalid { .. }), "{err}");
            assert!(err.to_string().contains(needle), "{err}");
        }
    }

    /// Expected entropy directories, from Java Paimon 1.4.2's own
    /// `EntropyInjectExternalPathProvider#computeHash` (the same class as in release-2.0.0),
    /// run on these names in a throwaway Java snippet against the `paimon-bundle-1.4.2.jar`
    /// of `/work/java-check/lib`, and cross-checked by an independent Python Murmur3 (seed 0)
    /// over the UTF-8 bytes (the same for every name but the two with emoji, where Guava 30's
    /// `hashString` differs from plain Murmur3: plain gives `1001/0101/0110/01111010` and
    /// `1110/1111/0111/10101101`; a Python emulation of Guava's loop gives Java's values).
    const JAVA_ENTROPY: [(&str, &str); 9] = [
        ("data-1.parquet", "1001/1111/0010/10010010"),
        (
            "data-5d2a8f3e-0c1b-4e7a-9f36-2b1d8c4e5a70-0.parquet",
            "1010/1001/1011/11100111",
        ),
        ("changelog-x-1.orc", "1010/0000/1101/10101100"),
        ("f.parquet", "0111/1111/1110/11001100"),
        ("a", "0101/0110/1001/10110010"),
        ("", "0000/0000/0000/00000000"),
        ("éü-€.parquet", "1011/1000/0001/11100011"),
        ("x\u{1F600}y.parquet", "1110/0011/0010/11010010"),
        ("\u{1F600}\u{1F601}abc", "1000/0001/1000/00101001"),
    ];

    #[test]
    fn entropy_dirs_are_javas() {
        for (name, want) in JAVA_ENTROPY {
            assert_eq!(entropy_dirs(name), want, "{name:?}");
        }
    }

    #[test]
    fn entropy_inject_cycles_from_the_second_root_and_draws_nothing() {
        let ext = ExternalPaths::from_options(&options(&[
            (DATA_FILE_EXTERNAL_PATHS, "file:///x/a/,s3://b/p,file:/x/c"),
            (DATA_FILE_EXTERNAL_PATHS_STRATEGY, "Entropy-Inject"),
        ]))
        .unwrap()
        .unwrap();
        let mut names = NameSource::new(9);
        let before = names.clone();
        let mut p = DataFilePlacer::new("dt=1/bucket-0", Some(&ext), &mut names);
        assert_eq!(names, before, "no draw for entropy-inject");
        // The same names in the same order as the Java snippet of `JAVA_ENTROPY`, whose
        // provider (roots file:///x/a/, s3://b/p, file:/x/c; bucket path dt=1/bucket-0)
        // returned exactly these paths.
        let want = [
            "s3://b/p/dt=1/bucket-0/1001/1111/0010/10010010/data-1.parquet",
            "file:/x/c/dt=1/bucket-0/1010/1001/1011/11100111/\
             data-5d2a8f3e-0c1b-4e7a-9f36-2b1d8c4e5a70-0.parquet",
            "file:/x/a/dt=1/bucket-0/1010/0000/1101/10101100/changelog-x-1.orc",
            "s3://b/p/dt=1/bucket-0/0111/1111/1110/11001100/f.parquet",
        ];
        for (name, want) in JAVA_ENTROPY.iter().map(|(n, _)| *n).zip(want) {
            let (path, external) = p.place(name);
            assert_eq!(path, want);
            assert_eq!(external.as_deref(), Some(want));
        }
        // One root: every file there (Java: file:/only/bucket-3/0111/1111/1110/11001100/f.parquet).
        let one = ExternalPaths::from_options(&options(&[
            (DATA_FILE_EXTERNAL_PATHS, "file:/only"),
            (DATA_FILE_EXTERNAL_PATHS_STRATEGY, "entropy-inject"),
        ]))
        .unwrap()
        .unwrap();
        let mut c = one.chooser("bucket-3", &mut NameSource::new(1));
        for _ in 0..2 {
            assert_eq!(
                c.next_path("f.parquet"),
                "file:/only/bucket-3/0111/1111/1110/11001100/f.parquet"
            );
        }
        // Below a `data-file.path-directory`, in a postpone bucket.
        let mut c = one.chooser("data/dt=2/bucket-postpone/", &mut NameSource::new(1));
        assert_eq!(
            c.next_path("a"),
            "file:/only/data/dt=2/bucket-postpone/0101/0110/1001/10110010/a"
        );
    }

    #[test]
    fn round_robin_cycles_from_a_seeded_start() {
        let ext = ExternalPaths::from_options(&options(&[
            (
                DATA_FILE_EXTERNAL_PATHS,
                "file:///x/a/, file:/x/b,file:/x/c",
            ),
            (DATA_FILE_EXTERNAL_PATHS_STRATEGY, "ROUND-ROBIN"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(ext.roots(), ["file:/x/a", "file:/x/b", "file:/x/c"]);
        let roots_of = |seed: u64| {
            let mut c = ext.chooser("dt=1/bucket-0/", &mut NameSource::new(seed));
            (0..6)
                .map(|i| c.next_path(&format!("data-{i}.parquet")))
                .collect::<Vec<_>>()
        };
        let paths = roots_of(7);
        assert_eq!(paths, roots_of(7), "same seed, same paths");
        assert!(
            paths[0].ends_with("/dt=1/bucket-0/data-0.parquet"),
            "{paths:?}"
        );
        let root = |p: &str| p[..p.find("/dt=1").unwrap()].to_owned();
        let firsts: Vec<String> = paths.iter().map(|p| root(p)).collect();
        assert_eq!(firsts[0..3], firsts[3..6], "a cycle of three");
        let mut sorted = firsts[0..3].to_vec();
        sorted.sort();
        assert_eq!(sorted, ["file:/x/a", "file:/x/b", "file:/x/c"]);
        // The start depends on the seed: some seed starts elsewhere.
        let starts: std::collections::BTreeSet<String> =
            (0..16).map(|s| root(&roots_of(s)[0])).collect();
        assert_eq!(starts.len(), 3, "{starts:?}");
    }

    #[test]
    fn specific_fs_keeps_the_roots_of_its_scheme() {
        let ext = ExternalPaths::from_options(&options(&[
            (DATA_FILE_EXTERNAL_PATHS, "file:/a,s3://b/t,S3://c/t"),
            (DATA_FILE_EXTERNAL_PATHS_STRATEGY, "specific-fs"),
            (DATA_FILE_EXTERNAL_PATHS_SPECIFIC_FS, "s3"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(ext.roots(), ["s3://b/t", "S3://c/t"]);
        let mut c = ext.chooser("bucket-0", &mut NameSource::new(1));
        let a = c.next_path("f");
        let b = c.next_path("f");
        assert_ne!(a, b);
        assert!(a.ends_with("/t/bucket-0/f"));
    }

    #[test]
    fn weighted_follows_the_weights_and_the_seed() {
        let ext = ExternalPaths::from_options(&options(&[
            (DATA_FILE_EXTERNAL_PATHS, "file:/a,file:/b"),
            (DATA_FILE_EXTERNAL_PATHS_STRATEGY, "weight-robin"),
            (DATA_FILE_EXTERNAL_PATHS_WEIGHTS, "3, 1"),
        ]))
        .unwrap()
        .unwrap();
        let draw = |seed| {
            let mut c = ext.chooser("bucket-0", &mut NameSource::new(seed));
            (0..400)
                .filter(|_| c.next_path("f").starts_with("file:/a/"))
                .count()
        };
        assert_eq!(draw(5), draw(5));
        let a = draw(5);
        assert!((250..350).contains(&a), "{a} of 400 to the weight-3 root");
        // Without weights: round robin.
        let rr = ExternalPaths::from_options(&options(&[
            (DATA_FILE_EXTERNAL_PATHS, "file:/a,file:/b"),
            (DATA_FILE_EXTERNAL_PATHS_STRATEGY, "weight-robin"),
        ]))
        .unwrap()
        .unwrap();
        let mut c = rr.chooser("bucket-0", &mut NameSource::new(5));
        assert_ne!(c.next_path("f"), c.next_path("f"));
    }

    #[test]
    fn placer_puts_into_the_bucket_dir_without_external_paths() {
        let mut names = NameSource::new(3);
        let before = names.clone();
        let mut p = DataFilePlacer::new("dir/dt=1/bucket-2", None, &mut names);
        assert_eq!(names, before, "no draw without external paths");
        assert_eq!(
            p.place("data-1.parquet"),
            ("dir/dt=1/bucket-2/data-1.parquet".to_owned(), None)
        );
        let ext = ExternalPaths::from_options(&options(&[
            (DATA_FILE_EXTERNAL_PATHS, "file:/e"),
            (DATA_FILE_EXTERNAL_PATHS_STRATEGY, "round-robin"),
        ]))
        .unwrap()
        .unwrap();
        let mut p = DataFilePlacer::new("dir/dt=1/bucket-2", Some(&ext), &mut names);
        let (path, external) = p.place("data-1.parquet");
        assert_eq!(path, "file:/e/dir/dt=1/bucket-2/data-1.parquet");
        assert_eq!(external.as_deref(), Some(path.as_str()));
    }
}
