//! What a segment's contents must satisfy before a process converts with them.
//!
//! Checked when a process attaches (a failure is an error of kind `Corrupt`),
//! and again by every tie and base move (a failure there is repaired, see
//! `timeline`): never on the stamp path, which stays a snapshot and a
//! multiply-shift.
//!
//! - the header: sizes, source, calibration (`mult` must be the one `freq_hz`
//!   gives), conversion range, mode and tracking settings, and a checksum over
//!   every immutable field;
//! - the active slot: its checksum, the seqlock count it was published under,
//!   `frac < 2^shift`, a generation ≥ 1, and a slope within the tracking bounds
//!   of the calibrated one (exactly it in frozen mode).

use super::config::Mode;
use super::layout::*;
use super::tracking::{Line, Rules};
use crate::clock::convert::{Scale, SHIFT};
use crate::clock::source::SourceId;
use crate::error::{Error, ErrorKind, Result};
use std::sync::atomic::Ordering::Relaxed;

/// What a process takes from a validated header and keeps for its lifetime.
#[derive(Clone, Debug)]
pub(crate) struct Checked {
    pub source: SourceId,
    pub scale: Scale,
    pub freq_hz: u64,
    pub threshold: u64,
    pub mode: Mode,
    pub rules: Rules,
    pub image: HeaderImage,
    /// The cross-CPU counter shift the creator's evaluation found, ns
    /// (`u64::MAX` unknown).
    pub shift_ns: u64,
}

/// A copy of the header's immutable fields as validated, from which a tie
/// restores a damaged header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HeaderImage {
    /// Magic, layout version and the `ready` state word: not in the checksum
    /// (they are written last, to publish the page), but restored with it.
    identity: [u64; 3],
    words: Vec<u64>,
    reason: Vec<u8>,
    check: u64,
}

impl HeaderImage {
    /// One read of the header; `check` is the checksum of the values read,
    /// so a header damaged while it is read gives a copy that fails it.
    pub fn capture(h: &Header) -> HeaderImage {
        let words = immutable_words(h).map(Word::load).to_vec();
        let reason: Vec<u8> = h.reason.iter().map(|b| b.load(Relaxed)).collect();
        HeaderImage {
            identity: identity_of(h),
            check: header_check_of(&words, &reason),
            words,
            reason,
        }
    }

    /// Whether the header still holds exactly these values. Compared word
    /// by word with the copy, whose checksum they then have: recomputing it
    /// is a chain of 48 dependent multiply rounds, a tenth of a tie
    /// (2026-11-28).
    pub fn matches(&self, h: &Header) -> bool {
        identity_of(h) == self.identity
            && h.header_check.load(Relaxed) == self.check
            && immutable_words(h)
                .into_iter()
                .zip(&self.words)
                .all(|(word, &v)| word.load() == v)
            // Without a branch per byte: the bytes' differences folded together.
            && h.reason
                .iter()
                .zip(&self.reason)
                .fold(0u8, |diff, (b, &v)| diff | (b.load(Relaxed) ^ v))
                == 0
    }

    /// Writes the copy back (the writer role's holder only).
    pub fn restore(&self, h: &Header) {
        h.magic.store(self.identity[0], Relaxed);
        h.layout_version.store(self.identity[1] as u32, Relaxed);
        h.state.store(self.identity[2], Relaxed);
        for (word, &v) in immutable_words(h).iter().zip(&self.words) {
            word.store(v);
        }
        for (dst, &b) in h.reason.iter().zip(&self.reason) {
            dst.store(b, Relaxed);
        }
        h.header_check.store(self.check, Relaxed);
    }
}

fn identity_of(h: &Header) -> [u64; 3] {
    [
        h.magic.load(Relaxed),
        h.layout_version.load(Relaxed) as u64,
        h.state.load(Relaxed),
    ]
}

/// The slope bounds and tie geometry of a segment's recorded settings.
pub(crate) fn rules_of(h: &Header, m_cal: u64, threshold: u64, freq_hz: u64) -> Rules {
    Rules {
        m_cal,
        interval: threshold,
        limit: threshold.saturating_add(threshold / 4),
        max_slew_ppb: h.max_slew_ppb.load(Relaxed),
        step_ns: h.step_ns.load(Relaxed),
        backstep: (freq_hz / 1000).max(1),
        // 10 ms: 20 ns of calendar noise is 2 ppm of it.
        min_baseline: (freq_hz / 100).max(1),
    }
}

