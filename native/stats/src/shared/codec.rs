//! A published metric as payload words and back (see `layout::PAYLOAD_WORDS`).
//! Decoding takes whatever words a damaged page holds and never fails: the
//! worst it gives is a wrong number.

use super::layout::{KIND_COUNTER, KIND_GAUGE, KIND_TIMER, PAYLOAD_WORDS, STATS_WORDS};
use crate::dump::{CounterDump, GaugeDump, Metric, TimerDump};
use crate::incremental::Statistics;

pub type Payload = [u64; PAYLOAD_WORDS];

fn opt(x: Option<f64>) -> u64 {
    x.unwrap_or(f64::NAN).to_bits()
}

fn unopt(w: u64) -> Option<f64> {
    let x = f64::from_bits(w);
    (!x.is_nan()).then_some(x)
}

fn put_stats(out: &mut [u64], s: &Statistics) {
    let words = [
        opt(s.min),
        opt(s.max),
        s.sum.to_bits(),
        s.count,
        opt(s.mean),
        opt(s.moving_avg),
        s.interval_count.to_bits(),
        s.interval_sum.to_bits(),
        opt(s.interval_mean),
        s.rate.to_bits(),
        opt(s.quantiles[0]),
        opt(s.quantiles[1]),
        opt(s.quantiles[2]),
        opt(s.quantiles[3]),
    ];
    out[..STATS_WORDS].copy_from_slice(&words);
}

fn get_stats(w: &[u64]) -> Statistics {
    Statistics {
        min: unopt(w[0]),
        max: unopt(w[1]),
        sum: f64::from_bits(w[2]),
        count: w[3],
        mean: unopt(w[4]),
        moving_avg: unopt(w[5]),
        interval_count: f64::from_bits(w[6]),
        interval_sum: f64::from_bits(w[7]),
        interval_mean: unopt(w[8]),
        rate: f64::from_bits(w[9]),
        quantiles: [unopt(w[10]), unopt(w[11]), unopt(w[12]), unopt(w[13])],
    }
}

fn set(p: &mut Payload, i: usize) -> &mut [u64] {
    &mut p[2 + i * STATS_WORDS..2 + (i + 1) * STATS_WORDS]
}

fn get(p: &Payload, i: usize) -> Statistics {
    get_stats(&p[2 + i * STATS_WORDS..2 + (i + 1) * STATS_WORDS])
}

pub fn encode(m: &Metric) -> Payload {
    let mut p = [0u64; PAYLOAD_WORDS];
    p[0] = m.timestamp();
    match m {
        Metric::Counter(c) => {
            p[1] = c.value as u64;
            put_stats(set(&mut p, 0), &c.values);
            put_stats(set(&mut p, 1), &c.incr_deltas);
            put_stats(set(&mut p, 2), &c.decr_deltas);
            put_stats(set(&mut p, 3), &c.deltas);
        }
        Metric::Gauge(g) => {
            p[1] = g.value.to_bits();
            put_stats(set(&mut p, 0), &g.values);
        }
        Metric::Timer(t) => {
            p[1] = t.value;
            put_stats(set(&mut p, 0), &t.values);
        }
    }
    p
}

/// The metric of kind `kind` (a `KIND_*`); `None` for an unknown kind.
pub fn decode(kind: u64, p: &Payload) -> Option<Metric> {
    let timestamp = p[0];
    Some(match kind {
        KIND_COUNTER => Metric::Counter(Box::new(CounterDump {
            timestamp,
            value: p[1] as i64,
            values: get(p, 0),
            incr_deltas: get(p, 1),
            decr_deltas: get(p, 2),
            deltas: get(p, 3),
        })),
        KIND_GAUGE => Metric::Gauge(GaugeDump {
            timestamp,
            value: f64::from_bits(p[1]),
            values: get(p, 0),
        }),
        KIND_TIMER => Metric::Timer(TimerDump {
            timestamp,
            value: p[1],
            values: get(p, 0),
        }),
        _ => return None,
    })
}

pub fn kind_code(kind: crate::Kind) -> u64 {
    match kind {
        crate::Kind::Counter => KIND_COUNTER,
        crate::Kind::Gauge => KIND_GAUGE,
        crate::Kind::Timer => KIND_TIMER,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(k: f64) -> Statistics {
        Statistics {
            count: 7,
            sum: 3.5 * k,
            min: Some(-k),
            max: Some(k),
            mean: Some(0.5),
            moving_avg: None,
            interval_count: 2.25,
            interval_sum: 9.0,
            interval_mean: Some(4.0),
            rate: 2.25 * k,
            quantiles: [Some(1.0), None, Some(3.0), Some(k)],
        }
    }

    #[test]
    fn every_kind_round_trips() {
        let metrics = [
            Metric::Counter(Box::new(CounterDump {
                timestamp: 11,
                value: -42,
                values: stats(1.0),
                incr_deltas: stats(2.0),
                decr_deltas: stats(3.0),
                deltas: stats(4.0),
            })),
            Metric::Gauge(GaugeDump {
                timestamp: 12,
                value: -0.125,
                values: stats(5.0),
            }),
            Metric::Timer(TimerDump {
                timestamp: u64::MAX,
                value: 1_500,
                values: stats(6.0),
            }),
        ];
        for m in metrics {
            let kind = match m {
                Metric::Counter(_) => KIND_COUNTER,
                Metric::Gauge(_) => KIND_GAUGE,
                Metric::Timer(_) => KIND_TIMER,
            };
            assert_eq!(decode(kind, &encode(&m)).as_ref(), Some(&m));
        }
        assert!(decode(9, &[0; PAYLOAD_WORDS]).is_none());
    }
}
