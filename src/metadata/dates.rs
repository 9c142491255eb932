//! Dates as pages write them, read into one form: `YYYY-MM-DD`, with `THH:MM:SS` and an
//! offset where the source gives a time. Accepts ISO 8601 and its common looser forms
//! (`2026-11-24T09:30:00+01:00`, `2026-11-24 09:30`, `20261124`), RFC 2822 (`Tue, 24 Nov 2026
//! 09:30:00 GMT`), numeric day-first and US forms (`24.11.2026`, `24/11/2026`, `11/24/2026`
//! when the day is over 12), and written-out months in English, German, French, Spanish,
//! Italian, Portuguese and Dutch (`November 24, 2026`, `24. November 2026`, `24 novembre
//! 2026`, `24 de noviembre de 2026`). URLs give dates as `/2026/11/24/`, `/2026-11-24` or
//! `/20261124`. Only dates between 1995 and the latest plausible day are taken: a page
//! cannot be published before the web had news sites or after it was fetched.

use std::sync::LazyLock;

use regex::Regex;

/// A calendar date, and the time of day when the source gives one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Date {
    pub year: u16,
    pub month: u8,
    pub day: u8,
    /// Hours, minutes, seconds and the UTC offset in minutes (None: local time unknown).
    pub time: Option<(u8, u8, u8, Option<i16>)>,
}

/// Tomorrow (UTC): the latest date a page can have been published when the fetch time is not
/// known (a day ahead, for the zones east of UTC).
pub fn tomorrow() -> Date {
    use chrono::Datelike;
    let now = chrono::Utc::now() + chrono::Duration::days(1);
    Date { year: now.year() as u16, month: now.month() as u8, day: now.day() as u8, time: None }
}

/// Earliest year taken as a publication date.
pub const MIN_YEAR: u16 = 1995;

impl Date {
    pub fn new(year: u16, month: u8, day: u8) -> Option<Date> {
        let max_day = match month {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => 29,
            2 => 28,
            _ => return None,
        };
        (year >= MIN_YEAR && day >= 1 && day <= max_day).then_some(Date { year, month, day, time: None })
    }

