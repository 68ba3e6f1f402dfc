//! Replay tokens: one shell-safe word that pins down a single execution.
//!
//! When a test fails, pctvb prints a line such as
//!
//! ```text
//! PCTVB_REPLAY=pctvb2-Agtsb3N0X3VwZGF0ZQZyYW5kb20qA-_Nq4lnRSMBAgMGBQIqc0t8FJ4BlQ cargo test lost_update
//! ```
//!
//! The token carries everything needed to re-run exactly the failing
//! execution ([`ReplayToken`]). [`encode`] produces it and [`decode`] reads it
//! back. Decoding never panics: any malformed input yields a [`TokenError`]
//! whose message says what is wrong and what to do about it.
//!
//! # Token layout (format version 2)
//!
//! ```text
//! token    = "pctvb" VERSION "-" base64url(payload || checksum)
//! VERSION  = the format version in decimal, "2" for this format
//! ```
//!
//! `base64url` is the URL-safe alphabet of RFC 4648 (`A-Z a-z 0-9 - _`)
//! without `=` padding, so the whole token is a single shell-safe word made of
//! letters, digits, `-` and `_`. The decoder is strict: unused bits in the last
//! character must be zero, so every token has exactly one spelling.
//!
//! The payload is a byte string; `varint` is unsigned LEB128 (7 bits per byte,
//! least significant group first, high bit set on every byte but the last, at
//! most 10 bytes for a `u64`):
//!
//! | field          | encoding                                                   |
//! |----------------|------------------------------------------------------------|
//! | version        | 1 byte, [`FORMAT_VERSION`] (= 2), must match `VERSION`     |
//! | test name      | varint byte length, then that many UTF-8 bytes             |
//! | strategy       | varint byte length, then that many UTF-8 bytes             |
//! | seed           | varint                                                     |
//! | execution      | varint                                                     |
//! | digest         | 8 bytes, little-endian `u64`                               |
//! | thread count T | varint: 1 + the largest thread id in `choices`, 0 if empty |
//! | run count R    | varint: number of maximal runs of equal consecutive choices|
//! | R runs         | one varint each: `run_length * T + thread`                 |
//!
//! followed by the checksum: 8 bytes, the little-endian [`fnv1a64`] of all the
//! payload bytes above (version byte included).
//!
//! Choices are run-length encoded. Folding the thread id into the run length
//! (`run_length * T + thread`, decoded with `/ T` and `% T`) costs one varint
//! per run instead of two: with two threads a run of up to 63 choices takes a
//! single byte, and a run of 10^6 choices takes 3 bytes. The encoder always
//! emits maximal runs, so a token for 10^6 choices with a handful of switches
//! and a typical test name is about 130 characters long.
//!
//! For example, the token in the line above decodes to test `lost_update`,
//! strategy `random`, seed 42, execution 3, digest `0x0123456789abcdef` and
//! choices `[0, 0, 0, 1, 1, 0]` (T = 2, runs coded 6, 5, 2).
//!
//! Decoding checks, in order: the text prefix (and its version number), the
//! base64url characters, the checksum, the version byte, then every field, and
//! finally that no bytes are left over. A run of length 0 and a total of more
//! than [`MAX_CHOICES`] choices are rejected before any large allocation.

use std::error::Error;
use std::fmt;
use std::str::FromStr;

/// Name of the environment variable through which a token is passed to a
/// replayed test run.
pub const ENV_VAR: &str = "PCTVB_REPLAY";

/// Token format version written by [`encode`] and the only one [`decode`]
/// accepts.
pub const FORMAT_VERSION: u8 = 2;

/// Text every version-2 token starts with.
pub const PREFIX: &str = "pctvb2-";

/// Largest total number of scheduling choices [`decode`] accepts (a sanity
/// cap that bounds the memory a token can make the decoder allocate).
pub const MAX_CHOICES: u64 = 100_000_000;

/// Prefix stem before the decimal version number.
const STEM: &str = "pctvb";

/// `ENV_VAR` followed by `=`, which users may paste along with the token.
const ENV_ASSIGNMENT: &str = "PCTVB_REPLAY=";

/// Size in bytes of the trailing checksum.
const CHECKSUM_LEN: usize = 8;

/// Number of characters of unrecognised input quoted back in an error.
const SHOWN_CHARS: usize = 16;

/// Everything needed to re-run one execution exactly.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ReplayToken {
    /// The test's full name, e.g. `"bank::tests::transfer"`; may be empty.
    pub test: String,
    /// Description of the strategy that found the execution, e.g. `"random"` or
    /// `"pctvb(d=2,v=1,t=2)"`, with the settings its replay must take as they were (`" [races
    /// off]"`, `" [max_steps N]"`, `" [max_threads N]"`: see `replay::Recorded`), then the
    /// `#[pctvb::instrument]` session's tag, if any.
    pub strategy: String,
    /// The run seed.
    pub seed: u64,
    /// Index of the execution within the run.
    pub execution: u64,
    /// The thread chosen at every scheduling point, in order (thread ids are
    /// small dense numbers, 0 = main thread).
    pub choices: Vec<u32>,
    /// A hash of the event sequence of that execution (the runtime's digest), used
    /// to detect divergence on replay.
    pub digest: u64,
}

impl FromStr for ReplayToken {
    type Err = TokenError;

    /// Same as [`decode`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        decode(s)
    }
}

