//! A session's message queue at the library's face (docs/contract.md
//! §6.6), as the delivery hook will call it: messages delivered in the
//! order queued and at most once, none when the session's consent is
//! closed, overdue ones and those for an earlier owner expired, the bounds
//! on pending and settled messages, and untrusted files never delivered.

use std::cell::Cell;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use harness::{DeliveryLimit, TextMeasure};
use owner_liveness::Pid;
use registry_core::messages::{
    AddressedBy, CONVERSATION_ENDED, ClaimDeadline, ConsentNow, Delivery, HANDOVER_UNCONFIRMED, HandOver,
    MAX_PENDING, MAX_SETTLED, MessageId, MessageText, OutcomeKind, Recipient, SESSION_ENDED, Sender,
    TIME_TO_LIVE_RAN_OUT, Taken, framed, joined_length, message_status, pending_count, queue_directory,
    queue_message, take_for_delivery,
};
use registry_core::{Error, Parsed, Record, RosterDir, Timestamp, parse_record};

/// A harness that keeps everything whole.
const UNLIMITED: DeliveryLimit = DeliveryLimit { measure: TextMeasure::Utf16Units, max: usize::MAX };

const RECORD_FILE: &str = "6505.json";

/// A roster directory with one record of a sample session in it.
struct Scene {
    _temp: tempfile::TempDir,
    roster: RosterDir,
    record: Record,
}

impl Scene {
    fn new() -> Scene {
        let temp = tempfile::tempdir().unwrap();
        let roster = RosterDir::open_or_create(&temp.path().join("roster")).unwrap();
        let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/records").join(RECORD_FILE);
        let bytes = std::fs::read(&sample).unwrap();
        std::fs::write(temp.path().join("roster/sessions").join(RECORD_FILE), &bytes).unwrap();
        let Parsed::Record(record) = parse_record(&bytes, Pid::new(6505).unwrap()) else {
            panic!("the sample parses")
        };
        Scene { _temp: temp, roster, record: *record }
    }

    fn recipient(&self) -> Recipient {
        Recipient::of_record(RECORD_FILE, &self.record, AddressedBy::Pid)
    }

    fn queue(
        &self,
        text: &str,
        time_to_live: Duration,
    ) -> registry_core::Result<registry_core::messages::Message> {
        let text = MessageText::new(text).unwrap();
        queue_message(
            &self.roster,
            &self.recipient(),
            &Sender::of_process(77),
            &text,
            time_to_live,
            Timestamp::now(),
        )
    }

    fn take(&self, consent: ConsentNow) -> Vec<registry_core::messages::Message> {
        self.take_for(&self.record, consent)
    }

    fn take_for(&self, record: &Record, consent: ConsentNow) -> Vec<registry_core::messages::Message> {
        match self.claim(record, None, UNLIMITED, consent) {
            Some(handover) => handover.confirm(&self.roster).unwrap(),
            None => Vec::new(),
        }
    }

    /// Claims what a delivery of `record`'s session, running
    /// `conversation`, takes with a harness that keeps `limit` whole.
    fn claim(
        &self,
        record: &Record,
        conversation: Option<&str>,
        limit: DeliveryLimit,
        consent: ConsentNow,
    ) -> Option<HandOver> {
        let delivery = Delivery {
            record_file_name: RECORD_FILE,
            record,
            conversation,
            event: "claude-code:UserPromptSubmit",
            now: Timestamp::now(),
            lock_deadline: Instant::now() + Duration::from_secs(5),
            claim_deadline: &ClaimDeadline::at(Instant::now() + Duration::from_secs(5)),
            limit,
        };
        match take_for_delivery(&self.roster, &delivery, || consent).unwrap() {
            Taken::HandOver(handover) => Some(handover),
            Taken::Nothing | Taken::Waiting(_) => None,
        }
    }