    /// The day alone, for comparing with a gold `YYYY-MM-DD`.
    pub fn day_string(&self) -> String {
        format!("{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }

    /// ISO 8601: the day, then the time and offset where known.
    pub fn iso(&self) -> String {
        let mut s = self.day_string();
        if let Some((h, m, sec, off)) = self.time {
            s.push_str(&format!("T{h:02}:{m:02}:{sec:02}"));
            match off {
                Some(0) => s.push('Z'),
                Some(o) => {
                    s.push_str(&format!("{}{:02}:{:02}", if o < 0 { '-' } else { '+' }, o.abs() / 60, o.abs() % 60))
                }
                None => {}
            }
        }
        s
    }

    /// The moment, when the time and its zone are known.
    pub fn instant(&self) -> Option<chrono::DateTime<chrono::FixedOffset>> {
        use chrono::TimeZone;
        let (h, m, sec, Some(off)) = self.time? else { return None };
        let zone = chrono::FixedOffset::east_opt(i32::from(off) * 60)?;
        zone.with_ymd_and_hms(
            i32::from(self.year),
            u32::from(self.month),
            u32::from(self.day),
            h.into(),
            m.into(),
            sec.into(),
        )
        .single()
    }

    /// The same moment written in the zone `offset` minutes east of UTC.
    pub fn in_zone(&self, offset: i16) -> Option<Date> {
        Date::from_datetime(self.instant()?.with_timezone(&chrono::FixedOffset::east_opt(i32::from(offset) * 60)?))
    }

    /// A moment as its day, time and offset (a year [`Date::new`] refuses gives none).
    pub fn from_datetime<Z: chrono::TimeZone>(t: chrono::DateTime<Z>) -> Option<Date> {
        use chrono::{Datelike, Offset, Timelike};
        let mut d = Date::new(t.year().try_into().ok()?, t.month() as u8, t.day() as u8)?;
        let offset = (t.offset().fix().local_minus_utc() / 60) as i16;
        d.time = Some((t.hour() as u8, t.minute() as u8, t.second() as u8, Some(offset)));
        Some(d)
    }

    /// A UTC time the publisher's own day may differ from: written in UTC (`Z`, `+00:00`).
    pub fn is_utc(&self) -> bool {
        matches!(self.time, Some((_, _, _, Some(0))))
    }

    /// The day alone, for comparing and ordering dates by day.
    pub fn key(&self) -> (u16, u8, u8) {
        (self.year, self.month, self.day)
    }

    /// Not after `latest` (a fetch date, or today), compared by day.
    pub fn not_after(&self, latest: &Date) -> bool {
        self.key() <= latest.key()
    }
}

/// Month names (lower case, accents kept) → month number. Abbreviations are prefixes of
/// three or more letters of these, matched by [`month_of`].
const MONTHS: &[(&str, u8)] = &[
    ("january", 1),
    ("february", 2),
    ("march", 3),
    ("april", 4),
    ("may", 5),
    ("june", 6),
    ("july", 7),
    ("august", 8),
    ("september", 9),
    ("october", 10),
    ("november", 11),
    ("december", 12),
    ("januar", 1),
    ("jänner", 1),
    ("februar", 2),
    ("märz", 3),
    ("maerz", 3),
    ("mai", 5),
    ("juni", 6),
    ("juli", 7),
    ("oktober", 10),
    ("dezember", 12),
    ("janvier", 1),
    ("février", 2),
    ("fevrier", 2),
    ("mars", 3),
    ("avril", 4),
    ("juin", 6),
    ("juillet", 7),
    ("août", 8),
    ("aout", 8),
    ("septembre", 9),
    ("octobre", 10),
    ("novembre", 11),
    ("décembre", 12),
    ("decembre", 12),
    ("enero", 1),
    ("febrero", 2),
    ("marzo", 3),
    ("abril", 4),
    ("mayo", 5),
    ("junio", 6),
    ("julio", 7),
    ("agosto", 8),
    ("septiembre", 9),
    ("setiembre", 9),
    ("octubre", 10),
    ("noviembre", 11),
    ("diciembre", 12),
    ("gennaio", 1),
    ("febbraio", 2),
    ("aprile", 4),
    ("maggio", 5),
    ("giugno", 6),
    ("luglio", 7),
    ("settembre", 9),
    ("ottobre", 10),
    ("dicembre", 12),
    ("janeiro", 1),
    ("fevereiro", 2),
    ("março", 3),
    ("maio", 5),
    ("junho", 6),
    ("julho", 7),
    ("setembro", 9),
    ("outubro", 10),
    ("dezembro", 12),
    ("januari", 1),
    ("februari", 2),
    ("maart", 3),
    ("mei", 5),
    ("augustus", 8),
    // Swedish and Danish where they differ from the above.
    ("maj", 5),
    ("augusti", 8),
    // Russian, in the genitive of written dates (`15 августа 2016`) and the nominative.
    ("января", 1),
    ("февраля", 2),
    ("марта", 3),
    ("апреля", 4),
    ("мая", 5),
    ("июня", 6),
    ("июля", 7),
    ("августа", 8),
    ("сентября", 9),
    ("октября", 10),
    ("ноября", 11),
    ("декабря", 12),
    ("январь", 1),
    ("февраль", 2),
    ("март", 3),
    ("апрель", 4),
    ("май", 5),
    ("июнь", 6),
    ("июль", 7),
    ("август", 8),
    ("сентябрь", 9),
    ("октябрь", 10),
    ("ноябрь", 11),
    ("декабрь", 12),
    // Ukrainian, genitive.
    ("січня", 1),
    ("лютого", 2),
    ("березня", 3),
    ("квітня", 4),
    ("травня", 5),
    ("червня", 6),
    ("липня", 7),
    ("серпня", 8),
    ("вересня", 9),
    ("жовтня", 10),
    ("листопада", 11),
    ("грудня", 12),
    // Polish, genitive.
    ("stycznia", 1),
    ("lutego", 2),
    ("marca", 3),
    ("kwietnia", 4),
    ("maja", 5),
    ("czerwca", 6),
    ("lipca", 7),
    ("sierpnia", 8),
    ("września", 9),
    ("października", 10),
    ("listopada", 11),
    ("grudnia", 12),
    // Czech, genitive.
    ("ledna", 1),
    ("února", 2),
    ("března", 3),
    ("dubna", 4),
    ("května", 5),
    ("června", 6),
    ("července", 7),
    ("srpna", 8),
    ("září", 9),
    ("října", 10),
    ("listopadu", 11),
    ("prosince", 12),
    // Turkish.
    ("ocak", 1),
    ("şubat", 2),
    ("nisan", 4),
    ("mayıs", 5),
    ("haziran", 6),
    ("temmuz", 7),
    ("ağustos", 8),
    ("eylül", 9),
    ("ekim", 10),
    ("kasım", 11),
    ("aralık", 12),
];

/// The month a word names: a full name, or an abbreviation of at least three letters
/// (`Nov`, `Sept.`, `févr`); `mar` is March, `mai` May (German/French).
pub fn month_of(word: &str) -> Option<u8> {
    let w = word.trim_end_matches('.').to_lowercase();
    if w.chars().count() < 3 {
        return None;
    }
    if let Some(&(_, m)) = MONTHS.iter().find(|(n, _)| *n == w) {
        return Some(m);
    }
    MONTHS.iter().find(|(n, _)| n.starts_with(w.as_str())).map(|&(_, m)| m)
}

static ISO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?x)^\s*(\d{4})-?(\d{2})-?(\d{2})
          (?:[T\s](\d{1,2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?\s*(Z|[+-]\d{2}:?\d{2}|UTC|GMT)?)?",
    )
    .expect("valid regex")
});