/// Why a replay token could not be decoded.
///
/// The [`Display`](fmt::Display) message of every variant says what was wrong
/// and what to do about it, so it can be shown to the user as is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TokenError {
    /// The input was empty (or only whitespace, or only `PCTVB_REPLAY=`).
    Empty,
    /// The input does not start with `pctvb<version>-`.
    UnknownPrefix {
        /// The first (at most 16) characters received.
        found: String,
    },
    /// A character outside the token alphabet (`A-Z a-z 0-9 - _`).
    InvalidCharacter {
        /// 1-based position of the character, counted in characters from the
        /// start of the text given to [`decode`].
        position: usize,
        /// The offending character.
        character: char,
    },
    /// The token's checksum does not match its contents (or its base64url
    /// text has a length or last character no encoder produces, which is
    /// what an edited or cut token looks like).
    ChecksumMismatch,
    /// The token ends before the named field (its checksum was intact, so it
    /// was produced that way rather than cut while copying).
    Truncated {
        /// Name of the first missing field, e.g. `"seed"`.
        field: &'static str,
    },
    /// The token was written in a format version this code does not read.
    UnsupportedVersion {
        /// The version found in the token.
        found: u32,
    },
    /// A field holds a value no encoder produces (e.g. invalid UTF-8).
    InvalidField {
        /// Name of the field, e.g. `"test name"`.
        field: &'static str,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// A run of choices has length 0.
    ZeroRunLength {
        /// 0-based index of the run.
        run: u64,
    },
    /// The choices add up to more than the sanity cap.
    TooManyChoices {
        /// The cap that was exceeded ([`MAX_CHOICES`] for [`decode`]).
        limit: u64,
    },
    /// Bytes remain after the last field.
    TrailingBytes {
        /// How many bytes are left over.
        count: usize,
    },
}

impl fmt::Display for TokenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const RECOPY: &str = "copy the whole replay line from the test output again";
        const RERUN: &str = "re-run the test to get a new token";
        match self {
            TokenError::Empty => write!(
                f,
                "the replay token is empty; set {ENV_VAR} to the token printed \
                 in the test's failure message (it starts with {PREFIX:?})"
            ),
            TokenError::UnknownPrefix { found } => write!(
                f,
                "this is not a pctvb replay token: expected it to start with \
                 {PREFIX:?}, but it starts with {found:?}; {RECOPY}"
            ),
            TokenError::InvalidCharacter { position, character } => write!(
                f,
                "invalid character {character:?} at position {position} of the \
                 replay token (a token contains only letters, digits, '-' and \
                 '_'); {RECOPY}"
            ),
            TokenError::ChecksumMismatch => write!(
                f,
                "replay token checksum mismatch: the token was altered or cut \
                 short; copy the whole replay line again"
            ),
            TokenError::Truncated { field } => write!(
                f,
                "the replay token is truncated: field `{field}` is missing; \
                 {RECOPY}, or {RERUN}"
            ),
            TokenError::UnsupportedVersion { found } => write!(
                f,
                "token format version {found} is not supported by this pctvb \
                 (expects {FORMAT_VERSION}); {RERUN}"
            ),
            TokenError::InvalidField { field, reason } => write!(
                f,
                "the replay token's field `{field}` is invalid ({reason}); the \
                 token was not produced by this pctvb version; {RERUN}"
            ),
            TokenError::ZeroRunLength { run } => write!(
                f,
                "the replay token's choices run #{run} has length 0, which no \
                 pctvb encoder produces; {RERUN}"
            ),
            TokenError::TooManyChoices { limit } => write!(
                f,
                "the replay token describes more than {limit} scheduling \
                 choices, which is beyond what replay supports; the token is \
                 corrupt or the execution is too long to replay: shorten the \
                 test, or {RERUN}"
            ),
            TokenError::TrailingBytes { count } => write!(
                f,
                "the replay token has {count} unexpected byte(s) after its last \
                 field; it was probably produced by a different pctvb version; \
                 {RERUN}"
            ),
        }
    }
}

impl Error for TokenError {}

/// Encodes `token` as a single shell-safe word starting with `PREFIX`.
///
/// The result is deterministic: equal tokens give equal strings. Executions
/// with more than `MAX_CHOICES` choices still encode, but [`decode`] rejects
/// the result with `TokenError::TooManyChoices`.
#[must_use]
pub fn encode(token: &ReplayToken) -> String {
    seal(encode_payload(token))
}

/// Decodes a token produced by [`encode`].
///
/// Surrounding whitespace is ignored, and so is a leading `PCTVB_REPLAY=` (in
/// which case anything after the first whitespace, such as the rest of a
/// pasted `cargo test ...` command line, is ignored too) and one pair of
/// matching `'` or `"` quotes around the token. Never panics.
///
/// # Errors
///
/// Returns a `TokenError` describing the first problem found if `input` is
/// not a complete, unaltered version-2 token.
pub fn decode(input: &str) -> Result<ReplayToken, TokenError> {
    decode_with_limit(input, MAX_CHOICES)
}

/// 64-bit FNV-1a hash of `bytes` (offset basis `0xcbf29ce484222325`, prime
/// `0x100000001b3`).
///
/// Used as the token checksum. The result is the same on every platform and
/// in every version of pctvb.
#[must_use]
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut hash = FNV_OFFSET_BASIS;
    for &byte in bytes {
        hash = (hash ^ u64::from(byte)).wrapping_mul(FNV_PRIME);
    }
    hash
}

const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

// ---------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------