/// The largest delta the fast path may convert with slopes up to `mult_max`.
pub(crate) fn fast_range(mult_max: u64) -> u64 {
    (u64::MAX - ((1u64 << SHIFT) - 1)) / mult_max.max(1)
}

/// Validates a ready header. `Err` is `Corrupt` (or `Source` for a counter this
/// machine cannot read); the message says what is wrong.
pub(crate) fn header(h: &Header, name: &str) -> Result<Checked> {
    let bad = |what: String| Err(super::corrupt(name, what));
    let [magic, version, state] = identity_of(h);
    if magic != MAGIC || version != LAYOUT_VERSION as u64 || state_code(state) != STATE_READY {
        return bad(format!(
            "its page's magic, layout version or state word was overwritten ({magic:#x}, \
             {version}, {state:#x})"
        ));
    }
    if h.header_size.load(Relaxed) as usize != std::mem::size_of::<Header>()
        || h.segment_size.load(Relaxed) as usize != SEGMENT_SIZE
    {
        return bad(format!(
            "its recorded sizes do not match layout version {LAYOUT_VERSION}"
        ));
    }
    let raw_source = h.source_id.load(Relaxed);
    let Some(source) = SourceId::from_u32(raw_source) else {
        return bad(format!("unknown counter source id {raw_source}"));
    };
    if !source.supported() {
        return Err(Error::new(
            ErrorKind::Source,
            format!(
                "segment {name} uses counter source {}, which this machine cannot read; use \
                 another segment name (HRTS_SEGMENT)",
                source.name()
            ),
        ));
    }
    let scale = Scale {
        mult: h.mult.load(Relaxed),
        shift: h.shift.load(Relaxed),
        max_delta: h.max_delta.load(Relaxed),
    };
    let freq_hz = h.freq_hz.load(Relaxed);
    let threshold = h.wrap_threshold.load(Relaxed);
    if freq_hz == 0 || scale.mult == 0 || scale.shift != SHIFT {
        return bad(format!(
            "calibration is invalid (frequency {freq_hz}, mult {}, shift {})",
            scale.mult, scale.shift
        ));
    }
    // The fast path's overflow-freedom rests on this; a corrupt value must not
    // turn into silently wrong stamps.
    let fits = scale.max_delta <= fast_range(scale.mult);
    if !fits || scale.max_delta == 0 || threshold == 0 || threshold > scale.max_delta {
        return bad(format!(
            "its conversion range is invalid (max delta {}, threshold {threshold})",
            scale.max_delta
        ));
    }
    match Scale::for_frequency(freq_hz) {
        Ok(s) if s.mult == scale.mult => {}
        _ => {
            return bad(format!(
            "its calibration is inconsistent: mult {} does not belong to frequency {freq_hz} Hz",
            scale.mult
        ))
        }
    }
    let raw_mode = h.mode.load(Relaxed);
    let Some(mode) = Mode::from_code(raw_mode) else {
        return bad(format!("unknown mode {raw_mode}"));
    };
    let rules = rules_of(h, scale.mult, threshold, freq_hz);
    if mode == Mode::Tracking {
        let slew_ok = (1..=50_000_000).contains(&rules.max_slew_ppb);
        let (_, hi) = rules.mult_range();
        if !slew_ok || rules.step_ns == 0 || threshold > fast_range(hi) {
            return bad(format!(
                "its tracking settings are invalid (slew {} ppb, step {} ns, threshold {threshold})",
                rules.max_slew_ppb, rules.step_ns
            ));
        }
    }
    let image = HeaderImage::capture(h);
    if h.header_check.load(Relaxed) != image.check {
        return bad("the checksum of its header does not match its fields".into());
    }
    Ok(Checked {
        source,
        scale,
        freq_hz,
        threshold,
        mode,
        rules,
        image,
        shift_ns: h.eval_max_shift_ns.load(Relaxed),
    })
}

