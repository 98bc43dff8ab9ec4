//! What a watch knows of each session's message queue (docs/contract.md
//! §6.2, §6.6), so that every message is reported queued once and settled
//! once: the state of each message seen, by id, and what a new look at a
//! queue finds changed since. The events carry what a message is (its id,
//! sender, times, outcome and size), never its text.

use std::collections::{BTreeMap, HashMap};

use registry_core::RosterDir;
use registry_core::messages::{Message, MessageId, QueueView, queue_names};

use crate::event::EventKind;

/// The queues seen, by record file name: whether each message in it was
/// settled when last seen.
#[derive(Debug, Default)]
pub(crate) struct KnownQueues {
    queues: HashMap<String, BTreeMap<MessageId, bool>>,
}

/// What changed in a queue since it was last looked at: the messages
/// newly queued or newly settled, in sequence order (a message queued and
/// settled between two looks is both, queued first), and how many wait now.
#[derive(Debug, Default)]
pub(crate) struct QueueNews {
    pub(crate) news: Vec<MessageNews>,
    pub(crate) pending: usize,
}

#[derive(Debug)]
pub(crate) enum MessageNews {
    /// A new pending message, as it was queued (no outcome).
    Queued(Message),
    /// A message settled: delivered, expired or refused.
    Settled(Message),
}

impl KnownQueues {
    /// Learns every queue of `roster` as it is, without news: what a watch
    /// reports starts after.
    pub(crate) fn learn_all(&mut self, roster: &RosterDir) {
        self.queues.clear();
        for queue in queue_names(roster).unwrap_or_default() {
            let record = format!("{queue}.json");
            self.read_queue(roster, &record, false);
        }
    }

    /// The record file names whose queues are known, and those `roster`
    /// has now: what a resync looks at again.
    pub(crate) fn all_records(&self, roster: Option<&RosterDir>) -> Vec<String> {
        let on_disk = roster.and_then(|roster| queue_names(roster).ok()).unwrap_or_default();
        let mut records: Vec<String> = self
            .queues
            .keys()
            .cloned()
            .chain(on_disk.into_iter().map(|queue| format!("{queue}.json")))
            .collect();
        records.sort();
        records.dedup();
        records
    }

    /// Forgets every queue (the registry is gone).
    pub(crate) fn forget_all(&mut self) {
        self.queues.clear();
    }

    /// Reads the queue of `record` again and says what changed since it
    /// was last read; a queue gone is forgotten, with nothing to say (its
    /// messages went with it, unsettled or not).
    pub(crate) fn look_again(&mut self, roster: &RosterDir, record: &str) -> QueueNews {
        self.read_queue(roster, record, true)
    }

    /// Reads the queue of `record`, remembers what it holds, and, when
    /// `report`, says what is new.
    fn read_queue(&mut self, roster: &RosterDir, record: &str, report: bool) -> QueueNews {
        let Ok(Some(view)) = QueueView::read(roster, record) else {
            self.queues.remove(record);
            return QueueNews::default();
        };
        let known = self.queues.remove(record).unwrap_or_default();
        let mut now = BTreeMap::new();
        let mut news = Vec::new();
        for parts in view.messages() {
            now.insert(parts.id.clone(), parts.settled);
            let before = known.get(&parts.id).copied();
            if !report || before == Some(parts.settled) || before == Some(true) {
                continue;
            }
            let Some(message) = view.message(&parts.id) else {
                // Not a file roster wrote (never delivered either): seen,
                // never reported.
                continue;
            };
            if before.is_none() {
                news.push(MessageNews::Queued(Message { outcome: None, ..message.clone() }));
            }
            if parts.settled {
                news.push(MessageNews::Settled(message));
            }
        }
        let pending = view.pending();
        self.queues.insert(record.to_owned(), now);
        QueueNews { news, pending }
    }
}

impl MessageNews {
    pub(crate) fn message(&self) -> &Message {
        match self {
            MessageNews::Queued(message) | MessageNews::Settled(message) => message,
        }
    }

    /// The event of this news: queued, or settled as its outcome says.
    pub(crate) fn kind(&self) -> EventKind {
        match self {
            MessageNews::Queued(_) => EventKind::MessageQueued,
            MessageNews::Settled(message) => {
                EventKind::of_message(message.outcome.as_ref().map(|outcome| outcome.kind))
            }
        }
    }
}