    fn queue_path(&self) -> PathBuf {
        queue_directory(&self.roster, RECORD_FILE)
    }

    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.queue_path())
            .map(|entries| entries.map(|entry| entry.unwrap().file_name().into_string().unwrap()).collect())
            .unwrap_or_default();
        names.sort();
        names
    }

    fn outcome_of(&self, id: &str) -> Option<(OutcomeKind, Option<String>, Option<String>)> {
        let found =
            message_status(&self.roster, &MessageId::parse(id).unwrap(), Timestamp::now()).unwrap()?;
        found.message.outcome.map(|outcome| (outcome.kind, outcome.event, outcome.reason))
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[test]
fn messages_are_delivered_in_the_order_queued_and_only_once() {
    let scene = Scene::new();
    let hour = Duration::from_secs(3600);
    let queued: Vec<_> =
        ["first", "second", "third"].iter().map(|text| scene.queue(text, hour).unwrap()).collect();
    assert_eq!(queued.iter().map(|message| message.seq).collect::<Vec<_>>(), [1, 2, 3]);
    assert_eq!(mode(&scene.queue_path()), 0o700);
    for name in scene.names() {
        assert_eq!(mode(&scene.queue_path().join(&name)), 0o600, "{name}");
    }
    assert_eq!(pending_count(&scene.roster, RECORD_FILE), 3);
    let delivered = scene.take(ConsentNow::Accepts);
    let texts: Vec<&str> = delivered.iter().map(|message| message.text.as_str()).collect();
    assert_eq!(texts, ["first", "second", "third"]);
    assert!(delivered.iter().all(|message| message.state_word() == "delivered"));
    assert_eq!(pending_count(&scene.roster, RECORD_FILE), 0);
    assert!(scene.take(ConsentNow::Accepts).is_empty(), "delivered twice");
    let outcome = scene.outcome_of(&queued[1].id).unwrap();
    assert_eq!(outcome, (OutcomeKind::Delivered, Some("claude-code:UserPromptSubmit".into()), None));
    assert!(scene.names().iter().all(|name| name.ends_with(".done.json")), "{:?}", scene.names());
}

#[test]
fn a_session_that_does_not_accept_messages_gets_none_and_each_says_why() {
    let scene = Scene::new();
    let asked = Cell::new(0);
    let delivery = |scene: &Scene| {
        let delivery = Delivery {
            record_file_name: RECORD_FILE,
            record: &scene.record,
            conversation: None,
            event: "claude-code:Stop",
            now: Timestamp::now(),
            lock_deadline: Instant::now() + Duration::from_secs(5),
            claim_deadline: &ClaimDeadline::at(Instant::now() + Duration::from_secs(5)),
            limit: UNLIMITED,
        };
        take_for_delivery(&scene.roster, &delivery, || {
            asked.set(asked.get() + 1);
            ConsentNow::Refuses("disarmed by the session".to_owned())
        })
        .unwrap()
    };
    assert!(matches!(delivery(&scene), Taken::Nothing));
    assert_eq!(asked.get(), 0, "consent asked with nothing to deliver");
    let message = scene.queue("hello", Duration::from_secs(60)).unwrap();
    assert!(matches!(delivery(&scene), Taken::Nothing));
    assert_eq!(asked.get(), 1);
    assert_eq!(
        scene.outcome_of(&message.id),
        Some((OutcomeKind::Refused, None, Some("disarmed by the session".into())))
    );
    assert!(scene.take(ConsentNow::Accepts).is_empty(), "a refused message was delivered later");
}

/// A consent that could not be decided (a marker whose read failed)
/// neither hands a message over nor refuses it: it waits, and goes out
/// once consent is decided again.
#[test]
fn an_undecided_consent_leaves_the_message_waiting() {
    let scene = Scene::new();
    let message = scene.queue("hello", Duration::from_secs(60)).unwrap();
    assert!(scene.take(ConsentNow::Undecided).is_empty());
    assert_eq!(scene.outcome_of(&message.id), None, "an undecided consent settled the message");
    let delivered = scene.take(ConsentNow::Accepts);
    assert_eq!(delivered.len(), 1);
    assert_eq!(delivered[0].id, message.id);
}

#[test]
fn overdue_messages_and_those_for_an_earlier_owner_expire_undelivered() {
    let scene = Scene::new();
    let overdue = scene.queue("too late", Duration::ZERO).unwrap();
    let earlier_owner = scene.queue("for the owner before", Duration::from_secs(60)).unwrap();
    let mut later_owner = scene.record.clone();
    later_owner.owner.start_ticks.0 += 1;
    assert!(scene.take_for(&later_owner, ConsentNow::Accepts).is_empty());
    assert_eq!(
        scene.outcome_of(&overdue.id),
        Some((OutcomeKind::Expired, None, Some(TIME_TO_LIVE_RAN_OUT.into())))
    );
    assert_eq!(
        scene.outcome_of(&earlier_owner.id),
        Some((OutcomeKind::Expired, None, Some(SESSION_ENDED.into())))
    );
}

#[test]
fn a_status_read_expires_a_message_whose_time_ran_out() {
    let scene = Scene::new();
    let message = scene.queue("soon stale", Duration::ZERO).unwrap();
    assert_eq!(
        scene.outcome_of(&message.id),
        Some((OutcomeKind::Expired, None, Some(TIME_TO_LIVE_RAN_OUT.into())))
    );
    assert_eq!(pending_count(&scene.roster, RECORD_FILE), 0);
    let unknown = MessageId::random().unwrap();
    assert!(message_status(&scene.roster, &unknown, Timestamp::now()).unwrap().is_none());
}

#[test]
fn a_full_queue_refuses_the_next_message_and_drops_none() {
    let scene = Scene::new();
    for index in 0..MAX_PENDING {
        scene.queue(&format!("message {index}"), Duration::from_secs(60)).unwrap();
    }
    let refused = scene.queue("one too many", Duration::from_secs(60)).unwrap_err();
    assert!(matches!(refused, Error::QueueFull { limit: MAX_PENDING, .. }), "{refused}");
    assert!(refused.to_string().contains("is full"), "{refused}");
    assert_eq!(pending_count(&scene.roster, RECORD_FILE), MAX_PENDING);
    assert_eq!(scene.take(ConsentNow::Accepts).len(), MAX_PENDING);
    scene.queue("room again", Duration::from_secs(60)).unwrap();
}

#[test]
fn only_the_newest_settled_messages_are_kept() {
    let scene = Scene::new();
    let mut first_ids = Vec::new();
    while scene.names().len() < MAX_SETTLED + 8 {
        for _ in 0..MAX_PENDING {
            first_ids.push(scene.queue("batch", Duration::from_secs(60)).unwrap().id);
        }
        scene.take(ConsentNow::Accepts);
    }
    let last = scene.queue("the newest", Duration::from_secs(60)).unwrap();
    let settled = scene.names().iter().filter(|name| name.ends_with(".done.json")).count();
    assert_eq!(settled, MAX_SETTLED);
    assert!(scene.outcome_of(&first_ids[0]).is_none(), "the oldest settled message was kept");
    assert_eq!(last.seq as usize, first_ids.len() + 1, "sequence numbers go on past removed messages");
}

#[test]
fn a_message_file_roster_does_not_trust_is_never_delivered() {
    let scene = Scene::new();
    let message = scene.queue("tampered", Duration::from_secs(60)).unwrap();
    let path = scene.queue_path().join(message.file_name());
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o622)).unwrap();
    assert!(scene.take(ConsentNow::Accepts).is_empty());
    assert_eq!(
        pending_count(&scene.roster, RECORD_FILE),
        1,
        "the untrusted file still counts against the bound"
    );
}

