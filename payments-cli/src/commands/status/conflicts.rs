//! One transactionId answered for two references within one run of
//! `payments status` (CONTRACT section 17: a transaction belongs to one
//! payment).
//!
//! The client's answer guard refuses the *second* such answer to arrive,
//! and keeps the first: for a long-lived application nothing else is
//! possible. But which of the two is true, the client cannot know: the
//! first to arrive may well be the false one. Many look-ups know every
//! answer of the run, so here neither is used: each found answer that
//! shares its transactionId with an answer for another reference becomes
//! a refused one, whose line names the conflict (the guard's own refusal
//! already names it). A json line already written when the other answer
//! came cannot be taken back; its error on stderr says so, and the exit
//! code is 4 either way.

use std::collections::{BTreeSet, HashMap};

use payments_client::error::Disagreement;
use payments_client::{PaymentStatus, Reply};

use super::{Lookup, Outcome};
use crate::error::CliError;

/// The transactions the run's answers named, and for which references.
#[derive(Debug, Default)]
pub(super) struct Conflicts {
    /// The references each transactionId was answered for (found, or named
    /// by the guard's refusal).
    references: HashMap<String, BTreeSet<String>>,
    /// The inputs whose found answer names each transactionId.
    found: HashMap<String, Vec<usize>>,
}

impl Conflicts {
    /// Notes the outcome of input `index`; returns the inputs whose found
    /// answer is now in conflict (`index` itself among them, when it is).
    pub(super) fn note(&mut self, index: usize, outcome: &Outcome) -> Vec<usize> {
        let named = match outcome {
            Outcome::Found(reply) => {
                let data = reply.data();
                let id = data.transaction_id.to_string();
                self.found.entry(id.clone()).or_default().push(index);
                vec![(id, data.reference_no.clone())]
            }
            Outcome::Failed(CliError::Call { source, .. }) => source
                .as_answer_mismatch()
                .into_iter()
                .flat_map(|mismatch| &mismatch.disagreements)
                .filter_map(|disagreement| match disagreement {
                    Disagreement::TransactionIdReused {
                        transaction_id,
                        earlier_reference_no,
                        reference_no,
                        ..
                    } => Some([
                        (transaction_id.to_string(), earlier_reference_no.clone()),
                        (transaction_id.to_string(), reference_no.clone()),
                    ]),
                    _ => None,
                })
                .flatten()
                .collect(),
            _ => Vec::new(),
        };
        let mut conflicted = Vec::new();
        for (id, reference) in named {
            let references = self.references.entry(id.clone()).or_default();
            references.insert(reference);
            if references.len() > 1 {
                conflicted.extend(self.found.get(&id).into_iter().flatten().copied());
            }
        }
        conflicted.sort_unstable();
        conflicted.dedup();
        conflicted
    }

    /// A found answer in conflict, as the refusal that replaces it.
    /// `written`: its json line is already out.
    pub(super) fn refuse(
        &self,
        lookup: &Lookup,
        reply: &Reply<PaymentStatus>,
        written: bool,
    ) -> CliError {
        let data = reply.data();
        let id = data.transaction_id.to_string();
        let others: Vec<&str> = self
            .references
            .get(&id)
            .into_iter()
            .flatten()
            .filter(|reference| **reference != data.reference_no)
            .map(String::as_str)
            .collect();
        let mut reason = format!(
            "transactionId {id} was answered for referenceNo {} and also for {}: one of these \
             answers is false and which cannot be told, so none is used (request id {})",
            data.reference_no,
            others.join(", "),
            reply.request_id()
        );
        if written {
            reason.push_str(
                "; its json line was written before the other answer came: do not use it",
            );
        }
        CliError::Refused {
            call: lookup.describe(),
            reason: crate::text::printable(&crate::secrets::hide(&reason)),
            received: reply.raw_envelope().to_owned(),
        }
    }
}