static NUMERIC: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?-u:\b)(\d{1,2})[./](\d{1,2})[./](\d{4})(?-u:\b)").expect("valid regex"));

static NUMERIC_YMD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?-u:\b)((?:19|20)\d{2})[./](\d{1,2})[./](\d{1,2})(?-u:\b)").expect("valid regex"));

static WRITTEN_DMY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?-u:\b)(\d{1,2})(?:st|nd|rd|th|er|º)?\.?\s+(?:de\s+)?(\p{L}{3,12})\.?,?\s+(?:de\s+)?(\d{4})(?-u:\b)",
    )
    .expect("valid regex")
});

static WRITTEN_MDY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?-u:\b)(\p{L}{3,12})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})(?-u:\b)").expect("valid regex")
});

static URL_DATE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[/_-]((?:19|20)\d{2})[/_-]?(0[1-9]|1[0-2])[/_-]?(0[1-9]|[12]\d|3[01])(?:[/_.-]|$)")
        .expect("valid regex")
});

/// `/2017/7/12/`: a year, then a month and a day of one or two digits, each between slashes.
static URL_DATE_SHORT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"/((?:19|20)\d{2})/(0?[1-9]|1[0-2])/(0?[1-9]|[12]\d|3[01])/").expect("valid regex"));

fn offset_minutes(z: &str) -> Option<i16> {
    match z {
        "Z" | "UTC" | "GMT" => Some(0),
        _ => {
            let sign = if z.starts_with('-') { -1 } else { 1 };
            let digits: String = z.chars().filter(char::is_ascii_digit).collect();
            let h: i16 = digits.get(..2)?.parse().ok()?;
            let m: i16 = digits.get(2..4)?.parse().ok()?;
            Some(sign * (h * 60 + m))
        }
    }
}

/// Reads a date value of structured metadata (JSON-LD, `<meta content>`, `<time datetime>`):
/// ISO 8601 first, then RFC 2822, then the written forms.
pub fn parse(value: &str) -> Option<Date> {
    let v = value.trim();
    if v.is_empty() || v.len() > 200 {
        return None;
    }
    // A signed year (ISO 8601's expanded form: `-2020-01-01` is 2021 BCE) is no publication
    // date; the text search below would read it as 2020.
    if v.len() > 1 && v.starts_with(['-', '+']) && v.as_bytes()[1].is_ascii_digit() {
        return None;
    }
    if let Some(c) = ISO.captures(v) {
        let num = |i: usize| c.get(i).and_then(|m| m.as_str().parse::<u16>().ok());
        if let Some(mut d) = Date::new(num(1)?, num(2)? as u8, num(3)? as u8) {
            if let (Some(h), Some(m)) = (num(4), num(5))
                && h < 24
                && m < 60
            {
                let s = num(6).unwrap_or(0).min(59);
                d.time = Some((h as u8, m as u8, s as u8, c.get(7).and_then(|z| offset_minutes(z.as_str()))));
            }
            return Some(d);
        }
    }
    if let Ok(t) = chrono::DateTime::parse_from_rfc2822(v) {
        return Date::from_datetime(t);
    }
    find_in_text(v)
}

/// The first date written in running text (`Published 24. November 2026`, `11/24/2026`):
/// for each written form its first match that is a real date, then the earliest of those
/// (on a tie, the earlier form in the list below).
///
/// The patterns run only over the stretches of `text` that can hold such a date (see
/// [`date_stretches`]), with the same result as running them over the whole text: the page
/// date fallback hands this up to 128 KB of a page, mostly script, and scanning all of it
/// with every pattern was about 5 % of NB's extraction time.
pub fn find_in_text(text: &str) -> Option<Date> {
    let stretches = date_stretches(text);
    let mut best: Option<(usize, Date)> = None;
    for (re, read) in TEXT_FORMS.iter() {
        // A later form wins only by starting strictly earlier (`min_by_key` keeps the first
        // of equal keys), so stretches from the current best start on cannot change it.
        let before = best.map_or(usize::MAX, |(at, _)| at);
        let found = stretches.iter().take_while(|r| r.start < before).find_map(|r| {
            let part = &text[r.clone()];
            re.captures_iter(part).find_map(|c| Some((r.start + c.get(0)?.start(), read(&c)?)))
        });
        if let Some((at, d)) = found
            && at < before
        {
            best = Some((at, d));
        }
    }
    best.map(|(_, d)| d)
}

