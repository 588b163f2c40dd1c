//! Days of the month said without their month ("the 20th", "Tuesday the
//! 10th"), resolved against the day they were said, so a fact still reads
//! right in a later session ("launch: 20 June", not "launch: the 20th").

use chrono::{Datelike, Months, NaiveDate};

use super::lexicon;

/// How a session writes a date with its month.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DateStyle {
    /// "20 June", "the 20th of June".
    DayMonth,
    /// "June 20", "June 20th".
    MonthDay,
}

/// The month a word names (1–12), from `months.txt` (full names first,
/// then abbreviations of at least three letters, each the start of its
/// name).
pub fn month_number(word: &str) -> Option<u32> {
    let w = word.to_lowercase();
    if w.len() < 3 || !lexicon::MONTHS.contains(&w) {
        return None;
    }
    lexicon::MONTHS
        .iter()
        .take(12)
        .position(|m| m.starts_with(&w))
        .map(|i| i as u32 + 1)
}

/// The month a value names ("April" of "the 23rd of April"); "may"
/// only capitalised.
pub fn month_named(value: &str) -> Option<u32> {
    value
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| *w != "may")
        .find_map(month_number)
}

/// The day of the month a word says ("20th", "1st", "20"), 1–31.
fn day_of(word: &str) -> Option<u32> {
    let w = word.to_lowercase();
    let w = w.trim_end_matches([',', '.']);
    let digits = w.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &w[digits.len()..];
    if !(suffix.is_empty() || ["st", "nd", "rd", "th"].contains(&suffix))
        || digits.is_empty()
        || digits.len() > 2
        || !digits.chars().all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let d: u32 = digits.parse().ok()?;
    (1..=31).contains(&d).then_some(d)
}

/// The weekday a word names (its full name, from `weekdays.txt`), with the
/// day's number from Monday = 0.
fn weekday_of(word: &str) -> Option<(u32, &'static str)> {
    let w = word.to_lowercase();
    let w = w.trim_end_matches(',');
    lexicon::WEEKDAYS
        .iter()
        .take(7)
        .enumerate()
        .find(|(_, d)| w.len() >= 3 && d.starts_with(w) && lexicon::WEEKDAYS.contains(w))
        .map(|(i, d)| (i as u32, d))
}

/// The dates written with their month in `text`: (day, month, how it is
/// written) for "23 April", "the 23rd of April", "April 23rd". A
/// month in lowercase is not one ("may").
fn dates_written(text: &str) -> Vec<(u32, u32, DateStyle)> {
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | '"'))
        .filter(|w| !w.is_empty())
        .collect();
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let w = w.trim_end_matches([',', '.', ';', ':', '!', '?']);
        // A month in lowercase ("monday oct 5") only right before its
        // day, and never a modal ("we may 2x it").
        let lower = w.chars().next().is_some_and(char::is_lowercase);
        if lower && lexicon::MODALS.contains(w) {
            continue;
        }
        let Some(month) = month_number(w) else {
            continue;
        };
        let before = match i {
            0 => None,
            _ if lower => None,
            _ if words[i - 1].eq_ignore_ascii_case("of") && i >= 2 => Some(words[i - 2]),
            _ => Some(words[i - 1]),
        };
        if let Some(day) = before.and_then(day_of) {
            out.push((day, month, DateStyle::DayMonth));
        } else if let Some(day) = words.get(i + 1).and_then(|a| day_of(a)) {
            out.push((day, month, DateStyle::MonthDay));
        }
    }
    out
}

/// The days of the month `text` says: with their month where it writes one
/// ("23 April", "April 23rd"), else alone ("the 15th", "15th"; a bare
/// number is a count, not a day).
pub fn days_said(text: &str) -> Vec<(u32, Option<u32>)> {
    let mut out: Vec<(u32, Option<u32>)> = dates_written(text)
        .into_iter()
        .map(|(d, m, _)| (d, Some(m)))
        .collect();
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | '"'))
        .filter(|w| !w.is_empty())
        .collect();
    for (i, w) in words.iter().enumerate() {
        let w = w.trim_end_matches([',', '.', ';', ':', '!', '?']);
        let suffixed = w.chars().any(|c| c.is_ascii_alphabetic());
        let after_the = i > 0 && words[i - 1].eq_ignore_ascii_case("the");
        let Some(day) = day_of(w).filter(|_| suffixed || after_the) else {
            continue;
        };
        if !out.iter().any(|(d, m)| *d == day && m.is_some()) {
            out.push((day, None));
        }
    }
    out
}

