//! The operating system's counter frequency beside the calibrated one, for
//! `hrts info` and `hrts eval`: `key: value` lines, with a warning line when
//! they disagree by more than `DISAGREEMENT_WARN_PPM`.

use hrts_core::clock::{self, SourceId, DISAGREEMENT_WARN_PPM};

/// The lines for counter `id`, calibrated at `calibrated_hz`.
pub fn lines(id: SourceId, calibrated_hz: u64) -> String {
    text(id, calibrated_hz, clock::os_frequency(id))
}

fn text(id: SourceId, calibrated_hz: u64, os: Option<clock::OsFrequency>) -> String {
    let Some(os) = os else {
        return format!(
            "os frequency: none (this platform reports no frequency for {})\n",
            id.name()
        );
    };
    let ppm = clock::difference_ppm(calibrated_hz, os.hz);
    let mut s = format!(
        "os frequency: {}\nos frequency from: {}\nos frequency difference ppm: {ppm:.3}\n",
        os.hz, os.from
    );
    if clock::disagrees(ppm) {
        s.push_str(&format!(
            "os frequency warning: the calibrated frequency {calibrated_hz} Hz differs from the \
             reported {} Hz by {ppm:.0} ppm (more than {DISAGREEMENT_WARN_PPM:.0}): one of them \
             describes another clock; recalibrate (hrts reset) and compare again, and check the \
             counter source (HRTS_SOURCE)\n",
            os.hz
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use hrts_core::clock::OsFrequency;

    #[test]
    fn agreement_disagreement_and_none() {
        let os = OsFrequency {
            hz: 512_000_000,
            from: "/proc/cpuinfo timebase",
        };
        let close = text(SourceId::TimeBase, 512_000_512, Some(os));
        assert_eq!(
            close,
            "os frequency: 512000000\nos frequency from: /proc/cpuinfo timebase\n\
             os frequency difference ppm: 1.000\n"
        );
        let far = text(SourceId::TimeBase, 513_000_000, Some(os));
        assert!(
            far.contains("os frequency difference ppm: 1953.125\n"),
            "{far}"
        );
        assert!(far.contains("os frequency warning: the calibrated frequency 513000000 Hz differs"));
        assert_eq!(
            text(SourceId::Tsc, 1, None),
            "os frequency: none (this platform reports no frequency for tsc)\n"
        );
        for l in far.lines() {
            assert!(l.split_once(": ").is_some(), "not key: value: {l}");
        }
    }
}