/// Checks one slot's contents as read (`words` are the ten checked fields,
/// `check` the stored checksum, `count` the seqlock count it must carry).
pub(crate) fn line(
    line: &Line,
    written: u64,
    check: u64,
    count: u64,
    mode: Mode,
    rules: &Rules,
) -> std::result::Result<(), String> {
    if slot_check(&words_of(line, written)) != check {
        return Err("the checksum of its active base does not match".into());
    }
    if written != count {
        return Err(format!(
            "its active base was published under count {written}, the seqlock says {count}"
        ));
    }
    if line.frac >= 1 << SHIFT {
        return Err(format!(
            "the base's remainder {} is not below 2^32",
            line.frac
        ));
    }
    if line.generation == 0 {
        return Err("the base's generation is 0".into());
    }
    let (lo, hi) = match mode {
        Mode::Frozen => (rules.m_cal, rules.m_cal),
        Mode::Tracking => rules.mult_range(),
    };
    if !(lo..=hi).contains(&line.mult) || !(lo..=hi).contains(&line.freq_mult) {
        return Err(format!(
            "the base's slope {} (frequency {}) is outside {lo}..={hi}",
            line.mult, line.freq_mult
        ));
    }
    Ok(())
}

/// The line a slot held before one of the four words a stamp reads
/// (`counter`, `ns`, `frac`, `mult`) was damaged: the slot's quick word
/// (`slot_quick`, an exclusive-or of those words rotated by 0, 16, 32 and 48
/// bits) gives each word's value if it were the only one changed, and the
/// slot's checksum tells which of the four candidates is the line. `None` if no
/// candidate passes every check of [`line`] (more than one word, or the quick
/// or check word, was damaged).
pub(crate) fn corrected(
    damaged: &Line,
    written: u64,
    check: u64,
    quick: u64,
    count: u64,
    mode: Mode,
    rules: &Rules,
) -> Option<Line> {
    let l = damaged;
    let diff = slot_quick(l.counter, l.ns, l.frac, l.mult) ^ quick;
    if diff == 0 {
        return None;
    }
    (0..4).find_map(|i| {
        let mut c = *l;
        let fix = diff.rotate_right(16 * i as u32);
        match i {
            0 => c.counter ^= fix,
            1 => c.ns ^= fix,
            2 => c.frac ^= fix,
            _ => c.mult ^= fix,
        }
        line(&c, written, check, count, mode, rules)
            .ok()
            .map(|()| c)
    })
}

/// The ten words a slot's checksum covers, in slot order.
pub(crate) fn words_of(l: &Line, written: u64) -> [u64; 10] {
    [
        l.counter,
        l.ns,
        l.frac,
        l.mult,
        l.generation,
        l.freq_mult,
        l.rate_mult,
        l.residual as u64,
        l.tie_ns,
        written,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_damaged_stamp_word_is_corrected_and_two_are_not() {
        let m_cal = 1 << 32;
        let rules = Rules {
            m_cal,
            interval: 1 << 30,
            limit: 1 << 31,
            max_slew_ppb: 500_000,
            step_ns: 1_000_000,
            backstep: 1_000,
            min_baseline: 10_000,
        };
        let mut whole = Line::paired(123_456_789, 1_700_000_000_000_000_000, 3, m_cal);
        whole.frac = 0x1234_5678;
        whole.mult = m_cal + 1_000;
        let (count, written) = (41, 41);
        let check = slot_check(&words_of(&whole, written));
        let quick = slot_quick(whole.counter, whole.ns, whole.frac, whole.mult);
        let fix = |l: &Line, quick: u64| {
            corrected(l, written, check, quick, count, Mode::Tracking, &rules)
        };
        assert_eq!(fix(&whole, quick), None, "nothing to correct");
        for i in 0..4 {
            for change in [1u64, 1 << 63, 0x00ff_0000_0000_0000, 999] {
                let mut l = whole;
                match i {
                    0 => l.counter ^= change,
                    1 => l.ns = l.ns.wrapping_add(change),
                    2 => l.frac ^= change,
                    _ => l.mult = l.mult.wrapping_sub(change),
                }
                assert_eq!(
                    fix(&l, quick),
                    Some(whole),
                    "word {i} changed by {change:#x}"
                );
                // The quick word damaged as well: nothing says which is right.
                assert_eq!(fix(&l, quick ^ 4), None, "word {i} and the quick word");
            }
        }
        let mut two = whole;
        two.ns += 1;
        two.frac ^= 1;
        assert_eq!(fix(&two, quick), None, "two words");
        // Under another count than the slot was published under: not this line.
        let mut one = whole;
        one.ns += 1;
        assert_eq!(
            corrected(
                &one,
                written,
                check,
                quick,
                count + 1,
                Mode::Tracking,
                &rules
            ),
            None
        );
    }
}