/// Up to `max` dates written in `text`, in the order they stand (every form; a place read by
/// two forms once): the page-wide fallback takes the first that is not after the fetch, so
/// a placeholder such as `31.12.2099` in a script does not hide the real date after it.
pub fn find_all_in_text(text: &str, max: usize) -> Vec<Date> {
    let mut found: Vec<(usize, Date)> = Vec::new();
    for r in date_stretches(text) {
        let part = &text[r.clone()];
        for (re, read) in TEXT_FORMS.iter() {
            for c in re.captures_iter(part) {
                if let (Some(m), Some(d)) = (c.get(0), read(&c)) {
                    found.push((r.start + m.start(), d));
                }
            }
        }
        if found.len() >= 4 * max {
            break;
        }
    }
    found.sort_by_key(|(at, _)| *at);
    found.dedup_by_key(|(at, _)| *at);
    found.into_iter().map(|(_, d)| d).take(max).collect()
}

/// `24.11.26`: day, month and a two-digit year between dots, each of two digits, the one form
/// with a short year that is not ambiguous (slashes could be month first, `26-11-24` year
/// first, and `1.2.19` is as often a version).
static DOTTED_SHORT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?-u:\b)(\d{2})\.(\d{2})\.(\d{2})(?-u:\b)").expect("valid regex"));

/// The first `DD.MM.YY` date in `text` (see [`DOTTED_SHORT`]), for the short texts a date
/// line is expected in (an element whose class names a date, the lines around the headline),
/// never the page-wide search, where such triples are mostly versions and scores. Years
/// 00–68 are 2000–2068 and 69–99 are 1969–1999, the POSIX `%y` rule; a number run on by
/// another `.digit` or preceded by `digit.` (`1.2.3.45`, `10.11.12.13`) is no date.
pub fn find_short_year(text: &str) -> Option<Date> {
    let b = text.as_bytes();
    DOTTED_SHORT.captures_iter(text).find_map(|c| {
        let m = c.get(0)?;
        let before = &b[..m.start()];
        if before.len() >= 2 && before[before.len() - 1] == b'.' && before[before.len() - 2].is_ascii_digit() {
            return None;
        }
        if b.get(m.end()) == Some(&b'.') && b.get(m.end() + 1).is_some_and(u8::is_ascii_digit) {
            return None;
        }
        let yy: u16 = c[3].parse().ok()?;
        let year = if yy <= 68 { 2000 + yy } else { 1900 + yy };
        Date::new(year, c[2].parse().ok()?, c[1].parse().ok()?)
    })
}