#[test]
fn a_session_without_a_queue_costs_no_queue() {
    let scene = Scene::new();
    assert!(scene.take(ConsentNow::Accepts).is_empty());
    assert_eq!(pending_count(&scene.roster, RECORD_FILE), 0);
    assert!(!scene.queue_path().exists(), "looking for messages created a queue");
}

#[test]
fn a_claim_put_back_is_pending_again_and_one_never_confirmed_reads_unconfirmed() {
    let scene = Scene::new();
    let message = scene.queue("hand me over", Duration::from_secs(60)).unwrap();
    let handover = scene.claim(&scene.record, None, UNLIMITED, ConsentNow::Accepts).expect("claimed");
    assert_eq!(pending_count(&scene.roster, RECORD_FILE), 0, "a claimed message is not pending");
    assert!(scene.names().iter().any(|name| name.ends_with(".claimed.json")), "{:?}", scene.names());
    handover.put_back(&scene.roster).unwrap();
    assert_eq!(pending_count(&scene.roster, RECORD_FILE), 1, "put back, it waits again");
    assert_eq!(scene.outcome_of(&message.id), None, "still pending");

    // A hook that claims and stops before it confirms (its lock goes with
    // it): the next look under the lock settles the claim unconfirmed.
    let handover = scene.claim(&scene.record, None, UNLIMITED, ConsentNow::Accepts).expect("claimed again");
    drop(handover);
    assert_eq!(
        scene.outcome_of(&message.id),
        Some((OutcomeKind::Unconfirmed, None, Some(HANDOVER_UNCONFIRMED.into())))
    );
    assert!(scene.take(ConsentNow::Accepts).is_empty(), "an unconfirmed message was handed over again");
}