/// The day and month a date value says ("Thursday July 15" → 15, July;
/// "the 20th" → 20, none).
pub fn date_of(value: &str) -> Option<(u32, Option<u32>)> {
    days_said(value).into_iter().next()
}

/// How `texts` write dates: the style they write a month beside a day's
/// number in more often ("20 June", "the 20th of June" against "June
/// 20"); `None` when they write neither more.
pub fn date_style<'t>(texts: impl IntoIterator<Item = &'t str>) -> Option<DateStyle> {
    let (mut day_month, mut month_day) = (0usize, 0usize);
    for (_, _, style) in texts.into_iter().flat_map(dates_written) {
        match style {
            DateStyle::DayMonth => day_month += 1,
            DateStyle::MonthDay => month_day += 1,
        }
    }
    match day_month.cmp(&month_day) {
        std::cmp::Ordering::Greater => Some(DateStyle::DayMonth),
        std::cmp::Ordering::Less => Some(DateStyle::MonthDay),
        std::cmp::Ordering::Equal => None,
    }
}

/// The month `text` writes beside the day `day` ("the 23rd of April"
/// names April for 23), the first it writes.
pub fn month_beside(text: &str, day: u32) -> Option<u32> {
    dates_written(text)
        .into_iter()
        .find(|(d, _, _)| *d == day)
        .map(|(_, m, _)| m)
}

/// The day of the month a value says when it says only that ("the 19th",
/// "Friday 19th" → 19): what [`resolve_day`] resolves.
pub fn lone_day(value: &str) -> Option<u32> {
    parse_lone_day(value).map(|(_, _, day)| day)
}

/// A value that is only a day of the month: its weekday word, the day as
/// written ("19th") and its number.
fn parse_lone_day(value: &str) -> Option<(Option<&str>, &str, u32)> {
    let words: Vec<&str> = value.split_whitespace().collect();
    let (first, rest) = words.split_first()?;
    let (weekday, rest) = match weekday_of(first) {
        Some(_) => (Some(first.trim_end_matches(',')), rest),
        None => (None, &words[..]),
    };
    let said = match rest {
        [the, d] if the.eq_ignore_ascii_case("the") => *d,
        // A bare number is a count, not a day: "20th" needs its suffix.
        [d] if d.chars().any(|c| c.is_ascii_alphabetic()) || weekday.is_some() => *d,
        _ => return None,
    };
    let day = day_of(said)?;
    Some((weekday, said.trim_end_matches([',', '.']), day))
}