/// Reads a date from a match of one of the [`TEXT_FORMS`].
type ReadDate = fn(&regex::Captures<'_>) -> Option<Date>;

/// The written forms of [`find_in_text`], in order of precedence on a tie.
static TEXT_FORMS: LazyLock<[(&'static Regex, ReadDate); 5]> = LazyLock::new(|| {
    [
        (&*WRITTEN_DMY, |c| Date::new(c[3].parse().ok()?, month_of(&c[2])?, c[1].parse().ok()?)),
        (&*WRITTEN_MDY, |c| Date::new(c[3].parse().ok()?, month_of(&c[1])?, c[2].parse().ok()?)),
        (&*NUMERIC, |c| {
            let (a, b, y): (u8, u8, u16) = (c[1].parse().ok()?, c[2].parse().ok()?, c[3].parse().ok()?);
            // Day first (most of the world) unless the second number cannot be a month.
            if b > 12 { Date::new(y, a, b) } else { Date::new(y, b, a) }
        }),
        (&*ISO_IN_TEXT, |c| Date::new(c[1].parse().ok()?, c[2].parse().ok()?, c[3].parse().ok()?)),
        (&*NUMERIC_YMD, |c| Date::new(c[1].parse().ok()?, c[2].parse().ok()?, c[3].parse().ok()?)),
    ]
});

/// The stretches of `text` between ASCII punctuation that no date pattern can match (quotes,
/// brackets, `:;=<>` …) that hold a year: exactly four ASCII digits, at least [`MIN_YEAR`],
/// not followed by an ASCII letter, digit or `_`.
///
/// Why the patterns may run on these alone and give the same first dates: a match of any of
/// [`TEXT_FORMS`] is made of letters, digits, white space and `.,/-`, so it never spans a
/// punctuation mark of the list, and it holds its year as a `\d{4}` group between a
/// non-digit and an ASCII word boundary, which reads (`str::parse` takes ASCII digits only,
/// [`Date::new`] years from [`MIN_YEAR`]) only when it is such a year. Within a stretch the
/// patterns find the same matches as in the whole text: the characters around a stretch are
/// punctuation, which an ASCII `\b` sees as the text's ends, and no match of an earlier
/// stretch reaches into it. The test `stretches_give_the_dates_of_the_whole_text` checks
/// this against the patterns run over the whole text.
///
/// Found year first: most of a page's text (script, markup left by `strip_tags`) has no year,
/// so the text is searched for digits 32 bytes at a time, and only around a year for the
/// punctuation that bounds its stretch.
fn date_stretches(text: &str) -> Vec<std::ops::Range<usize>> {
    let b = text.as_bytes();
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    let mut i = 0;
    while let Some(d) = next_digit(b, i) {
        // `d` starts a run of digits: `b[d - 1]` is a barrier, the end of a run or before `i`.
        let mut j = d;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if !(j - d == 4
            && b.get(j).is_none_or(|&n| !(n.is_ascii_alphanumeric() || n == b'_'))
            && b[d..j].iter().fold(0u16, |y, &c| y * 10 + u16::from(c - b'0')) >= MIN_YEAR)
        {
            i = j;
            continue;
        }
        // The previous stretch ends at a barrier, so this walk never reaches into it.
        let mut start = d;
        while start > 0 && !is_barrier(b[start - 1]) {
            start -= 1;
        }
        let mut end = j;
        while end < b.len() && !is_barrier(b[end]) {
            end += 1;
        }
        out.push(start..end);
        i = end;
    }
    out
}

/// ASCII punctuation that no written date holds (see [`date_stretches`]).
fn is_barrier(c: u8) -> bool {
    matches!(c, b'!'..=b'+' | b':'..=b'@' | b'['..=b'^' | b'`' | b'{'..=b'~')
}

/// The first ASCII digit at or after `from`, found 8 bytes at a time: markup has a digit run
/// every few dozen bytes and text long stretches without one, so this is called hundreds of
/// thousands of times a round of `pipeline bench`. Each word is tested with the "has a byte
/// less than n" bit trick on `byte ^ b'0'` (digits become 0–9): a borrow only carries upward
/// from a flagged byte, so the lowest flagged byte is exact.
fn next_digit(b: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let mut i = from;
    while let Some(w) = b.get(i..i + 8) {
        let t = u64::from_le_bytes(w.try_into().expect("8 bytes")) ^ (u64::from(b'0') * ONES);
        let flagged = t.wrapping_sub(10 * ONES) & !t & (0x80 * ONES);
        if flagged != 0 {
            return Some(i + (flagged.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    b.get(i..)?.iter().position(u8::is_ascii_digit).map(|p| i + p)
}

static ISO_IN_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?-u:\b)((?:19|20)\d{2})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])(?-u:\b)").expect("valid regex")
});

/// Compiles every pattern (see [`super::warm_up`]).
pub(crate) fn warm_up() {
    LazyLock::force(&MARKUP_STARTS);
    for re in [
        &ISO,
        &NUMERIC,
        &NUMERIC_YMD,
        &DOTTED_SHORT,
        &WRITTEN_DMY,
        &WRITTEN_MDY,
        &URL_DATE,
        &URL_DATE_SHORT,
        &ISO_IN_TEXT,
    ] {
        LazyLock::force(re);
    }
    LazyLock::force(&TEXT_FORMS);
}

/// A date in a URL's path (`/2026/11/24/`, `/2026-11-24-title`, `/20261124/`).
pub fn from_url(url: &str) -> Option<Date> {
    let path = url.split_once("://").map_or(url, |(_, r)| r.split_once('/').map_or("", |(_, p)| p));
    let path = format!("/{}", path.split(['?', '#']).next().unwrap_or(""));
    let c = URL_DATE.captures(&path).or_else(|| URL_DATE_SHORT.captures(&path))?;
    Date::new(c[1].parse().ok()?, c[2].parse().ok()?, c[3].parse().ok()?)
}

/// Where a markup date may start: a year of this century or the last (every form below opens
/// with one, but the bar lines), or the bars of a `26 | 01 | 2022` line.
static MARKUP_STARTS: LazyLock<aho_corasick::packed::Searcher> = LazyLock::new(|| {
    aho_corasick::packed::Searcher::new(["19", "20", " | "]).expect("a packed searcher for a few short words")
});