#[test]
fn a_message_sent_to_a_session_id_goes_only_to_that_conversation() {
    let scene = Scene::new();
    let mut by_id = scene.recipient();
    by_id.addressed_by = Some(AddressedBy::SessionId);
    by_id.session_id = Some("conversation-a".into());
    let text = MessageText::new("for conversation a").unwrap();
    let sent = queue_message(
        &scene.roster,
        &by_id,
        &Sender::of_process(77),
        &text,
        Duration::from_secs(60),
        Timestamp::now(),
    )
    .unwrap();
    let by_pid = scene.queue("for whatever runs", Duration::from_secs(60)).unwrap();
    let handover = scene
        .claim(&scene.record, Some("conversation-b"), UNLIMITED, ConsentNow::Accepts)
        .expect("one for b");
    let taken: Vec<&str> = handover.messages().iter().map(|message| message.id.as_str()).collect();
    assert_eq!(taken, [by_pid.id.as_str()]);
    handover.confirm(&scene.roster).unwrap();
    assert_eq!(
        scene.outcome_of(&sent.id),
        Some((OutcomeKind::Expired, None, Some(CONVERSATION_ENDED.into())))
    );
}

#[test]
fn one_reply_holds_only_what_the_harness_keeps_whole_frames_counted() {
    for measure in [TextMeasure::Utf16Units, TextMeasure::Utf8Bytes, TextMeasure::JsonBytes] {
        let scene = Scene::new();
        // Characters each measure counts differently: a reply cut by the
        // wrong count would pass one measure and not another.
        let queued: Vec<_> = (0..5)
            .map(|index| {
                let text = format!("message {index} {}", "\u{e9}\u{1f600}\n\"".repeat(100));
                scene.queue(&text, Duration::from_secs(60)).unwrap()
            })
            .collect();
        let one = measure.length(&framed(&queued[0]));
        // Room for two framed messages and their separator, not three.
        let limit = DeliveryLimit { measure, max: joined_length([one, one], measure) + 1 };
        let handover = scene.claim(&scene.record, None, limit, ConsentNow::Accepts).expect("claimed");
        assert_eq!(handover.messages().len(), 2, "{measure:?}");
        assert!(measure.length(&handover.text()) <= limit.max, "{measure:?}");
        handover.confirm(&scene.roster).unwrap();
        assert_eq!(pending_count(&scene.roster, RECORD_FILE), 3);
        // A message longer than the limit on its own is refused, never cut.
        let handover =
            scene.claim(&scene.record, None, DeliveryLimit { measure, max: one - 1 }, ConsentNow::Accepts);
        assert!(handover.is_none());
        let refused = scene.outcome_of(&queued[2].id).unwrap();
        assert_eq!(refused.0, OutcomeKind::Refused);
        let reason = refused.2.unwrap();
        assert!(reason.contains("keeps whole") && reason.contains(measure.unit()), "{reason}");
    }
}