/// The payload bytes (version byte through the last run, no checksum).
fn encode_payload(token: &ReplayToken) -> Vec<u8> {
    let mut out = Vec::with_capacity(48 + token.test.len() + token.strategy.len());
    out.push(FORMAT_VERSION);
    put_bytes(&mut out, token.test.as_bytes());
    put_bytes(&mut out, token.strategy.as_bytes());
    put_varint(&mut out, token.seed);
    put_varint(&mut out, token.execution);
    out.extend_from_slice(&token.digest.to_le_bytes());

    let threads = token.choices.iter().max().map_or(0, |&max| u64::from(max) + 1);
    put_varint(&mut out, threads);
    let runs = token.choices.chunk_by(|a, b| a == b);
    put_varint(&mut out, runs.clone().count() as u64);
    for run in runs {
        // Cannot saturate unless the token has more than MAX_CHOICES choices
        // (1e8 * 2^32 < 2^64), and then decode rejects it before looking at
        // the runs' values.
        let code = (run.len() as u64).saturating_mul(threads).saturating_add(u64::from(run[0]));
        put_varint(&mut out, code);
    }
    out
}

/// Appends the checksum, base64url-encodes and prefixes `payload`.
fn seal(mut payload: Vec<u8>) -> String {
    let checksum = fnv1a64(&payload);
    payload.extend_from_slice(&checksum.to_le_bytes());
    let mut out = String::with_capacity(PREFIX.len() + payload.len().div_ceil(3) * 4);
    out.push_str(PREFIX);
    base64url_encode(&payload, &mut out);
    out
}

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

const BASE64URL: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

fn base64url_encode(bytes: &[u8], out: &mut String) {
    for chunk in bytes.chunks(3) {
        let b0 = u32::from(chunk[0]);
        let b1 = chunk.get(1).map_or(0, |&b| u32::from(b));
        let b2 = chunk.get(2).map_or(0, |&b| u32::from(b));
        let group = (b0 << 16) | (b1 << 8) | b2;
        // n input bytes give n + 1 characters.
        for i in 0..=chunk.len() {
            let sextet = (group >> (18 - 6 * i)) & 0x3f;
            out.push(char::from(BASE64URL[sextet as usize]));
        }
    }
}

// ---------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------

/// [`decode`] with a configurable cap on the total number of choices.
fn decode_with_limit(input: &str, max_choices: u64) -> Result<ReplayToken, TokenError> {
    let (start, text) = locate_token(input)?;
    let body_start = parse_prefix(text)?;
    let bytes = base64url_decode(&text[body_start..]).map_err(|err| match err {
        Base64Error::Character { offset, character } => {
            let byte_offset = start + body_start + offset;
            TokenError::InvalidCharacter {
                position: input[..byte_offset].chars().count() + 1,
                character,
            }
        }
        Base64Error::Ending => TokenError::ChecksumMismatch,
    })?;

    let Some((payload, checksum)) = bytes.split_last_chunk::<CHECKSUM_LEN>() else {
        return Err(TokenError::Truncated { field: "checksum" });
    };
    if fnv1a64(payload) != u64::from_le_bytes(*checksum) {
        return Err(TokenError::ChecksumMismatch);
    }

    let mut reader = Reader { bytes: payload };
    let version = reader.byte("version")?;
    if version != FORMAT_VERSION {
        return Err(TokenError::UnsupportedVersion { found: u32::from(version) });
    }
    let test = reader.string("test name")?;
    let strategy = reader.string("strategy")?;
    let seed = reader.varint("seed")?;
    let execution = reader.varint("execution")?;
    let digest = reader.u64_le("digest")?;
    let choices = reader.choices(max_choices)?;
    if !reader.bytes.is_empty() {
        return Err(TokenError::TrailingBytes { count: reader.bytes.len() });
    }
    Ok(ReplayToken { test, strategy, seed, execution, choices, digest })
}

/// Strips whitespace, a leading `PCTVB_REPLAY=` and matching quotes; returns
/// the byte offset of the token within `input` and the token text.
fn locate_token(input: &str) -> Result<(usize, &str), TokenError> {
    let trimmed = input.trim_start();
    let mut start = input.len() - trimmed.len();
    let mut text = trimmed.trim_end();
    if let Some(rest) = text.strip_prefix(ENV_ASSIGNMENT) {
        start += ENV_ASSIGNMENT.len();
        // Drop the rest of a pasted command line.
        text = rest.split(char::is_whitespace).next().unwrap_or("");
    }
    for quote in ['\'', '"'] {
        if text.len() >= 2 && text.starts_with(quote) && text.ends_with(quote) {
            text = &text[1..text.len() - 1];
            start += 1;
            break;
        }
    }
    if text.is_empty() {
        return Err(TokenError::Empty);
    }
    Ok((start, text))
}

/// Checks the `pctvb<version>-` prefix; returns its length in bytes.
fn parse_prefix(text: &str) -> Result<usize, TokenError> {
    let unknown = || TokenError::UnknownPrefix { found: text.chars().take(SHOWN_CHARS).collect() };
    let rest = text.strip_prefix(STEM).ok_or_else(unknown)?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let (number, after) = rest.split_at(digits);
    let well_formed = (1..=9).contains(&digits)
        && !(digits > 1 && number.starts_with('0'))
        && after.starts_with('-');
    if !well_formed {
        return Err(unknown());
    }
    let version: u32 = number.parse().map_err(|_| unknown())?;
    if version != u32::from(FORMAT_VERSION) {
        return Err(TokenError::UnsupportedVersion { found: version });
    }
    Ok(STEM.len() + digits + 1)
}

