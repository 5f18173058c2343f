//! Which connections `hrts stats serve` keeps open when there are more than
//! it may hold.
//!
//! A cap alone hands the server to whoever opens connections first: the
//! holders of every slot keep newcomers out, however little they send. So a
//! full server makes room instead of refusing: a new connection closes the
//! oldest one that has not yet sent a whole request head (idle, or a partial
//! head), and only when every open connection has sent one, the oldest of
//! all. A scrape sends its head as soon as it connects, so it waits for its
//! head only as long as the head takes to cross the socket; it would have to
//! be the oldest of those waiting to be closed, that is, every connection
//! accepted before it would have had to be closed first. An attacker who
//! re-opens each connection the moment it is closed thus closes only its
//! own, whatever their number.
//!
//! An evicted connection's task wakes and drops its socket soon after. The
//! server accepts nothing more while more than [`CLOSING`] such sockets are
//! still open ([`Admission::settled`]): at most `max + CLOSING` sockets are
//! open at any time; connections beyond that wait in the kernel's listen
//! queue. (Waiting for each evicted socket before the next accept, rather
//! than for a batch, made scrapes wait longer behind a burst of newcomers.)

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use tokio::sync::{oneshot, Notify};

/// Sockets of evicted connections that may still be open when the next
/// connection is accepted.
pub const CLOSING: usize = 32;

/// The open connections, in the order they were accepted.
pub struct Admission {
    max: usize,
    open: Mutex<Open>,
    /// A ticket was dropped: its socket is closed.
    closed: Notify,
}

#[derive(Default)]
struct Open {
    next: u64,
    /// Tickets not dropped: sockets open, evicted or not.
    sockets: usize,
    /// Accepted, no whole request head yet. Dropping a sender evicts.
    waiting: BTreeMap<u64, oneshot::Sender<()>>,
    /// Their request head has arrived: being answered.
    answering: BTreeMap<u64, oneshot::Sender<()>>,
}

/// One admitted connection's place. `evicted` resolves when the server
/// closes the connection to make room; dropping the ticket frees the place.
pub struct Ticket {
    pub id: u64,
    pub evicted: oneshot::Receiver<()>,
    admission: Arc<Admission>,
}

/// What admitting a connection cost.
#[derive(Debug, PartialEq, Eq)]
pub enum Made {
    /// There was a free place.
    Room,
    /// The oldest connection without a whole request head was closed.
    EvictedWaiting,
    /// Every open connection had sent its head: the oldest was closed.
    EvictedAnswering,
}

impl Admission {
    /// Keeps at most `max` (at least 1) connections open.
    pub fn new(max: usize) -> Arc<Self> {
        Arc::new(Self {
            max: max.max(1),
            open: Mutex::new(Open::default()),
            closed: Notify::new(),
        })
    }

    fn open(&self) -> std::sync::MutexGuard<'_, Open> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A place for a connection just accepted, closing another if all are
    /// taken.
    pub fn admit(self: &Arc<Self>) -> (Ticket, Made) {
        let (tx, rx) = oneshot::channel();
        let mut open = self.open();
        let mut made = Made::Room;
        if open.waiting.len() + open.answering.len() >= self.max {
            // Dropping the sender wakes the evicted connection's task.
            made = if open.waiting.pop_first().is_some() {
                Made::EvictedWaiting
            } else {
                open.answering.pop_first();
                Made::EvictedAnswering
            };
        }
        let id = open.next;
        open.next += 1;
        open.sockets += 1;
        open.waiting.insert(id, tx);
        drop(open);
        let ticket = Ticket {
            id,
            evicted: rx,
            admission: self.clone(),
        };
        (ticket, made)
    }

    /// Connection `id` has sent its whole request head; an evicted one stays
    /// evicted.
    pub fn answering(&self, id: u64) {
        let mut open = self.open();
        if let Some(tx) = open.waiting.remove(&id) {
            open.answering.insert(id, tx);
        }
    }

    /// Returns once at most `max + CLOSING` sockets are open: enough of the
    /// connections evicted to make room have closed theirs.
    pub async fn settled(&self) {
        while self.open().sockets > self.max + CLOSING {
            // A ticket dropped between the check and here left a permit.
            self.closed.notified().await;
        }
    }

    /// Connections open (not closed, not chosen to be closed).
    #[cfg(test)]
    fn len(&self) -> usize {
        let open = self.open();
        open.waiting.len() + open.answering.len()
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut open = self.admission.open();
        if open.waiting.remove(&self.id).is_none() {
            open.answering.remove(&self.id);
        }
        open.sockets -= 1;
        drop(open);
        self.admission.closed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn evicted(t: &mut Ticket) -> bool {
        t.evicted
            .try_recv()
            .is_err_and(|e| e == oneshot::error::TryRecvError::Closed)
    }

    #[test]
    fn the_oldest_waiting_connection_gives_way_then_the_oldest_answering() {
        let a = Admission::new(3);
        let (mut t0, m0) = a.admit();
        let (mut t1, m1) = a.admit();
        let (mut t2, m2) = a.admit();
        assert_eq!([m0, m1, m2], [Made::Room, Made::Room, Made::Room]);
        // t0 has sent its head: t1, the oldest still waiting, makes room.
        a.answering(t0.id);
        let (mut t3, m3) = a.admit();
        assert_eq!(m3, Made::EvictedWaiting);
        assert!(!evicted(&mut t0) && evicted(&mut t1) && !evicted(&mut t2));
        assert_eq!(a.len(), 3);
        // Its head arriving after the eviction does not bring it back.
        a.answering(t1.id);
        assert_eq!(a.len(), 3);
        drop(t1);
        a.answering(t2.id);
        a.answering(t3.id);
        // Everybody has sent a head: the oldest of all, t0, goes.
        let (mut t4, m4) = a.admit();
        assert_eq!(m4, Made::EvictedAnswering);
        assert!(evicted(&mut t0) && !evicted(&mut t2) && !evicted(&mut t3));
        assert!(!evicted(&mut t4));
        // A connection that ends frees its place.
        drop(t2);
        assert_eq!(a.len(), 2);
        let (_t5, m5) = a.admit();
        assert_eq!(m5, Made::Room);
        drop(t3);
        drop(t4);
        assert_eq!(a.len(), 1);
    }

    #[test]
    fn settled_waits_for_the_evicted_socket_to_close() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let a = Admission::new(1);
        let mut tickets = vec![a.admit().0];
        let within = |d| runtime.block_on(async { tokio::time::timeout(d, a.settled()).await });
        for _ in 0..CLOSING {
            let (t, made) = a.admit();
            assert_eq!(made, Made::EvictedWaiting);
            tickets.push(t);
            within(Duration::ZERO).expect("settled with few evicted sockets open");
        }
        let (_last, _) = a.admit();
        // Every ticket but the last is evicted, and all their sockets are
        // still open.
        let early = within(Duration::from_millis(50));
        assert!(early.is_err(), "settled with {} sockets open", CLOSING + 2);
        drop(tickets.remove(0));
        within(Duration::from_secs(5)).expect("settled once the evicted ticket was dropped");
    }
}