/// A value that is only a day of the month ("the 20th", "20th", "Tuesday
/// the 10th", "friday 19th"), as the date it most likely is, said on `on`:
/// of the month before, the month of, and the month after `on`, the one
/// whose day has the weekday named (when one is) and lies closest to `on`
/// (the later on a tie), written in `style` with the weekday and the day
/// as said ("20th June", "Tuesday November 10th"). `month`, the month of
/// the value this one replaces ("the 25th, not the 23rd of April"), is
/// taken first where the weekday allows.
/// `None` for anything else, or when no such month fits the weekday.
pub fn resolve_day(
    value: &str,
    on: NaiveDate,
    style: DateStyle,
    month: Option<u32>,
) -> Option<String> {
    let (weekday, said, day) = parse_lone_day(value)?;
    let wanted = weekday.and_then(weekday_of).map(|(n, _)| n);
    let first = on.with_day(1)?;
    let nearest = |months: &[Option<NaiveDate>]| {
        months
            .iter()
            .flatten()
            .filter_map(|m| m.with_day(day))
            .filter(|d| wanted.is_none_or(|w| d.weekday().num_days_from_monday() == w))
            .min_by_key(|d| ((*d - on).num_days().abs(), *d < on))
    };
    // The month named beside the day's old value, in the year nearest.
    let named = month.and_then(|m| {
        nearest(&[
            NaiveDate::from_ymd_opt(on.year() - 1, m, 1),
            NaiveDate::from_ymd_opt(on.year(), m, 1),
            NaiveDate::from_ymd_opt(on.year() + 1, m, 1),
        ])
    });
    let best = named.or_else(|| {
        nearest(&[
            first.checked_sub_months(Months::new(1)),
            Some(first),
            first.checked_add_months(Months::new(1)),
        ])
    })?;
    let month = lexicon::MONTHS.iter().nth(best.month0() as usize)?;
    let month = format!("{}{}", month[..1].to_uppercase(), &month[1..]);
    let lead = weekday.map(|w| format!("{w} ")).unwrap_or_default();
    Some(match style {
        DateStyle::DayMonth => format!("{lead}{said} {month}"),
        DateStyle::MonthDay => format!("{lead}{month} {said}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn a_day_of_the_month_takes_the_nearest_month() {
        let on = d("2026-06-05");
        let r = |v: &str| resolve_day(v, on, DateStyle::DayMonth, None);
        assert_eq!(r("the 20th").as_deref(), Some("20th June"));
        assert_eq!(r("13th").as_deref(), Some("13th June"));
        // Said near a month's end, an early day is next month's.
        let late = d("2026-06-28");
        assert_eq!(
            resolve_day("the 3rd", late, DateStyle::MonthDay, None).as_deref(),
            Some("July 3rd")
        );
        // A day just gone is this month's.
        assert_eq!(
            resolve_day("the 26th", late, DateStyle::MonthDay, None).as_deref(),
            Some("June 26th")
        );
    }

    #[test]
    fn a_weekday_picks_the_month_it_falls_in() {
        // 2026-11-10 is a Tuesday; 2026-12-10 a Thursday.
        let on = d("2026-11-25");
        assert_eq!(
            resolve_day("Tuesday the 10th", on, DateStyle::DayMonth, None).as_deref(),
            Some("Tuesday 10th November")
        );
        assert_eq!(
            resolve_day("thursday 10th", on, DateStyle::MonthDay, None).as_deref(),
            Some("thursday December 10th")
        );
        // No month near fits: left as said.
        assert_eq!(
            resolve_day("Monday the 10th", on, DateStyle::DayMonth, None),
            None
        );
    }

    #[test]
    fn the_month_of_the_old_value_comes_first() {
        // Said in January of a day in June (the value it replaces names June).
        let on = d("2026-01-20");
        let june = month_named("Saturday 19 June");
        assert_eq!(june, Some(6));
        assert_eq!(
            resolve_day("the 26th", on, DateStyle::DayMonth, june).as_deref(),
            Some("26th June")
        );
        // A weekday the named month does not fit falls back to the nearest.
        assert_eq!(
            resolve_day("Monday the 26th", on, DateStyle::DayMonth, june).as_deref(),
            Some("Monday 26th January")
        );
        assert_eq!(month_named("we may 20 times"), None);
        assert_eq!(month_named("the 23rd of April"), Some(4));
    }

    #[test]
    fn the_month_written_beside_a_day_is_found() {
        let text = "Well ahead of the 23rd of April. Back on June 2nd.";
        assert_eq!(month_beside(text, 23), Some(4));
        assert_eq!(month_beside(text, 2), Some(6));
        assert_eq!(month_beside(text, 5), None);
        assert_eq!(lone_day("Friday 19th"), Some(19));
        assert_eq!(lone_day("19 minutes"), None);
    }

    #[test]
    fn anything_but_a_bare_day_is_left_alone() {
        let on = d("2026-06-05");
        for v in [
            "20",
            "the 20th of June",
            "June 20",
            "20 minutes",
            "the 32nd",
            "3 seats",
            "",
        ] {
            assert_eq!(resolve_day(v, on, DateStyle::DayMonth, None), None, "{v}");
        }
    }

    #[test]
    fn the_style_follows_how_dates_are_written() {
        assert_eq!(
            date_style(["the van comes on friday 13 June", "the 20th of July works"]),
            Some(DateStyle::DayMonth)
        );
        assert_eq!(
            date_style(["the launch is June 20th", "or July 3"]),
            Some(DateStyle::MonthDay)
        );
        // "may" in lowercase is a verb, not a month.
        assert_eq!(date_style(["it may 20 times fail"]), None);
        assert_eq!(date_style(["no dates here"]), None);
    }
}