enum Base64Error {
    /// A character outside the alphabet at this byte offset of the text.
    Character { offset: usize, character: char },
    /// A length of 1 mod 4, or non-zero unused bits in the last character.
    Ending,
}

fn base64url_value(c: char) -> Option<u32> {
    let v = match c {
        'A'..='Z' => c as u32 - 'A' as u32,
        'a'..='z' => c as u32 - 'a' as u32 + 26,
        '0'..='9' => c as u32 - '0' as u32 + 52,
        '-' => 62,
        '_' => 63,
        _ => return None,
    };
    Some(v)
}

fn base64url_decode(text: &str) -> Result<Vec<u8>, Base64Error> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3 + 2);
    let mut acc: u32 = 0;
    let mut bits: u32 = 0;
    for (offset, character) in text.char_indices() {
        let value =
            base64url_value(character).ok_or(Base64Error::Character { offset, character })?;
        acc = (acc << 6) | value;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    // Leftover bits are 0, 2 or 4 for valid lengths (6 means length 1 mod 4),
    // and must be zero so that every byte string has a single spelling.
    if bits >= 6 || acc != 0 {
        return Err(Base64Error::Ending);
    }
    Ok(out)
}

/// Reads fields from the front of a payload.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn byte(&mut self, field: &'static str) -> Result<u8, TokenError> {
        let (&first, rest) = self.bytes.split_first().ok_or(TokenError::Truncated { field })?;
        self.bytes = rest;
        Ok(first)
    }

    fn take(&mut self, len: u64, field: &'static str) -> Result<&'a [u8], TokenError> {
        match usize::try_from(len) {
            Ok(len) if len <= self.bytes.len() => {
                let (taken, rest) = self.bytes.split_at(len);
                self.bytes = rest;
                Ok(taken)
            }
            _ => Err(TokenError::Truncated { field }),
        }
    }

    fn varint(&mut self, field: &'static str) -> Result<u64, TokenError> {
        let mut value: u64 = 0;
        for shift in (0..64).step_by(7) {
            let byte = self.byte(field)?;
            if shift == 63 && byte > 1 {
                break;
            }
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(TokenError::InvalidField { field, reason: "number does not fit in 64 bits" })
    }

    fn u64_le(&mut self, field: &'static str) -> Result<u64, TokenError> {
        let (&value, rest) =
            self.bytes.split_first_chunk::<8>().ok_or(TokenError::Truncated { field })?;
        self.bytes = rest;
        Ok(u64::from_le_bytes(value))
    }

    fn string(&mut self, field: &'static str) -> Result<String, TokenError> {
        let len = self.varint(field)?;
        let bytes = self.take(len, field)?;
        String::from_utf8(bytes.to_vec())
            .map_err(|_| TokenError::InvalidField { field, reason: "not valid UTF-8" })
    }

    fn choices(&mut self, max_choices: u64) -> Result<Vec<u32>, TokenError> {
        let threads = self.varint("thread count")?;
        if threads > 1 << 32 {
            return Err(TokenError::InvalidField {
                field: "thread count",
                reason: "more than 2^32 threads",
            });
        }
        let run_count = self.varint("run count")?;
        if run_count == 0 {
            return Ok(Vec::new());
        }
        if threads == 0 {
            return Err(TokenError::InvalidField {
                field: "thread count",
                reason: "0 although there are choice runs",
            });
        }
        // Every run takes at least one byte, so this bounds the allocation.
        let capacity =
            usize::try_from(run_count).map_or(self.bytes.len(), |n| n.min(self.bytes.len()));
        let mut runs: Vec<(u32, usize)> = Vec::with_capacity(capacity);
        let mut total: u64 = 0;
        for run in 0..run_count {
            let code = self.varint("choices run")?;
            let len = code / threads;
            let thread = u32::try_from(code % threads).map_err(|_| TokenError::InvalidField {
                field: "choices run",
                reason: "thread id above 2^32 - 1",
            })?;
            if len == 0 {
                return Err(TokenError::ZeroRunLength { run });
            }
            total = total.saturating_add(len);
            if total > max_choices {
                return Err(TokenError::TooManyChoices { limit: max_choices });
            }
            let len = usize::try_from(len)
                .map_err(|_| TokenError::TooManyChoices { limit: max_choices })?;
            runs.push((thread, len));
        }
        let total = usize::try_from(total)
            .map_err(|_| TokenError::TooManyChoices { limit: max_choices })?;
        let mut choices = Vec::with_capacity(total);
        for (thread, len) in runs {
            choices.resize(choices.len() + len, thread);
        }
        Ok(choices)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ReplayToken {
        ReplayToken {
            test: "bank::tests::transfer".to_string(),
            strategy: "pctvb(d=2,v=1,t=2)".to_string(),
            seed: 0x1234_5678_9abc_def0,
            execution: 417,
            choices: vec![0, 0, 0, 1, 1, 2, 0, 0, 1],
            digest: 0xdead_beef_cafe_f00d,
        }
    }

    fn with_choices(choices: Vec<u32>) -> ReplayToken {
        ReplayToken { choices, ..sample() }
    }

    #[track_caller]
    fn round_trip(token: &ReplayToken) -> String {
        let text = encode(token);
        assert!(text.starts_with(PREFIX), "{text}");
        assert!(
            text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            "token is not a shell-safe word: {text}"
        );
        assert_eq!(decode(&text).as_ref(), Ok(token));
        text
    }

    /// A token whose payload is `payload` with a correct checksum.
    fn sealed(payload: &[u8]) -> String {
        seal(payload.to_vec())
    }

    /// Payload header (version through digest) of `sample()`.
    fn header() -> Vec<u8> {
        let mut payload = vec![FORMAT_VERSION];
        put_bytes(&mut payload, b"t");
        put_bytes(&mut payload, b"s");
        put_varint(&mut payload, 1);
        put_varint(&mut payload, 2);
        payload.extend_from_slice(&3u64.to_le_bytes());
        payload
    }

    #[track_caller]
    fn assert_message(err: &TokenError, parts: &[&str]) {
        let message = err.to_string();
        for part in parts {
            assert!(message.contains(part), "message {message:?} lacks {part:?}");
        }
    }

    // --- round trips ------------------------------------------------------

    #[test]
    fn round_trip_empty_choices_and_default() {
        round_trip(&with_choices(vec![]));
        let text = round_trip(&ReplayToken::default());
        assert!(text.len() < 40, "{text}");
    }

    #[test]
    fn round_trip_one_choice() {
        round_trip(&with_choices(vec![0]));
        round_trip(&with_choices(vec![7]));
    }

    #[test]
    fn round_trip_long_runs() {
        let mut choices = vec![0; 5000];
        choices.extend(vec![3; 70_000]);
        choices.extend(vec![1; 1]);
        choices.extend(vec![0; 123_456]);
        round_trip(&with_choices(choices));
    }

    #[test]
    fn round_trip_alternating() {
        let choices: Vec<u32> = (0..10_000).map(|i| i % 2).collect();
        round_trip(&with_choices(choices));
        let choices: Vec<u32> = (0..10_000).map(|i| (i * 7) % 5).collect();
        round_trip(&with_choices(choices));
    }

    #[test]
    fn round_trip_extreme_values() {
        let token = ReplayToken {
            test: String::new(),
            strategy: String::new(),
            seed: u64::MAX,
            execution: u64::MAX,
            choices: vec![u32::MAX, 0, u32::MAX, u32::MAX, 1],
            digest: u64::MAX,
        };
        round_trip(&token);
        round_trip(&ReplayToken { seed: 0, execution: 0, digest: 0, ..token });
    }

    #[test]
    fn round_trip_unicode_test_name() {
        let token = ReplayToken {
            test: "банк::tests::überweisung_🦀_転送".to_string(),
            strategy: "pctvb(d=3,v=2,t=4) — ünïcødé".to_string(),
            ..sample()
        };
        round_trip(&token);
    }

    #[test]
    fn million_choices_with_few_switches_stay_short() {
        let mut choices = vec![0u32; 400_000];
        choices.extend(vec![1; 250_000]);
        choices.extend(vec![0; 100_000]);
        choices.extend(vec![2; 150_000]);
        choices.extend(vec![1; 99_999]);
        choices.push(0);
        assert_eq!(choices.len(), 1_000_000);
        let token = ReplayToken { seed: 0xfedc_ba98_7654_3210, ..with_choices(choices) };
        let text = round_trip(&token);
        assert!(text.len() < 200, "{} chars: {text}", text.len());
    }

    #[test]
    fn fifty_switches_stay_reasonably_short() {
        let choices: Vec<u32> =
            (0..51u32).flat_map(|i| std::iter::repeat_n(i % 3, 500 + 37 * i as usize)).collect();
        let text = round_trip(&with_choices(choices));
        assert!(text.len() < 250, "{} chars: {text}", text.len());
    }

    #[test]
    fn deterministic_encoding() {
        let a = sample();
        let b = sample();
        assert_eq!(encode(&a), encode(&b));
        assert_eq!(encode(&a), encode(&a.clone()));
        assert_ne!(encode(&a), encode(&with_choices(vec![0, 0, 1])));
    }

    /// Pins format version 1: if this changes, old tokens no longer decode
    /// and `FORMAT_VERSION` must be bumped.
    #[test]
    fn golden_token() {
        let token = ReplayToken {
            test: "lost_update".to_string(),
            strategy: "random".to_string(),
            seed: 42,
            execution: 3,
            choices: vec![0, 0, 0, 1, 1, 0],
            digest: 0x0123_4567_89ab_cdef,
        };
        let golden = "pctvb2-Agtsb3N0X3VwZGF0ZQZyYW5kb20qA-_Nq4lnRSMBAgMGBQIqc0t8FJ4BlQ";
        assert_eq!(encode(&token), golden);
        assert_eq!(decode(golden), Ok(token));
    }

    #[test]
    fn payload_layout_is_as_documented() {
        let token = ReplayToken {
            test: "t".to_string(),
            strategy: "s".to_string(),
            seed: 300,
            execution: 2,
            choices: vec![1, 1, 0],
            digest: 0x0807_0605_0403_0201,
        };
        let expected: Vec<u8> = [
            &[2][..],                  // version
            &[1, b't'],                // test name
            &[1, b's'],                // strategy
            &[0xac, 0x02],             // seed 300 as LEB128
            &[2],                      // execution
            &[1, 2, 3, 4, 5, 6, 7, 8], // digest, little-endian
            &[2],                      // thread count
            &[2],                      // run count
            &[2 * 2 + 1],              // run of two 1s
            &[2],                      // run of one 0
        ]
        .concat();
        assert_eq!(encode_payload(&token), expected);
    }

    #[test]
    fn tolerates_whitespace_env_prefix_quotes_and_command_line() {
        let token = sample();
        let text = encode(&token);
        for input in [
            format!("  {text}\n"),
            format!("PCTVB_REPLAY={text}"),
            format!("\tPCTVB_REPLAY={text}  "),
            format!("PCTVB_REPLAY={text} cargo test lost_update"),
            format!("PCTVB_REPLAY='{text}' cargo test lost_update"),
            format!("PCTVB_REPLAY=\"{text}\""),
            format!("'{text}'"),
        ] {
            assert_eq!(decode(&input).as_ref(), Ok(&token), "{input:?}");
        }
        assert_eq!(text.parse::<ReplayToken>(), Ok(token));
    }

    // --- errors -------------------------------------------------------------

    #[test]
    fn error_empty() {
        for input in ["", "   \n\t", "PCTVB_REPLAY=", "PCTVB_REPLAY= pctvb2-x", "''"] {
            let err = decode(input).unwrap_err();
            assert_eq!(err, TokenError::Empty, "{input:?}");
            assert_message(&err, &["empty", "PCTVB_REPLAY", "pctvb2-"]);
        }
    }

    #[test]
    fn error_unknown_prefix() {
        let err = decode("cargo test lost_update --release").unwrap_err();
        assert_eq!(err, TokenError::UnknownPrefix { found: "cargo test lost_".to_string() });
        assert_message(
            &err,
            &["not a pctvb replay token", "\"pctvb2-\"", "\"cargo test lost_\"", "copy"],
        );
        // A bare payload, a missing dash, a missing or padded version number.
        let body = &encode(&sample())[PREFIX.len()..];
        for input in [
            body.to_string(),
            "pctvb2".to_string(),
            "pctvb-AAAA".to_string(),
            "pctvb01-AAAA".to_string(),
            "PCTVB1-AAAA".to_string(),
            "pctvb2_AAAA".to_string(),
            "pctvb12345678901-AAAA".to_string(),
        ] {
            assert!(
                matches!(decode(&input), Err(TokenError::UnknownPrefix { .. })),
                "{input:?}: {:?}",
                decode(&input)
            );
        }
    }

    #[test]
    fn error_invalid_character() {
        let err = decode("pctvb2-abc!def").unwrap_err();
        assert_eq!(err, TokenError::InvalidCharacter { position: 11, character: '!' });
        assert_message(&err, &["invalid character '!' at position 11", "copy"]);

        // Positions count characters of the input as given.
        let err = decode("  pctvb2-abcé").unwrap_err();
        assert_eq!(err, TokenError::InvalidCharacter { position: 13, character: 'é' });
        let err = decode("PCTVB_REPLAY=pctvb2-ab=").unwrap_err();
        assert_eq!(err, TokenError::InvalidCharacter { position: 23, character: '=' });
        // Standard (non-URL) base64 and inner whitespace are rejected.
        let text = encode(&sample());
        let split = format!("{} {}", &text[..20], &text[20..]);
        assert_eq!(
            decode(&split),
            Err(TokenError::InvalidCharacter { position: 21, character: ' ' })
        );
        assert!(matches!(
            decode("pctvb2-ab+/"),
            Err(TokenError::InvalidCharacter { position: 10, character: '+' })
        ));
    }

    #[test]
    fn error_checksum_mismatch() {
        let text = encode(&sample());
        let mut bytes = text.clone().into_bytes();
        let i = PREFIX.len() + 5;
        bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
        let tampered = String::from_utf8(bytes).unwrap();
        let err = decode(&tampered).unwrap_err();
        assert_eq!(err, TokenError::ChecksumMismatch);
        assert_message(
            &err,
            &["the token was altered or cut short; copy the whole replay line again"],
        );
        // Cut short by a few characters.
        assert_eq!(decode(&text[..text.len() - 4]), Err(TokenError::ChecksumMismatch));
    }

    #[test]
    fn every_single_character_tamper_is_detected() {
        let text = encode(&sample());
        for i in PREFIX.len()..text.len() {
            for &replacement in BASE64URL {
                if replacement == text.as_bytes()[i] {
                    continue;
                }
                let mut bytes = text.clone().into_bytes();
                bytes[i] = replacement;
                let tampered = String::from_utf8(bytes).unwrap();
                assert_eq!(decode(&tampered), Err(TokenError::ChecksumMismatch), "{tampered}");
            }
        }
    }

    #[test]
    fn every_cut_of_the_text_is_rejected() {
        let text = encode(&sample());
        for cut in 0..text.len() {
            assert!(decode(&text[..cut]).is_err(), "{}", &text[..cut]);
        }
        for cut in 1..text.len() {
            assert!(decode(&text[cut..]).is_err(), "{}", &text[cut..]);
        }
    }

    #[test]
    fn error_truncated() {
        let err = decode("pctvb2-AAAA").unwrap_err();
        assert_eq!(err, TokenError::Truncated { field: "checksum" });
        assert_message(&err, &["truncated", "`checksum` is missing", "copy", "re-run"]);
        assert_eq!(decode(PREFIX), Err(TokenError::Truncated { field: "checksum" }));

        assert_eq!(decode(&sealed(&[])), Err(TokenError::Truncated { field: "version" }));
        assert_eq!(
            decode(&sealed(&[FORMAT_VERSION])),
            Err(TokenError::Truncated { field: "test name" })
        );
        assert_eq!(
            decode(&sealed(&header())),
            Err(TokenError::Truncated { field: "thread count" })
        );

        // Every proper prefix of a valid payload is a truncation.
        let payload = encode_payload(&sample());
        let fields: Vec<&str> = (0..payload.len())
            .map(|cut| match decode(&sealed(&payload[..cut])) {
                Err(TokenError::Truncated { field }) => field,
                other => panic!("cut at {cut}: {other:?}"),
            })
            .collect();
        for field in [
            "version",
            "test name",
            "strategy",
            "seed",
            "execution",
            "digest",
            "thread count",
            "run count",
            "choices run",
        ] {
            assert!(fields.contains(&field), "{field} never reported: {fields:?}");
        }
    }

    #[test]
    fn error_unsupported_version() {
        // Version 1: the tokens of pctvb before a lock operation that waits for its lock made
        // one scheduling point (before, two: its own and a `blocked` one).
        let err = decode("pctvb1-AAAA").unwrap_err();
        assert_eq!(err, TokenError::UnsupportedVersion { found: 1 });
        assert_message(
            &err,
            &["token format version 1 is not supported by this pctvb (expects 2); \
               re-run the test to get a new token"],
        );
        // A future format may use any alphabet after its prefix.
        assert_eq!(
            decode("PCTVB_REPLAY=pctvb17-anything+goes=="),
            Err(TokenError::UnsupportedVersion { found: 17 })
        );
        assert_eq!(decode("pctvb0-AAAA"), Err(TokenError::UnsupportedVersion { found: 0 }));
        // Version byte inside the (checksummed) payload.
        let mut payload = encode_payload(&sample());
        payload[0] = 7;
        assert_eq!(decode(&sealed(&payload)), Err(TokenError::UnsupportedVersion { found: 7 }));
    }

    #[test]
    fn error_trailing_bytes() {
        let mut payload = encode_payload(&sample());
        payload.extend_from_slice(&[0, 0]);
        let err = decode(&sealed(&payload)).unwrap_err();
        assert_eq!(err, TokenError::TrailingBytes { count: 2 });
        assert_message(&err, &["2 unexpected byte(s)", "re-run the test"]);
    }

    #[test]
    fn error_zero_run_length() {
        let mut payload = header();
        put_varint(&mut payload, 2); // two threads
        put_varint(&mut payload, 2); // two runs
        put_varint(&mut payload, 3 * 2); // three 0s
        put_varint(&mut payload, 1); // zero 1s
        let err = decode(&sealed(&payload)).unwrap_err();
        assert_eq!(err, TokenError::ZeroRunLength { run: 1 });
        assert_message(&err, &["run #1 has length 0", "re-run the test"]);
    }

    #[test]
    fn error_too_many_choices() {
        let mut payload = header();
        put_varint(&mut payload, 1);
        put_varint(&mut payload, 1);
        put_varint(&mut payload, MAX_CHOICES + 1);
        let err = decode(&sealed(&payload)).unwrap_err();
        assert_eq!(err, TokenError::TooManyChoices { limit: MAX_CHOICES });
        assert_message(&err, &["more than 100000000 scheduling choices", "re-run"]);

        // Many runs that only add up to too much, and a saturating sum.
        let mut payload = header();
        put_varint(&mut payload, 2);
        put_varint(&mut payload, 3);
        put_varint(&mut payload, (MAX_CHOICES / 2) * 2);
        put_varint(&mut payload, (MAX_CHOICES / 2) * 2 + 1);
        put_varint(&mut payload, 2);
        assert_eq!(
            decode(&sealed(&payload)),
            Err(TokenError::TooManyChoices { limit: MAX_CHOICES })
        );
        let mut payload = header();
        put_varint(&mut payload, 1);
        put_varint(&mut payload, 2);
        put_varint(&mut payload, u64::MAX);
        put_varint(&mut payload, u64::MAX);
        assert_eq!(
            decode(&sealed(&payload)),
            Err(TokenError::TooManyChoices { limit: MAX_CHOICES })
        );
    }

    #[test]
    fn error_invalid_fields() {
        // Test name that is not UTF-8.
        let mut payload = vec![FORMAT_VERSION];
        put_bytes(&mut payload, &[0xff, 0xfe]);
        let err = decode(&sealed(&payload)).unwrap_err();
        assert_eq!(err, TokenError::InvalidField { field: "test name", reason: "not valid UTF-8" });
        assert_message(&err, &["`test name` is invalid", "UTF-8", "re-run"]);

        // A varint longer than 64 bits.
        let mut payload = vec![FORMAT_VERSION, 0, 0];
        payload.extend_from_slice(&[0xff; 9]);
        payload.push(0x02);
        assert_eq!(
            decode(&sealed(&payload)),
            Err(TokenError::InvalidField {
                field: "seed",
                reason: "number does not fit in 64 bits"
            })
        );
        // ... while u64::MAX itself (10 bytes, last one 0x01) is fine.
        let mut payload = vec![FORMAT_VERSION, 0, 0];
        put_varint(&mut payload, u64::MAX);
        assert_eq!(payload.len(), 13);

        // Runs without threads, and too many threads.
        let mut payload = header();
        put_varint(&mut payload, 0);
        put_varint(&mut payload, 1);
        put_varint(&mut payload, 5);
        assert!(matches!(
            decode(&sealed(&payload)),
            Err(TokenError::InvalidField { field: "thread count", .. })
        ));
        let mut payload = header();
        put_varint(&mut payload, (1 << 32) + 1);
        put_varint(&mut payload, 0);
        assert!(matches!(
            decode(&sealed(&payload)),
            Err(TokenError::InvalidField { field: "thread count", .. })
        ));
    }

    #[test]
    fn every_error_message_says_what_to_do() {
        let errors = [
            TokenError::Empty,
            TokenError::UnknownPrefix { found: "x".to_string() },
            TokenError::InvalidCharacter { position: 1, character: '$' },
            TokenError::ChecksumMismatch,
            TokenError::Truncated { field: "seed" },
            TokenError::UnsupportedVersion { found: 9 },
            TokenError::InvalidField { field: "seed", reason: "r" },
            TokenError::ZeroRunLength { run: 0 },
            TokenError::TooManyChoices { limit: 5 },
            TokenError::TrailingBytes { count: 1 },
        ];
        for err in errors {
            let message = err.to_string();
            assert!(
                ["copy", "re-run", "set PCTVB_REPLAY"].iter().any(|hint| message.contains(hint)),
                "{message}"
            );
            let _: &dyn Error = &err;
        }
    }

    // --- robustness ---------------------------------------------------------

    /// Small deterministic PRNG (xorshift64*), so the test needs no crates.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    #[derive(Default)]
    struct Tally {
        ok: usize,
        err: usize,
    }

    impl Tally {
        /// Decoding `input` must not panic; a success must be a valid token.
        fn check(&mut self, input: &str) {
            match decode_with_limit(input, 1_000_000) {
                Ok(token) => {
                    assert_eq!(decode(&encode(&token)).as_ref(), Ok(&token), "{input:?}");
                    self.ok += 1;
                }
                Err(err) => {
                    assert!(!err.to_string().is_empty());
                    self.err += 1;
                }
            }
        }
    }

    #[test]
    fn mutated_tokens_never_panic() {
        const REPLACEMENTS: [&str; 14] =
            ["A", "B", "z", "9", "-", "_", "=", "+", "/", " ", "é", "\0", "🦀", "AAAA"];
        let samples = [
            sample(),
            ReplayToken::default(),
            with_choices(vec![5]),
            with_choices((0..300).map(|i| (i / 7) % 4).collect()),
            ReplayToken {
                test: "ünïcødé::🦀".to_string(),
                seed: u64::MAX,
                choices: vec![u32::MAX, 0, 1],
                ..sample()
            },
        ];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut text_level = Tally::default();
        let mut payload_level = Tally::default();

        for token in &samples {
            let text = encode(token);

            // Text-level mutations: cuts, deletions, substitutions, insertions.
            for i in 0..=text.len() {
                text_level.check(&text[..i]);
                text_level.check(&text[i..]);
                if i < text.len() {
                    text_level.check(&format!("{}{}", &text[..i], &text[i + 1..]));
                }
                for replacement in REPLACEMENTS {
                    if i < text.len() {
                        let mut mutated = text.clone();
                        mutated.replace_range(i..i + 1, replacement);
                        text_level.check(&mutated);
                    }
                    let mut mutated = text.clone();
                    mutated.insert_str(i, replacement);
                    text_level.check(&mutated);
                }
            }
            for _ in 0..2_000 {
                let mut mutated = text.clone().into_bytes();
                for _ in 0..1 + rng.below(4) {
                    let i = rng.below(mutated.len());
                    mutated[i] = BASE64URL[rng.below(64)];
                }
                text_level.check(&String::from_utf8(mutated).unwrap());
            }

            // Payload-level mutations re-sealed with a valid checksum, so
            // that they reach the field parser.
            let payload = encode_payload(token);
            for i in 0..payload.len() {
                for bit in 0..8 {
                    let mut mutated = payload.clone();
                    mutated[i] ^= 1 << bit;
                    payload_level.check(&sealed(&mutated));
                }
                for value in [0x00, 0x01, 0x7f, 0x80, 0xff] {
                    let mut mutated = payload.clone();
                    mutated[i] = value;
                    payload_level.check(&sealed(&mutated));
                    let mut mutated = payload.clone();
                    mutated.insert(i, value);
                    payload_level.check(&sealed(&mutated));
                }
                let mut mutated = payload.clone();
                mutated.remove(i);
                payload_level.check(&sealed(&mutated));
            }
            for _ in 0..5_000 {
                let mut mutated = payload.clone();
                for _ in 0..1 + rng.below(6) {
                    let i = rng.below(mutated.len());
                    match rng.below(4) {
                        0 => mutated[i] = rng.next() as u8,
                        1 => mutated.insert(i, rng.next() as u8),
                        2 => {
                            mutated.remove(i);
                        }
                        _ => mutated.truncate(i),
                    }
                    if mutated.is_empty() {
                        break;
                    }
                }
                payload_level.check(&sealed(&mutated));
            }
        }
        // Random payloads from scratch.
        for _ in 0..5_000 {
            let len = rng.below(64);
            let mut payload: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            if let Some(first) = payload.first_mut() {
                *first = FORMAT_VERSION;
            }
            payload_level.check(&sealed(&payload));
        }

        assert!(text_level.err > 0);
        assert!(payload_level.ok > 0, "no mutated payload reached success");
        assert!(payload_level.err > 0);
    }

    // --- hashing ------------------------------------------------------------

    #[test]
    fn fnv1a64_known_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }
}