/// Up to `max` dates in `html`'s markup, in page order: a date in a path (`/2022/01/17/`,
/// `-2022-01-17-`, `/20220117.`), a timestamp (`20220125151957`, a year to the second) or a
/// date line set with bars (`26 | 01 | 2022`, which the text forms leave out: `|` bounds
/// their stretches). Not a regex: it reads the start of every page that has no date
/// elsewhere, and `-`, `/` and `_`, where a regex's search would start, are everywhere in
/// markup. A digit run is read only where it starts with `19` or `20`, or ends at ` | `,
/// found by one SIMD search: reading every digit run (SVG paths, inline JSON) cost a million
/// instructions a page.
pub fn find_in_markup(html: &str, max: usize) -> Vec<Date> {
    let b = html.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while out.len() < max
        && let Some(hit) = MARKUP_STARTS.find_in(b, aho_corasick::Span::from(at..b.len()))
    {
        let p = hit.start();
        let found = if b[p] == b' ' {
            // ` | ` after a run of two digits: day, month and year between bars.
            at = p + 1;
            // (A longer run before the bars has a digit before `d`, which `markup_run` refuses.)
            let d = p.saturating_sub(2);
            if p >= 2 && b[d..p].iter().all(u8::is_ascii_digit) { markup_run(b, d, p) } else { None }
        } else if p > 0 && b[p - 1].is_ascii_digit() {
            // Inside a run, not at its start.
            at = p + 1;
            None
        } else {
            let mut j = p;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            at = j;
            // A two-digit run is read at its bars (above).
            if j - p == 2 { None } else { markup_run(b, p, j) }
        };
        out.extend(found);
    }
    out
}

/// The date a run of digits `b[d..j]` opens in markup ([`find_in_markup`]), if any.
fn markup_run(b: &[u8], d: usize, j: usize) -> Option<Date> {
    let digits = |at: usize, n: usize| -> Option<u16> {
        let s = b.get(at..at + n)?;
        s.iter().all(u8::is_ascii_digit).then(|| s.iter().fold(0u16, |v, &c| v * 10 + u16::from(c - b'0')))
    };
    let ymd = |at: usize| Date::new(digits(at, 4)?, digits(at + 4, 2)? as u8, digits(at + 6, 2)? as u8);
    let sep = |c: u8| matches!(c, b'/' | b'_' | b'-');
    let before = if d > 0 { b[d - 1] } else { b' ' };
    let after = b.get(j).copied();
    match j - d {
        n if n >= 14
            && !before.is_ascii_alphanumeric()
            && digits(d + 8, 2) < Some(24)
            && digits(d + 10, 2) < Some(60)
            && digits(d + 12, 2) < Some(60) =>
        {
            ymd(d)
        }
        8 if sep(before) && after.is_some_and(|c| sep(c) || c == b'.') => ymd(d),
        4 if sep(before) => {
            // YYYY, a separator or none, MM, the same, DD, then a separator or a dot.
            let m = if after.is_some_and(sep) { j + 1 } else { j };
            let day = if b.get(m + 2).copied().is_some_and(sep) { m + 3 } else { m + 2 };
            let end = b.get(day + 2).copied();
            end.is_some_and(|c| sep(c) || c == b'.')
                .then(|| Date::new(digits(d, 4)?, digits(m, 2)? as u8, digits(day, 2)? as u8))
                .flatten()
        }
        // `26 | 01 | 2022`.
        2 if !before.is_ascii_alphanumeric() && b.get(j..j + 3) == Some(b" | ") => {
            let y = j + 8;
            (b.get(j + 5..y) == Some(b" | ") && b.get(y + 4).is_none_or(|c| !c.is_ascii_alphanumeric()))
                .then(|| Date::new(digits(y, 4)?, digits(j + 3, 2)? as u8, digits(d, 2)? as u8))
                .flatten()
        }
        _ => None,
    }
}

/// The date in an image's URL: as in a page's URL ([`from_url`]), or a file named by its upload
/// time (`/20201007120909561.jpg`, the timestamps [`find_in_markup`] reads).
pub fn from_image_url(url: &str) -> Option<Date> {
    from_url(url).or_else(|| find_in_markup(url, 1).first().copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The markup scan as it was first written, reading every digit run: the oracle for the
    /// searched version, which reads only runs that can open a date of years 1900–2099.
    fn find_in_markup_by_runs(html: &str) -> Vec<Date> {
        let b = html.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while let Some(d) = next_digit(b, i) {
            let mut j = d;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            out.extend(markup_run(b, d, j).filter(|d| d.year < 2100));
            i = j;
        }
        out
    }

    proptest::proptest! {
        /// The searched markup scan finds the dates the scan of every digit run finds.
        #[test]
        fn markup_search_matches_reading_every_run(pieces in proptest::collection::vec(proptest::sample::select(&[
            "19", "20", "2022", "01", "17", "/", "-", "_", ".", " | ", "|", " ", "a", "x1", "202201171230", "59",
            "20220125151957", "3", "2", "0", "1", "9", "é",
        ][..]), 0..24)) {
            let html = pieces.concat();
            proptest::prop_assert_eq!(find_in_markup(&html, usize::MAX), find_in_markup_by_runs(&html), "{:?}", html);
        }

        /// The word-at-a-time digit search finds what a byte-by-byte one finds.
        #[test]
        fn next_digit_is_the_first_digit(b in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..80), from in 0usize..90) {
            let naive = b.get(from..).and_then(|r| r.iter().position(u8::is_ascii_digit)).map(|p| from + p);
            proptest::prop_assert_eq!(next_digit(&b, from), naive);
        }
    }

    fn day(s: &str) -> Option<String> {
        parse(s).map(|d| d.day_string())
    }

    #[test]
    fn structured_values_in_their_common_forms() {
        assert_eq!(parse("2026-11-24T09:30:00+01:00").unwrap().iso(), "2026-11-24T09:30:00+01:00");
        assert_eq!(parse("2026-11-24T09:30:00.123Z").unwrap().iso(), "2026-11-24T09:30:00Z");
        assert_eq!(parse("2026-11-24 09:30").unwrap().iso(), "2026-11-24T09:30:00");
        assert_eq!(parse("2026-11-24").unwrap().iso(), "2026-11-24");
        assert_eq!(day("20261124"), Some("2026-11-24".into()));
        assert_eq!(parse("Tue, 24 Nov 2026 09:30:00 GMT").unwrap().iso(), "2026-11-24T09:30:00Z");
        assert_eq!(day("November 24, 2026"), Some("2026-11-24".into()));
        assert_eq!(day("Nov. 24th, 2026"), Some("2026-11-24".into()));
        assert_eq!(day("24. November 2026"), Some("2026-11-24".into()));
        assert_eq!(day("24. März 2026"), Some("2026-03-24".into()));
        assert_eq!(day("24 novembre 2026"), Some("2026-11-24".into()));
        assert_eq!(day("24 de noviembre de 2026"), Some("2026-11-24".into()));
        assert_eq!(day("24 settembre 2026"), Some("2026-09-24".into()));
        assert_eq!(day("24.11.2026"), Some("2026-11-24".into()));
        assert_eq!(day("11/24/2026"), Some("2026-11-24".into()));
        assert_eq!(day("05/04/2026"), Some("2026-04-05".into()), "day first when both could be");
    }

    #[test]
    fn markup_dates_in_paths_timestamps_and_bar_lines() {
        let days = |h: &str| find_in_markup(h, 10).iter().map(Date::day_string).collect::<Vec<_>>();
        assert_eq!(
            days(
                r#"<a href="/a/article-2022-01-17-160147.html"> <a href="/2021/12/01/b"> <img src="/x/20220125151957.jpg">"#
            ),
            ["2022-01-17", "2021-12-01", "2022-01-25"]
        );
        assert_eq!(days("<a href='/news/20200428/'>x</a> <a href='/p_2020_04_29.html'>"), ["2020-04-28", "2020-04-29"]);
        assert_eq!(days("<td>26 | 01 | 2022 </td>"), ["2022-01-26"]);
        // Not dates: an id, a version, a time of day out of range, a phone number.
        assert!(days("id=a20220117 v-2022.01.17.3 20201007990909 /2020-13-01/ 0221 | 555 | 2020x").is_empty());
        assert_eq!(find_in_markup(&"/2020/01/02/ ".repeat(20), 3).len(), 3);
    }

    #[test]
    fn image_files_named_by_their_upload_time() {
        let day = |u: &str| from_image_url(u).map(|d| d.day_string());
        assert_eq!(day("https://img.test/images/large/20201007120909561.jpg"), Some("2020-10-07".into()));
        assert_eq!(day("https://img.test/files/2016/05/04/a.jpg"), Some("2016-05-04".into()));
        // Not a time of day after the date, or too few digits: an id, not a timestamp.
        assert_eq!(day("https://img.test/images/20201007990909.jpg"), None);
        assert_eq!(day("https://img.test/images/2020100712.jpg"), None);
    }

    #[test]
    fn signed_years_are_no_dates() {
        for v in ["-2020-01-01", "+2020-01-01", "-2020-01-01T10:00:00Z", " -20200101"] {
            assert_eq!(parse(v), None, "{v}");
        }
        assert_eq!(day("2020-01-01"), Some("2020-01-01".into()));
    }

    #[test]
    fn impossible_and_implausible_dates_are_refused() {
        for bad in ["2026-02-30", "2026-13-01", "1994-06-01", "31.04.2026", "not a date", "", "Mar 2026"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
        assert_eq!(day("2024-02-29"), Some("2024-02-29".into()));
    }

    #[test]
    fn text_gives_its_first_date() {
        let t = "Posted by Ann on 3 March 2025 · updated 2025-04-01";
        assert_eq!(find_in_text(t).unwrap().day_string(), "2025-03-03");
        assert_eq!(find_in_text("Stand: 12.01.2019, 14:00 Uhr").unwrap().day_string(), "2019-01-12");
        assert_eq!(find_in_text("質問日時：2020/07/13 01:10").unwrap().day_string(), "2020-07-13");
        assert_eq!(find_in_text("no dates here, only 42 and 2019"), None);
    }

    /// The patterns run over the whole text, as `find_in_text` did before it searched
    /// stretches: the reference for `stretches_give_the_dates_of_the_whole_text`.
    fn find_in_whole_text(text: &str) -> Option<Date> {
        let found =
            TEXT_FORMS.map(|(re, read)| re.captures_iter(text).find_map(|c| Some((c.get(0)?.start(), read(&c)?))));
        found.into_iter().flatten().min_by_key(|(at, _)| *at).map(|(_, d)| d)
    }

    /// Stretches by one pass over every byte: the reference for the year-first search.
    fn stretches_byte_by_byte(text: &str) -> Vec<std::ops::Range<usize>> {
        let b = text.as_bytes();
        let mut out = Vec::new();
        let (mut start, mut has_year, mut i) = (0, false, 0);
        while i < b.len() {
            if b[i].is_ascii_digit() {
                let run = i;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                if i - run == 4 && b.get(i).is_none_or(|&n| !(n.is_ascii_alphanumeric() || n == b'_')) {
                    has_year |= text[run..i].parse::<u16>().unwrap() >= MIN_YEAR;
                }
                continue;
            }
            if is_barrier(b[i]) {
                if has_year {
                    out.push(start..i);
                }
                (start, has_year) = (i + 1, false);
            }
            i += 1;
        }
        if has_year {
            out.push(start..b.len());
        }
        out
    }

    #[test]
    fn stretches_hold_the_years_between_punctuation() {
        let t = "var a = {\"t\": 1700000000}; (c) 2019 Acme: 3 March 2024, x_2020 2021a 20210";
        let parts: Vec<&str> = date_stretches(t).into_iter().map(|r| &t[r]).collect();
        assert_eq!(parts, [" 2019 Acme", " 3 March 2024, x_2020 2021a 20210"]);
        assert!(date_stretches("1994 and 20 and 12345 and 2019_").is_empty());
        // A year anywhere in or across the 32-byte blocks of the digit search.
        for at in 0..100 {
            let t = format!("{};2024;{}", "a".repeat(at), "b".repeat(at % 40));
            assert_eq!(date_stretches(&t), vec![std::ops::Range { start: at + 1, end: at + 5 }], "{t}");
        }
        // Written forms on both sides of a barrier: the earlier one is found, not a mix.
        assert_eq!(find_in_text("on 3 (March) 2024 or 4 May 2024").unwrap().day_string(), "2024-05-04");
        assert_eq!(find_in_whole_text("on 3 (March) 2024 or 4 May 2024").unwrap().day_string(), "2024-05-04");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        #[test]
        fn stretches_give_the_dates_of_the_whole_text(
            pieces in proptest::collection::vec(proptest::sample::select(&[
                // Whole dates of every form, so that a wrong barrier or year test shows.
                "2024-07-12", "12.07.2024", "7/12/2024", "2024/7/12", "2024.07.12", "3 March 2024",
                "March 3rd, 2024", "3. März 2024", "24 de noviembre de 2024", "Nov. 24, 1995", "1.2.1994",
                // Their parts and near misses.
                "2024", "1994", "1995", "2031", "3000", "20240", "12", "3", "31", "07", "1", "٣", "٢٠٢٤",
                "March", "mar.", "Nov", "novembre", "März", "de", "DE", "noviembre", "st", "th", "º", "Jan",
                " ", "  ", "\n", "\t", "\u{a0}", ".", "/", "-", ",", "_", "a", "é", "x_", "日",
                "(", ")", "\"", "'", ":", ";", "=", "<", ">", "{", "}", "|", "@", "[", "]", "!", "?",
            ][..]), 0..24)
        ) {
            let text: String = pieces.concat();
            proptest::prop_assert_eq!(date_stretches(&text), stretches_byte_by_byte(&text), "{:?}", text);
            proptest::prop_assert_eq!(find_in_text(&text), find_in_whole_text(&text), "{:?}", text);
        }
    }

    #[test]
    fn urls_give_their_path_date() {
        assert_eq!(from_url("https://x.com/2026/11/24/story.html").unwrap().day_string(), "2026-11-24");
        assert_eq!(from_url("https://x.com/news/2026-11-24-story").unwrap().day_string(), "2026-11-24");
        assert_eq!(from_url("https://x.com/a/20261124/story").unwrap().day_string(), "2026-11-24");
        assert_eq!(from_url("https://x.com/story?id=20261124"), None, "the query is not the path");
        assert_eq!(from_url("https://x.com/2026/11/story"), None, "no day");
        assert_eq!(from_url("https://20261124.example.com/x"), None, "the host is not the path");
    }
}
